/*
 * dedup.c: the URL dedup path at scale, against a scrapy-redis-like
 * baseline, in one run.
 *
 *   build-rel/bench/dedup_bench [--sizes 10000000,50000000] [--cache N]
 *        [--batch N] [--baseline N] [--baseline-nopipe N] [--jobs N]
 *        [--layout mod|b256] [--module PATH]
 *
 * Link stream. URL ids come from a generator that imitates what a crawl's
 * link extractor produces: 30 % of links are to pages never seen before
 * (the next id), 70 % repeat an earlier one, half of those drawn from a
 * Zipf (s = 1) popularity over all ids so far (navigation links: home,
 * categories, popular articles) and half from a Zipf over how recently an
 * id was first seen (links between neighbouring new pages). An id becomes
 * URL text through one of six shapes (article, product with query,
 * dated blog post, search results, news slug, user profile) on one of
 * 200,000 hosts of Zipf popularity, 40 to 130 bytes long; one link in
 * four carries a #fragment, an upper-case host or an explicit default
 * port, which canonicalization removes, so distinct spellings still meet
 * as one canonical URL. The stream is seeded: every run is the same.
 *
 * Path timed (per size, fresh Redis data): the stream's URL text is
 * generated first (on --jobs threads, about 90 bytes a URL in memory; the
 * time is printed apart), then the clock runs over canonicalize
 * (parser_url_canon) -> fingerprint (MurmurHash3) -> cache
 * (dedup_cache_*) -> a miss enters the cache at once and is batched,
 * --batch at a time, into seen_batch (one round trip). Three stages
 * overlap: --jobs canonicalizing threads fill chunks of CHUNK URLs ahead
 * (a ring of NSLOTS chunks, taken in stream order), one cache thread (the
 * main one) runs the cache and builds batches, and one I/O thread runs
 * seen_batch on the previous batch (two batch buffers). The time is
 * wall clock to the last answer. A repeat while its first copy's answer
 * is pending is a duplicate either way. Also printed: the CPU time of
 * this process and of redis-server during the path, and how long the
 * cache thread waited for Redis and for the canonicalizers.
 *
 * Layout: by default the redis-server loads the seen-set module (the
 * build's dcrawl-seen.so, or --module PATH), so the frontier uses layout
 * mod-u64 (one DCSEEN.ADD per partition, the fingerprints as one binary
 * blob); --layout b256 starts it without the module: layout b256-i64 (one
 * Lua call per partition over intset buckets).
 *
 * Cache comparison: the same id stream replayed through the cache and
 * through an exact LRU (hash + doubly linked list) of equal capacity, and
 * the same for a recency-only variant of the stream (repeats by locality
 * only, where LRU is hard to beat). Ids map one-to-one to canonical URLs,
 * so the hit rates equal those on fingerprints.
 *
 * Memory: INFO used_memory after the run minus before (empty database),
 * divided by the URLs stored; also MEMORY USAGE summed over the seen-set's
 * keys (seen_usage).
 *
 * Baseline (scrapy-redis's RFPDupeFilter): SHA-1 of the canonical URL as
 * 40 hex characters, one SADD to one set per URL, no cache; pipelined
 * (batches of --batch) on the first --baseline URLs of the stream and
 * one round trip per URL on the first --baseline-nopipe; rates are per
 * URL and extrapolated linearly to the full size (said so in the output).
 *
 * A private redis-server runs on a unix socket in a temp dir with the
 * project's settings (set-max-intset-entries 8192, no persistence, the
 * module unless --layout b256) and is shut down at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <openssl/evp.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#include "linkstream.h"
#include "redis-priv.h"

#define CHUNK 65536

struct opts {
    uint64_t sizes[8];
    int nsizes;
    size_t cache, batch;
    uint64_t baseline, baseline_nopipe;
    int jobs, replay_only;
    int b256;               /* --layout b256: no module, the Lua layout */
    const char *module;     /* --module PATH (default: the build's) */
};


/* A chunk of generated URL text. */
struct chunk {
    char (*url)[LINKSTREAM_MAXURL];
    int *len;
    size_t n;
};

