/*
 * canon_cache.c: the client side of the URL dedup path, stage by stage,
 * single thread, no Redis.
 *
 *   build-rel/bench/canon_cache [URLS (10000000)] [CACHE_ENTRIES (1048576)]
 *
 * Stream: the link stream of bench/dedup.c (same generator, copied: 30 %
 * new ids, 70 % repeats, half Zipf popularity over all ids, half Zipf
 * over recency; six URL shapes on 200,000 Zipf-popular hosts; one link in
 * four with a #fragment, an upper-case host or an explicit default port).
 * URL text is generated in chunks of 8192 URLs (3 MB, so the stages read
 * it from the CPU cache, as a crawler reads links it just parsed) outside
 * the clock; each stage is timed over the whole chunk:
 *
 *   canon      parser_url_canon (the fast path where it applies)
 *   fast       the fast path alone (parser__url_canon_fast), with the
 *              share of URLs it handled
 *   slow       the full WHATWG parser alone (parser__url_canon_slow)
 *   fp         dedup_fingerprint over the canonical URLs
 *   cache      dedup_cache_hit, and dedup_cache_put on a miss, with a
 *              prefetch 8 lookups ahead (as cmd-dedup does in batches)
 *   old cache  the previous cache (bench/canon_cache_ref.c), same loop
 *   LRU        exact LRU of the same capacity (the previous cache with
 *              window 0 and protected 0), same loop
 *
 * Printed: ns per URL for each stage and the hit rates of the three
 * caches. Built with -DCANON_CACHE_BEFORE against the sources of an
 * earlier commit (no fast/slow split, no reference cache) it prints the
 * same lines for canon, fp and cache, so before and after compare.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "dedup.h"
#include "parser.h"
#ifndef CANON_CACHE_BEFORE
#include "canon_cache_ref.h"
#include "parser-internal.h"
#include "linkstream.h"
#endif

#define CHUNK 8192
#define AHEAD 8


/* ------------------------------------------------------------ timing */

/* CPU time of this thread: other processes sharing the cores do not
 * count (they still share caches and memory bandwidth). */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum { T_CANON, T_FAST, T_SLOW, T_FP, T_CACHE, T_OLD, T_LRU, T_N };
static const char *const t_name[T_N] = {
    "canonicalize (parser_url_canon)", "  fast path alone", "  slow path alone",
    "fingerprint (murmur3)", "cache lookup+insert", "  old cache, same loop",
    "  exact LRU, same loop"
};

struct chunk {
    char raw[CHUNK][LINKSTREAM_MAXURL], canon[CHUNK][LINKSTREAM_MAXURL];
    size_t rawlen[CHUNK], len[CHUNK];
    int ok[CHUNK];
    uint64_t fp[CHUNK];
    size_t n;
};

static void chunk_fill(struct chunk *c, struct linkstream *s, size_t n)
{
    int v = 0;

    for (c->n = 0; c->n < n; c->n++)
        c->rawlen[c->n] = (size_t)linkstream_url(linkstream_next(s, &v), v, c->raw[c->n]);
}

static size_t bad_urls;

static double time_canon(struct chunk *c)
{
    double t = now_s();

    for (size_t i = 0; i < c->n; i++)
        c->ok[i] = parser_url_canon(NULL, c->raw[i], c->rawlen[i], 0, 4096,
                                    c->canon[i], LINKSTREAM_MAXURL, &c->len[i]) == DC_OK;
    t = now_s() - t;
    for (size_t i = 0; i < c->n; i++)
        bad_urls += !c->ok[i];
    return t;
}

static double time_fp(struct chunk *c)
{
    double t = now_s();

    for (size_t i = 0; i < c->n; i++)
        c->fp[i] = dedup_fingerprint(c->canon[i], c->len[i]);
    return now_s() - t;
}

static double time_cache(struct dedup_cache *dc, const struct chunk *c)
{
    double t = now_s();

    for (size_t i = 0; i < c->n; i++) {
        if (i + AHEAD < c->n)
            dedup_cache_prefetch(dc, c->fp[i + AHEAD]);
        if (!dedup_cache_hit(dc, c->fp[i]))
            dedup_cache_put(dc, c->fp[i]);
    }
    return now_s() - t;
}

