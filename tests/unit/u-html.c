/*
 * u-html.c: link extraction (parser/html.c).
 *
 *  - a table of small pages with their expected canonical links, found and
 *    rejected counts and effective base;
 *  - hostile input: NUL bytes, binary garbage, unclosed tags, 100k levels
 *    of nesting, huge attributes; none may crash (ASan/UBSan build);
 *  - a generated site: gen_site.py (the benchmark's generator) writes pages
 *    and, independently, the canonical target of every link (links.jsonl);
 *    for every page the set of links we extract must equal that set;
 *  - page directives (meta robots, rel=nofollow, canonical, refresh) and
 *    charset detection / conversion (parser/charset.c), as tables;
 *  - block context flags: semantic navigation (nav, aside, menu, landmark
 *    roles; header/footer only outside sectioning content, as HTML-AAM
 *    maps them), main content (main, article, role main), inherited
 *    through any element, with the full and a minimal block tag set; the
 *    link's block is its leaf-most one; a link in nav and in text keeps
 *    the text occurrence;
 *  - script and style content left out before gumbo (and kept where the
 *    scan cannot be exact).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gumbo.h>

#include "conf.h"
#include "parser-internal.h"
#include "parser.h"
#include "t.h"
#include "tjson.h"

#define MAXL 8

static const struct {
    const char *name;
    const char *page;
    const char *html;
    size_t found, rejected;
    const char *base; /* NULL: the page URL */
    const char *links[MAXL];
} cases[] = {
    {"absolute", "http://p.com/", "<a href=\"http://a.com/x\">x</a>", 1, 0,
     NULL, {"http://a.com/x"}},
    {"relative", "http://p.com/d/e.html",
     "<p><a href=\"f.html\">f</a> <a href=\"../g\">g</a> <a href=\"/h?q=1\">",
     3, 0, NULL, {"http://p.com/d/f.html", "http://p.com/g", "http://p.com/h?q=1"}},
    {"upper case markup", "http://p.com/", "<A HREF=\"/u\">u</A>", 1, 0, NULL,
     {"http://p.com/u"}},
    {"base in head", "http://p.com/d/e.html",
     "<html><head><base href=\"http://b.com/z/\"></head><body><a href=\"y\">",
     1, 0, "http://b.com/z/", {"http://b.com/z/y"}},
    {"base after the link", "http://p.com/",
     "<body><a href=\"y\">y</a><base href=\"http://b.com/z/\"></body>", 1, 0,
     "http://b.com/z/", {"http://b.com/z/y"}},
    {"first base wins", "http://p.com/",
     "<base href=\"/one/\"><base href=\"/two/\"><a href=\"y\">", 1, 0,
     "http://p.com/one/", {"http://p.com/one/y"}},
    {"first base with href", "http://p.com/",
     "<base target=\"_blank\"><base href=\"/q/\"><a href=\"y\">", 1, 0,
     "http://p.com/q/", {"http://p.com/q/y"}},
    {"relative base", "http://p.com/d/e.html",
     "<base href=\"sub/\"><a href=\"y\">", 1, 0, "http://p.com/d/sub/",
     {"http://p.com/d/sub/y"}},
    {"unusable base", "http://p.com/d/e.html",
     "<base href=\"javascript:void(0)\"><a href=\"y\">", 1, 0, NULL,
     {"http://p.com/d/y"}},
    {"area iframe", "http://p.com/",
     "<map name=m><area href=\"/m\" shape=rect></map><iframe src=\"/i\"></iframe>"
     "<img src=\"/not-a-link.png\"><link href=\"/style.css\">",
     2, 0, NULL, {"http://p.com/m", "http://p.com/i"}},
    {"frameset", "http://p.com/d/",
     "<html><frameset><frame src=\"/f1\"><frame src=\"f2\"></frameset></html>",
     2, 0, NULL, {"http://p.com/f1", "http://p.com/d/f2"}},
    {"rejected schemes", "http://p.com/",
     "<a href=\"javascript:alert(1)\">j</a><a href=\"mailto:a@b.c\">m</a>"
     "<a href=\"ftp://f.com/x\">f</a><a href=\"data:text/html,hi\">d</a>"
     "<a href=\"tel:123\">t</a>",
     5, 5, NULL, {NULL}},
    {"duplicates collapse", "http://p.com/",
     "<a href=\"/x\">1</a><a href=\"/x#frag\">2</a><a href=\"http://P.COM:80/x\">3"
     "</a><a href=\"/./x\">4</a>",
     4, 0, NULL, {"http://p.com/x"}},
    {"first occurrence order", "http://p.com/",
     "<a href=\"/b\"></a><a href=\"/a\"></a><a href=\"/b\"></a><a href=\"/c\">",
     4, 0, NULL, {"http://p.com/b", "http://p.com/a", "http://p.com/c"}},
    {"whitespace trimmed", "http://p.com/",
     "<a href=\"  /x \n\">x</a><a href=\"\t/y\">y</a>", 2, 0, NULL,
     {"http://p.com/x", "http://p.com/y"}},
    {"entities decoded", "http://p.com/",
     "<a href=\"/x?a=1&amp;b=2\">x</a>", 1, 0, NULL, {"http://p.com/x?a=1&b=2"}},
    {"empty href is the page", "http://p.com/d/e.html", "<a href=\"\">self</a>",
     1, 0, NULL, {"http://p.com/d/e.html"}},
    {"no href", "http://p.com/", "<a name=\"top\">t</a><a>x</a><iframe></iframe>",
     0, 0, NULL, {NULL}},
    /* the open <a href='/y'> is reopened (cloned) by the HTML5 tree
     * builder after the table, so 4 attributes are seen */
    {"unquoted and unclosed", "http://p.com/",
     "<div><a href=/x>x<div><a href='/y'>y<table><tr><td><a href=/z>", 4, 0,
     NULL, {"http://p.com/x", "http://p.com/y", "http://p.com/z"}},
    {"tag cut by the end of input is dropped", "http://p.com/",
     "<a href=/x>x</a><a href=/z", 1, 0, NULL, {"http://p.com/x"}},
    {"broken tags", "http://p.com/",
     "<a href=\"/ok\"</a><a href=\"/q\" <b>>", 2, 0, NULL,
     {"http://p.com/ok", "http://p.com/q"}},
    {"links in comments and scripts are not links", "http://p.com/",
     "<!-- <a href=\"/c\"> --><script>var s='<a href=\"/s\">';</script>"
     "<textarea><a href=\"/t\"></textarea><a href=\"/real\">",
     1, 0, NULL, {"http://p.com/real"}},
    {"template contents", "http://p.com/",
     "<template><a href=\"/t\"></a><base href=\"/nope/\"></template>"
     "<a href=\"u\">",
     2, 0, NULL, {"http://p.com/t", "http://p.com/u"}},
    {"svg anchor", "http://p.com/",
     "<svg><a href=\"/s\"><text>s</text></a></svg>", 1, 0, NULL,
     {"http://p.com/s"}},
    {"empty page", "http://p.com/", "", 0, 0, NULL, {NULL}},
    {"text only", "http://p.com/", "just text, no markup", 0, 0, NULL, {NULL}},
};

static size_t count_links(const char *const *l)
{
    size_t n = 0;

    while (n < MAXL && l[n])
        n++;
    return n;
}

static void check_result(const char *name, const struct parser_result *r,
                         const char *const *want, size_t found,
                         size_t rejected, const char *base)
{
    size_t i, n = count_links(want);

    CHECK(r->found == found, "%s: found %zu want %zu", name, r->found, found);
    CHECK(r->rejected == rejected, "%s: rejected %zu want %zu", name,
          r->rejected, rejected);
    CHECK(r->base && strcmp(r->base, base) == 0, "%s: base %s want %s", name,
          r->base, base);
    CHECK(r->nlinks == n, "%s: %zu links want %zu", name, r->nlinks, n);
    for (i = 0; i < r->nlinks && i < n; i++) {
        CHECK(strcmp(r->links[i].url, want[i]) == 0 &&
                  r->links[i].len == strlen(want[i]),
              "%s: link %zu = %s want %s", name, i, r->links[i].url, want[i]);
    }
}

static void test_table(void)
{
    struct parser *p = parser_new(0, 2048);
    const struct parser_result *r;
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = parser_parse_html(p, cases[i].page, cases[i].html,
                                   strlen(cases[i].html), &r);
        CHECK(rc == DC_OK, "%s: rc %d", cases[i].name, rc);
        if (rc == DC_OK)
            check_result(cases[i].name, r, cases[i].links, cases[i].found,
                         cases[i].rejected,
                         cases[i].base ? cases[i].base : cases[i].page);
    }
    parser_free(&p);
    CHECK(p == NULL, "parser_free NULLs the pointer");
    parser_free(&p);
    parser_free(NULL);
}

