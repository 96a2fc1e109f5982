/*
 * noise_bench.c: the noise module measured on a site from
 * shared/bench/gen_site.py, without a crawl.
 *
 *   noise_bench eval SITE [RULE] [TEMPLATE_MIN]
 *       RULE is the block rule, signals (default), ratio or repeated
 *       (see noise.h).
 *       Runs the parser (blocks on, default tag set) and the noise module
 *       over every page listed in SITE/links.jsonl, host by host in file
 *       order, and scores the "noise" verdicts against the nav/content
 *       labels. Unit: one (page, target URL) pair; its label is content
 *       when any of its occurrences on the page is labelled content (the
 *       crawler decides per unique URL of a page). Prints precision and
 *       recall of the block stage alone (with the repeated and signals
 *       rules: after their per-host step) and of block + cluster stages.
 *       Exit status 1 when either final figure is below 0.95.
 *
 *   noise_bench speed SITE [REPEAT] [RULE]
 *       LCS pairs/s, bit-parallel against the DP, on random and URL-like
 *       pairs; then per page: gumbo parse + link extraction time (blocks
 *       off) against the noise work (the extra cost of blocks on, plus the
 *       block verdicts and noise_filter), single thread.
 *
 * Page files: SITE/hosts/<ip>/<path>, index.html for a path ending in /.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"
#include "parser.h"

#define BLOCK_TAGS                                                         \
    "td th p div nav header footer aside section article main table form"
#define MAX_LINE (8u << 20)
#define MAX_TARGETS 4096

struct target {
    char *url;
    int content;
};

/* Is url its host's root page (the seed of a bench site's host: an entry
 * page to the noise filter)? */