static void chunk_fill(struct chunk *c, struct linkstream *s, size_t n)
{
    int v;

    for (c->n = 0; c->n < n; c->n++) {
        uint64_t id = linkstream_next(s, &v);
        c->len[c->n] = linkstream_url(id, v, c->url[c->n]);
    }
}

/* ------------------------------------------------------------ helpers */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int canon(const char *raw, int len, char *out, size_t *olen,
                 const char **host, size_t *hostlen)
{
    if (parser_url_canon(NULL, raw, (size_t)len, 0, 4096, out, PARSER_URL_MAX,
                         olen) != DC_OK)
        return -1;
    return parser_url_host(out, host, hostlen) == DC_OK ? 0 : -1;
}

static void rcmd(redisContext *r, const char *cmd)
{
    redisReply *rep = redisCommand(r, cmd);

    if (rep)
        freeReplyObject(rep);
}

/* ------------------------------------------------------- exact LRU */

/* Plain LRU of fixed capacity: open-addressing index + doubly linked
 * list over node numbers (0 = none). Bench-only, for the comparison. */
struct lru {
    uint64_t *key;
    uint32_t *prev, *next, *slot;
    size_t cap, n, mask;
    uint32_t head, tail; /* head = most recent */
    uint64_t hits, misses;
};

static void lru_init(struct lru *l, size_t cap)
{
    size_t ns = 1;

    while (ns < 2 * cap)
        ns <<= 1;
    memset(l, 0, sizeof(*l));
    l->cap = cap;
    l->mask = ns - 1;
    l->key = xcalloc(cap + 1, sizeof(*l->key));
    l->prev = xcalloc(cap + 1, sizeof(*l->prev));
    l->next = xcalloc(cap + 1, sizeof(*l->next));
    l->slot = xcalloc(ns, sizeof(*l->slot));
}

static void lru_release(struct lru *l)
{
    free(l->key);
    free(l->prev);
    free(l->next);
    free(l->slot);
}

static size_t lru_probe(const struct lru *l, uint64_t k)
{
    size_t i = linkstream_mix64(k) & l->mask;

    while (l->slot[i] && l->key[l->slot[i]] != k)
        i = (i + 1) & l->mask;
    return i;
}

static void lru_unlink(struct lru *l, uint32_t x)
{
    if (l->prev[x])
        l->next[l->prev[x]] = l->next[x];
    else
        l->head = l->next[x];
    if (l->next[x])
        l->prev[l->next[x]] = l->prev[x];
    else
        l->tail = l->prev[x];
}

static void lru_front(struct lru *l, uint32_t x)
{
    l->prev[x] = 0;
    l->next[x] = l->head;
    if (l->head)
        l->prev[l->head] = x;
    l->head = x;
    if (!l->tail)
        l->tail = x;
}

static void lru_slot_delete(struct lru *l, size_t i)
{
    size_t j = i;

    for (;;) {
        j = (j + 1) & l->mask;
        if (!l->slot[j])
            break;
        size_t home = linkstream_mix64(l->key[l->slot[j]]) & l->mask;
        if (((j - home) & l->mask) >= ((j - i) & l->mask)) {
            l->slot[i] = l->slot[j];
            i = j;
        }
    }
    l->slot[i] = 0;
}

/* Look k up; on a miss insert it. Returns 1 on a hit. */
static int lru_access(struct lru *l, uint64_t k)
{
    size_t i = lru_probe(l, k);
    uint32_t x;

    if (l->slot[i]) {
        x = l->slot[i];
        lru_unlink(l, x);
        lru_front(l, x);
        l->hits++;
        return 1;
    }
    l->misses++;
    if (l->n < l->cap) {
        x = (uint32_t)++l->n;
    } else {
        x = l->tail;
        lru_unlink(l, x);
        lru_slot_delete(l, lru_probe(l, l->key[x]));
        i = lru_probe(l, k);
    }
    l->key[x] = k;
    l->slot[i] = x;
    lru_front(l, x);
    return 0;
}

