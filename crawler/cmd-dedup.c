/*
 * cmd-dedup.c: `dcrawl dedup`: check URL lists produced elsewhere against a
 * crawl's seen-set and print the new ones. Its options and help are the
 * table in parse_args (options.h).
 *
 * Input is read in blocks of DEDUP_BLOCK lines. A block's lines are
 * canonicalized and fingerprinted by -j threads (each a contiguous slice),
 * then the main thread drops the ones its cache has answered before, asks
 * Redis about the rest in one pipelined round trip (seen_batch: the
 * same keys as the crawl's admit, so a URL printed here is never crawled
 * and a crawled URL is never printed), and prints the new URLs in input
 * order. Bad lines go to stderr as "NAME:LINE: reason: text". Blocks are
 * large (DEDUP_BLOCK = 65536 lines) so that each bucket group of the
 * seen script carries several members: Redis's cost is mostly per call.
 *
 * Thread rules: the worker threads of a block share nothing but their
 * read-only slice of lines; the cache and frontier stay on the main thread.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#define DEDUP_BLOCK 65536
#define DEDUP_MAX_JOBS 64

struct dd_item {
    char *line;        /* input line (owned), trimmed in place */
    size_t len, lineno;
    char *canon;       /* owned; NULL when the line is bad or blank */
    int rc;            /* DC_OK, DC_ETOOBIG, DC_EURL; -1 blank/comment */
    struct frontier_url u;
};

struct dd_slice {
    struct dd_item *it;
    size_t n;
    unsigned flags;
    size_t maxlen;
};

struct dd_totals {
    uint64_t read, fresh, seen, bad;
};

static void canon_one(struct dd_item *it, unsigned flags, size_t maxlen)
{
    char buf[PARSER_URL_MAX];
    const char *s = it->line, *host;
    size_t len = it->len, clen, hostlen;

    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    it->rc = -1;
    if (!len || *s == '#')
        return;
    it->rc = parser_url_canon(NULL, s, len, flags, maxlen, buf, sizeof(buf),
                              &clen);
    if (it->rc == DC_OK && parser_url_host(buf, &host, &hostlen) != DC_OK)
        it->rc = DC_EURL;
    if (it->rc != DC_OK)
        return;
    it->canon = xstrndup(buf, clen);
    it->u.url = it->canon;
    it->u.len = clen;
    it->u.host = it->canon + (host - buf);
    it->u.hostlen = hostlen;
    it->u.fp = dedup_fingerprint(buf, clen);
}

static void *canon_slice(void *arg)
{
    struct dd_slice *sl = arg;

    for (size_t i = 0; i < sl->n; i++)
        canon_one(&sl->it[i], sl->flags, sl->maxlen);
    return NULL;
}

/* Canonicalize n items on `jobs` threads (the caller's included). */
static void canon_block(struct dd_item *it, size_t n, int jobs,
                        const struct conf *c)
{
    struct dd_slice sl[DEDUP_MAX_JOBS];
    pthread_t th[DEDUP_MAX_JOBS];
    int started[DEDUP_MAX_JOBS] = {0};
    size_t per = (n + (size_t)jobs - 1) / (size_t)jobs, at = 0;

    for (int j = 0; j < jobs; j++) {
        sl[j].it = it + at;
        sl[j].n = at + per <= n ? per : n - at;
        sl[j].flags = c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
        sl[j].maxlen = (size_t)c->url_max_length;
        at += sl[j].n;
        if (j > 0 && sl[j].n)
            started[j] = !pthread_create(&th[j], NULL, canon_slice, &sl[j]);
        if (j > 0 && sl[j].n && !started[j])
            canon_slice(&sl[j]);
    }
    canon_slice(&sl[0]);
    for (int j = 1; j < jobs; j++)
        if (started[j])
            pthread_join(th[j], NULL);
}

static void report_bad(const char *name, const struct dd_item *it)
{
    size_t len = it->len;
    int n;

    while (len && (it->line[len - 1] == '\n' || it->line[len - 1] == '\r'))
        len--;
    n = len > 200 ? 200 : (int)len;

    fprintf(stderr, "%s:%zu: %s: %.*s\n", name, it->lineno,
            it->rc == DC_ETOOBIG ? "URL longer than url.max_length"
                                 : "not a crawlable http(s) URL",
            n, it->line);
}

/* Answer a canonicalized block: cache, then one seen_batch call. */
static int answer_block(struct frontier *f, struct dedup_cache *cache,
                        struct dd_item *it, size_t n, int check_only,
                        const char *name, struct dd_totals *t)
{
    struct frontier_url *ask = xmalloc(n * sizeof(*ask));
    size_t *idx = xmalloc(n * sizeof(*idx));
    unsigned char *isnew = xcalloc(n ? n : 1, 1), *out = xcalloc(n ? n : 1, 1);
    size_t na = 0;
    int rc;

    for (size_t i = 0; i < n; i++) {
        if (it[i].rc == -1)
            continue;
        t->read++;
        if (it[i].rc != DC_OK) {
            t->bad++;
            report_bad(name, &it[i]);
        } else if (!dedup_cache_hit(cache, it[i].u.fp)) {
            idx[na] = i;
            ask[na++] = it[i].u;
        }
    }
    rc = seen_batch(f, ask, na, check_only, isnew);
    for (size_t k = 0; !rc && k < na; k++) {
        /* A URL twice in one block: only its first copy can be new. */
        if (isnew[k] && !dedup_cache_contains(cache, ask[k].fp))
            out[idx[k]] = 1;
        dedup_cache_put(cache, ask[k].fp);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (out[i]) {
            fwrite(it[i].u.url, 1, it[i].u.len, stdout);
            fputc('\n', stdout);
            t->fresh++;
        } else if (it[i].rc == DC_OK) {
            t->seen++;
        }
    }
    free(ask);
    free(idx);
    free(isnew);
    free(out);
    return rc;
}