/* Bytes the table cannot hold: NUL bytes, long values, flags. */
static void test_special(void)
{
    static const char nul_html[] = "<a href=\"/a\0b\">x</a>\0<a\0 href=/c>"
                                   "<a href=\"/d\">";
    static const char strip_html[] = "<a href=\"/d/index.html\"><a href=\"/d/\">"
                                     "<a href=\"index.html\">";
    struct parser *p = parser_new(0, 100);
    struct parser *ps = parser_new(PARSER_URL_STRIP_INDEX, 0);
    const struct parser_result *r;
    const char *want_nul[] = {"http://p.com/a%EF%BF%BDb", "http://p.com/d", NULL};
    const char *want_strip[] = {"http://p.com/d/", "http://p.com/", NULL};
    const char *want_none[] = {NULL};
    char *big;
    size_t n;

    CHECK(parser_parse_html(p, "http://p.com/", nul_html, sizeof nul_html - 1,
                            &r) == DC_OK, "nul bytes");
    check_result("nul bytes", r, want_nul, 2, 0, "http://p.com/");

    CHECK(parser_parse_html(ps, "http://p.com/", strip_html,
                            strlen(strip_html), &r) == DC_OK, "strip");
    check_result("strip index", r, want_strip, 3, 0, "http://p.com/");

    /* an href longer than max_len is rejected, not truncated */
    n = 1 << 20;
    big = malloc(n + 64);
    memcpy(big, "<a href=\"/", 10);
    memset(big + 10, 'x', n);
    memcpy(big + 10 + n, "\">", 3);
    CHECK(parser_parse_html(p, "http://p.com/", big, n + 12, &r) == DC_OK, "big");
    check_result("huge attribute", r, want_none, 1, 1, "http://p.com/");
    free(big);

    CHECK(parser_parse_html(NULL, "http://p.com/", "", 0, &r) == DC_EINVAL,
          "NULL parser");
    CHECK(parser_parse_html(p, NULL, "", 0, &r) == DC_EINVAL, "NULL page");
    CHECK(parser_parse_html(p, "http://p.com/", NULL, 5, &r) == DC_EINVAL,
          "NULL body with a length");
    CHECK(parser_parse_html(p, "http://p.com/", NULL, 0, &r) == DC_OK &&
              r->nlinks == 0, "NULL empty body");
    parser_free(&p);
    parser_free(&ps);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 100k nested elements, then a link at the bottom and one after. */
static void test_deep(const char *open, const char *close)
{
    size_t depth = 100000, lo = strlen(open), lc = strlen(close), n = 0, i;
    char *buf = malloc(depth * (lo + lc) + 64);
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    double t0 = now_s(), dt;

    for (i = 0; i < depth; i++, n += lo)
        memcpy(buf + n, open, lo);
    n += (size_t)sprintf(buf + n, "<a href=\"/deep\">");
    for (i = 0; i < depth; i++, n += lc)
        memcpy(buf + n, close, lc);
    n += (size_t)sprintf(buf + n, "<a href=\"/after\">");
    CHECK(parser_parse_html(p, "http://p.com/", buf, n, &r) == DC_OK, "deep");
    CHECK(r->nlinks == 2 && strcmp(r->links[0].url, "http://p.com/deep") == 0,
          "deep %s: %zu links", open, r->nlinks);
    /* the parser is reusable after a huge tree */
    CHECK(parser_parse_html(p, "http://p.com/", "<a href=/s>", 11, &r) == DC_OK &&
              r->nlinks == 1, "reuse after deep");
    dt = now_s() - t0;
    CHECK(dt < 60, "deep %s took %.1f s", open, dt);
    printf("nesting 100k x %s: %.2f s\n", open, dt);
    parser_free(&p);
    free(buf);
}

/* A huge page's arena is not kept; small pages reuse one chunk. (gumbo
 * itself needs ~25 bytes of tree per byte of such markup.) */
static void test_arena(void)
{
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    size_t n = 0, i, small, big, after;
    char *buf = malloc(11 << 20);
    static const char page[] = "<html><body><p>hi <a href=/x>x</a></p>";

    CHECK(parser_parse_html(p, "http://p.com/", page, sizeof page - 1, &r) == DC_OK,
          "small page");
    small = parser__arena_bytes(p);
    for (i = 0; i < 200; i++)
        CHECK(parser_parse_html(p, "http://p.com/", page, sizeof page - 1, &r) == DC_OK &&
                  parser__arena_bytes(p) == small, "small pages reuse the arena");
    for (i = 0; n < (10u << 20); i++)
        n += (size_t)sprintf(buf + n, "<p class=c%zu><a href=/l%zu>t</a>", i, i % 1000);
    CHECK(parser_parse_html(p, "http://p.com/", buf, n, &r) == DC_OK &&
              r->nlinks == 1000, "big page: %zu links", r->nlinks);
    big = parser__arena_bytes(p);
    CHECK(big > (32u << 20), "big page arena %zu", big);
    CHECK(parser_parse_html(p, "http://p.com/", page, sizeof page - 1, &r) == DC_OK,
          "small page after big");
    after = parser__arena_bytes(p);
    CHECK(after <= (9u << 20), "arena after a big page: %zu bytes", after);
    for (i = 0; i < 100; i++)
        parser_parse_html(p, "http://p.com/", page, sizeof page - 1, &r);
    CHECK(parser__arena_bytes(p) <= (1u << 20), "arena shrinks back: %zu bytes",
          parser__arena_bytes(p));
    printf("arena: small page %zu B, 10 MB page %zu B, after it %zu B, "
           "later %zu B\n", small, big, after, parser__arena_bytes(p));
    parser_free(&p);
    free(buf);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Binary garbage and random tag soup: never crash, counts stay sane. */
static void test_garbage(void)
{
    static const char *const tok[] = {
        "<a href=", "\"", "'", "/x", ">", "<", "</a>", "<base href=", "<div>",
        "<table>", "<tr>", "<td>", "<frameset>", "<frame src=", "<iframe src=",
        "<!--", "-->", "<script>", "</script>", "&amp;", "&#x0;", "\0",
        "<svg>", "<math>", "<template>", "</template>", "<select>", "<p>",
        "javascript:", "http://h.com/", "%", "\xff\xfe", "<area href=",
        "<![CDATA[", "]]>", "<noscript>", "<plaintext>", "<title>", " ",
    };
    size_t ntok = sizeof tok / sizeof tok[0], it, i, n;
    char *buf = malloc(1 << 16);
    struct parser *p = parser_new(PARSER_URL_STRIP_INDEX, 256);
    const struct parser_result *r;

    for (it = 0; it < 300; it++) {
        n = 0;
        if (it & 1) {
            size_t len = rnd() % (1 << 16);
            for (i = 0; i < len; i++)
                buf[n++] = (char)rnd();
        } else {
            while (n < (1 << 16) - 32) {
                const char *t = tok[rnd() % ntok];
                size_t tl = t[0] ? strlen(t) : 1;
                if (rnd() % 50 == 0)
                    break;
                memcpy(buf + n, t, tl);
                n += tl;
            }
        }
        CHECK(parser_parse_html(p, "http://p.com/", buf, n, &r) == DC_OK,
              "garbage %zu", it);
        CHECK(r->nlinks + r->rejected <= r->found, "garbage %zu counts", it);
    }
    parser_free(&p);
    free(buf);
}

/* ------------------------------------------------------- generated site */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort and drop duplicates; returns the new count. */
static size_t uniq(const char **v, size_t n)
{
    size_t i, o = 0;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_str);
    for (i = 0; i < n; i++)
        if (o == 0 || strcmp(v[o - 1], v[i]) != 0)
            v[o++] = v[i];
    return o;
}

/* The file under DIR/hosts/ that gen_site.py wrote for a page URL. */
static int page_file(const char *dir, const char *url, char *out, size_t cap)
{
    const char *host = strstr(url, "://"), *colon, *path;
    int n;

    if (!host)
        return -1;
    host += 3;
    path = strchr(host, '/');
    if (!path)
        return -1;
    colon = memchr(host, ':', (size_t)(path - host));
    n = snprintf(out, cap, "%s/hosts/%.*s%s%s", dir,
                 (int)((colon ? colon : path) - host), host, path,
                 path[strlen(path) - 1] == '/' ? "index.html" : "");
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Compare one page; returns 1 when the link sets are equal. */
static int site_page(struct parser *p, const char *dir, const struct tj *line)
{
    const char *url = tj_str(tj_get(line, "url"));
    const struct tj *links = tj_get(line, "links");
    const struct parser_result *r;
    const char **want, **got;
    char path[4096], *html;
    size_t len, i, nw, ng;
    int same;

    if (!url || !links || page_file(dir, url, path, sizeof path) != 0)
        return 0;
    html = t_slurp(path, &len);
    if (!html || parser_parse_html(p, url, html, len, &r) != DC_OK) {
        free(html);
        return 0;
    }
    want = calloc(links->n + 1, sizeof *want);
    got = calloc(r->nlinks + 1, sizeof *got);
    for (i = 0, nw = 0; i < links->n; i++)
        if (tj_str(tj_get(links->items[i], "target")))
            want[nw++] = tj_str(tj_get(links->items[i], "target"));
    for (i = 0; i < r->nlinks; i++)
        got[i] = r->links[i].url;
    nw = uniq(want, nw);
    ng = uniq(got, r->nlinks);
    same = nw == ng;
    for (i = 0; same && i < nw; i++)
        same = strcmp(want[i], got[i]) == 0;
    if (!same) {
        fprintf(stderr, "site page %s: %zu links, expected %zu\n", url, ng, nw);
        for (i = 0; i < nw || i < ng; i++)
            fprintf(stderr, "  want %-50s got %s\n", i < nw ? want[i] : "-",
                    i < ng ? got[i] : "-");
    }
    free(want);
    free(got);
    free(html);
    return same;
}

static void test_site(void)
{
    char dir[] = "/tmp/u-html-site-XXXXXX", cmd[1024], path[1100];
    struct parser *p = parser_new(PARSER_URL_STRIP_INDEX, 0);
    size_t pages = 0, ok = 0, len, pos, end;
    char *jl;
    int rc;

    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    snprintf(cmd, sizeof cmd,
             "python3 '%s/bench/gen_site.py' --out '%s' --hosts 2 --pages 60 "
             "--seed 3 >/dev/null", DC_SHARED_DIR, dir);
    rc = system(cmd);
    CHECK(rc == 0, "gen_site.py exit %d", rc);
    snprintf(path, sizeof path, "%s/links.jsonl", dir);
    jl = t_slurp(path, &len);
    CHECK(jl != NULL, "links.jsonl");
    for (pos = 0; jl && pos < len; pos = end + 1) {
        struct tj *line;
        end = pos;
        while (end < len && jl[end] != '\n')
            end++;
        if (end == pos)
            continue;
        line = tj_parse(jl + pos, end - pos);
        pages++;
        ok += line && site_page(p, dir, line);
        tj_free(line);
    }
    CHECK(pages >= 100, "generated site has %zu pages", pages);
    CHECK(ok == pages, "site pages matching: %zu of %zu", ok, pages);
    printf("generated site: %zu/%zu pages match links.jsonl\n", ok, pages);
    free(jl);
    parser_free(&p);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    rc = system(cmd);
    CHECK(rc == 0, "cleanup");
}

/* Page directives: meta robots (and the agent's own meta), rel=nofollow,
 * rel=canonical, meta refresh. links: what is returned, in order. */
static const struct {
    const char *name;
    const char *html;
    unsigned meta;     /* PARSER_META_* */
    size_t nofollow;
    const char *canonical, *refresh;
    const char *links[MAXL];
} dcases[] = {
    {"no directives", "<a href=/a>", 0, 0, NULL, NULL, {"http://p.com/a"}},
    {"meta nofollow", "<meta name=robots content=nofollow><a href=/a><a href=/b>",
     PARSER_META_NOFOLLOW, 2, NULL, NULL, {NULL}},
    {"meta noindex, case and commas",
     "<META NAME=Robots CONTENT=\"NoIndex,Follow\"><a href=/a>",
     PARSER_META_NOINDEX, 0, NULL, NULL, {"http://p.com/a"}},
    {"meta none", "<meta name=robots content=none><a href=/a>",
     PARSER_META_NOFOLLOW | PARSER_META_NOINDEX, 1, NULL, NULL, {NULL}},
    {"agent's own meta", "<meta name=dcrawl content='noindex nofollow'><a href=/a>",
     PARSER_META_NOFOLLOW | PARSER_META_NOINDEX, 1, NULL, NULL, {NULL}},
    {"another agent's meta ignored",
     "<meta name=googlebot content=nofollow><a href=/a>", 0, 0, NULL, NULL,
     {"http://p.com/a"}},
    {"meta without content ignored", "<meta name=robots><a href=/a>", 0, 0,
     NULL, NULL, {"http://p.com/a"}},
    {"meta in a template ignored",
     "<template><meta name=robots content=nofollow></template><a href=/a>", 0,
     0, NULL, NULL, {"http://p.com/a"}},
    {"rel nofollow among tokens",
     "<a rel='ugc NoFollow' href=/x><a rel=nofollower href=/y>"
     "<area rel=nofollow href=/z>", 0, 2, NULL, NULL, {"http://p.com/y"}},
    {"canonical, first wins, resolved",
     "<link rel=canonical href='/c?x=1#f'><link rel=canonical href=/d>", 0, 0,
     "http://p.com/c?x=1", NULL, {NULL}},
    {"canonical among rel tokens", "<link rel='alternate canonical' href=/c>",
     0, 0, "http://p.com/c", NULL, {NULL}},
    {"unusable canonical", "<link rel=canonical href='javascript:x'>", 0, 0,
     NULL, NULL, {NULL}},
    {"refresh with url=", "<meta http-equiv=refresh content='5; url=/r'>", 0,
     0, NULL, "http://p.com/r", {"http://p.com/r"}},
    {"refresh quoted, upper case",
     "<meta http-equiv=REFRESH content=\"0;URL='/q r'\">", 0, 0, NULL,
     "http://p.com/q%20r", {"http://p.com/q%20r"}},
    {"refresh without url=", "<meta http-equiv=refresh content='1, /s'>", 0, 0,
     NULL, "http://p.com/s", {"http://p.com/s"}},
    {"refresh of the page itself", "<meta http-equiv=refresh content=30>", 0,
     0, NULL, NULL, {NULL}},
    {"refresh without a time", "<meta http-equiv=refresh content='url=/t'>",
     0, 0, NULL, NULL, {NULL}},
    {"refresh under meta nofollow",
     "<meta name=robots content=nofollow>"
     "<meta http-equiv=refresh content='0;url=/r'>",
     PARSER_META_NOFOLLOW, 1, NULL, "http://p.com/r", {NULL}},
    {"refresh also a link, once",
     "<a href=/r><meta http-equiv=refresh content='0;url=/r'>", 0, 0, NULL,
     "http://p.com/r", {"http://p.com/r"}},
};

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void test_directives(void)
{
    struct parser *p = parser_new(0, 2048);
    const struct parser_result *r;
    size_t i, k, n;

    parser_set_agent(p, "dcrawl");
    for (i = 0; i < sizeof dcases / sizeof dcases[0]; i++) {
        const char *name = dcases[i].name;
        int rc = parser_parse_html(p, "http://p.com/", dcases[i].html,
                                   strlen(dcases[i].html), &r);
        CHECK(rc == DC_OK, "%s: rc %d", name, rc);
        if (rc)
            continue;
        CHECK(r->meta_robots == dcases[i].meta, "%s: meta %u want %u", name,
              r->meta_robots, dcases[i].meta);
        CHECK(r->nofollow == dcases[i].nofollow, "%s: nofollow %zu want %zu",
              name, r->nofollow, dcases[i].nofollow);
        CHECK(same(r->canonical, dcases[i].canonical), "%s: canonical %s",
              name, r->canonical ? r->canonical : "(null)");
        CHECK(same(r->refresh, dcases[i].refresh), "%s: refresh %s", name,
              r->refresh ? r->refresh : "(null)");
        n = count_links(dcases[i].links);
        CHECK(r->nlinks == n, "%s: %zu links want %zu", name, r->nlinks, n);
        for (k = 0; k < n && k < r->nlinks; k++)
            CHECK(strcmp(r->links[k].url, dcases[i].links[k]) == 0,
                  "%s: link %s", name, r->links[k].url);
    }
    /* directives do not leak into the next page */
    CHECK(parser_parse_html(p, "http://p.com/", "<a href=/a>", 11, &r) ==
                  DC_OK &&
              r->meta_robots == 0 && !r->canonical && !r->refresh &&
              r->nlinks == 1,
          "next page clean");
    parser_free(&p);
}

/* Charset detection: header, then BOM, then meta prescan. */
static const struct {
    const char *ctype, *body, *want; /* want NULL: none found */
} ccases[] = {
    {"text/html; charset=ISO-8859-1", "", "windows-1252"},
    {"text/html;charset=\"Shift_JIS\"", "", "shift_jis"},
    {"text/html; Charset = utf8", "", "utf-8"},
    {"text/html", "<meta charset=euc-jp>", "euc-jp"},
    {NULL, "<!-- <meta charset=koi8-r> --><meta charset='windows-1251'>",
     "windows-1251"},
    {NULL, "<meta http-equiv=content-type content='text/html; charset=gbk'>",
     "gbk"},
    {NULL, "<meta content=\"text/html;charset=big5\" http-equiv=Content-Type>",
     "big5"},
    {NULL, "<meta content='text/html; charset=gbk'>", NULL},
    {NULL, "<meta charset=utf-16>", "utf-8"},
    {"text/html; charset=utf-8", "<meta charset=latin1>", "utf-8"},
    {NULL, "\xEF\xBB\xBF<meta charset=latin1>", "utf-8"},
    {NULL, "<meta charset=\"bad label!\">", NULL},
    {NULL, "<p>no declaration</p>", NULL},
    {"text/html; charset=", "<meta charset=", NULL},
};

static void test_charset(void)
{
    char cs[64], *out = NULL;
    size_t i, n;
    int cut = 0, found;
    /* a meta past the first 1024 bytes is not seen */
    char late[1200];

    for (i = 0; i < sizeof ccases / sizeof ccases[0]; i++) {
        found = parser_charset_detect(ccases[i].ctype, ccases[i].body,
                                      strlen(ccases[i].body), cs, sizeof cs);
        CHECK(found == (ccases[i].want != NULL) &&
                  (!found || strcmp(cs, ccases[i].want) == 0),
              "charset case %zu: found %d %s", i, found, found ? cs : "");
    }
    memset(late, ' ', sizeof late);
    memcpy(late + 1100, "<meta charset=gbk>", 18);
    CHECK(!parser_charset_detect(NULL, late, sizeof late, cs, sizeof cs),
          "prescan stops at 1024 bytes");

    CHECK(parser_charset_to_utf8("windows-1252", "caf\xe9 \x80", 6, 100, &out,
                                 &n, &cut) == DC_OK &&
              n == 9 && memcmp(out, "caf\xc3\xa9 \xe2\x82\xac", 9) == 0 &&
              !cut,
          "windows-1252");
    free(out);
    out = NULL;
    /* invalid Shift_JIS bytes and a truncated lead byte at the end */
    CHECK(parser_charset_to_utf8("shift_jis", "a\xff\x93\xfa\x82", 5, 100,
                                 &out, &n, &cut) == DC_OK &&
              n == 1 + 3 + 3 + 3 &&
              memcmp(out, "a\xef\xbf\xbd\xe6\x97\xa5\xef\xbf\xbd", n) == 0,
          "shift_jis with invalid bytes: %zu", n);
    free(out);
    out = NULL;
    /* the output cap */
    CHECK(parser_charset_to_utf8("windows-1252", "\xe9\xe9\xe9\xe9", 4, 5,
                                 &out, &n, &cut) == DC_OK &&
              n == 4 && cut,
          "capped output: %zu", n);
    free(out);
    out = NULL;
    CHECK(parser_charset_to_utf8("no-such-charset", "x", 1, 10, &out, &n,
                                 &cut) == DC_EINVAL &&
              !out,
          "unknown charset");
    CHECK(parser_charset_to_utf8("windows-1252", "", 0, 10, &out, &n, &cut) ==
                  DC_OK && n == 0,
          "empty input");
    free(out);
    CHECK(parser_charset_is_utf8("utf-8") && parser_charset_is_utf8(NULL) &&
              !parser_charset_is_utf8("gbk"),
          "is_utf8");
}


/* ------------------------------------------------------------ big pages */

struct gen {
    char *buf;
    size_t n, cap;
    char **want; /* expected links, document order, unique */
    size_t nwant, capwant;
};

static void g_put(struct gen *g, const char *s, size_t n)
{
    if (g->n + n + 1 > g->cap) {
        while (g->n + n + 1 > g->cap)
            g->cap = g->cap ? g->cap * 2 : 1 << 20;
        g->buf = realloc(g->buf, g->cap);
    }
    memcpy(g->buf + g->n, s, n);
    g->n += n;
    g->buf[g->n] = '\0';
}

static void g_str(struct gen *g, const char *s)
{
    g_put(g, s, strlen(s));
}

/* A link the parser must find (once): href is relative to the base. */
static void g_link(struct gen *g, const char *base, const char *href)
{
    char tag[256], *amp;
    size_t k;

    snprintf(tag, sizeof tag, "<a class=\"l\" href=\"%s\">%s</a>", href, href);
    g_str(g, tag);
    snprintf(tag, sizeof tag, "%s%s", base, href);
    if ((amp = strstr(tag, "&amp;")))
        memmove(amp + 1, amp + 5, strlen(amp + 5) + 1);
    for (k = 0; k < g->nwant; k++)
        if (strcmp(g->want[k], tag) == 0)
            return; /* a repeat: found once, at its first place */
    if (g->nwant == g->capwant) {
        g->capwant = g->capwant ? g->capwant * 2 : 256;
        g->want = realloc(g->want, g->capwant * sizeof *g->want);
    }
    g->want[g->nwant++] = strdup(tag);
}

/* Dense markup without links, about n bytes. */
static void g_filler(struct gen *g, size_t n)
{
    size_t end = g->n + n, i = 0;
    char row[160];

    while (g->n < end) {
        snprintf(row, sizeof row,
                 "<tr><td class=c%zu>cell %zu</td><td><span>s</span><b>b</b>"
                 "</td><td>&amp; text</td></tr>\n", i % 7, i);
        g_str(g, row);
        i++;
    }
}

/* Tokens that hold a link-like string the parser must not find: a
 * comment, a script, a style, a textarea, a title in the body, an
 * attribute value, a rel=nofollow link. `big` makes each one about that
 * many bytes long (longer than a slice: no cut point inside). */
static void g_traps(struct gen *g, size_t big, int k)
{
    char t[512];
    size_t end;

    snprintf(t, sizeof t, "<!-- <a href=\"/trap/c%d\">c</a> ", k);
    g_str(g, t);
    for (end = g->n + big; g->n < end;)
        g_str(g, "<a href=\"/trap/cc\"> - > -- ! <div> ");
    g_str(g, "-->");
    snprintf(t, sizeof t, "<script>var s = '<a href=\"/trap/s%d\">'; ", k);
    g_str(g, t);
    for (end = g->n + big; g->n < end;)
        g_str(g, "document.write('<a href=/trap/ss></a><div>'); // </scrip \n");
    g_str(g, "</script ><style>a[href='<a href=/trap/st>'] {}</style>");
    snprintf(t, sizeof t,
             "<textarea><a href=\"/trap/t%d\"></textarea><title><a href=/trap/ti>"
             "</title><p title=\"<a href='/trap/at%d'>\" data-x='>'>x</p>"
             "<a rel=\"nofollow\" href=\"/trap/nf%d\">nf</a>", k, k, k);
    g_str(g, t);
}

/*
 * A page of about `size` bytes: <base href> in the head, links at the very
 * start, every `step` bytes through dense filler, around traps (some longer
 * than a slice), repeated ones, and as the very last bytes of the body.
 */
static void g_page(struct gen *g, size_t size, size_t step, size_t trap,
                   const char *head_extra)
{
    const char *base = "http://b.com/base/";
    char href[64];
    size_t i = 0, k = 0;

    g->n = 0;
    while (g->nwant)
        free(g->want[--g->nwant]);
    g_str(g, "<!doctype html><html><head><base href=\"");
    g_str(g, base);
    g_str(g, "\">");
    g_str(g, head_extra);
    g_str(g, "</head><body>");
    g_link(g, base, "first");
    g_str(g, "<table>");
    while (g->n < size - 200) {
        g_filler(g, step);
        snprintf(href, sizeof href, "p/%zu.html", i++);
        g_link(g, base, href);
        if (i % 50 == 0)
            g_link(g, base, "first"); /* a repeat */
        if (i % 200 == 0)
            g_traps(g, trap, (int)k++);
        g_link(g, base, "q?x=1&amp;y=2");
    }
    g_str(g, "</table>");
    g_link(g, base, "last");
}

static void g_free(struct gen *g)
{
    size_t k;

    for (k = 0; k < g->nwant; k++)
        free(g->want[k]);
    free(g->want);
    free(g->buf);
}

/* The result's links equal g's expected list, in order. */
static int same_links(const struct parser_result *r, const struct gen *g,
                      const char *what)
{
    size_t k;

    if (r->nlinks != g->nwant) {
        fprintf(stderr, "%s: %zu links, want %zu\n", what, r->nlinks, g->nwant);
        for (k = 0; k < r->nlinks; k++)
            if (strstr(r->links[k].url, "trap")) {
                fprintf(stderr, "  found a trap: %s\n", r->links[k].url);
                break;
            }
        for (k = 0; k < g->nwant && k < r->nlinks; k++)
            if (strcmp(r->links[k].url, g->want[k]) != 0) {
                fprintf(stderr, "  first difference at %zu: %s, want %s\n", k,
                        r->links[k].url, g->want[k]);
                break;
            }
        return 0;
    }
    for (k = 0; k < r->nlinks; k++)
        if (strcmp(r->links[k].url, g->want[k]) != 0) {
            fprintf(stderr, "%s: link %zu is %s, want %s\n", what, k,
                    r->links[k].url, g->want[k]);
            return 0;
        }
    return 1;
}

/* 3 MB and 9 MB pages parsed in slices: every link once, in order, none
 * of the traps; blocks of slice links are PARSER_BLOCK_NONE; meta nofollow
 * in the head (or in a late slice) drops them all; gumbo's arena stays
 * bounded by the slice size. Then the 3 MB page as one DOM gives the same
 * links (the slicing loses nothing the whole tree has). */
static void test_big(void)
{
    static const struct {
        size_t size, step, trap, dom, slice;
    } v[] = {
        {3u << 20, 2000, 40000, 512u << 10, 256u << 10},
        {3u << 20, 700, 300000, 64u << 10, 20000}, /* traps > slices */
        {9u << 20, 8000, 600000, 512u << 10, 256u << 10},
        {9u << 20, 3000, 100000, 256u << 10, 100000},
    };
    struct gen g = {0};
    struct parser *p = NULL;
    const struct parser_result *r;
    size_t i, k, none;
    char what[64];

    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        parser_free(&p); /* a fresh arena for the peak check */
        p = parser_new(0, 0);
        parser_set_blocks(p, "p td div table");
        snprintf(what, sizeof what, "big page %zu (%zu MB)", i, v[i].size >> 20);
        g_page(&g, v[i].size, v[i].step, v[i].trap, "");
        parser_set_limits(p, v[i].dom, v[i].slice);
        CHECK(parser_parse_html(p, "http://p.com/x/y.html", g.buf, g.n, &r) ==
                  DC_OK, "%s", what);
        CHECK(same_links(r, &g, what), "%s: links", what);
        CHECK(r->dom_len <= v[i].dom && r->dom_len > v[i].dom / 2 &&
                  r->slices > 0,
              "%s: dom %zu bytes, %zu slices", what, r->dom_len, r->slices);
        CHECK(strcmp(r->base, "http://b.com/base/") == 0, "%s: base", what);
        CHECK(r->nofollow >= 1, "%s: rel=nofollow counted", what);
        for (k = none = 0; k < r->nlinks; k++)
            none += r->links[k].block == PARSER_BLOCK_NONE;
        CHECK(r->nlinks > 100 && r->links[1].block != PARSER_BLOCK_NONE &&
                  r->links[r->nlinks - 1].block == PARSER_BLOCK_NONE &&
                  none > r->nlinks / 2,
              "%s: %zu of %zu links past the DOM", what, none, r->nlinks);
        /* gumbo's tree of the DOM part, plus the last chunk's slack */
        CHECK(parser__arena_peak(p) <= 40 * v[i].dom + (4u << 20),
              "%s: arena peak %zu", what, parser__arena_peak(p));
        printf("%s: %zu bytes, %zu links, dom %zu B + %zu slices, arena peak "
               "%zu B\n", what, g.n, r->nlinks, r->dom_len, r->slices,
               parser__arena_peak(p));
        /* after it, the thread keeps at most one chunk of ARENA_KEEP_MAX */
        CHECK(parser_parse_html(p, "http://p.com/", "<a href=/s>", 11, &r) ==
                      DC_OK && r->nlinks == 1 &&
                  parser__arena_bytes(p) <= (8u << 20) + 4096,
              "%s: arena after it %zu", what, parser__arena_bytes(p));
    }

    /* meta nofollow in the head: no link, no slice parsed */
    g_page(&g, 3u << 20, 2000, 1000, "<meta name=robots content=\"nofollow\">");
    parser_set_limits(p, 256u << 10, 128u << 10);
    CHECK(parser_parse_html(p, "http://p.com/", g.buf, g.n, &r) == DC_OK &&
              r->nlinks == 0 && r->slices == 0 &&
              (r->meta_robots & PARSER_META_NOFOLLOW),
          "nofollow: %zu links, %zu slices", r->nlinks, r->slices);
    /* ... and in a late slice: all links dropped too */
    g_page(&g, 3u << 20, 2000, 1000, "");
    g.n -= 200;
    g_str(&g, "<meta name=\"robots\" content=\"noindex, nofollow\"></body>");
    CHECK(parser_parse_html(p, "http://p.com/", g.buf, g.n, &r) == DC_OK &&
              r->nlinks == 0 && r->slices > 0 &&
              (r->meta_robots & PARSER_META_NOINDEX),
          "late nofollow: %zu links", r->nlinks);

    /* the same 3 MB page as one DOM: the same links */
    g_page(&g, 3u << 20, 2000, 40000, "");
    parser_set_limits(p, 0, 0);
    CHECK(parser_parse_html(p, "http://p.com/", g.buf, g.n, &r) == DC_OK &&
              r->slices == 0 && r->dom_len == g.n,
          "one DOM");
    CHECK(same_links(r, &g, "one DOM"), "one DOM: links");
    parser_free(&p);
    g_free(&g);
}

/* Hostile bodies in slices: one giant tag, comment, script, text without
 * '<', <plaintext>, a '<' every byte: each ends, in bounded memory, with
 * the links around it. */
static void test_big_hostile(void)
{
    static const char *const kinds[] = {
        "tag", "comment", "script", "text", "plaintext", "lts", "quote",
    };
    size_t big = 3u << 20, i, k;
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    char *buf = malloc(big + 4096);
    double t0, dt;

    parser_set_limits(p, 64u << 10, 32u << 10);
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = 0, want;
        n += (size_t)sprintf(buf, "<a href=/before>b</a>");
        switch (i) {
        case 0:
            n += (size_t)sprintf(buf + n, "<a title=\"");
            break;
        case 1:
            n += (size_t)sprintf(buf + n, "<!--");
            break;
        case 2:
            n += (size_t)sprintf(buf + n, "<script>");
            break;
        case 4:
            n += (size_t)sprintf(buf + n, "<plaintext>");
            break;
        default:
            break;
        }
        for (k = 0; n < big; k++)
            buf[n++] = i == 5 ? '<' : i == 6 ? '"' : "<a href=/in>"[k % 12];
        if (i == 3)
            memset(buf + 21, 'x', n - 21);
        switch (i) {
        case 0:
            n += (size_t)sprintf(buf + n, "\" href=/giant>");
            break;
        case 1:
            n += (size_t)sprintf(buf + n, "-->");
            break;
        case 2:
            n += (size_t)sprintf(buf + n, "</script>");
            break;
        default:
            break;
        }
        n += (size_t)sprintf(buf + n, "<a href=/after>a</a>");
        t0 = now_s();
        CHECK(parser_parse_html(p, "http://p.com/", buf, n, &r) == DC_OK,
              "hostile %s", kinds[i]);
        dt = now_s() - t0;
        /* found: /before, and /after unless the rest is plaintext; /in
         * and /giant are inside a token (the giant tag is longer than a
         * slice, so it is dropped) */
        want = i == 4 ? 1 : 2;
        CHECK(r->nlinks == want && strcmp(r->links[0].url,
                                          "http://p.com/before") == 0 &&
                  (want == 1 ||
                   strcmp(r->links[1].url, "http://p.com/after") == 0),
              "hostile %s: %zu links (%s ...)", kinds[i], r->nlinks,
              r->nlinks ? r->links[r->nlinks - 1].url : "");
        CHECK(parser__arena_peak(p) <= (8u << 20),
              "hostile %s: arena peak %zu", kinds[i], parser__arena_peak(p));
        CHECK(dt < 30, "hostile %s took %.1f s", kinds[i], dt);
        printf("hostile %s, 3 MB in 32 KB slices: %zu slices, %.2f s, arena "
               "peak %zu B\n", kinds[i], r->slices, dt, parser__arena_peak(p));
    }
    parser_free(&p);
    free(buf);
}