/* Replay the id stream of n links through both caches. */
static void compare_caches(uint64_t n, size_t cap, int recency_only,
                           double *w_rate, double *l_rate)
{
    struct dedup_cache *w = dedup_cache_new(cap);
    struct dedup_cache_stats st;
    struct lru l;
    struct linkstream s;
    int v;

    lru_init(&l, cap);
    linkstream_init(&s);
    s.recency_only = recency_only;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = linkstream_mix64(linkstream_next(&s, &v) + 0x1234567);
        if (!dedup_cache_hit(w, k))
            dedup_cache_put(w, k);
        lru_access(&l, k);
    }
    dedup_cache_stats(w, &st);
    *w_rate = (double)st.hits / (double)(st.hits + st.misses);
    *l_rate = (double)l.hits / (double)(l.hits + l.misses);
    dedup_cache_free(&w);
    lru_release(&l);
}

/* --------------------------------------------------------- the path */

/* The link stream of one run as text, generated before the clock starts:
 * ids and variants in stream order (one thread, the generator is
 * sequential), then the text on `jobs` threads, one arena per range. */
struct corpus {
    uint64_t n;
    int nseg;
    struct {
        uint64_t from, to;
        char *text;
        uint64_t *off; /* to - from + 1 offsets into text */
    } seg[8];
};

struct gen_job {
    struct corpus *cp;
    int k;
    const uint64_t *ids;
    const unsigned char *var;
};

static void *gen_range(void *arg)
{
    struct gen_job *j = arg;
    __typeof__(j->cp->seg[0]) *sg = &j->cp->seg[j->k];
    size_t cap = (size_t)(sg->to - sg->from) * 96 + LINKSTREAM_MAXURL, len = 0;

    sg->text = xmalloc(cap);
    sg->off = xmalloc((size_t)(sg->to - sg->from + 1) * sizeof(*sg->off));
    for (uint64_t i = sg->from; i < sg->to; i++) {
        if (len + LINKSTREAM_MAXURL > cap)
            xgrow((void **)&sg->text, &cap, len + LINKSTREAM_MAXURL, 1);
        sg->off[i - sg->from] = len;
        len += (size_t)linkstream_url(j->ids[i], j->var[i], sg->text + len);
    }
    sg->off[sg->to - sg->from] = len;
    return NULL;
}

static void corpus_make(struct corpus *cp, uint64_t n, int jobs)
{
    uint64_t *ids = xmalloc(n * sizeof(*ids));
    unsigned char *var = xmalloc(n);
    struct gen_job j[8];
    pthread_t th[8];
    struct linkstream s;
    int v;

    linkstream_init(&s);
    for (uint64_t i = 0; i < n; i++) {
        ids[i] = linkstream_next(&s, &v);
        var[i] = (unsigned char)v;
    }
    memset(cp, 0, sizeof(*cp));
    cp->n = n;
    cp->nseg = jobs;
    for (int k = 0; k < jobs; k++) {
        cp->seg[k].from = n / (uint64_t)jobs * (uint64_t)k;
        cp->seg[k].to = k == jobs - 1 ? n : n / (uint64_t)jobs * (uint64_t)(k + 1);
        j[k] = (struct gen_job){cp, k, ids, var};
        if (pthread_create(&th[k], NULL, gen_range, &j[k]) != 0) {
            fprintf(stderr, "dedup_bench: pthread_create failed\n");
            exit(1);
        }
    }
    for (int k = 0; k < jobs; k++)
        pthread_join(th[k], NULL);
    free(ids);
    free(var);
}

static void corpus_release(struct corpus *cp)
{
    for (int k = 0; k < cp->nseg; k++) {
        free(cp->seg[k].text);
        free(cp->seg[k].off);
    }
}

/* URL i of the corpus. */
static const char *corpus_url(const struct corpus *cp, uint64_t i, int *len)
{
    for (int k = 0; k < cp->nseg; k++) {
        if (i < cp->seg[k].to) {
            const uint64_t *o = cp->seg[k].off + (i - cp->seg[k].from);
            *len = (int)(o[1] - o[0]);
            return cp->seg[k].text + o[0];
        }
    }
    *len = 0;
    return "";
}

