/*
 * u-robots.c: robots.txt parsing and matching (parser/robots.c).
 *
 *  - the conformance vectors of google/robotstxt: all 145 must pass.
 *  - the crawler-commons vectors that use RFC 9309 exact agent matching:
 *    count only (they include crawler-commons policy, not just the RFC).
 *  - hand-written tables: groups, longest match, ties, `$`, `*`, percent-
 *    encoding equivalence, crawl-delay, BOM, line ends, the 500 KiB cutoff.
 *  - robustness: pathological wildcards finish fast, garbage never crashes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "parser-internal.h"
#include "parser.h"
#include "t.h"
#include "tjson.h"

#define CONF_DIR DC_SHARED_DIR "/conformance/robots/"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_url_path(void)
{
    struct tj *doc = tj_load_file(CONF_DIR "google_robotstxt_helper_cases.json");
    const struct tj *cases = tj_get(doc, "get_path_params_query");
    char path[4096];
    size_t i;

    CHECK(cases && cases->type == TJ_ARR && cases->n > 0, "helper cases");
    for (i = 0; cases && i < cases->n; i++) {
        const char *url = tj_str(tj_get(cases->items[i], "url"));
        const char *want = tj_str(tj_get(cases->items[i], "expected_path"));
        parser_robots_url_path(url ? url : "", path, sizeof path);
        CHECK(want && strcmp(path, want) == 0, "url_path(%s) = %s, want %s",
              url, path, want);
    }
    tj_free(doc);
}

/* Run one conformance case; 1 when the verdict is as expected. */
static int run_case(const struct tj *c, const char *agent)
{
    const struct tj *txt = tj_get(c, "robots_txt");
    const char *url = tj_str(tj_get(c, "url"));
    const struct tj *allowed = tj_get(c, "allowed");
    struct parser_robots *r;
    char path[65536];
    int got;

    if (!txt || txt->type != TJ_STR || !url || !allowed || !agent)
        return -1;
    parser_robots_url_path(url, path, sizeof path);
    r = parser_robots_parse(txt->str, txt->len, agent, 0);
    got = parser_robots_allowed(r, path);
    parser_robots_free(&r);
    return got == allowed->b;
}

/* Every one of the 145 cases must pass, Google-specific ones included
 * (the parser is used without PARSER_ROBOTS_CANON, as `dcrawl robots`
 * uses it; tests/robots_conformance.py runs the same file through the
 * command). */
static void test_google(void)
{
    struct tj *doc = tj_load_file(CONF_DIR "google_robotstxt_cases.json");
    size_t i, ok = 0, g = 0, g_ok = 0;

    CHECK(doc && doc->type == TJ_ARR && doc->n == 145, "google cases loaded");
    for (i = 0; doc && i < doc->n; i++) {
        const struct tj *c = doc->items[i];
        const char *name = tj_str(tj_get(c, "name"));
        const struct tj *gs = tj_get(c, "google_specific");
        int r = run_case(c, tj_str(tj_get(c, "user_agent")));

        CHECK(r >= 0 && gs, "case %zu malformed", i);
        CHECK(r == 1, "google case %s", name ? name : "?");
        ok += r == 1;
        if (gs && gs->b) {
            g++;
            g_ok += r == 1;
        }
    }
    printf("google robotstxt: %zu/%zu pass (google-specific %zu/%zu)\n", ok,
           doc ? doc->n : 0, g_ok, g);
    tj_free(doc);
}

/* The agent token of a crawler-commons case, or NULL for multi-name ones. */
static const char *cc_agent(const struct tj *c)
{
    const struct tj *names = tj_get(c, "robot_names");

    if (!names || names->type != TJ_ARR || names->n != 1)
        return NULL;
    return tj_str(names->items[0]);
}