static int is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The cutter on random tag soup: pieces in order, each at most max bytes,
 * always advancing, each cut before '<' and a letter or "</" and one. */
static void test_cut_soup(void)
{
    static const char *const tok[] = {
        "<a href=", "\"", "'", "/x", ">", "<", "</a>", "<div>", "<!--", "-->",
        "<script>", "</script>", "<style>", "</style >", "<title>", "</title>",
        "<!x>", "<?y>", "</>", "</ 1>", "=", " ", "text", "<p class=a'b>",
        "<textarea>", "</textarea/>", "<plaintext>", "--!>", "<!-->",
    };
    size_t ntok = sizeof tok / sizeof tok[0], it, n, a, b, last, pieces;
    char *buf = malloc(1 << 16);
    struct parser__cut c;
    int ok;

    for (it = 0; it < 300; it++) {
        size_t max = 1 + rnd() % 300;
        for (n = 0; n < 60000;) {
            const char *t = tok[rnd() % ntok];
            size_t l = strlen(t);
            memcpy(buf + n, t, l);
            n += l;
        }
        parser__cut_init(&c, buf, n);
        last = 0;
        ok = 1;
        for (pieces = 0; ok && parser__cut_next(&c, max, &a, &b); pieces++) {
            ok = a >= last && b > a && b - a <= max && b <= n && c.pos >= b &&
                 pieces <= n &&
                 (a == 0 || (buf[a] == '<' && (is_letter(buf[a + 1]) ||
                                               (buf[a + 1] == '/' &&
                                                is_letter(buf[a + 2])))));
            last = c.pos;
        }
        CHECK(ok && last == n, "soup %zu (max %zu): piece %zu [%zu, %zu)", it,
              max, pieces, a, b);
    }
    free(buf);
}