static int is_root(const char *url, const char *host, size_t hostlen)
{
    const char *h = strstr(url, "://");
    if (!h || strncmp(h + 3, host, hostlen) != 0)
        return 0;
    h += 3 + hostlen;
    return !*h || !strcmp(h, "/");
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = xmalloc((size_t)(n > 0 ? n : 0) + 1);
    *len = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* The JSON string value after `key` at or after *pos; NULL when none. */
static char *json_str(char **pos, const char *key)
{
    char *s = strstr(*pos, key), *e;

    if (!s)
        return NULL;
    s += strlen(key);
    e = strchr(s, '"');
    if (!e)
        return NULL;
    *e = '\0';
    *pos = e + 1;
    return s;
}

/* "http://127.0.1.1:8080/x/" -> SITE/hosts/127.0.1.1/x/index.html */
static void page_path(const char *site, const char *url, char *out, size_t cap)
{
    const char *h = strstr(url, "://"), *colon, *path;

    h = h ? h + 3 : url;
    path = h + strcspn(h, "/");
    colon = memchr(h, ':', (size_t)(path - h));
    snprintf(out, cap, "%s/hosts/%.*s%s%s", site,
             (int)((colon ? colon : path) - h), h, path,
             path[strlen(path) - 1] == '/' ? "index.html" : "");
}

static const char *link_url(void *ud, size_t i)
{
    const struct parser_result *pr = ud;

    return pr->links[i].url;
}

/* Block stage signals for every link of pr into nav (NOISE_SIG_*), blocks
 * into blk, as crawler/workers.c makes them; returns the page's text
 * outside links. */
static size_t block_stage(const struct parser_result *pr, double ratio,
                          unsigned char *nav, uint32_t *blk)
{
    size_t i;

    for (i = 0; i < pr->nlinks; i++) {
        const struct parser_block *b = &pr->blocks[pr->links[i].block];
        nav[i] = (unsigned char)noise_block_signals(
            ratio, b->text, b->link_text, (b->flags & PARSER_BLOCK_NAV) != 0,
            (b->flags & PARSER_BLOCK_MAIN) != 0, b->nlinks, b->nsect,
            b->nav_links, b->nav_mirror);
        blk[i] = pr->links[i].block;
    }
    return pr->blocks[0].text - pr->blocks[0].link_text;
}

struct score {
    size_t tp, fp, fn, tn;
};

static void score_add(struct score *s, int noise, int content)
{
    if (noise && !content)
        s->tp++;
    else if (noise)
        s->fp++;
    else if (!content)
        s->fn++;
    else
        s->tn++;
}

static void score_print(const char *what, const struct score *s, double *p,
                        double *r)
{
    *p = s->tp + s->fp ? (double)s->tp / (double)(s->tp + s->fp) : 1;
    *r = s->tp + s->fn ? (double)s->tp / (double)(s->tp + s->fn) : 1;
    printf("%-16s precision %.4f recall %.4f  (tp %zu fp %zu fn %zu tn %zu)\n",
           what, *p, *r, s->tp, s->fp, s->fn, s->tn);
}

/* Parse one links.jsonl line into targets (unique, content if any). */
static size_t line_targets(char *line, char **url, struct target *t)
{
    char *pos = line, *tg, *lb;
    size_t n = 0, k;

    *url = json_str(&pos, "\"url\":\"");
    while (*url && n < MAX_TARGETS && (tg = json_str(&pos, "\"target\":\"")) &&
           (lb = json_str(&pos, "\"label\":\""))) {
        for (k = 0; k < n && strcmp(t[k].url, tg); k++)
            ;
        if (k == n) {
            t[n].url = tg;
            t[n++].content = 0;
        }
        t[k].content |= strcmp(lb, "content") == 0;
    }
    return n;
}

static int cmd_eval(const char *site, int rule, size_t template_min)
{
    char path[4096], *line = xmalloc(MAX_LINE), *url, *body;
    struct target *t = xmalloc(MAX_TARGETS * sizeof(*t));
    struct parser *p = parser_new(PARSER_URL_STRIP_INDEX, 2048);
    struct noise_conf nc = {1, 0.25, 0.8, 256, template_min, 0, rule};
    struct noise *nz = noise_new(&nc);
    struct noise_stats st = {0};
    struct score blk = {0}, all = {0};
    unsigned char *nav = NULL, *verdict = NULL;
    uint32_t *bl = NULL;
    size_t cap = 0, n, i, k, len, pages = 0, missing = 0, text;
    double pr_, rc_, p2, r2;
    FILE *f;

    snprintf(path, sizeof(path), "%s/links.jsonl", site);
    f = fopen(path, "r");
    if (!f || parser_set_blocks(p, BLOCK_TAGS) != DC_OK) {
        fprintf(stderr, "noise_bench: cannot open %s\n", path);
        return 2;
    }
    while (fgets(line, MAX_LINE, f)) {
        const struct parser_result *pr;
        const char *host;
        size_t hostlen;

        n = line_targets(line, &url, t);
        if (!url)
            continue;
        page_path(site, url, path, sizeof(path));
        if (!(body = read_file(path, &len)) ||
            parser_parse_html(p, url, body, len, &pr) != DC_OK ||
            parser_url_host(url, &host, &hostlen) != DC_OK) {
            fprintf(stderr, "noise_bench: cannot read %s\n", path);
            free(body);
            continue;
        }
        pages++;
        xgrow((void **)&nav, &cap, pr->nlinks + 1, 1);
        verdict = xrealloc(verdict, cap);
        bl = xrealloc(bl, cap * sizeof(*bl));
        text = block_stage(pr, nc.link_ratio, nav, bl);
        noise_repeat(nz, host, hostlen, url, is_root(url, host, hostlen),
                     link_url, (void *)pr, pr->nlinks, bl, nav, text, &st);
        noise_filter(nz, host, hostlen, link_url, (void *)pr, pr->nlinks, nav,
                     verdict, NULL, &st);
        for (k = 0; k < n; k++) {
            for (i = 0; i < pr->nlinks && strcmp(pr->links[i].url, t[k].url);
                 i++)
                ;
            if (i == pr->nlinks) {
                missing++;
                continue;
            }
            score_add(&blk, nav[i], t[k].content);
            score_add(&all, verdict[i] != NOISE_KEEP, t[k].content);
        }
        free(body);
    }
    fclose(f);
    printf("pages %zu, targets not extracted %zu, rule %s, template_min %zu\n",
           pages, missing, rule == NOISE_RULE_REPEATED ? "repeated"
           : rule == NOISE_RULE_SIGNALS ? "signals"
                                        : "ratio",
           template_min);
    printf("links %zu: dropped by block %zu, by cluster %zu; over-ratio kept "
           "as not repeated %zu\n",
           st.seen, st.dropped_block, st.dropped_cluster, st.kept_unrepeated);
    score_print("block stage", &blk, &pr_, &rc_);
    score_print("block+cluster", &all, &p2, &r2);
    noise_free(&nz);
    parser_free(&p);
    free(nav);
    free(bl);
    free(verdict);
    free(t);
    free(line);
    return p2 >= 0.95 && r2 >= 0.95 && !missing ? 0 : 1;
}

/* ------------------------------------------------------------- speed */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t url_like(uint64_t *s, char *out, size_t maxlen)
{
    static const char *const seg[] = {"news", "docs", "2019", "2024", "list",
                                      "page", "item", "tag", "archive",
                                      "product", "id", "sort"};
    size_t n = 0, k = 2 + rng_next(s) % 5;

    while (k-- && n + 24 < maxlen) {
        out[n++] = '/';
        n += (size_t)snprintf(out + n, maxlen - n, "%s",
                              seg[rng_next(s) % 12]);
        if (rng_next(s) % 2)
            n += (size_t)snprintf(out + n, maxlen - n, "-%u",
                                  (unsigned)(rng_next(s) % 1000));
    }
    if (rng_next(s) % 3 == 0)
        n += (size_t)snprintf(out + n, maxlen - n, "?page=%u",
                              (unsigned)(rng_next(s) % 50));
    return n;
}

static void lcs_speed(int urls, size_t npairs)
{
    char (*a)[256] = xmalloc(npairs * sizeof(*a)),
         (*b)[256] = xmalloc(npairs * sizeof(*b));
    size_t *al = xmalloc(npairs * sizeof(size_t)),
           *bl = xmalloc(npairs * sizeof(size_t)), i, j, sum1 = 0, sum2 = 0;
    uint64_t s = 42;
    struct lcs_pat pat;
    double t0, t1, t2;

    for (i = 0; i < npairs; i++) {
        if (urls) {
            al[i] = url_like(&s, a[i], sizeof(a[i]));
            bl[i] = url_like(&s, b[i], sizeof(b[i]));
        } else {
            al[i] = 20 + rng_next(&s) % 100;
            bl[i] = 20 + rng_next(&s) % 100;
            for (j = 0; j < al[i]; j++)
                a[i][j] = (char)('a' + rng_next(&s) % 8);
            for (j = 0; j < bl[i]; j++)
                b[i][j] = (char)('a' + rng_next(&s) % 8);
        }
    }
    noise__pat_init(&pat);
    t0 = now_s();
    for (i = 0; i < npairs; i++) {
        noise__pat_set(&pat, a[i], al[i]);
        sum1 += noise__pat_lcs(&pat, b[i], bl[i]);
    }
    t1 = now_s();
    for (i = 0; i < npairs; i++)
        sum2 += noise__lcs_dp(a[i], al[i], b[i], bl[i]);
    t2 = now_s();
    printf("LCS %-12s %zu pairs: bit-parallel %.0f pairs/s, DP %.0f pairs/s "
           "(x%.1f)%s\n",
           urls ? "URL-like" : "random", npairs, (double)npairs / (t1 - t0),
           (double)npairs / (t2 - t1), (t2 - t1) / (t1 - t0),
           sum1 == sum2 ? "" : "  MISMATCH");
    noise__pat_release(&pat);
    free(a);
    free(b);
    free(al);
    free(bl);
}

struct page {
    char *url, *body;
    size_t len;
};

static size_t load_pages(const char *site, struct page **out)
{
    char path[4096], *line = xmalloc(MAX_LINE), *pos, *url;
    struct page *pg = NULL;
    size_t n = 0, cap = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/links.jsonl", site);
    f = fopen(path, "r");
    while (f && fgets(line, MAX_LINE, f)) {
        pos = line;
        if (!(url = json_str(&pos, "\"url\":\"")))
            continue;
        xgrow((void **)&pg, &cap, n + 1, sizeof(*pg));
        page_path(site, url, path, sizeof(path));
        pg[n].body = read_file(path, &pg[n].len);
        if (!pg[n].body)
            continue;
        pg[n++].url = xstrdup(url);
    }
    if (f)
        fclose(f);
    free(line);
    *out = pg;
    return n;
}

static int cmd_speed(const char *site, int repeat, int rule)
{
    struct parser *plain = parser_new(PARSER_URL_STRIP_INDEX, 2048),
                  *blocks = parser_new(PARSER_URL_STRIP_INDEX, 2048);
    struct noise_conf nc = {1, 0.25, 0.8, 256, 2, 1000, rule};
    struct noise *nz = noise_new(&nc);
    struct page *pg;
    const struct parser_result *pr;
    unsigned char nav[MAX_TARGETS], verdict[MAX_TARGETS];
    uint32_t blk[MAX_TARGETS];
    uint64_t ticket[MAX_TARGETS];
    size_t n, i, nl, text;
    double t_plain = 0, t_blocks = 0, t_filter = 0, t0;
    int r;

    lcs_speed(0, 100000);
    lcs_speed(1, 100000);
    parser_set_blocks(blocks, BLOCK_TAGS);
    n = load_pages(site, &pg);
    if (!n) {
        fprintf(stderr, "noise_bench: no pages under %s\n", site);
        return 2;
    }
    for (r = 0; r < repeat; r++) {
        for (i = 0; i < n; i++) {
            const char *host;
            size_t hostlen;
            t0 = now_s();
            parser_parse_html(plain, pg[i].url, pg[i].body, pg[i].len, &pr);
            t_plain += now_s() - t0;
            t0 = now_s();
            parser_parse_html(blocks, pg[i].url, pg[i].body, pg[i].len, &pr);
            t_blocks += now_s() - t0;
            t0 = now_s();
            nl = pr->nlinks < MAX_TARGETS ? pr->nlinks : MAX_TARGETS;
            text = block_stage(pr, nc.link_ratio, nav, blk);
            parser_url_host(pg[i].url, &host, &hostlen);
            noise_repeat(nz, host, hostlen, pg[i].url,
                         is_root(pg[i].url, host, hostlen), link_url,
                         (void *)pr, nl, blk, nav, text, NULL);
            noise_filter(nz, host, hostlen, link_url, (void *)pr, nl, nav,
                         verdict, ticket, NULL);
            t_filter += now_s() - t0;
        }
    }
    printf("pages %zu x %d: parse (blocks off) %.1f us/page; blocks add %.1f "
           "us/page; block verdicts + clusters %.1f us/page\n",
           n, repeat, t_plain * 1e6 / (double)(n * (size_t)repeat),
           (t_blocks - t_plain) * 1e6 / (double)(n * (size_t)repeat),
           t_filter * 1e6 / (double)(n * (size_t)repeat));
    printf("noise time / parse time: %.1f %%\n",
           100.0 * ((t_blocks - t_plain) + t_filter) / t_plain);
    for (i = 0; i < n; i++) {
        free(pg[i].url);
        free(pg[i].body);
    }
    free(pg);
    noise_free(&nz);
    parser_free(&plain);
    parser_free(&blocks);
    return 0;
}

/* argv[i] as a block rule (absent: signals); -1 when not a rule. */
static int rule_arg(int argc, char **argv, int i)
{
    int rule = NOISE_RULE_SIGNALS;

    if (i < argc && noise_rule_parse(argv[i], &rule) != DC_OK)
        return -1;
    return rule;
}

int main(int argc, char **argv)
{
    int rule;

    if (argc >= 3 && !strcmp(argv[1], "eval")) {
        /* eval SITE [RULE] [TEMPLATE_MIN]; a number alone is TEMPLATE_MIN */
        int num = argc > 3 && argv[3][0] >= '0' && argv[3][0] <= '9';
        rule = num ? NOISE_RULE_SIGNALS : rule_arg(argc, argv, 3);
        if (rule >= 0)
            return cmd_eval(argv[2], rule,
                            argc > 3 + !num ? (size_t)atoi(argv[3 + !num])
                                            : 2);
    }
    if (argc >= 3 && !strcmp(argv[1], "speed") &&
        (rule = rule_arg(argc, argv, 4)) >= 0)
        return cmd_speed(argv[2], argc > 3 ? atoi(argv[3]) : 3, rule);
    fprintf(stderr, "usage: noise_bench eval SITE [signals|ratio|repeated] "
                    "[TEMPLATE_MIN]\n"
                    "       noise_bench speed SITE [REPEAT] "
                    "[signals|ratio|repeated]\n");
    return 2;
}