static void test_crawler_commons(void)
{
    struct tj *doc = tj_load_file(CONF_DIR "crawler_commons_cases.json");
    struct tj *dl = tj_load_file(CONF_DIR "crawler_commons_crawl_delay_cases.json");
    size_t i, n = 0, ok = 0, skipped = 0, dn = 0, dok = 0;

    CHECK(doc && doc->type == TJ_ARR && doc->n > 0, "crawler-commons cases");
    for (i = 0; doc && i < doc->n; i++) {
        const struct tj *c = doc->items[i];
        const struct tj *exact = tj_get(c, "exact_user_agent_matching");
        const char *agent = cc_agent(c);

        if (!exact || !exact->b)
            continue;
        if (!agent) {
            skipped++;
            continue;
        }
        n++;
        ok += run_case(c, agent) == 1;
    }
    for (i = 0; dl && i < dl->n; i++) {
        const struct tj *c = dl->items[i];
        const struct tj *txt = tj_get(c, "robots_txt");
        const struct tj *exact = tj_get(c, "exact_user_agent_matching");
        const struct tj *ms = tj_get(c, "crawl_delay_ms");
        const char *agent = cc_agent(c);
        struct parser_robots *r;
        double want, got;

        if (!exact || !exact->b || !agent || !txt || !ms)
            continue;
        want = ms->type == TJ_NUM ? ms->num / 1000 : -1;
        r = parser_robots_parse(txt->str, txt->len, agent, 0);
        got = parser_robots_crawl_delay(r);
        parser_robots_free(&r);
        dn++;
        dok += (got < 0 && want < 0) || (got - want < 1e-9 && want - got < 1e-9);
    }
    printf("crawler-commons (exact agent matching): %zu/%zu pass, %zu "
           "multi-name skipped; crawl-delay %zu/%zu (informational)\n",
           ok, n, skipped, dok, dn);
    tj_free(doc);
    tj_free(dl);
}

/* ------------------------------------------------------- hand-written */

