/*
 * cmd-robots.c: `dcrawl robots FILE|URL [--agent NAME] URL...`: a robots.txt
 * checker for people, like google/robotstxt's robots_main. Prints one line
 * per URL, "allowed URL" or "disallowed URL", in argument order.
 *
 * FILE is a robots.txt on disk (its first 500 KiB are read). Given an
 * http(s) URL instead, the robots.txt of that URL's host is fetched the way
 * the crawler fetches it (same fetcher: user agent, timeouts, redirects,
 * size cap; same failure rules, robots_rules_from) and a first line says
 * which rule applied: "# robots.txt: 404 -> allow all". The URL's host
 * counts as a seed for scope.private_addresses. Lines starting
 * with '#' are comments (the Crawl-delay and Sitemap lines follow it).
 *
 * The URLs checked are matched as typed, after google/robotstxt's path
 * extraction (parser_robots_url_path): no canonicalization, so percent-
 * encoding is compared as written. NAME is the product token, matched
 * whole (default: the token of crawl.user_agent).
 *
 * Exit status: 0 done, 2 bad usage or an unreadable FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dc-limits.h"
#include "node-internal.h"
#include "parser.h"


static int is_url(const char *s)
{
    return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

/* Read the first DC_ROBOTS_MAX_BYTES bytes of path. DC_OK or DC_EIO. */
static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    if (!f)
        return DC_EIO;
    buf = xmalloc(DC_ROBOTS_MAX_BYTES + 1);
    n = fread(buf, 1, DC_ROBOTS_MAX_BYTES, f);
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return DC_EIO;
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return DC_OK;
}

/* Fetch the robots.txt of url's host; print the rule that applied. */
static struct parser_robots *fetch_rules(const struct conf *c, const char *url,
                                         const char *agent)
{
    char canon[PARSER_URL_MAX], robots[PARSER_URL_MAX + 16], desc[160];
    const char *host;
    size_t cl, hl;
    struct fetcher *f;
    struct fetch_result *r = NULL;
    struct parser_robots *rules;
    int64_t deadline;
    int rule;

    if (parser_url_canon(NULL, url, strlen(url), 0, PARSER_URL_MAX - 1, canon,
                         sizeof(canon), &cl) != DC_OK ||
        parser_url_host(canon, &host, &hl) != DC_OK) {
        fprintf(stderr, "dcrawl robots: not an http(s) URL: %s\n", url);
        return NULL;
    }
    snprintf(robots, sizeof(robots), "%.*s/robots.txt",
             (int)(host - canon + (ptrdiff_t)hl), canon);
    f = fetcher_new(c);
    if (f) { /* the URL is the seed: its host's ranges are allowed */
        struct seed_ranges *sr = seed_ranges_new();
        seed_ranges_add(sr, host, hl);
        seed_ranges_resolve(sr);
        fetcher_set_ranges(f, seed_ranges_mask(sr));
        seed_ranges_free(&sr);
    }
    if (!f || fetcher_add(f, robots, DC_ROBOTS_MAX_BYTES, NULL) != DC_OK) {
        fprintf(stderr, "dcrawl robots: cannot start a transfer\n");
        fetcher_free(&f);
        return NULL;
    }
    /* the transfer ends by itself at fetch.timeout; the deadline is a
     * second guard */
    deadline = dc_now_ms() + (int64_t)(c->fetch_timeout * 1000) + 5000;
    while (!r && dc_now_ms() < deadline) {
        if (fetcher_run(f, 100) != DC_OK)
            break;
        r = fetcher_next_done(f);
    }
    if (!r) {
        struct fetch_result none = {0};
        snprintf(none.error, sizeof(none.error), "no answer in time");
        rules = robots_rules_from(&none, agent, 0, &rule, desc, sizeof(desc));
    } else {
        rules = robots_rules_from(r, agent, 0, &rule, desc, sizeof(desc));
    }
    printf("# robots.txt: %s (%s)\n", desc, robots);
    fetch_result_free(r);
    fetcher_free(&f);
    return rules;
}

static void print_extras(const struct parser_robots *rules)
{
    const char *const *sm;
    size_t n = parser_robots_sitemaps(rules, &sm), i;
    double d = parser_robots_crawl_delay(rules);
    if (d >= 0)
        printf("# crawl-delay: %g\n", d);
    for (i = 0; i < n; i++)
        printf("# sitemap: %s\n", sm[i]);
}

struct robots_args {
    struct cli_conf cc;
    const char *source, *agent;
    struct opt_list urls;
};

static int parse_args(struct robots_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "agent", &a->agent, "NAME",
                       "product token to match user-agent lines against"),
        OPT_CONF_ROWS(&a->cc),
        OPT_ARG_ROW(&a->source, "FILE|URL"),
        OPT_ARGS_ROW(&a->urls, "URL"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "robots",
        "usage: dcrawl robots FILE|URL [--agent NAME] URL...\n",
        "Prints `allowed URL` or `disallowed URL` for each URL, as the crawler\n"
        "would decide for the product token NAME (default: the token of\n"
        "crawl.user_agent). FILE is a robots.txt on disk; given an http(s) URL,\n"
        "that host's /robots.txt is fetched with the crawler's fetch rules and a\n"
        "first line says which rule applied, e.g. `# robots.txt: 404 -> allow all`.\n"
        "Crawl-delay and Sitemap lines follow as `# ...` comments. Exit status 0,\n"
        "or 2 for bad usage or an unreadable FILE.\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    if (rc == OPT_RUN && (!a->source || !*a->source))
        rc = opt_usage_error(&cmd, "give a robots.txt FILE or a URL, then the "
                                   "URLs to check");
    return rc;
}

/* The rules of source (a file, or fetched for a URL's host), or NULL
 * after printing why. */
static struct parser_robots *load_rules(const struct conf *c,
                                        const char *source, const char *agent)
{
    struct parser_robots *rules;
    char *txt = NULL;
    size_t len = 0;

    if (is_url(source))
        return fetch_rules(c, source, agent);
    if (read_file(source, &txt, &len) != DC_OK) {
        fprintf(stderr, "dcrawl robots: cannot read %s\n", source);
        return NULL;
    }
    rules = parser_robots_parse(txt, len, agent, 0);
    free(txt);
    return rules;
}

static void check_urls(const struct parser_robots *rules,
                       const struct opt_list *urls)
{
    char *path = xmalloc(PARSER_URL_MAX * 8);
    size_t i;

    for (i = 0; i < urls->n; i++) {
        parser_robots_url_path(urls->v[i], path, PARSER_URL_MAX * 8);
        printf("%s %s\n",
               parser_robots_allowed(rules, path) ? "allowed" : "disallowed",
               urls->v[i]);
    }
    free(path);
}

int cmd_robots(int argc, char **argv)
{
    struct robots_args a = {0};
    struct conf c;
    struct parser_robots *rules = NULL;
    char token[128];
    int rc = parse_args(&a, argc, argv);

    if (rc != OPT_RUN)
        return rc;
    rc = cli_conf_apply(&a.cc, &c);
    free(a.cc.sets.v);
    if (rc) {
        free(a.urls.v);
        return 2;
    }
    if (!a.agent) {
        parser_agent_token(c.crawl_user_agent, token, sizeof(token));
        a.agent = token;
    }
    rules = load_rules(&c, a.source, a.agent);
    if (rules) {
        print_extras(rules);
        check_urls(rules, &a.urls);
    } else {
        rc = 2;
    }
    if (fflush(stdout) != 0 && !rc)
        rc = 1;
    parser_robots_free(&rules);
    conf_release(&c);
    free(a.urls.v);
    return rc;
}