struct path_result {
    uint64_t urls, bad, fresh, stored, misses;
    double secs, gen_secs, hit_rate, rt_per_1000, used_per_url, usage_per_url;
    double io_busy, io_wait, canon_wait, redis_cpu, client_cpu;
    uint64_t not_compact;
};

/* A canonicalized link: what the seen-set needs of it. */
struct canon_out {
    uint64_t fp;
    unsigned char hostlen; /* 0: unparsable */
    char host[71];
};

struct canon_job {
    const struct corpus *cp;
    struct canon_out *out;
    uint64_t base;
    size_t from, to;
};

static void *canon_range(void *arg)
{
    struct canon_job *j = arg;
    char cb[PARSER_URL_MAX];
    const char *host, *raw;
    size_t clen, hl;
    int len;

    for (size_t i = j->from; i < j->to; i++) {
        struct canon_out *o = &j->out[i];
        o->hostlen = 0;
        raw = corpus_url(j->cp, j->base + i, &len);
        if (canon(raw, len, cb, &clen, &host, &hl) || hl >= sizeof(o->host))
            continue;
        memcpy(o->host, host, hl);
        o->hostlen = (unsigned char)hl;
        o->fp = dedup_fingerprint(cb, clen);
    }
    return NULL;
}

/*
 * The canonicalizing pool: --jobs threads canonicalize + fingerprint the
 * stream in chunks of CHUNK URLs (worker k takes chunks k, k + jobs, ...)
 * into a ring of NSLOTS chunk buffers, while the cache thread (the
 * caller) takes the chunks in stream order. Chunk c lives in slot
 * c % NSLOTS; a slot is refilled once the cache thread has released it.
 */
#define NSLOTS 16

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const struct corpus *cp;
    uint64_t total, nchunks;
    int jobs;
    struct {
        struct canon_out *out;
        uint64_t chunk;     /* the chunk this slot holds or waits for */
        int full;
    } slot[NSLOTS];
    pthread_t th[8];
    struct pool_worker {
        struct pool *p;
        int k;
    } w[8];
};