static const struct {
    const char *txt;
    const char *agent;
    const char *path;
    int allowed;
} cases[] = {
    /* group selection */
    {"User-agent: *\nDisallow: /\n", "dcrawl", "/a", 0},
    {"User-agent: dcrawl\nDisallow: /x\nUser-agent: *\nDisallow: /\n",
     "dcrawl", "/a", 1},
    {"User-agent: dcrawl\nDisallow: /x\nUser-agent: *\nDisallow: /\n",
     "dcrawl", "/x", 0},
    {"User-agent: DCRAWL/2.0\nDisallow: /\n", "dcrawl", "/a", 0},
    {"User-agent: dcrawler\nDisallow: /\n", "dcrawl", "/a", 1},
    {"User-agent: dc\nDisallow: /\n", "dcrawl", "/a", 1},
    {"User-agent: *bot\nDisallow: /\n", "dcrawl", "/a", 1},
    {"Disallow: /\nUser-agent: *\nAllow: /\n", "dcrawl", "/a", 1},
    {"User-agent: a\nUser-agent: dcrawl\nDisallow: /p\n", "dcrawl", "/p", 0},
    {"User-agent: dcrawl\nDisallow: /a\n\nUser-agent: b\nDisallow: /\n"
     "User-agent: dcrawl\nDisallow: /c\n", "dcrawl", "/c", 0},
    {"User-agent: dcrawl\nDisallow: /a\n\nUser-agent: b\nDisallow: /\n"
     "User-agent: dcrawl\nDisallow: /c\n", "dcrawl", "/b", 1},
    {"User-agent: dcrawl\nAllow:\nUser-agent: *\nDisallow: /\n", "dcrawl",
     "/a", 1},
    {"User-agent: dcrawl\nSitemap: http://x/s.xml\nUser-agent: *\n"
     "Disallow: /\n", "dcrawl", "/a", 0},
    /* crawl-delay does not end the group (RFC 9309 2.2.4) */
    {"User-agent: dcrawl\nCrawl-delay: 3\nUser-agent: *\nDisallow: /\n",
     "dcrawl", "/a", 0},
    /* names with digits are compared whole */
    {"User-agent: crawler1\nDisallow: /\n", "crawler2", "/a", 1},
    {"User-agent: crawler1\nDisallow: /\n", "crawler1", "/a", 0},
    {"User-agent: crawler1\nDisallow: /\n", "crawler", "/a", 1},
    /* a trailing '*' matches like a prefix but counts for priority */
    {"User-agent: *\nAllow: /\nDisallow: /*\n", "x", "/", 0},
    {"User-agent: *\nAllow: /a\nDisallow: /a*$\n", "x", "/ab", 0},
    {"User-agent: *\nAllow: /abc\nDisallow: /a*$\n", "x", "/abc", 1},
    {"User-agent: *\nDisallow: /a*$\n", "x", "/ab", 0},
    /* longest match, ties */
    {"User-agent: *\nDisallow: /a\nAllow: /a/b\n", "x", "/a/b/c", 1},
    {"User-agent: *\nAllow: /a\nDisallow: /a/b\n", "x", "/a/b/c", 0},
    {"User-agent: *\nDisallow: /a/b\nAllow: /a/b\n", "x", "/a/b", 1},
    {"User-agent: *\nAllow: /a/b\nDisallow: /a/b\n", "x", "/a/b", 1},
    {"User-agent: *\nDisallow: /a*\nAllow: /ab\n", "x", "/abc", 1},
    {"User-agent: *\nDisallow: /ab*\nAllow: /ab\n", "x", "/abc", 0},
    {"User-agent: *\nDisallow:\n", "x", "/a", 1},
    /* $ and * */
    {"User-agent: *\nDisallow: /*.php$\n", "x", "/a/b.php", 0},
    {"User-agent: *\nDisallow: /*.php$\n", "x", "/a/b.php?x=1", 1},
    {"User-agent: *\nDisallow: /*.php\n", "x", "/a/b.php?x=1", 0},
    {"User-agent: *\nDisallow: /$\n", "x", "/", 0},
    {"User-agent: *\nDisallow: /$\n", "x", "/a", 1},
    {"User-agent: *\nDisallow: /a$b\n", "x", "/a$b", 0},
    {"User-agent: *\nDisallow: /a$b\n", "x", "/a", 1},
    {"User-agent: *\nDisallow: *\n", "x", "/anything", 0},
    {"User-agent: *\nDisallow: /*/*/c$\n", "x", "/a/b/c", 0},
    {"User-agent: *\nDisallow: /*/*/c$\n", "x", "/a/b/cd", 1},
    {"User-agent: *\nDisallow: /a**b\n", "x", "/axxb", 0},
    {"User-agent: *\nDisallow: /*a*a*b$\n", "x", "/aaaaaab", 0},
    {"User-agent: *\nDisallow: /*a*a*b$\n", "x", "/aaaaaa", 1},
    {"User-agent: *\nDisallow: /*a*a*b$\n", "x", "/ab", 1},
    /* percent-encoding equivalence */
    {"User-agent: *\nDisallow: /%7euser\n", "x", "/~user/x", 0},
    {"User-agent: *\nDisallow: /~user\n", "x", "/%7Euser/x", 0},
    {"User-agent: *\nDisallow: /a%2fb\n", "x", "/a%2Fb", 0},
    {"User-agent: *\nDisallow: /a%2Fb\n", "x", "/a/b", 1},
    {"User-agent: *\nDisallow: /caf\xc3\xa9\n", "x", "/caf%C3%A9", 0},
    {"User-agent: *\nDisallow: /caf%c3%a9\n", "x", "/caf%C3%A9", 0},
    {"User-agent: *\nDisallow: /a b\n", "x", "/a%20b", 0},
    {"User-agent: *\nDisallow: /%41\n", "x", "/A", 0},
    /* line syntax */
    {"\xEF\xBB\xBFUser-agent: *\nDisallow: /a\n", "x", "/a", 0},
    {"User-agent: *\r\nDisallow: /a\r\n", "x", "/a", 0},
    {"User-agent: *\rDisallow: /a\r", "x", "/a", 0},
    {"User-agent: *\r\rDisallow: /a", "x", "/a", 0},
    {"  User-agent  :  *  \n\tDisallow\t:\t/a\t\n", "x", "/a", 0},
    {"User-agent: * # all\nDisallow: /a # not /b\n", "x", "/a", 0},
    {"User-agent: * # all\nDisallow: /a # not /b\n", "x", "/b", 1},
    {"#User-agent: *\n#Disallow: /a\n", "x", "/a", 1},
    {"User-agent *\nDisallow /a\n", "x", "/a", 0},
    {"User-agent: *\nDisallow /a b\n", "x", "/a", 1},
    /* /robots.txt always allowed */
    {"User-agent: *\nDisallow: /\n", "x", "/robots.txt", 1},
    {"User-agent: *\nDisallow: /\n", "x", "/robots.txt.bak", 0},
    {"", "x", "/a", 1},
    {"garbage\n\n\n", "x", "/a", 1},
};