/* ------------------------------------------------------ block flags */

#define N PARSER_BLOCK_NAV
#define M PARSER_BLOCK_MAIN

/* The block of r's link url, NULL when r has no such link. */
static const struct parser_block *link_block(const struct parser_result *r,
                                             const char *url)
{
    size_t k;

    for (k = 0; k < r->nlinks; k++)
        if (!strcmp(r->links[k].url, url))
            return &r->blocks[r->links[k].block];
    return NULL;
}

static void test_block_flags(void)
{
    static const struct {
        const char *html;
        unsigned flags; /* of the block of the link to /x */
    } fl[] = {
        {"<p><a href=/x>x</a></p>", 0},
        {"<nav><a href=/x>x</a></nav>", N},
        {"<aside><ul><li><a href=/x>x</a></li></ul></aside>", N},
        {"<menu><li><a href=/x>x</a></li></menu>", N},
        {"<header><a href=/x>x</a></header>", N},
        {"<footer><p><a href=/x>x</a></p></footer>", N},
        /* inherited through elements that are not block tags */
        {"<nav><span><ul><li><b><a href=/x>x</a></b></li></ul></span></nav>",
         N},
        /* landmark roles, any token of role, any case */
        {"<div role=navigation><a href=/x>x</a></div>", N},
        {"<ul role=\"menubar menu\"><li><a href=/x>x</a></li></ul>", N},
        {"<div role=BANNER><a href=/x>x</a></div>", N},
        {"<div role=contentinfo><a href=/x>x</a></div>", N},
        {"<div role=complementary><a href=/x>x</a></div>", N},
        {"<div role=presentation><a href=/x>x</a></div>", 0},
        /* HTML-AAM: header/footer inside sectioning content or a scoping
         * landmark are not banner/contentinfo */
        {"<article><header><a href=/x>x</a></header></article>", M},
        {"<section><footer><a href=/x>x</a></footer></section>", 0},
        {"<main><header><a href=/x>x</a></header></main>", M},
        {"<div role=region><header><a href=/x>x</a></header></div>", 0},
        {"<div role=main><footer><a href=/x>x</a></footer></div>", M},
        /* but a nav inside them is navigation */
        {"<section><nav><a href=/x>x</a></nav></section>", N},
        /* main content */
        {"<main><p><a href=/x>x</a></p></main>", M},
        {"<article><ul><li><a href=/x>x</a></li></ul></article>", M},
        {"<div role=main><div><a href=/x>x</a></div></div>", M},
        /* navigation inside main content: both flags (the rule decides) */
        {"<main><nav><a href=/x>x</a></nav></main>", N | M},
        {"<div role=navigation><article><a href=/x>x</a></article></div>",
         N | M},
        /* header at the top level after a main: still banner */
        {"<main><p>t</p></main><header><a href=/x>x</a></header>", N},
    };
    static const char *const tagsets[] = {
        "td th p div nav header footer aside section article main table form",
        "p"};
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    size_t i, k, t;

    for (t = 0; t < 2; t++) {
        CHECK(parser_set_blocks(p, tagsets[t]) == DC_OK, "tags %zu", t);
        for (i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
            const char *h = fl[i].html;
            int found = 0;
            CHECK(parser_parse_html(p, "http://h.test/", h, strlen(h), &r) ==
                      DC_OK,
                  "parse %zu", i);
            for (k = 0; k < r->nlinks; k++) {
                unsigned f;
                if (strcmp(r->links[k].url, "http://h.test/x"))
                    continue;
                found = 1;
                f = r->blocks[r->links[k].block].flags;
                CHECK(f == fl[i].flags, "tags %zu case %zu (%s): flags %u, "
                      "want %u", t, i, h, f, fl[i].flags);
            }
            CHECK(found, "case %zu: no link", i);
        }
    }
    /* leaf-most block: a link-only paragraph inside a long article is
     * measured on the paragraph, the article's text does not dilute it;
     * a link both in nav and in text keeps the text occurrence */
    CHECK(parser_set_blocks(p, tagsets[0]) == DC_OK, "tags");
    {
        const char *h = "<article><p>A long paragraph of ordinary prose, long "
                        "enough to dilute any link.</p><p><a href=/x>next</a> "
                        "<a href=/y>prev</a></p></article>"
                        "<nav><a href=/z>z</a> <a href=/q>q</a></nav>"
                        "<main><p>prose prose prose prose prose <a href=/z>"
                        "z</a> more prose prose prose prose</p></main>"
                        "<footer><a href=/q>q</a></footer>";
        const struct parser_block *b;
        size_t mirrors = 0;
        CHECK(parser_parse_html(p, "http://h.test/", h, strlen(h), &r) ==
                  DC_OK && r->nlinks == 4,
              "leaf page parsed");
        b = link_block(r, "http://h.test/x");
        CHECK(b && b->text == 8 && b->link_text == 8 && b->flags == M,
              "/x: block text %zu link %zu flags %u", b ? b->text : 0,
              b ? b->link_text : 0, b ? b->flags : 0);
        b = link_block(r, "http://h.test/z");
        CHECK(b && b->flags == M && b->link_text == 1,
              "/z: flags %u link text %zu", b ? b->flags : 0,
              b ? b->link_text : 0);
        /* nav_links, nav_mirror: the nav's /z is also in main; its /q is
         * also in another navigation region (the footer), which copies
         * nothing */
        for (k = 0; k < r->nblocks; k++) {
            b = &r->blocks[k];
            mirrors += b->nav_mirror;
            if (b->nav_mirror)
                CHECK(b->flags == N && b->nav_links == 2 &&
                          b->nav_mirror == 1,
                      "mirror region: flags %u links %u mirrored %u",
                      b->flags, b->nav_links, b->nav_mirror);
        }
        CHECK(mirrors == 1, "mirrored occurrences: %zu", mirrors);
    }
    {
        /* the region is the whole nav: the block holding /c alone gets
         * the nav's totals, 3 links of which 2 are in main */
        const char *h = "<nav><div><a href=/a>a</a> <a href=/b>b</a></div>"
                        "<div><a href=/c>c</a></div></nav>"
                        "<main><p>prose prose <a href=/a>a</a> prose "
                        "<a href=/b>b</a> prose prose prose</p></main>";
        const struct parser_block *b;
        CHECK(parser_parse_html(p, "http://h.test/", h, strlen(h), &r) ==
                  DC_OK && r->nlinks == 3,
              "region page parsed");
        b = link_block(r, "http://h.test/c");
        CHECK(b && b->flags == N && b->nlinks == 1 && b->nav_links == 3 &&
                  b->nav_mirror == 2,
              "/c: flags %u links %u region %u mirrored %u", b ? b->flags : 0,
              b ? b->nlinks : 0, b ? b->nav_links : 0, b ? b->nav_mirror : 0);
    }
    parser_free(&p);
}

