/*
 * cmd-dedup.c: `dcrawl dedup`: check URL lists produced elsewhere against a
 * crawl's seen-set and print the new ones (see the help text in main.c).
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

int cmd_dedup(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct dedup_cache *cache;
    struct dd_totals t = {0};
    const char *redis = NULL, *files[256];
    char id[128], layout[512];
    int i, nfiles = 0, rc = DC_OK, k, jobs = 1, check_only = 0, quiet = 0;

    for (i = 1; i < argc; i++) {
        if ((k = cli_conf_arg(&cc, argc, argv, &i))) {
            if (k < 0)
                return 2;
        } else if (!strcmp(argv[i], "--redis") && i + 1 < argc) {
            redis = argv[++i];
        } else if (!strcmp(argv[i], "--check-only")) {
            check_only = 1;
        } else if ((!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))) {
            quiet = 1;
        } else if (!strcmp(argv[i], "-j") && i + 1 < argc) {
            jobs = atoi(argv[++i]);
            if (jobs < 1 || jobs > DEDUP_MAX_JOBS) {
                fprintf(stderr, "dcrawl dedup: -j takes 1 to %d\n",
                        DEDUP_MAX_JOBS);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "dcrawl dedup: unknown option or missing value: %s\n",
                    argv[i]);
            return 2;
        } else if (nfiles < 256) {
            files[nfiles++] = argv[i];
        }
    }
    if (!nfiles)
        files[nfiles++] = "-";
    if (cli_conf_apply(&cc, &c))
        return 2;
    if (cli_frontier_open("dedup", redis, &c, id, sizeof(id), &f)) {
        conf_release(&c);
        return 2;
    }
    if (seen_layout(f, layout, sizeof(layout)))
        fprintf(stderr, "dcrawl dedup: %s\n", layout);
    cache = dedup_cache_new((size_t)c.dedup_cache_entries);
    for (i = 0; i < nfiles && rc != DC_EREDIS; i++) {
        int r = dedup_input(f, cache, &c, files[i], jobs, check_only, &t);
        if (r == DC_EREDIS)
            fprintf(stderr, "dcrawl dedup: %s\n", frontier_errstr(f));
        if (r)
            rc = r;
    }
    if (fflush(stdout) != 0 && !rc)
        rc = DC_EIO;
    if (!quiet)
        print_totals(&t, cache, f, check_only);
    dedup_cache_free(&cache);
    frontier_close(&f);
    conf_release(&c);
    return rc ? 1 : 0;
}