static const struct {
    const char *txt;
    const char *agent;
    double delay;
} delays[] = {
    {"User-agent: *\nCrawl-delay: 5\n", "x", 5},
    {"User-agent: *\nCrawl-delay: 0.5\n", "x", 0.5},
    {"User-agent: *\nCrawl-delay: 0\n", "x", 0},
    {"User-agent: *\nCrawl-delay: -1\nCrawl-delay: 7\n", "x", 7},
    {"User-agent: *\nCrawl-delay: soon\n", "x", -1},
    {"User-agent: *\nCrawl-delay: 2\nCrawl-delay: 9\n", "x", 2},
    {"User-agent: *\nCrawl-delay: 2\nUser-agent: x\nCrawl-delay: 4\n", "x", 4},
    {"User-agent: *\nCrawl-delay: 2\nUser-agent: x\nDisallow: /\n", "x", -1},
    {"User-agent: *\nCrawl-delay: 2\nUser-agent: y\nCrawl-delay: 4\n", "x", 2},
    {"Crawl-delay: 3\nUser-agent: *\nDisallow: /\n", "x", -1},
    {"User-agent: *\r\ncrawl-DELAY: 10 # be nice\r\n", "x", 10},
    {"", "x", -1},
};

static void test_tables(void)
{
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct parser_robots *r =
            parser_robots_parse(cases[i].txt, strlen(cases[i].txt), cases[i].agent,
                                PARSER_ROBOTS_CANON);
        int got = parser_robots_allowed(r, cases[i].path);
        CHECK(got == cases[i].allowed, "case %zu: %s for %s: got %d", i,
              cases[i].path, cases[i].agent, got);
        parser_robots_free(&r);
        CHECK(r == NULL, "free NULLs the pointer");
    }
    for (i = 0; i < sizeof delays / sizeof delays[0]; i++) {
        struct parser_robots *r =
            parser_robots_parse(delays[i].txt, strlen(delays[i].txt), delays[i].agent, 0);
        double got = parser_robots_crawl_delay(r);
        CHECK(got == delays[i].delay, "delay %zu: got %g want %g", i, got,
              delays[i].delay);
        parser_robots_free(&r);
    }
}

static void test_agent_token(void)
{
    static const struct {
        const char *ua, *want;
    } t[] = {
        {"dcrawl/0.1 (+http://example.com/bot)", "dcrawl"},
        {"Foo_Bar-baz/1", "Foo_Bar-baz"},
        {"Mozilla/5.0 dcrawl", "Mozilla"},
        {"/1.0", ""},
        {"", ""},
        {"bot2", "bot"},
    };
    char out[64], tiny[4];
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        parser_agent_token(t[i].ua, out, sizeof out);
        CHECK(strcmp(out, t[i].want) == 0, "token(%s) = %s", t[i].ua, out);
    }
    parser_agent_token("abcdef", tiny, sizeof tiny);
    CHECK(strcmp(tiny, "abc") == 0, "token truncated: %s", tiny);
}

static void test_sitemaps(void)
{
    static const char txt[] = "Sitemap: http://a.com/s1.xml\nUser-agent: *\n"
                              "Disallow: /x\nsitemap:http://a.com/s2.xml # c\n"
                              "Sitemap:\n";
    struct parser_robots *r = parser_robots_parse(txt, sizeof txt - 1, "x", PARSER_ROBOTS_CANON);
    const char *const *urls;
    size_t n = parser_robots_sitemaps(r, &urls);
    char *many = malloc(100 * 40), *q = many;
    int i;

    CHECK(n == 2 && strcmp(urls[0], "http://a.com/s1.xml") == 0 &&
              strcmp(urls[1], "http://a.com/s2.xml") == 0, "sitemaps: %zu", n);
    parser_robots_free(&r);
    for (i = 0; i < 100; i++)
        q += sprintf(q, "Sitemap: http://a.com/%d.xml\n", i);
    r = parser_robots_parse(many, (size_t)(q - many), "x", PARSER_ROBOTS_CANON);
    n = parser_robots_sitemaps(r, &urls);
    CHECK(n == 64, "sitemaps are bounded: %zu", n);
    parser_robots_free(&r);
    free(many);
}