#undef N
#undef M

struct strip_case {
    const char *in, *out;
};

/* A one-code-point marker, U+F0000 + n for n < 64: its last byte given */
#define M1(last) "\xF3\xB0\x80" last

/* parser__raw_strip of each case's input gives its output. */
static void check_strip(const struct strip_case *t, size_t n, int fold)
{
    char out[256 + PARSER_RAW_ROOM];
    size_t i, o;

    for (i = 0; i < n; i++) {
        CHECK(strlen(t[i].in) <= 256, "case %zu fits", i);
        o = parser__raw_strip(t[i].in, strlen(t[i].in), out, fold);
        CHECK(o == strlen(t[i].out) && memcmp(out, t[i].out, o) == 0,
              "raw strip (fold %d) %zu: got %.*s", fold, i, (int)o, out);
    }
}

/* Script and style content left out before gumbo, exactly where the
 * scan can tell (parser__raw_strip in html-strip.c). */
static void test_raw_strip(void)
{
    static const struct strip_case t[] = {
        {"<style>a{}</style><a href=/x><SCRIPT>1</SCRIPT >",
         "<style></style><a href=/x><SCRIPT></SCRIPT >"},
        {"<script src=x></script><p>", "<script src=x></script><p>"},
        {"<a title=\"<script>\">t</a><script>1</script>",
         "<a title=\"<script>\">t</a><script></script>"},
        {"<!-- <script> --><script>x</script>", "<!-- <script> --><script></script>"},
        {"<textarea><script></textarea><style>s</style>",
         "<textarea><script></textarea><style></style>"},
        {"<script>a</scriptx>b</script>", "<script></script>"},
        {"<script>never closed <a href=/n>", "<script>"},
        /* kept: escaped script data, foreign content, frameset */
        {"<script><!--<script></script>--></script>",
         "<script><!--<script></script>--></script>"},
        {"<style>s</style><svg><style><a href=/v></style></svg><style>t</style>",
         "<style></style><svg><style><a href=/v></style></svg><style>t</style>"},
        {"<math><style>m</style>", "<math><style>m</style>"},
        /* an svg whose end the scan can tell is copied as it is, and the
         * scan goes on after it */
        {"<svg viewBox=\"0 0 9 9\"><path d=\"M1 1\"/><g><use href=\"#i\">"
         "</use></g></svg><script>x</script>",
         "<svg viewBox=\"0 0 9 9\"><path d=\"M1 1\"/><g><use href=\"#i\">"
         "</use></g></svg><script></script>"},
        {"<SVG><svg></svg></Svg><style>s</style><svg/><style>t</style>",
         "<SVG><svg></svg></Svg><style></style><svg/><style></style>"},
        /* any other: given up at it (HTML content inside, a CDATA section,
         * an end tag out of order, an integration point, no end) */
        {"<svg><p>t</p></svg><style>s</style>",
         "<svg><p>t</p></svg><style>s</style>"},
        {"<svg><![CDATA[</svg>]]></svg><style>s</style>",
         "<svg><![CDATA[</svg>]]></svg><style>s</style>"},
        {"<svg><g></svg><style>s</style>", "<svg><g></svg><style>s</style>"},
        {"<svg><title>t</title></svg><style>s</style>",
         "<svg><title>t</title></svg><style>s</style>"},
        {"<svg><path/><style>s</style>", "<svg><path/><style>s</style>"},
        /* spans stay without folding */
        {"<body><span>a</span>", "<body><span>a</span>"},
        {"<frameset><script>x</script>", "<frameset><script>x</script>"},
        {"<plaintext><style>x</style>", "<plaintext><style>x</style>"},
        /* a raw text element written self-closing is taken as empty */
        {"<iframe src=\"x\" />a<a href=/y>y</a>",
         "<iframe src=\"x\" /></iframe>a<a href=/y>y</a>"},
        /* "/" inside an unquoted value, or not right before '>': not
         * self-closing, the content is script text as before */
        {"<SCRIPT src=s.js/><p>t</p><script>1</script>",
         "<SCRIPT src=s.js/></script>"},
        {"<script src=s.js / ><p>t</p></script>", "<script src=s.js / ></script>"},
        {"<script src='s.js'/><p>t</p><script>1</script>",
         "<script src='s.js'/></script><p>t</p><script></script>"},
        {"<title/><noembed/><x/>", "<title/></title><noembed/></noembed><x/>"},
    };

    check_strip(t, sizeof t / sizeof t[0], PARSER_FOLD_NONE);
}

/* An XHTML-style self-closing raw text element (ImageMagick's menu bar:
 * <iframe .../>) does not swallow the links after it, in the page's DOM
 * and a real one still holds its text; past PARSER_RAW_FIXES of them in
 * one piece, HTML's reading holds again. */
static void test_selfclosing_raw(void)
{
    const char *h = "<nav><a href=/n>n</a><iframe src=\"/f\" title=\"t\"/></nav>"
                    "<main><p>text <a href=/m>m</a></p>"
                    "<textarea><a href=/no>no</a></textarea>"
                    "<script src=/s.js /><p><a href=/after>after</a></p>";
    const struct parser_result *r;
    struct parser *p = parser_new(0, 0);
    char got[512];
    size_t k, o;

    for (int blocks = 0; blocks < 2; blocks++) {
        parser_set_blocks(p, blocks ? "p td div nav main" : "");
        CHECK(parser_parse_html(p, "http://h.test/", h, strlen(h), &r) ==
                  DC_OK, "parse");
        for (k = 0, o = 0, got[0] = 0; k < r->nlinks; k++)
            o += (size_t)snprintf(got + o, sizeof(got) - o, "%s ",
                                  r->links[k].url);
        CHECK(strstr(got, "http://h.test/m ") && strstr(got, "http://h.test/f ") &&
                  strstr(got, "http://h.test/after ") &&
                  !strstr(got, "http://h.test/no "),
              "blocks %d: links %s", blocks, got);
    }
    { /* one more than PARSER_RAW_FIXES: the last swallows up to its end tag */
        char many[64 * (PARSER_RAW_FIXES + 1) + 128];
        size_t n = 0;
        for (k = 0; k <= PARSER_RAW_FIXES; k++)
            n += (size_t)snprintf(many + n, sizeof(many) - n, "<iframe/>");
        snprintf(many + n, sizeof(many) - n,
                 "<a href=/late>late</a></iframe><a href=/z>z</a>");
        CHECK(parser_parse_html(p, "http://h.test/", many, strlen(many), &r) ==
                  DC_OK && r->nlinks == 1 && !strcmp(r->links[0].url, "http://h.test/z"),
              "past the fixes: %zu links", r->nlinks);
    }
    parser_free(&p);
}

/* With blocks off, plain text between tags is folded to one "x"; runs of
 * whitespace, runs with markup ('<') and runs that start with '&' or NUL
 * stay; so do raw text elements other than script and style, and the text
 * after the last tag. */