static void *pool_main(void *arg)
{
    struct pool_worker *w = arg;
    struct pool *p = w->p;

    for (uint64_t c = (uint64_t)w->k; c < p->nchunks; c += (uint64_t)p->jobs) {
        int s = (int)(c % NSLOTS);
        uint64_t base = c * CHUNK;
        struct canon_job j;
        pthread_mutex_lock(&p->mu);
        while (p->slot[s].chunk != c || p->slot[s].full)
            pthread_cond_wait(&p->cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
        j.cp = p->cp;
        j.out = p->slot[s].out;
        j.base = base;
        j.from = 0;
        j.to = p->total - base < CHUNK ? (size_t)(p->total - base) : CHUNK;
        canon_range(&j);
        pthread_mutex_lock(&p->mu);
        p->slot[s].full = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

static void pool_start(struct pool *p, const struct corpus *cp, uint64_t total,
                       int jobs)
{
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->cp = cp;
    p->total = total;
    p->nchunks = (total + CHUNK - 1) / CHUNK;
    p->jobs = jobs;
    for (int s = 0; s < NSLOTS; s++) {
        p->slot[s].out = xmalloc(CHUNK * sizeof(struct canon_out));
        p->slot[s].chunk = (uint64_t)s;
        p->slot[s].full = 0;
    }
    for (int k = 0; k < jobs; k++) {
        p->w[k].p = p;
        p->w[k].k = k;
        if (pthread_create(&p->th[k], NULL, pool_main, &p->w[k]) != 0) {
            fprintf(stderr, "dedup_bench: pthread_create failed\n");
            exit(1);
        }
    }
}

/* Chunk c, once canonicalized; *waited += the seconds spent waiting. */
static const struct canon_out *pool_take(struct pool *p, uint64_t c,
                                         double *waited)
{
    int s = (int)(c % NSLOTS);
    double t0 = now_s();

    pthread_mutex_lock(&p->mu);
    while (p->slot[s].chunk != c || !p->slot[s].full)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    *waited += now_s() - t0;
    return p->slot[s].out;
}

static void pool_release_chunk(struct pool *p, uint64_t c)
{
    int s = (int)(c % NSLOTS);

    pthread_mutex_lock(&p->mu);
    p->slot[s].chunk = c + NSLOTS;
    p->slot[s].full = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void pool_join(struct pool *p)
{
    for (int k = 0; k < p->jobs; k++)
        pthread_join(p->th[k], NULL);
    for (int s = 0; s < NSLOTS; s++)
        free(p->slot[s].out);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

/* A batch of cache misses for seen_batch. */
struct batch {
    struct frontier_url *u;
    char (*hosts)[72];
    unsigned char *isnew;
    size_t n;
};

static void batch_init(struct batch *b, size_t cap)
{
    b->u = xcalloc(cap, sizeof(*b->u));
    b->hosts = xmalloc(cap * 72);
    b->isnew = xmalloc(cap);
    b->n = 0;
}

static void batch_release(struct batch *b)
{
    free(b->u);
    free(b->hosts);
    free(b->isnew);
}

/*
 * The Redis side runs on its own thread, one batch at a time, so the
 * canonicalizing threads work on batch k + 1 while batch k's answer is on
 * the way (seen_batch blocks on the reply; the frontier is used by this
 * thread only).
 */
struct io {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct frontier *f;
    struct batch *work;  /* submitted, not yet answered */
    int quit;
    uint64_t fresh;
    double busy;
};

static void *io_main(void *arg)
{
    struct io *io = arg;

    pthread_mutex_lock(&io->mu);
    for (;;) {
        while (!io->work && !io->quit)
            pthread_cond_wait(&io->cv, &io->mu);
        if (!io->work)
            break;
        struct batch *b = io->work;
        pthread_mutex_unlock(&io->mu);
        double t0 = now_s();
        if (seen_batch(io->f, b->u, b->n, 0, b->isnew)) {
            fprintf(stderr, "dedup_bench: %s\n", frontier_errstr(io->f));
            exit(1);
        }
        uint64_t fresh = 0;
        for (size_t i = 0; i < b->n; i++)
            fresh += b->isnew[i];
        pthread_mutex_lock(&io->mu);
        io->busy += now_s() - t0;
        io->fresh += fresh;
        b->n = 0;
        io->work = NULL;
        pthread_cond_broadcast(&io->cv);
    }
    pthread_mutex_unlock(&io->mu);
    return NULL;
}

/* Wait until the I/O thread is idle; returns the seconds waited. */
static double io_wait_idle(struct io *io)
{
    double t0 = now_s();

    pthread_mutex_lock(&io->mu);
    while (io->work)
        pthread_cond_wait(&io->cv, &io->mu);
    pthread_mutex_unlock(&io->mu);
    return now_s() - t0;
}

/* Hand b to the I/O thread (after the previous batch is answered). */
static double io_submit(struct io *io, struct batch *b)
{
    double w = io_wait_idle(io);

    pthread_mutex_lock(&io->mu);
    io->work = b;
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
    return w;
}

static double process_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_path(const struct opts *o, struct frontier *f,
                     redisContext *r, uint64_t total, struct path_result *res)
{
    struct pool pool;
    struct dedup_cache *c = dedup_cache_new(o->cache);
    struct batch bt[2];
    struct dedup_cache_stats st;
    struct seen_usage us;
    struct corpus cp;
    struct io io = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                    f, NULL, 0, 0, 0};
    pthread_t ioth;
    uint64_t rt0 = frontier_roundtrips(f);
    long long mem0;
    double t, cpu0, rcpu0;
    int cur = 0;

    memset(res, 0, sizeof(*res));
    batch_init(&bt[0], o->batch);
    batch_init(&bt[1], o->batch);
    rcmd(r, "FLUSHALL");
    mem0 = bench_redis_info(r, "memory", "used_memory");
    t = now_s();
    corpus_make(&cp, total, o->jobs);
    res->gen_secs = now_s() - t;
    if (pthread_create(&ioth, NULL, io_main, &io) != 0) {
        fprintf(stderr, "dedup_bench: pthread_create failed\n");
        exit(1);
    }
    rcpu0 = bench_redis_cpu(r);
    cpu0 = process_cpu();
    t = now_s();
    pool_start(&pool, &cp, total, o->jobs);
    for (uint64_t base = 0; base < total; base += CHUNK) {
        size_t n = total - base < CHUNK ? (size_t)(total - base) : CHUNK;
        const struct canon_out *co = pool_take(&pool, base / CHUNK,
                                               &res->canon_wait);
        for (size_t i = 0; i < n; i++) {
            struct batch *b = &bt[cur];
            struct frontier_url *x = &b->u[b->n];
            if (i + 8 < n)
                dedup_cache_prefetch(c, co[i + 8].fp);
            if (!co[i].hostlen) {
                res->bad++;
                continue;
            }
            if (dedup_cache_hit(c, co[i].fp))
                continue;
            /* In the cache from now: its answer is on the way, and a
             * repeat before the answer is no more new than after it. */
            dedup_cache_put(c, co[i].fp);
            memcpy(b->hosts[b->n], co[i].host, co[i].hostlen);
            x->url = x->host = b->hosts[b->n];
            x->len = x->hostlen = co[i].hostlen;
            x->fp = co[i].fp;
            res->misses++;
            if (++b->n == o->batch) {
                res->io_wait += io_submit(&io, b);
                cur ^= 1;
            }
        }
        res->urls += n;
        pool_release_chunk(&pool, base / CHUNK);
    }
    pool_join(&pool);
    if (bt[cur].n)
        res->io_wait += io_submit(&io, &bt[cur]);
    res->io_wait += io_wait_idle(&io);
    res->secs = now_s() - t;
    res->client_cpu = process_cpu() - cpu0;
    pthread_mutex_lock(&io.mu);
    io.quit = 1;
    pthread_cond_broadcast(&io.cv);
    pthread_mutex_unlock(&io.mu);
    pthread_join(ioth, NULL);
    res->redis_cpu = bench_redis_cpu(r) - rcpu0;
    res->io_busy = io.busy;
    res->fresh = io.fresh;
    dedup_cache_stats(c, &st);
    res->hit_rate = (double)st.hits / (double)(st.hits + st.misses);
    res->rt_per_1000 = 1000.0 * (double)(frontier_roundtrips(f) - rt0) /
                       (double)res->urls;
    res->stored = res->fresh;
    res->used_per_url = (double)(bench_redis_info(r, "memory", "used_memory") - mem0) /
                        (double)res->stored;
    if (seen_usage(f, 0, &us) == DC_OK && us.members) {
        res->usage_per_url = (double)us.bytes / (double)us.members;
        res->not_compact = us.not_compact;
        if (us.members != res->stored)
            printf("  !! seen-set holds %" PRIu64 " members, %" PRIu64
                   " reported new\n", us.members, res->stored);
    }
    dedup_cache_free(&c);
    corpus_release(&cp);
    batch_release(&bt[0]);
    batch_release(&bt[1]);
}

/* ---------------------------------------------------------- baseline */

static void sha1_hex(const char *s, size_t n, char out[41])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    EVP_Digest(s, n, md, &mdlen, EVP_sha1(), NULL);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[40] = '\0';
}

struct base_result {
    uint64_t urls, fresh;
    double secs, used_per_url;
};

/* One SADD per URL of a 40-hex SHA-1 into one set, `batch` per round
 * trip (1 = no pipelining). */
static void run_baseline(redisContext *r, uint64_t total, size_t batch,
                         struct base_result *res)
{
    struct chunk ch = { xmalloc(CHUNK * LINKSTREAM_MAXURL), xmalloc(CHUNK * sizeof(int)), 0 };
    char cb[PARSER_URL_MAX], hex[41];
    const char *host;
    size_t clen, hl, pend = 0;
    struct linkstream s;
    long long mem0;
    double t;

    memset(res, 0, sizeof(*res));
    rcmd(r, "FLUSHALL");
    mem0 = bench_redis_info(r, "memory", "used_memory");
    linkstream_init(&s);
    while (res->urls < total) {
        size_t want = total - res->urls < CHUNK ? total - res->urls : CHUNK;
        chunk_fill(&ch, &s, want);
        t = now_s();
        for (size_t i = 0; i <= ch.n; i++) {
            if (i < ch.n) {
                if (canon(ch.url[i], ch.len[i], cb, &clen, &host, &hl))
                    continue;
                sha1_hex(cb, clen, hex);
                redisAppendCommand(r, "SADD dupefilter %s", hex);
                pend++;
            }
            if (pend && (pend == batch || (i == ch.n && res->urls + ch.n >= total))) {
                for (; pend; pend--) {
                    redisReply *rep = NULL;
                    if (redisGetReply(r, (void **)&rep) != REDIS_OK || !rep) {
                        fprintf(stderr, "dedup_bench: baseline redis error\n");
                        exit(1);
                    }
                    res->fresh += rep->integer == 1;
                    freeReplyObject(rep);
                }
            }
        }
        res->urls += ch.n;
        res->secs += now_s() - t;
    }
    res->used_per_url = (double)(bench_redis_info(r, "memory", "used_memory") - mem0) /
                        (double)(res->fresh ? res->fresh : 1);
}

/* -------------------------------------------------------------- main */

static void parse_opts(int argc, char **argv, struct opts *o)
{
    o->sizes[0] = 10000000;
    o->sizes[1] = 50000000;
    o->nsizes = 2;
    o->cache = 1048576;
    o->baseline = 5000000;
    o->baseline_nopipe = 200000;
    o->jobs = 2;
    o->batch = 1048576;
    o->module = DC_SEEN_MODULE;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--replay-only")) {
            o->replay_only = 1;
            i--;
        } else if (i + 1 >= argc) {
            fprintf(stderr, "dedup_bench: %s needs a value\n", argv[i]);
            exit(2);
        } else if (!strcmp(argv[i], "--sizes")) {
            char *p = argv[i + 1];
            o->nsizes = 0;
            while (*p && o->nsizes < 8) {
                o->sizes[o->nsizes++] = strtoull(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else if (!strcmp(argv[i], "--layout")) {
            if (strcmp(argv[i + 1], "b256") && strcmp(argv[i + 1], "mod")) {
                fprintf(stderr, "dedup_bench: --layout mod or b256\n");
                exit(2);
            }
            o->b256 = !strcmp(argv[i + 1], "b256");
        } else if (!strcmp(argv[i], "--module")) {
            o->module = argv[i + 1];
        } else if (!strcmp(argv[i], "--cache")) {
            o->cache = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--batch")) {
            o->batch = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--jobs")) {
            o->jobs = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--baseline")) {
            o->baseline = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--baseline-nopipe")) {
            o->baseline_nopipe = strtoull(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "dedup_bench: unknown option %s\n", argv[i]);
            exit(2);
        }
    }
    if (o->batch < 1)
        o->batch = 1;
    if (o->jobs < 1 || o->jobs > 8)
        o->jobs = 1;
}

static void print_load(void)
{
    double l[3];

    if (getloadavg(l, 3) == 3)
        printf("load average: %.2f %.2f %.2f; %ld CPUs online\n", l[0], l[1],
               l[2], sysconf(_SC_NPROCESSORS_ONLN));
}

static void print_baseline(uint64_t total, const struct base_result *p,
                           const struct base_result *np)
{
    double pr = (double)p->urls / p->secs, nr = (double)np->urls / np->secs;

    printf("  baseline (scrapy-redis: SADD of 40-hex SHA-1, one set, no cache):\n");
    printf("    pipelined (%zu/trip): measured on %" PRIu64 " URLs: %.0f URLs/s, "
           "%.1f bytes/URL; %" PRIu64 " URLs would take %.1f s (extrapolated)\n",
           (size_t)4096, p->urls, pr, p->used_per_url, total,
           (double)total / pr);
    printf("    not pipelined: measured on %" PRIu64 " URLs: %.0f URLs/s, "
           "1000 round trips/1000 URLs; %" PRIu64 " URLs would take %.0f s "
           "(extrapolated)\n", np->urls, nr, total, (double)total / nr);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench_redis sv;
    struct conf c;
    struct frontier *f = NULL;
    struct base_result bp, bn;
    redisContext *r;
    char url[400], err[256], layout[512];

    memset(&o, 0, sizeof(o));
    parse_opts(argc, argv, &o);
    if (o.replay_only) {
        for (int k = 0; k < o.nsizes; k++) {
            double wr, lr, rwr, rlr;
            compare_caches(o.sizes[k], o.cache, 0, &wr, &lr);
            compare_caches(o.sizes[k], o.cache, 1, &rwr, &rlr);
            printf("%" PRIu64 " links, cache %zu: weighted %.2f %%, plain LRU "
                   "%.2f %%; recency-only stream: weighted %.2f %%, plain "
                   "LRU %.2f %%\n", o.sizes[k], o.cache, 100.0 * wr,
                   100.0 * lr, 100.0 * rwr, 100.0 * rlr);
        }
        return 0;
    }
    bench_redis_start(&sv, "dcrawl-dedup-bench", o.b256 ? NULL : o.module);
    r = bench_redis_connect(sv.sock);
    snprintf(url, sizeof(url), "unix:%s", sv.sock);
    conf_init(&c);
    if (frontier_open(&f, url, &c, "bench", err, sizeof(err))) {
        fprintf(stderr, "dedup_bench: %s\n", err);
        bench_redis_stop(&sv);
        return 1;
    }
    seen_layout(f, layout, sizeof(layout));
    printf("dedup bench: %s\n", layout);
    printf("cache %zu entries, batch %zu misses per round trip, %d "
           "canonicalizing threads + 1 cache thread + 1 Redis I/O thread; ",
           o.cache, o.batch, o.jobs);
    print_load();
    run_baseline(r, o.baseline, 4096, &bp);
    run_baseline(r, o.baseline_nopipe, 1, &bn);
    for (int k = 0; k < o.nsizes; k++) {
        struct path_result p;
        double wr, lr, rwr, rlr;

        run_path(&o, f, r, o.sizes[k], &p);
        compare_caches(o.sizes[k], o.cache, 0, &wr, &lr);
        compare_caches(o.sizes[k], o.cache, 1, &rwr, &rlr);
        printf("\n%" PRIu64 " URLs (%" PRIu64 " distinct canonical, %.1f %% "
               "repeats, %" PRIu64 " unparsable)\n", p.urls, p.fresh,
               100.0 * (1.0 - (double)p.fresh / (double)p.urls), p.bad);
        printf("  path: %.2f s, %.0f URLs/s (canonicalize+fingerprint+cache+"
               "Redis, wall clock; generating the text beforehand took "
               "%.2f s, not counted)\n",
               p.secs, (double)p.urls / p.secs, p.gen_secs);
        printf("  cache hit rate: weighted %.2f %% in the path; replay: "
               "weighted %.2f %%, plain LRU %.2f %% (same capacity)\n",
               100.0 * p.hit_rate, 100.0 * wr, 100.0 * lr);
        printf("  recency-only stream (repeats by locality only), replay: "
               "weighted %.2f %%, plain LRU %.2f %%\n", 100.0 * rwr,
               100.0 * rlr);
        printf("  cache misses sent to Redis: %" PRIu64 " (%.2f %% of URLs)\n",
               p.misses, 100.0 * (double)p.misses / (double)p.urls);
        printf("  time: Redis thread in seen_batch %.2f s (overlapped), "
               "cache thread waited for it %.2f s and for the "
               "canonicalizing threads %.2f s; CPU: this process %.2f s, "
               "redis-server %.2f s\n", p.io_busy, p.io_wait, p.canon_wait,
               p.client_cpu, p.redis_cpu);
        printf("  Redis round trips per 1000 URLs: %.4f\n", p.rt_per_1000);
        printf("  Redis used_memory per stored URL: %.2f bytes (MEMORY USAGE "
               "of the seen-set keys: %.2f; buckets not intset: %" PRIu64
               ")\n",
               p.used_per_url, p.usage_per_url, p.not_compact);
        print_baseline(o.sizes[k], &bp, &bn);
        printf("  ");
        print_load();
        fflush(stdout);
    }
    frontier_close(&f);
    conf_release(&c);
    redisFree(r);
    bench_redis_stop(&sv);
    return 0;
}