#ifndef CANON_CACHE_BEFORE
static size_t fast_taken;

static double time_path(struct chunk *c, int fast)
{
    static char out[LINKSTREAM_MAXURL];
    size_t len;
    double t = now_s();

    for (size_t i = 0; i < c->n; i++) {
        if (fast)
            fast_taken += parser__url_canon_fast(NULL, c->raw[i], c->rawlen[i],
                                                 0, 4096, out, LINKSTREAM_MAXURL,
                                                 &len) == DC_OK;
        else
            parser__url_canon_slow(NULL, c->raw[i], c->rawlen[i], 0, 4096,
                                   out, LINKSTREAM_MAXURL, &len);
    }
    return now_s() - t;
}

static double time_ref(struct ref_cache *rc, const struct chunk *c)
{
    double t = now_s();

    for (size_t i = 0; i < c->n; i++) {
        if (i + AHEAD < c->n)
            ref_cache_prefetch(rc, c->fp[i + AHEAD]);
        if (!ref_cache_hit(rc, c->fp[i]))
            ref_cache_put(rc, c->fp[i]);
    }
    return now_s() - t;
}
#endif

static double rate(const struct dedup_cache_stats *s)
{
    return 100.0 * (double)s->hits / (double)(s->hits + s->misses);
}

int main(int argc, char **argv)
{
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    size_t entries = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 1048576;
    struct chunk *c = xmalloc(sizeof(*c));
    struct dedup_cache *dc = dedup_cache_new(entries);
    struct dedup_cache_stats s;
    struct linkstream st;
    double t[T_N] = { 0 };
    uint64_t done = 0;

#ifndef CANON_CACHE_BEFORE
    struct ref_cache *old = ref_cache_new(entries);
    struct ref_cache *lru = ref_cache_new_tuned(entries, 0, 0);
#endif
    if (argc > 3 || total == 0 || entries == 0) {
        fprintf(stderr, "usage: canon_cache [URLS] [CACHE_ENTRIES]\n");
        return 2;
    }
    linkstream_init(&st);
    while (done < total) {
        size_t n = total - done < CHUNK ? (size_t)(total - done) : CHUNK;
        chunk_fill(c, &st, n);
        t[T_CANON] += time_canon(c);
        t[T_FP] += time_fp(c);
        t[T_CACHE] += time_cache(dc, c);
#ifndef CANON_CACHE_BEFORE
        t[T_FAST] += time_path(c, 1);
        t[T_SLOW] += time_path(c, 0);
        t[T_OLD] += time_ref(old, c);
        t[T_LRU] += time_ref(lru, c);
#endif
        done += n;
    }
    printf("canon_cache: %" PRIu64 " URLs, cache %zu entries, %zu rejected\n",
           total, entries, bad_urls);
    for (int k = 0; k < T_N; k++)
        if (t[k] > 0)
            printf("%-34s %7.1f ns/URL\n", t_name[k],
                   1e9 * t[k] / (double)total);
    printf("%-34s %7.1f ns/URL\n", "path (canonicalize+fp+cache)",
           1e9 * (t[T_CANON] + t[T_FP] + t[T_CACHE]) / (double)total);
    dedup_cache_stats(dc, &s);
    printf("hit rate: cache %.2f %%", rate(&s));
#ifndef CANON_CACHE_BEFORE
    printf(" (%" PRIu64 " evictions)", s.evictions);
    ref_cache_stats(old, &s);
    printf(", old cache %.2f %%", rate(&s));
    ref_cache_stats(lru, &s);
    printf(", exact LRU %.2f %%", rate(&s));
    printf("\nfast path taken: %.2f %% of URLs",
           100.0 * (double)fast_taken / (double)total);
    ref_cache_free(&old);
    ref_cache_free(&lru);
#endif
    printf("\n");
    dedup_cache_free(&dc);
    free(c);
    return 0;
}
