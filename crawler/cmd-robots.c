/*
 * cmd-robots.c: `dcrawl robots FILE|URL [--agent NAME] URL...`: a robots.txt
 * checker for people, like google/robotstxt's robots_main. Prints one line
 * per URL, "allowed URL" or "disallowed URL", in argument order.
 *
 * FILE is a robots.txt on disk (its first 500 KiB are read). Given an
 * http(s) URL instead, the robots.txt of that URL's host is fetched the way
 * the crawler fetches it (same fetcher: user agent, timeouts, redirects,
 * size cap; same failure rules, robots_rules_from) and a first line says
 * which rule applied: "# robots.txt: 404 -> allow all". Lines starting
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

int cmd_robots(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    struct parser_robots *rules = NULL;
    const char *source = NULL, *agent = NULL;
    char token[128], *path;
    char **urls = xcalloc((size_t)argc + 1, sizeof(*urls));
    int i, k, nurls = 0, rc = 0;

    for (i = 1; i < argc; i++) {
        if ((k = cli_conf_arg(&cc, argc, argv, &i))) {
            if (k < 0) {
                free(urls);
                return 2;
            }
        } else if (!strcmp(argv[i], "--agent") && i + 1 < argc) {
            agent = argv[++i];
        } else if (!strcmp(argv[i], "--")) {
            for (i++; i < argc; i++)
                urls[nurls++] = argv[i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "dcrawl robots: unknown option or missing value: %s\n",
                    argv[i]);
            free(urls);
            return 2;
        } else if (!source) {
            source = argv[i];
        } else {
            urls[nurls++] = argv[i];
        }
    }
    if (!source || !*source) {
        fprintf(stderr, "dcrawl robots: give a robots.txt FILE or a URL, then "
                        "the URLs to check (see dcrawl robots --help)\n");
        free(urls);
        return 2;
    }
    if (cli_conf_apply(&cc, &c)) {
        free(urls);
        return 2;
    }
    if (!agent) {
        parser_agent_token(c.crawl_user_agent, token, sizeof(token));
        agent = token;
    }
    if (is_url(source)) {
        rules = fetch_rules(&c, source, agent);
        if (!rules)
            rc = 2;
    } else {
        char *txt = NULL;
        size_t len = 0;
        if (read_file(source, &txt, &len) != DC_OK) {
            fprintf(stderr, "dcrawl robots: cannot read %s\n", source);
            rc = 2;
        } else {
            rules = parser_robots_parse(txt, len, agent, 0);
            free(txt);
        }
    }
    if (rules) {
        print_extras(rules);
        path = xmalloc(PARSER_URL_MAX * 8);
        for (i = 0; i < nurls; i++) {
            parser_robots_url_path(urls[i], path, PARSER_URL_MAX * 8);
            printf("%s %s\n",
                   parser_robots_allowed(rules, path) ? "allowed" : "disallowed",
                   urls[i]);
        }
        free(path);
    }
    if (fflush(stdout) != 0 && !rc)
        rc = 1;
    parser_robots_free(&rules);
    conf_release(&c);
    free(urls);
    return rc;
}