static void test_all_and_null(void)
{
    struct parser_robots *a = parser_robots_all(1), *d = parser_robots_all(0);

    CHECK(parser_robots_allowed(a, "/x") == 1, "allow all");
    CHECK(parser_robots_allowed(d, "/x") == 0, "disallow all");
    CHECK(parser_robots_allowed(d, "/robots.txt") == 1, "robots.txt allowed");
    CHECK(parser_robots_crawl_delay(a) == -1, "no delay");
    parser_robots_free(&a);
    parser_robots_free(&d);
    parser_robots_free(&d);
    parser_robots_free(NULL);
}

/* Rules after the first 500 KiB are not read. */
static void test_cutoff(void)
{
    size_t pad = 500 * 1024, n;
    char *buf = malloc(pad + 256);
    struct parser_robots *r;

    n = (size_t)sprintf(buf, "User-agent: *\nDisallow: /early\n#");
    memset(buf + n, 'x', pad - n - 40);
    n = pad - 40;
    n += (size_t)sprintf(buf + n, "\nDisallow: /in\n");
    memset(buf + n, '\n', pad - n);
    n = pad;
    n += (size_t)sprintf(buf + n, "Disallow: /late\n");
    r = parser_robots_parse(buf, n, "x", PARSER_ROBOTS_CANON);
    CHECK(parser_robots_allowed(r, "/early") == 0, "rule at the start");
    CHECK(parser_robots_allowed(r, "/in") == 0, "rule just inside 500 KiB");
    CHECK(parser_robots_allowed(r, "/late") == 1, "rule after 500 KiB ignored");
    parser_robots_free(&r);
    free(buf);
}

static void test_pathological(void)
{
    char txt[1 << 16], path[1 << 16];
    struct parser_robots *r;
    double t0 = now_s(), dt;
    size_t i, n = 0;
    int k;

    n += (size_t)sprintf(txt, "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*b\n"
                               "Disallow: /*a*a*a*a*a*a*a*a*a*a*b$\n");
    for (k = 0; k < 1000; k++)
        n += (size_t)sprintf(txt + n, "Disallow: /x%d*y*z\n", k);
    r = parser_robots_parse(txt, n, "x", PARSER_ROBOTS_CANON);
    path[0] = '/';
    memset(path + 1, 'a', sizeof path - 2);
    path[sizeof path - 1] = '\0';
    for (i = 0; i < 20; i++)
        CHECK(parser_robots_allowed(r, path) == 1, "no b, allowed");
    path[sizeof path - 2] = 'b';
    CHECK(parser_robots_allowed(r, path) == 0, "ends with b");
    dt = now_s() - t0;
    CHECK(dt < 5.0, "pathological patterns took %.2f s", dt);
    parser_robots_free(&r);
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random bytes and random robots-like text: must not crash or leak. */
static void test_garbage(void)
{
    static const char alpha[] = "User-agent:*Disallow/Allow$%aB#\r\n \t\xc3\xa9x";
    static const char *const paths[] = {"/", "/a", "/%", "/B$", "/robots.txt"};
    char buf[4096];
    size_t it, i, n;

    for (it = 0; it < 2000; it++) {
        struct parser_robots *r;
        n = rnd() % sizeof buf;
        for (i = 0; i < n; i++)
            buf[i] = it & 1 ? (char)rnd() : alpha[rnd() % (sizeof alpha - 1)];
        r = parser_robots_parse(buf, n, it & 2 ? "aB" : "x", it & 4 ? PARSER_ROBOTS_CANON : 0);
        for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            int a = parser_robots_allowed(r, paths[i]);
            CHECK(a == 0 || a == 1, "verdict is 0 or 1");
        }
        parser_robots_free(&r);
    }
}

int main(void)
{
    test_url_path();
    test_google();
    test_crawler_commons();
    test_tables();
    test_agent_token();
    test_all_and_null();
    test_sitemaps();
    test_cutoff();
    test_pathological();
    test_garbage();
    return t_done("u-robots");
}