static void test_fold_text(void)
{
    static const struct strip_case t[] = {
        {"<p>Some text.</p>\n<p> more <b>bold</b> end</p>",
         "<p>x</p>\n<p>x<b>x</b>x</p>"},
        {"<table> <tr>\t<td>cell</td></tr></table>",
         "<table> <tr>\t<td>x</td></tr></table>"},
        {"<p>a <!-- c --> b</p><p>1 < 2</p>", "<p>a <!-- c --> b</p><p>1 < 2</p>"},
        {"<p>&#32; x</p><p> &amp;</p>", "<p>&#32; x</p><p> &amp;</p>"},
        {"<title>T</title><textarea>t <a></textarea><style>s</style>",
         "<title>T</title><textarea>t <a></textarea><style></style>"},
        {"<!DOCTYPE html>\n<html>t</html>tail", "<!DOCTYPE html>\n<html>x</html>tail"},
        {"<p>t<svg>u</svg>v", "<p>x<svg>u</svg>v"},
        /* spans after the body's start tag are left out (their text joins
         * the runs around it), not before it */
        {"<span>a</span><body><p>a <span class=k>b</span> c</p>",
         "<span>x</span><body><p>xxx</p>"},
        {"<body><a href=/x><SPAN>t</SPAN></a><span", "<body><a href=/x>x</a><span"},
        /* only spans that hold text alone: not with a tag inside, not
         * empty */
        {"<body><span><b>t</b> u</span><span></span><span>v</span >",
         "<body><span><b>x</b>x</span><span></span>x"},
        {"<body><span ROLE=navigation>t</span><span class=role>u</span>",
         "<body><span ROLE=navigation>x</span><span class=role>x</span>"},
        /* nested: out when every span in it holds text and such spans */
        {"<body><span class=a><span>t</span> u</span><span><span></span>v"
         "</span><span>w<b>x</b></span><span><span role=x>y</span></span>",
         "<body>xx<span><span></span>x</span><span>x<b>x</b></span><span>"
         "<span role=x>x</span></span>"},
    };
    static const char *pages[] = {
        "<table>t<a href=/f>f</a><tr><td>c<a href=/c>c</a></table>",
        "<head>t<base href=/b/><a href=x>x</a>",
        "<p><b><a href=/1>1<p>t</b>u<a href=/2>2</a>",
        "<head><noscript>n<a href=/n>n</a></noscript></head>",
        "<pre>\nx</pre><select>o<a href=/s></select><a href=/t>",
        "<body>t<frameset><frame src=/fr></frameset>",
    };
    const struct parser_result *r;
    struct parser *on = parser_new(0, 0), *off = parser_new(0, 0);
    char a[1024], b[1024];
    size_t i, k, n, o;

    check_strip(t, sizeof t / sizeof t[0],
                PARSER_FOLD_X | PARSER_STRIP_SPANS);
    { /* without PARSER_STRIP_SPANS (span is a block tag) spans stay */
        static const struct strip_case keep[] = {
            {"<body><span>a</span>", "<body><span>x</span>"},
        };
        check_strip(keep, 1, PARSER_FOLD_X);
        parser_set_blocks(on, "div span");
        parser_parse_html(on, "http://h.test/",
                          "<body><div><span>some words</span> <a href=/x>x</a>"
                          "</div>", 57, &r);
        CHECK(r->nblocks == 3, "span as a block tag: %zu blocks", r->nblocks);
        parser_set_blocks(on, "div b");
        parser_parse_html(on, "http://h.test/",
                          "<body><div><b>some words</b> <a href=/x>x</a>"
                          "</div>", 51, &r);
        CHECK(r->nblocks == 3, "b as a block tag: %zu blocks", r->nblocks);
    }
    /* the same links, in the same order, folded or not */
    parser_set_blocks(on, "p td div");
    for (i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        for (k = 0, o = 0, a[0] = 0; k < 2; k++, o = 0) {
            char *dst = k ? b : a;
            parser_parse_html(k ? off : on, "http://h.test/", pages[i],
                              strlen(pages[i]), &r);
            for (n = 0; n < r->nlinks; n++)
                o += (size_t)snprintf(dst + o, 1024 - o, "%s ", r->links[n].url);
            snprintf(dst + o, 1024 - o, "found %zu", r->found);
        }
        CHECK(strcmp(a, b) == 0, "fold page %zu: %s | %s", i, a, b);
    }
    parser_free(&on);
    parser_free(&off);
}

/* With blocks on, plain text between tags is folded to a marker of its
 * visible length (a run shorter than its marker stays), which the walker
 * counts as that many characters: block sums equal those of the text. */
static void test_fold_len(void)
{
#define MK(n) PARSER_MARK_OPEN n PARSER_MARK_CLOSE
    static const struct strip_case t[] = {
        {"<p>Some text here.</p>", "<p>" M1("\x8F") "</p>"},
        {"<p>short</p>", "<p>" M1("\x85") "</p>"},
        {"<p>caf&eacute; &amp; more</p>", "<p>" M1("\x8B") "</p>"},
        {"<p>  two   spaces  </p>", "<p>" M1("\x8A") "</p>"},
        {"<p>&amp; first</p><p>a <!-- c --> b c d e</p>",
         "<p>&amp; first</p><p>a <!-- c --> b c d e</p>"},
        /* shorter than the decimal marker: folded only when its count is
         * exact (ASCII, no reference), and never to a longer marker */
        {"<p>abc</p><p>caf\xC3\xA9</p><p>a&lt;b</p><p>a&lt;bc</p>",
         "<p>abc</p><p>caf\xC3\xA9</p><p>a&lt;b</p><p>" M1("\x84") "</p>"},
        /* a blank run between tags: one whitespace token */
        {"<p>x</p>\n \t\n<div>\r\n</div> <p> </p>",
         "<p>x</p>\n<div>\r</div> <p> </p>"},
    };
    static const char page[] =
        "<div>  Caf&eacute; au lait,   tr&egrave;s bien  <a href=/x>the link "
        "text</a>  and more words </div>";
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;

    check_strip(t, sizeof t / sizeof t[0], PARSER_FOLD_LEN);
    CHECK(parser__text_len("a " MK("5") " b") == 9, "marker in text");
    CHECK(parser__text_len("a " M1("\x85") " b") == 9 &&
              parser__text_len(M1("\x85") M1("\x83") "x") == 9 &&
              parser__text_len("\xF3\xBF\xBF\xBD") == 65533 &&
              parser__text_len(MK("70000")) == 70000,
          "one code point markers");
    CHECK(parser__text_len("\xF3\xB0\x80\x80") == 1 &&
              parser__text_len("\xF3\xBF\xBF\xBE") == 1 &&
              parser__text_len("\xF3\xB0\x80") == 1 &&
              parser__text_len("a\xF3\xAF\xBF\xBF" "b") == 3,
          "U+F0000, U+FFFFE, a cut sequence, U+EFFFF: one character each");
    CHECK(parser__text_len(PARSER_MARK_OPEN "x") == 2 &&
              parser__text_len(PARSER_MARK_OPEN "12") == 3,
          "no whole marker: its characters count");
    CHECK(parser__text_len(" x\t\n y ") == 3, "whitespace runs");
    CHECK(parser__text_len(MK("1234567890")) == 1234567890 &&
              parser__text_len(MK("12345678901")) == 13,
          "a marker carries at most 10 digits");
    /* "Cafe au lait, tres bien" 23, "the link text" 13, "and more words"
     * 14: what the unfolded text nodes give */
    parser_set_blocks(p, "div");
    CHECK(parser_parse_html(p, "http://h.test/", page, sizeof(page) - 1,
                            &r) == DC_OK &&
              r->nblocks == 2 && r->blocks[1].text == 50 &&
              r->blocks[1].link_text == 13,
          "folded sums: %zu %zu", r->nblocks == 2 ? r->blocks[1].text : 0,
          r->nblocks == 2 ? r->blocks[1].link_text : 0);
    parser_free(&p);
#undef MK
}

/* Pages with inline svg icons and highlighted code (spans) parse to the
 * same links and blocks whether the scan copies the svg and leaves the
 * spans out (html-strip.c) or gives up before them (an empty <math> right
 * after <body>, where the scan stops): links equal, in order, and the
 * same blocks with the same flags, link counts and text sums (folded
 * runs count each text node apart, and a cut where a span or formatting
 * element left out meets whitespace keeps them apart). */
static void test_svg_span_same(void)
{
    static const char *pages[] = {
        "<div class=nav><a href=/s>Search</a><svg width=20 viewBox=\"0 0 24 24\">"
        "<path d=\"M1 1\"/></svg></div><div><p>Use <code><span class=n>print"
        "</span><span class=p>(</span><span class=s>'hello there'</span>"
        "<span class=p>)</span></code> and <a href=/lib><span class=std>the "
        "library reference</span></a> pages.</p><pre><span class=k>def</span> "
        "<span class=nf>function_name</span>(): <span class=k>pass</span></pre>"
        "</div><script>var x = \"<a href=/no>\";</script><a href=/end>end</a>",
        "<table><tr><td><a href=/a><span class=t-lines><span>std::sort</span>"
        "</span></a></td><td><span class=t-mark>(since C++11)</span> sorts the "
        "range in ascending order</td></tr></table><div><span>stray words "
        "here</span><p>para <b><span>bold text</span></b> end</p></div>",
        "<table><span>fostered text <a href=/f>f</a></span><tr><td>cell "
        "<a href=/c>c</a></td></tr></table>",
        "<select><span>o</span><option>v</select><a href=/t>t</a>",
        "<p><b><span><span>x</span><a href=/1>one</span>y</b>z<a href=/2>two"
        "</a></p><p><a href=/0>zero</a><span><span>nested</span> text</span>"
        "</p>"
        "<p><b><span>x<a href=/1>one</span>y</b>z<a href=/2>two</a></p>"
        "<p><a href=/3><span>three<a href=/4>four</a></span></a></p>",
        "<div>words <span role=navigation>menu text</span> more <span>\"leaf"
        "\"</span><a href=/n>n</a></div>",
        "<div><svg><svg><g><path/></g></svg></svg><span><a href=/after>after "
        "the icons</a></span><svg><p>breaks out</p></svg><span><a href=/x>x"
        "</a></span></div>",
        "<p>Call <code>f()</code>, <em>then</em> <strong><code>g</code>"
        "</strong> and <b>1<b>2<b>3<b>x</b></b></b></b> <a href=/f><code>f"
        "</code></a></p><table><tr><td><em>cell</em> <i>text</i> &amp; <tt>"
        " more</tt></td></tr></table>",
        "<table><b>fostered</b> <em>text</em><tr><td>c</td></tr></table><p>"
        "<a href=/p><b>bold <i>link</i></b></a> tail</p>",
        "<p><b>x<i>y</b>z</i> <em>e</em><a href=/m><b>m</b></a></p><p>after "
        "<a href=/q>q<b>b</b><p>para</a> end</p><pre>  <b>int</b>  <i>x</i>;"
        "\n  <b>return</b> x;</pre>",
        "<div><a name=top></a>Top <kbd>Ctrl</kbd>+<kbd>C</kbd> and <abbr "
        "title=x>HTML</abbr> <a id=k></a> <cite>the book</cite>.</div><p>a "
        "<a name=n></a>b<a id=m></a> c <a href=/l>l<a id=i></a>i</a></p>"
        "<table><a id=f></a><tr><td><sup>1</sup> <a name=t></a><q>q</q>"
        "</td></tr></table><p><b>x</p><a id=r></a><div>after</div>",
        "<div>\n<p>a</p>\n<p> b </p>\n</div>\n<select><option>foo<div> "
        "</div>bar</option> <i>o</i> </select>x</y> </z>w<table>\n<tr>\n"
        "<td> c </td>\n</tr>\n</table>\n<ul>\n<li>one</li>\n<li>two</li>"
        "\n</ul>foo<br> <b>bar</b> baz<p>p</x> <br> </x>q</p><td> </td>r"
        "<tr> </tr>s</body> t",
    };
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    char a[2048], b[2048], page[1024];
    struct parser_block ba[16], bb[16];
    size_t na = 0, nb = 0, i, k, n, o, ta, tb;

    parser_set_blocks(p, "p td div pre table");
    for (i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        for (k = 0; k < 2; k++) {
            char *dst = k ? b : a;
            struct parser_block *bl = k ? bb : ba;
            snprintf(page, sizeof page, "<body>%s%s", k ? "<math></math>" : "",
                     pages[i]);
            CHECK(parser_parse_html(p, "http://h.test/", page, strlen(page),
                                    &r) == DC_OK, "page %zu parse", i);
            for (n = 0, o = 0, dst[0] = 0; n < r->nlinks; n++)
                o += (size_t)snprintf(dst + o, 2048 - o, "%s(%u) ",
                                      r->links[n].url, r->links[n].block);
            snprintf(dst + o, 2048 - o, "found %zu", r->found);
            *(k ? &nb : &na) = r->nblocks < 16 ? r->nblocks : 16;
            memcpy(bl, r->blocks, (r->nblocks < 16 ? r->nblocks : 16) *
                                      sizeof(*bl));
        }
        CHECK(strcmp(a, b) == 0, "page %zu links: %s | %s", i, a, b);
        CHECK(na == nb, "page %zu: %zu blocks against %zu", i, na, nb);
        for (n = 0; n < na && n < nb; n++) {
            ta = ba[n].text, tb = bb[n].text;
            CHECK(ba[n].flags == bb[n].flags && ba[n].nlinks == bb[n].nlinks &&
                      ba[n].parent == bb[n].parent,
                  "page %zu block %zu: flags/links/parent", i, n);
            CHECK(ta == tb,
                  "page %zu block %zu text %zu against %zu", i, n, ta, tb);
            ta = ba[n].link_text, tb = bb[n].link_text;
            CHECK(ta == tb,
                  "page %zu block %zu link text %zu against %zu", i, n, ta, tb);
        }
    }
    parser_free(&p);
}