static void block_release(struct dd_item *it, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(it[i].line);
        free(it[i].canon);
    }
    memset(it, 0, n * sizeof(*it));
}

/* Read and answer one input. */
static int dedup_input(struct frontier *f, struct dedup_cache *cache,
                       const struct conf *c, const char *path, int jobs,
                       int check_only, struct dd_totals *t)
{
    struct dd_item *it = xcalloc(DEDUP_BLOCK, sizeof(*it));
    FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
    const char *name = strcmp(path, "-") ? path : "stdin";
    char *line = NULL;
    size_t cap = 0, lineno = 0, n = 0;
    ssize_t got = 0;
    int rc = DC_OK;

    if (!in) {
        fprintf(stderr, "dcrawl dedup: %s: %s\n", path, strerror(errno));
        free(it);
        return DC_EIO;
    }
    while (!rc && got >= 0) {
        got = getline(&line, &cap, in);
        if (got >= 0) {
            it[n].lineno = ++lineno;
            it[n].len = strnlen(line, (size_t)got);
            it[n].line = xstrndup(line, it[n].len);
            n++;
        }
        if (n == DEDUP_BLOCK || (got < 0 && n)) {
            canon_block(it, n, jobs, c);
            rc = answer_block(f, cache, it, n, check_only, name, t);
            block_release(it, n);
            n = 0;
        }
    }
    if (in != stdin)
        fclose(in);
    free(line);
    free(it);
    return rc;
}

static void print_totals(const struct dd_totals *t, struct dedup_cache *cache,
                         struct frontier *f, int check_only)
{
    struct dedup_cache_stats cs;
    uint64_t asked;

    dedup_cache_stats(cache, &cs);
    asked = cs.hits + cs.misses;
    fprintf(stderr,
            "dedup: %llu URLs read: %llu new%s, %llu already seen, %llu bad; "
            "cache hit rate %.1f%%, %llu Redis round trips\n",
            (unsigned long long)t->read, (unsigned long long)t->fresh,
            check_only ? " (not marked: --check-only)" : "",
            (unsigned long long)t->seen, (unsigned long long)t->bad,
            asked ? 100.0 * (double)cs.hits / (double)asked : 0.0,
            (unsigned long long)frontier_roundtrips(f));
}

struct dedup_args {
    struct cli_conf cc;
    const char *redis;
    struct opt_list files;
    int jobs, check_only, quiet;
};

static int parse_args(struct dedup_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "redis", &a->redis, "URL",
                       "the crawl's Redis (or redis.url / DCRAWL_REDIS_URL)"),
        OPT_FLAG_ROW(0, "check-only", &a->check_only,
                     "print the new URLs without marking them seen"),
        OPT_INT_ROW('j', NULL, &a->jobs, "N", 1, DEDUP_MAX_JOBS,
                    "canonicalize on N threads (default 1)"),
        OPT_FLAG_ROW('q', "quiet", &a->quiet, "no totals"),
        OPT_CONF_ROWS(&a->cc),
        OPT_ARGS_ROW(&a->files, "FILE"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "dedup",
        "usage: dcrawl dedup --redis URL [--check-only] [-j N] [options] [FILE...|-]\n",
        "Reads URLs, one per line (blank lines and # comments skipped; no FILE =\n"
        "stdin), canonicalizes and fingerprints them, checks them against the\n"
        "crawl's seen-set and prints the new ones (canonical form, input order),\n"
        "marking them seen. A URL printed here is never crawled later, and a URL\n"
        "already crawled or queued is never printed. Bad lines go to stderr with\n"
        "their line numbers; totals go to stderr at the end.\n",
        opts};
    int rc;

    a->jobs = 1;
    rc = opt_parse(&cmd, argc, argv);
    return rc;
}

int cmd_dedup(int argc, char **argv)
{
    struct dedup_args a = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct dedup_cache *cache;
    struct dd_totals t = {0};
    static const char *const stdin_only[] = {"-"};
    const char *const *files;
    char id[128], layout[512];
    size_t i, nfiles;
    int rc = parse_args(&a, argc, argv);

    if (rc != OPT_RUN)
        return rc;
    files = a.files.n ? a.files.v : stdin_only;
    nfiles = a.files.n ? a.files.n : 1;
    rc = cli_open("dedup", &a.cc, a.redis, &c, id, sizeof(id), &f);
    free(a.cc.sets.v);
    if (rc) {
        free(a.files.v);
        return rc;
    }
    if (seen_layout(f, layout, sizeof(layout)))
        fprintf(stderr, "dcrawl dedup: %s\n", layout);
    cache = dedup_cache_new((size_t)c.dedup_cache_entries);
    for (i = 0; i < nfiles && rc != DC_EREDIS; i++) {
        int r = dedup_input(f, cache, &c, files[i], a.jobs, a.check_only, &t);
        if (r == DC_EREDIS)
            fprintf(stderr, "dcrawl dedup: %s\n", frontier_errstr(f));
        if (r)
            rc = r;
    }
    if (fflush(stdout) != 0 && !rc)
        rc = DC_EIO;
    if (!a.quiet)
        print_totals(&t, cache, f, a.check_only);
    dedup_cache_free(&cache);
    frontier_close(&f);
    conf_release(&c);
    free(a.files.v);
    return rc ? 1 : 0;
}