/* Formatting elements that hold only text left out like spans
 * (text_leaf in html-strip.c): which go, which stay, and the cuts that
 * keep text counted per text node. */
static void test_strip_leaves(void)
{
    static const struct strip_case t[] = {
        {"<body><b>bold</b> <em class=x>e</em><code><span>c</span></code>",
         "<body>xxx"}, /* the space between two tags goes too */
        /* fewer than three b before it or open around it: the Noah's Ark
         * clause drops no earlier b when it is pushed */
        {"<body><b>1<b>2<b>3<b>x</b></b><i>4</i>",
         "<body><b>x<b>x<b>x<b>x</b></b>x"},
        {"<body><b>1<b>2<b>x</b>", "<body><b>x<b>xx"},
        {"<body><b>1<b>x<b>y</b></b>", "<body><b>xxx"},
        /* three code went to gumbo, closed again: while sim_tag follows
         * the list it holds none, and a fourth goes; once it no longer
         * does (a misnested b), the three count */
        {"<body><code><a href=/1>a</a></code><code><a href=/2>b</a></code>"
         "<code><a href=/3>c</a></code><p><code>gone</code><b><i>x</b></i>"
         "<code>kept</code>",
         "<body><code><a href=/1>x</a></code><code><a href=/2>x</a></code>"
         "<code><a href=/3>x</a></code><p>x<b><i>x</b></i><code>x</code>"},
        /* two code open around it go on the list: a third goes, a fourth
         * would be the third entry */
        {"<body><code><a href=/5>x</a><code><a href=/6>y</a><code>z</code>"
         "</code></code><code><a href=/5>x</a><code><a href=/6>y</a><code>"
         "<a href=/7>w</a><code>z</code></code></code></code>",
         "<body><code><a href=/5>x</a><code><a href=/6>x</a>x</code></code>"
         "<code><a href=/5>x</a><code><a href=/6>x</a><code><a href=/7>x</a>"
         "<code>x</code></code></code></code>"},
        /* kept: a link, font, nobr, a role, empty, a tag inside,
         * misnested, before <body> */
        {"<body><a href=/>a</a><font>f</font><nobr>n</nobr><i role=x>r</i>"
         "<u></u><s>t<p>p</s><b><i>x</b></i>",
         "<body><a href=/>x</a><font>x</font><nobr>x</nobr><i role=x>x</i>"
         "<u></u><s>x<p>x</s><b><i>x</b></i>"},
        {"<b>head</b><body><tt>t</tt>", "<b>x</b><body>x"},
        {"<body><strong>s<em>e</em></strong><small>&amp;</small><big><big>b"
         "</big></big>",
         "<body>xx&amp;x"},
        /* the phrase elements go as spans do; kept with a role, empty,
         * or with another tag inside */
        {"<body><abbr title=t>HTML</abbr> <kbd>C</kbd><sub>2</sub><q><cite>"
         "c</cite></q><var role=x>v</var><dfn></dfn><ins>i<p>p</ins>",
         "<body>xxxx<var role=x>x</var><dfn></dfn><ins>x<p>x</ins>"},
    };
    static const struct strip_case spans_only[] = {
        {"<body><b>bold</b><span>s</span><acronym>a</acronym>",
         "<body><b>x</b>xx"},
    };
    /* text after body's start tag goes (which made frameset-ok "not ok"
     * for good), but after col or colgroup (it would end a colgroup) and
     * while a formatting element may wait to be reconstructed */
    static const struct strip_case text[] = {
        {"<head>h</head><body>one<p>two &amp; <!-- c --> three</p> four",
         "<head>x</head><body><p></p> four"},
        {"<body><select>s</select>t<table><col>c</table><p><b>x</p>y<i>z",
         "<body><select></select><table><col>x</table><p><b></p>x<i>z"},
    };
    /* empty anchors (anchor_empty; the tree is checked in
     * test_strip_anchors_tree) */
    static const struct strip_case anchors[] = {
        {"<body><div><a name=x id=\"y\"></a><h2>T</h2></div>x<a id=1></A>y",
         "<body><div><h2>x</h2></div>xy"},
        {"<a id=0></a><body><b>x<a id=1></a></b><a href=/ id=2></a>"
         "<a id=3 ></a ><a id=4>t</a>",
         "<a></a><body><b>x<a></a></b><a href=/></a><a>x</a>"},
    };
    /* with text counted, a cut where whitespace meets a left-out tag */
    static const struct strip_case cuts[] = {
        {"<body>a <b>bold</b> c<i>d</i>e &amp;<em>f</em>",
         "<body>a " PARSER_MARK_CUT M1("\x84") PARSER_MARK_CUT " cd"
         M1("\x83") "f"},
        /* a marker carries no whitespace: "word," and "x" count as
         * joined, 6, as the two text nodes do */
        {"<body>word, <code>x</code>, <code>y</code> and more words",
         "<body>" M1("\x85") "x, " PARSER_MARK_CUT "y"
         PARSER_MARK_CUT " and more words"},
        {"<body>a <a id=x></a> b<a id=y></a>c <kbd>k</kbd>",
         "<body>a " PARSER_MARK_CUT " bc " PARSER_MARK_CUT "k"},
    };
    static const struct {
        const char *text;
        size_t len;
    } lens[] = {
        {"a " PARSER_MARK_CUT " b", 2},       /* "a " and " b" */
        {"x," PARSER_MARK_CUT "y", 3},        /* touching: as joined */
        {PARSER_MARK_CUT " a " PARSER_MARK_CUT, 1},
        {"a" PARSER_MARK_CUT PARSER_MARK_CUT "b", 2},
        {"a " PARSER_MARK_CUT " " PARSER_MARK_CUT " b", 2},
        {"one two" PARSER_MARK_CUT PARSER_MARK_OPEN "4" PARSER_MARK_CLOSE, 11},
    };

    check_strip(t, sizeof t / sizeof t[0],
                PARSER_FOLD_X | PARSER_STRIP_SPANS | PARSER_STRIP_FMT);
    check_strip(spans_only, 1, PARSER_FOLD_X | PARSER_STRIP_SPANS);
    check_strip(anchors, sizeof anchors / sizeof anchors[0],
                PARSER_FOLD_X | PARSER_STRIP_ATTRS | PARSER_STRIP_ANCHORS);
    check_strip(text, sizeof text / sizeof text[0],
                PARSER_FOLD_X | PARSER_STRIP_TEXT);
    check_strip(cuts, sizeof cuts / sizeof cuts[0],
                PARSER_FOLD_LEN | PARSER_STRIP_SPANS | PARSER_STRIP_FMT |
                    PARSER_STRIP_ATTRS | PARSER_STRIP_ANCHORS);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        CHECK(parser__text_len(lens[i].text) == lens[i].len,
              "text_len %zu: %zu", i, parser__text_len(lens[i].text));
}

/* Attributes nobody reads left out before gumbo (copy_read in
 * html-strip.c): what is kept, and how the tokenizer's splitting is
 * followed. */
static void test_strip_attrs_cases(void)
{
    static const struct strip_case t[] = {
        {"<div class=\"a b\" id=x role=main data-x='1>2'><p class=c>t</p>",
         "<div role=main><p>t</p>"},
        {"<a class=r href=\"/x\" title=\"T\" rel=nofollow ROLE=link>",
         "<a href=\"/x\" rel=nofollow ROLE=link>"},
        /* elements whose attributes the tree builder or walker reads */
        {"<code class=x>c</code><b id=y>d</b><input type=hidden class=z>"
         "<font color=red class=f><meta name=robots content=none id=m>",
         "<code class=x>c</code><b id=y>d</b><input type=hidden class=z>"
         "<font color=red class=f><meta name=robots content=none id=m>"},
        {"<body class=b><iframe src=/i class=k></iframe><svg class=s><path "
         "d=1/></svg>",
         "<body class=b><iframe src=/i class=k></iframe><svg class=s><path "
         "d=1/></svg>"},
        /* self-closing kept; a '/' in an unquoted value is the value's */
        {"<td colspan=2/><br class=x /><div class=x/><div/class=x>"
         "<br class=x/ />",
         "<td><br/><div><div><br/>"},
        /* no space after a quoted value; a name that starts with '=' */
        {"<p a=\"x\"role=y><p =x role=z><p class = 'q' role = r >",
         "<p role=y><p role=z><p role = r>"},
        /* upper case, values holding '>' and quotes, unknown elements */
        {"<DIV CLASS=x ROLE=y><div class=\"x>y\" title='a\"b' role=\"r\">"
         "<my-el foo=bar>",
         "<DIV ROLE=y><div role=\"r\"><my-el>"},
        /* as is: nothing dropped, not shorter, too many kept, no end,
         * end tags */
        {"<p role role=x><div role=a role=b role=c role=d role=e class=x>"
         "</div class=x><div class=x",
         "<p role role=x><div role=a role=b role=c role=d role=e class=x>"
         "</div class=x><div class=x"},
        {"<p class=q><div class=\"x>", "<p><div class=\"x>"},
    };

    check_strip(t, sizeof t / sizeof t[0], PARSER_STRIP_ATTRS);
}

/* The tree of node into b (cap bytes, from *o): elements with their
 * namespace and the attributes the walker reads, text, comments. */
/* With tree_loose set, text is written as "T" for each run of text
 * nodes with a character that is not whitespace (folded text is "x"),
 * and not at all when it is only whitespace; an a element with nothing
 * but whitespace in it and no attribute the walker reads is left out, and so is the element
 * (not its content) of a leaf without a role (html-strip.c's
 * parser__leaf_tags): the tree gumbo would build without them. */
static int tree_loose;
static int tree_notext; /* and text not at all (PARSER_STRIP_TEXT) */

/* e holds nothing but whitespace text */
static int tree_blank(const GumboElement *e)
{
    for (size_t k = 0; k < e->children.length; k++) {
        const GumboNode *c = e->children.data[k];
        if (c->type != GUMBO_NODE_WHITESPACE)
            return 0;
    }
    return 1;
}

static int tree_leaf(const GumboElement *e)
{
    /* this test's own list: the elements HTML's tree builder handles only
     * by its "any other" start and end tag rules, and the formatting
     * elements but a, font and nobr; any other element parser__leaf_tags
     * would hold shows as a difference */
    static const GumboTag leaf[] = {
        GUMBO_TAG_SPAN, GUMBO_TAG_ABBR, GUMBO_TAG_ACRONYM, GUMBO_TAG_BDI,
        GUMBO_TAG_BDO, GUMBO_TAG_CITE, GUMBO_TAG_DATA, GUMBO_TAG_DEL,
        GUMBO_TAG_DFN, GUMBO_TAG_INS, GUMBO_TAG_KBD, GUMBO_TAG_LABEL,
        GUMBO_TAG_MARK, GUMBO_TAG_Q, GUMBO_TAG_SAMP, GUMBO_TAG_SUB,
        GUMBO_TAG_SUP, GUMBO_TAG_TIME, GUMBO_TAG_VAR, GUMBO_TAG_B,
        GUMBO_TAG_BIG, GUMBO_TAG_CODE, GUMBO_TAG_EM, GUMBO_TAG_I,
        GUMBO_TAG_S, GUMBO_TAG_SMALL, GUMBO_TAG_STRIKE, GUMBO_TAG_STRONG,
        GUMBO_TAG_TT, GUMBO_TAG_U,
    };

    for (size_t k = 0; k < sizeof leaf / sizeof leaf[0]; k++)
        if (e->tag == leaf[k])
            return !gumbo_get_attribute(&e->attributes, "role");
    return 0;
}

static void tree_text(const GumboNode *node, char *b, size_t cap, size_t *o)
{
    static const char *const read[] = {"role", "href", "rel", "src",
                                       "name", "content", "http-equiv"};
    const GumboElement *e;
    const GumboAttribute *a;
    size_t k;

#define PUT(...)                                                           \
    do {                                                                   \
        if (*o < cap)                                                      \
            *o += (size_t)snprintf(b + *o, cap - *o, __VA_ARGS__);         \
    } while (0)
    if (node->type != GUMBO_NODE_ELEMENT &&
        node->type != GUMBO_NODE_TEMPLATE &&
        node->type != GUMBO_NODE_DOCUMENT) {
        if (!tree_loose)
            PUT("%s|", node->v.text.text);
        else if (!tree_notext &&
                 strspn(node->v.text.text, " \t\n\r\f") <
                     strlen(node->v.text.text) &&
                 (*o == 0 || b[*o - 1] != 'T'))
            PUT("T");
        return;
    }
    if (node->type == GUMBO_NODE_DOCUMENT) {
        for (k = 0; k < node->v.document.children.length; k++)
            tree_text(node->v.document.children.data[k], b, cap, o);
        return;
    }
    e = &node->v.element;
    if (tree_loose && e->tag == GUMBO_TAG_A && tree_blank(e) &&
        !gumbo_get_attribute(&e->attributes, "href") &&
        !gumbo_get_attribute(&e->attributes, "rel") &&
        !gumbo_get_attribute(&e->attributes, "role"))
        return;
    if (tree_loose && tree_leaf(e)) {
        for (k = 0; k < e->children.length; k++)
            tree_text(e->children.data[k], b, cap, o);
        return;
    }
    PUT("<%d:%s", (int)e->tag_namespace, gumbo_normalized_tagname(e->tag));
    for (k = 0; k < sizeof read / sizeof read[0]; k++)
        if ((a = gumbo_get_attribute(&e->attributes, read[k])))
            PUT(" %s=%s", read[k], a->value);
    PUT(">");
    for (k = 0; k < e->children.length; k++)
        tree_text(e->children.data[k], b, cap, o);
    PUT("</>");
#undef PUT
}

/* Gumbo's trees of x[0..nx) and y[0..ny) written by tree_text are the
 * same (what: the check's name, page i). */
static void same_tree(const char *x, size_t nx, const char *y, size_t ny,
                      const char *what, size_t i)
{
    char a[4096], b[4096];
    size_t oa = 0, ob = 0;
    GumboOutput *g;

    g = gumbo_parse_with_options(&kGumboDefaultOptions, x, nx);
    tree_text(g->document, a, sizeof a, &oa);
    gumbo_destroy_output(&kGumboDefaultOptions, g);
    g = gumbo_parse_with_options(&kGumboDefaultOptions, y, ny);
    tree_text(g->document, b, sizeof b, &ob);
    gumbo_destroy_output(&kGumboDefaultOptions, g);
    CHECK(oa < sizeof a && ob < sizeof b, "page %zu: %s fits", i, what);
    CHECK(oa == ob && memcmp(a, b, oa) == 0, "page %zu %s:\n%.*s\n%.*s", i,
          what, (int)oa, a, (int)ob, b);
}

/* Gumbo builds the same tree from a page with and without the attributes
 * copy_read leaves out, where the tree builder reads or compares them
 * (the Noah's Ark clause, input type=hidden, html and body merged,
 * isindex) and where links are cloned (formatting elements reconstructed,
 * the adoption agency). */
static void test_strip_attrs_tree(void)
{
    static const char *pages[] = {
        "<p class=x><b class=a><b class=b><b class=c><b class=d>x</p><p>y"
        "<i id=1>"
        "<i id=2><i id=3><i id=4>z<div>w</div>",
        "<p><a class=k href=/1 title=t>one<p>two</a><a href=/2 class=m><div "
        "class=d>text</a>more</div><a href=/3 id=q><a href=/4 id=r>4</a>",
        "<table class=t><input type=hidden class=x><tr class=r><td class=c "
        "role=navigation>c<input type=text class=y></table>",
        "<div class=d></div><input type=hidden class=x><frameset class=f>"
        "<frame src=/f "
        "class=g></frameset>",
        "<html lang=en><body class=x><p class=p>t<body role=main id=y>"
        "<html class=h><isindex prompt=Find action=/s class=x>",
        "<div class=\"a>b\" title='c\"d' data-x=e/f role=main><div class=\"a\""
        "role=banner><DIV CLASS=x ROLE=Main><my-el class=x><a href=/m "
        "rel=nofollow class=n>m</a></my-el><select class=x><option value=1 "
        "selected>o</select><svg class=s><font color=red>f</font></svg>",
        "<ul class=u><li class=l><p><em class=e><em class=f><em class=g>"
        "<em class=h>e</p><p>f<table><tr><td>g</table>h</ul>i",
    };
    char st[1024 + PARSER_RAW_ROOM];
    size_t i, n;

    for (i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        n = parser__raw_strip(pages[i], strlen(pages[i]), st,
                              PARSER_STRIP_ATTRS);
        CHECK(n < strlen(pages[i]), "page %zu: attributes left out", i);
        same_tree(pages[i], strlen(pages[i]), st, n, "tree", i);
    }
}

/* Leaves, empty anchors and whitespace between tags left out before
 * gumbo, text folded (text_leaf, anchor_empty and PARSER_FOLD_X in
 * html-strip.c): gumbo builds the same tree as from the page as it is,
 * but for them (tree_loose). Anchors where formatting elements wait to be
 * reconstructed, a is open or misnested, in tables, colgroup, template,
 * select and after the body; on the pages marked, some anchor goes.
 * Leaves in paragraphs, tables (fostered or in cells), misnested, nested
 * and next to formatting elements. */
static void test_strip_gone_tree(void)
{
    static const struct {
        const char *page;
        int gone; /* some anchor is left out */
    } t[] = {
        {"<body><p><b>x</p><a id=1></a><div>y</div>", 0},
        {"<body><p><font>x</p> <div>y</div> <p><font>z</font> <a id=1></a>"
         "</p>", 0},
        {"<body><b>x</b><a id=1></a><div>y<a name=2></a>z</div><h2>"
         "<a id=3></a>T</h2><p>a <a name=4></a> b</p>", 1},
        {"<body><table><a id=1></a><tr><td>c<a id=2></a></td></tr></table>",
         1},
        {"<body><table><colgroup><a id=1></a><col></table>", 0},
        {"<body><template><a id=1></a><tr><td>x</td></tr></template>", 0},
        {"<body><a href=/x>link<a id=1></a>more</a>", 0},
        {"<body><p><a href=/x>t</p><a id=1></a>after<div>d</div>", 0},
        {"<body><select><a id=1></a><option>o</select><a id=2></a>", 1},
        {"<body><b><i>x</b></i><a id=1></a><div>d</div>", 0},
        {"<body><em>1</em><em>2</em><em>3</em><em>4</em><a id=1></a><p>p",
         1},
        {"<body><a id=1></a></body><a id=2></a>text</html><a id=3></a>", 1},
        {"<body><span><b>x</span></b><a id=1></a><div>d</div>", 0},
        {"<body><b>1<b>2<b>3<b>4</b></b></b></b><a id=1></a><div>d</div>", 0},
        {"<body><code><a href=/c>c</a><br></code><a id=1></a><h3>h</h3>", 1},
        {"<a id=0></a><body><a id=1 href=/l></a><a id=2 role=x></a>"
         "<a id=3 rel=x></a><a id=4> </a><a/></a>", 0},
        {"<body><table><tr><td>cell</td><td><abbr>A</abbr> <sup>1</sup></td>"
         "</tr><kbd>fostered</kbd><tr><th><em>h</em></th></tr></table>", 0},
        {"<body><p>See <cite>x</cite><p><q>q<mark>m</mark></q><b>b<p>para"
         "<sub>s</sub></b> <ins>i</ins><del>d<div>block</div></del>", 0},
        {"<body>first<table>fostered<tr><td>cell</td></tr></table><colgroup>"
         "c<col></colgroup><select>s</select><p>x<frameset><frame src=/f>"
         "</frameset>", 0},
        {"<body><b>x</b> <span>y</span><frameset><frame src=/g></frameset>",
         0},
        {"<body><table><colgroup>c<col>t<col></table>", 0},
        {"<body><code><a href=/1>a</a></code><code><a href=/2>b</a></code>"
         "<code><a href=/3>c</a></code><p><code>x</code> <em>e</em><code>y"
         "</code><code><a href=/4>d</a><code>z</code></code>", 0},
        {"<body><p><b>1<b>2<b>3</p><p><b>4</b></p>x<code>c</code><b>5</b>"
         "<div>d</div>", 0},
        {"<body><b>1<i>2<b>3<b>4</b></b></i></b><code>c</code><b>5</b>"
         "<div>d</div>", 0},
        {"<body><label>L</label><select><option><span>o</span></select><dl>"
         "<dt><dfn>term</dfn><dd><var>v</var></dl><ul><li><time>t</time>"
         "</ul><dl><dt>t<dd>d</dd></dl><select><option>a<option>b</option>"
         "</select><ul><li>x</li><li>y</li></ul><h4>h</h4><dl><dt>x</dt><dd>y"
         "</dd></dl>",
         0},
    };
    char st[1024 + PARSER_RAW_ROOM], sa[1024 + PARSER_RAW_ROOM];
    size_t i, n, na;
    int how = PARSER_FOLD_X | PARSER_STRIP_ATTRS;
    int leaves = PARSER_STRIP_SPANS | PARSER_STRIP_FMT;

    tree_loose = 1;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        na = parser__raw_strip(t[i].page, strlen(t[i].page), sa,
                               how | leaves);
        n = parser__raw_strip(t[i].page, strlen(t[i].page), st,
                              how | leaves | PARSER_STRIP_ANCHORS);
        CHECK((n < na) == t[i].gone, "page %zu: anchors gone %d", i,
              n < na);
        na = parser__raw_strip(t[i].page, strlen(t[i].page), sa, 0);
        same_tree(sa, na, st, n, "tree", i);
        /* and with the text left out too: the same elements */
        n = parser__raw_strip(t[i].page, strlen(t[i].page), st,
                              how | leaves | PARSER_STRIP_ANCHORS |
                                  PARSER_STRIP_TEXT);
        tree_notext = 1;
        same_tree(sa, na, st, n, "elements", i);
        tree_notext = 0;
    }
    tree_loose = 0;
}

int main(void)
{
    test_block_flags();
    test_table();
    test_directives();
    test_charset();
    test_special();
    test_deep("<div>", "</div>");
    test_deep("<span>", "</span>");
    test_garbage();
    test_arena();
    test_cut_soup();
    test_raw_strip();
    test_selfclosing_raw();
    test_fold_text();
    test_fold_len();
    test_svg_span_same();
    test_strip_leaves();
    test_strip_attrs_cases();
    test_strip_attrs_tree();
    test_strip_gone_tree();
    test_big();
    test_big_hostile();
    test_site();
    return t_done("u-html");
}
