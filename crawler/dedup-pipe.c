/*
 * dedup-pipe.c: the pipeline behind `dcrawl dedup`. Three stages overlap,
 * as in bench/dedup.c (whose pipeline walks a generated corpus; this one
 * reads a stream of lines and must print in input order, so it is the
 * product's own):
 *
 *   1. -j canonicalizing threads: under the reader's lock, a thread takes
 *      the next chunk number and reads DD_CHUNK lines into that chunk's
 *      slot (slot = chunk % nslots), then canonicalizes and fingerprints
 *      them outside the lock; chunks thus hold consecutive lines.
 *   2. the cache thread (the caller) takes the chunks in order, reports
 *      bad lines, drops the URLs its cache has answered before and enters
 *      each miss into the cache at once (a repeat while the first copy's
 *      answer is on the way is no more new than after it), and lists the
 *      misses as the chunk's batch;
 *   3. the I/O thread, in chunk order, asks Redis about a chunk's batch in
 *      one pipelined seen_batch (the same keys as the crawl's admit) and
 *      prints the chunk's new URLs in input order, then frees the slot for
 *      the chunk nslots further on. Chunks that are ready together (Redis
 *      the slower stage) go to Redis as one batch.
 *
 * A slot goes EMPTY -> CANON (stage 1 done) -> CACHED (stage 2 done) ->
 * EMPTY, all under one mutex and condition variable; each stage walks the
 * chunk numbers in order, so output order is input order. The frontier is
 * used by the I/O thread only, the cache by the cache thread only. A Redis
 * or write error stops all three stages (quit).
 *
 * Chunks are DD_CHUNK = 16384 lines, and batches of several chunks larger,
 * so that each partition's call of the seen-set carries several members:
 * Redis's cost is mostly per call. nslots = -j + 5 (at most DD_MAX_SLOTS):
 * a slot per canonicalizer, one for the cache, the rest queue for Redis;
 * about 5 MB each. bench/dedup-cmd.sh (5 M lines, -j 2): peak RSS 40 MB
 * with 16384 lines a chunk, 107 MB with 65536, at the same speed.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup-pipe.h"
#include "dedup.h"
#include "frontier.h"
#include "parser.h"
#include "seen.h"

#define DD_CHUNK 16384
#define DD_MAX_SLOTS 16
#define DD_READ_BUF (1u << 20)

enum { SLOT_EMPTY, SLOT_CANON, SLOT_CACHED };

struct dd_item {
    size_t off, len;   /* the raw line in slot->raw, without its '\n' */
    size_t coff;       /* canonical URL + '\n' in slot->ctext */
    uint16_t clen, hoff, hlen;
    uint8_t out;       /* print it (set by the I/O thread) */
    int rc;            /* DC_OK, DC_ETOOBIG, DC_EURL; -1 blank/comment */
    uint64_t fp;
};

struct dd_slot {
    uint64_t chunk;    /* the chunk this slot holds or waits for */
    int state, last, rderr;
    size_t n, lineno0; /* lines, and the first one's number */
    struct dd_item *it;
    char *raw, *ctext;
    size_t rawlen, rawcap, ctlen, ctcap;
    struct frontier_url *ask; /* the cache misses, for seen_batch */
    size_t *idx;       /* ask[k] is it[idx[k]] */
    unsigned char *isnew;
    size_t na;
};

struct dd_reader {
    FILE *in;
    char *buf;
    size_t cap, at, end, lineno;
    int eof;
};

struct dd_pipe {
    pthread_mutex_t mu;     /* slot states, quit, err */
    pthread_cond_t cv;
    pthread_mutex_t rd_mu;  /* rd, next_chunk, rd_done */
    struct dd_reader rd;
    uint64_t next_chunk;
    int rd_done, quit, err, nslots;
    struct dd_slot slot[DD_MAX_SLOTS];
    const struct dd_input *di;
    struct frontier_url *ask; /* several chunks' batches as one */
    unsigned char *isnew;
    size_t askcap;
    struct frontier *f;
    struct dedup_cache *cache;
    FILE *out;
    struct dd_totals *t;
};

/* Next line of input: 1 (*s, *len; no '\n'), 0 at the end, -1 on error. */
static int reader_line(struct dd_reader *r, const char **s, size_t *len)
{
    for (;;) {
        char *nl = memchr(r->buf + r->at, '\n', r->end - r->at);
        size_t got;

        if (nl || (r->eof && r->at < r->end)) {
            size_t e = nl ? (size_t)(nl - r->buf) : r->end;
            *s = r->buf + r->at;
            *len = strnlen(*s, e - r->at);
            r->at = nl ? e + 1 : e;
            return 1;
        }
        if (r->eof)
            return 0;
        if (r->at) {
            memmove(r->buf, r->buf + r->at, r->end - r->at);
            r->end -= r->at;
            r->at = 0;
        }
        if (r->end == r->cap) {
            r->cap *= 2;
            r->buf = xrealloc(r->buf, r->cap);
        }
        got = fread(r->buf + r->end, 1, r->cap - r->end, r->in);
        r->end += got;
        if (!got && ferror(r->in))
            return -1;
        if (!got)
            r->eof = 1;
    }
}

static void grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    while (*cap < need)
        *cap = *cap ? *cap * 2 : 1u << 16;
    *p = xrealloc(*p, *cap);
}

/* Read up to DD_CHUNK lines into sl (rd_mu held): 1, 0 at the end of the
 * input, -1 on a read error (sl holds the lines read before either). */
static int slot_read(struct dd_reader *r, struct dd_slot *sl)
{
    const char *s;
    size_t len;
    int rc = 1;

    sl->n = 0;
    sl->rawlen = 0;
    sl->lineno0 = r->lineno + 1;
    while (sl->n < DD_CHUNK && (rc = reader_line(r, &s, &len)) == 1) {
        struct dd_item *it = &sl->it[sl->n++];
        grow(&sl->raw, &sl->rawcap, sl->rawlen + len + 1);
        memcpy(sl->raw + sl->rawlen, s, len);
        it->off = sl->rawlen;
        it->len = len;
        sl->rawlen += len;
        r->lineno++;
    }
    return rc;
}

static void canon_one(struct dd_slot *sl, struct dd_item *it,
                      const struct dd_input *di)
{
    char buf[PARSER_URL_MAX];
    const char *s = sl->raw + it->off, *host;
    size_t len = it->len, clen, hostlen;

    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    it->rc = -1;
    if (!len || *s == '#')
        return;
    it->rc = parser_url_canon(NULL, s, len, di->url_flags, di->url_max_length,
                              buf, sizeof(buf), &clen);
    if (it->rc == DC_OK && parser_url_host(buf, &host, &hostlen) != DC_OK)
        it->rc = DC_EURL;
    if (it->rc != DC_OK)
        return;
    grow(&sl->ctext, &sl->ctcap, sl->ctlen + clen + 1);
    memcpy(sl->ctext + sl->ctlen, buf, clen);
    sl->ctext[sl->ctlen + clen] = '\n';
    it->coff = sl->ctlen;
    it->clen = (uint16_t)clen;
    it->hoff = (uint16_t)(host - buf);
    it->hlen = (uint16_t)hostlen;
    it->fp = dedup_fingerprint(buf, clen);
    sl->ctlen += clen + 1;
}

/* Wait until sl holds chunk c in `state`; 0 if the pipeline quit. */
static int slot_wait(struct dd_pipe *p, struct dd_slot *sl, uint64_t c,
                     int state)
{
    int ok;

    pthread_mutex_lock(&p->mu);
    while (!p->quit && (sl->chunk != c || sl->state != state))
        pthread_cond_wait(&p->cv, &p->mu);
    ok = !p->quit;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

static void slot_set(struct dd_pipe *p, struct dd_slot *sl, int state,
                     uint64_t chunk)
{
    pthread_mutex_lock(&p->mu);
    sl->state = state;
    sl->chunk = chunk;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void pipe_fail(struct dd_pipe *p, int err)
{
    pthread_mutex_lock(&p->mu);
    if (!p->err)
        p->err = err;
    p->quit = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Stage 1: read the next chunk and canonicalize it, until the input ends. */
static void *canon_main(void *arg)
{
    struct dd_pipe *p = arg;

    for (;;) {
        struct dd_slot *sl;
        uint64_t c;
        int r;

        pthread_mutex_lock(&p->rd_mu);
        c = p->next_chunk++;
        sl = &p->slot[c % (uint64_t)p->nslots];
        if (p->rd_done || !slot_wait(p, sl, c, SLOT_EMPTY)) {
            p->rd_done = 1;
            pthread_mutex_unlock(&p->rd_mu);
            return NULL;
        }
        r = slot_read(&p->rd, sl);
        if (r <= 0)
            p->rd_done = 1;
        pthread_mutex_unlock(&p->rd_mu);
        sl->last = r <= 0;
        sl->rderr = r < 0;
        sl->ctlen = 0;
        for (size_t i = 0; i < sl->n; i++)
            canon_one(sl, &sl->it[i], p->di);
        slot_set(p, sl, SLOT_CANON, c);
    }
}

static void report_bad(const struct dd_pipe *p, const struct dd_slot *sl,
                       size_t i)
{
    const struct dd_item *it = &sl->it[i];
    size_t len = it->len;
    int n;

    while (len && sl->raw[it->off + len - 1] == '\r')
        len--;
    n = len > 200 ? 200 : (int)len;
    fprintf(stderr, "%s:%zu: %s: %.*s\n", p->di->name, sl->lineno0 + i,
            it->rc == DC_ETOOBIG ? "URL longer than url.max_length"
                                 : "not a crawlable http(s) URL",
            n, sl->raw + it->off);
}

/* Stage 2 on one chunk: bad lines, the cache, the batch of misses. */
static void cache_chunk(struct dd_pipe *p, struct dd_slot *sl)
{
    struct dedup_cache *c = p->cache;

    sl->na = 0;
    for (size_t i = 0; i < sl->n; i++) {
        struct dd_item *it = &sl->it[i];
        struct frontier_url *u;

        it->out = 0;
        if (i + 8 < sl->n && sl->it[i + 8].rc == DC_OK)
            dedup_cache_prefetch(c, sl->it[i + 8].fp);
        if (it->rc == -1)
            continue;
        p->t->read++;
        if (it->rc != DC_OK) {
            p->t->bad++;
            report_bad(p, sl, i);
            continue;
        }
        if (dedup_cache_hit(c, it->fp))
            continue;
        dedup_cache_put(c, it->fp);
        u = &sl->ask[sl->na];
        u->url = sl->ctext + it->coff;
        u->len = it->clen;
        u->host = u->url + it->hoff;
        u->hostlen = it->hlen;
        u->fp = it->fp;
        sl->idx[sl->na++] = i;
    }
}

/* Stage 3, Redis: one seen_batch over the misses of the k chunks from c
 * (one chunk's own batch, or the k batches copied into one). */
static int ask_chunks(struct dd_pipe *p, uint64_t c, int k)
{
    struct dd_slot *sl = &p->slot[c % (uint64_t)p->nslots];
    size_t n = 0, at = 0;

    if (k == 1)
        return sl->na && seen_batch(p->f, sl->ask, sl->na, p->di->check_only,
                                    sl->isnew) ? DC_EREDIS : DC_OK;
    for (int j = 0; j < k; j++)
        n += p->slot[(c + (uint64_t)j) % (uint64_t)p->nslots].na;
    if (n > p->askcap) {
        p->askcap = n;
        p->ask = xrealloc(p->ask, n * sizeof(*p->ask));
        p->isnew = xrealloc(p->isnew, n);
    }
    for (int j = 0; j < k; j++, at += sl->na) {
        sl = &p->slot[(c + (uint64_t)j) % (uint64_t)p->nslots];
        memcpy(p->ask + at, sl->ask, sl->na * sizeof(*sl->ask));
    }
    if (n && seen_batch(p->f, p->ask, n, p->di->check_only, p->isnew))
        return DC_EREDIS;
    at = 0;
    for (int j = 0; j < k; j++, at += sl->na) {
        sl = &p->slot[(c + (uint64_t)j) % (uint64_t)p->nslots];
        memcpy(sl->isnew, p->isnew + at, sl->na);
    }
    return DC_OK;
}

/* Stage 3, output: a chunk's new URLs in input order. */
static int print_chunk(struct dd_pipe *p, struct dd_slot *sl)
{
    uint64_t fresh = 0, seen = 0;
    size_t from = 0, to = 0;

    for (size_t k = 0; k < sl->na; k++)
        sl->it[sl->idx[k]].out = sl->isnew[k];
    /* ctext holds the good lines' URLs in order: one fwrite per run of
     * new URLs that follow each other there */
    for (size_t i = 0; i < sl->n; i++) {
        const struct dd_item *it = &sl->it[i];
        if (it->out) {
            if (it->coff != to) {
                fwrite(sl->ctext + from, 1, to - from, p->out);
                from = it->coff;
            }
            to = it->coff + it->clen + 1;
            fresh++;
        } else if (it->rc == DC_OK) {
            seen++;
        }
    }
    fwrite(sl->ctext + from, 1, to - from, p->out);
    p->t->fresh += fresh;
    p->t->seen += seen;
    return ferror(p->out) ? DC_EIO : DC_OK;
}

/* How many chunks from c, which is CACHED, are CACHED in a row now (up
 * to the last chunk): Redis answers them in one batch. When Redis is the
 * slower stage, chunks queue up here and batches grow. */
static int cached_run(struct dd_pipe *p, uint64_t c)
{
    int k = 1;

    pthread_mutex_lock(&p->mu);
    while (k < p->nslots && !p->slot[(c + (uint64_t)k - 1) %
                                     (uint64_t)p->nslots].last) {
        const struct dd_slot *sl = &p->slot[(c + (uint64_t)k) %
                                            (uint64_t)p->nslots];
        if (sl->chunk != c + (uint64_t)k || sl->state != SLOT_CACHED)
            break;
        k++;
    }
    pthread_mutex_unlock(&p->mu);
    return k;
}

static void *io_main(void *arg)
{
    struct dd_pipe *p = arg;

    for (uint64_t c = 0;;) {
        struct dd_slot *sl = &p->slot[c % (uint64_t)p->nslots];
        int rc, last = 0, k;

        if (!slot_wait(p, sl, c, SLOT_CACHED))
            return NULL;
        k = cached_run(p, c);
        rc = ask_chunks(p, c, k);
        for (int j = 0; j < k && !rc; j++, c++) {
            sl = &p->slot[c % (uint64_t)p->nslots];
            rc = print_chunk(p, sl);
            if (!rc && sl->rderr)
                rc = DC_EIO;
            last = sl->last;
            if (!rc)
                slot_set(p, sl, SLOT_EMPTY, c + (uint64_t)p->nslots);
        }
        if (rc)
            pipe_fail(p, rc);
        if (rc || last)
            return NULL;
    }
}

static void pipe_init(struct dd_pipe *p, const struct dd_input *di)
{
    int jobs = di->jobs < 1 ? 1 : di->jobs;

    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_mutex_init(&p->rd_mu, NULL);
    p->di = di;
    p->rd.in = di->in;
    p->rd.cap = DD_READ_BUF;
    p->rd.buf = xmalloc(p->rd.cap);
    p->nslots = jobs + 5 < DD_MAX_SLOTS ? jobs + 5 : DD_MAX_SLOTS;
    for (int s = 0; s < p->nslots; s++) {
        struct dd_slot *sl = &p->slot[s];
        sl->chunk = (uint64_t)s;
        sl->it = xmalloc(DD_CHUNK * sizeof(*sl->it));
        sl->ask = xmalloc(DD_CHUNK * sizeof(*sl->ask));
        sl->idx = xmalloc(DD_CHUNK * sizeof(*sl->idx));
        sl->isnew = xmalloc(DD_CHUNK);
    }
}

static void pipe_release(struct dd_pipe *p)
{
    for (int s = 0; s < p->nslots; s++) {
        struct dd_slot *sl = &p->slot[s];
        free(sl->it);
        free(sl->ask);
        free(sl->idx);
        free(sl->isnew);
        free(sl->raw);
        free(sl->ctext);
    }
    free(p->rd.buf);
    free(p->ask);
    free(p->isnew);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->rd_mu);
}

/* Stage 2 on the caller's thread, chunk after chunk. */
static void cache_loop(struct dd_pipe *p)
{
    for (uint64_t c = 0;; c++) {
        struct dd_slot *sl = &p->slot[c % (uint64_t)p->nslots];
        int last;

        if (!slot_wait(p, sl, c, SLOT_CANON))
            return;
        cache_chunk(p, sl);
        last = sl->last;
        slot_set(p, sl, SLOT_CACHED, c);
        if (last)
            return;
    }
}

int dd_pipe_run(struct frontier *f, struct dedup_cache *cache,
                const struct dd_input *di, FILE *out, struct dd_totals *t)
{
    struct dd_pipe p;
    pthread_t th[DD_MAX_SLOTS], io;
    int jobs = di->jobs < 1 ? 1 : di->jobs, started = 0, rc;

    if (jobs > DD_MAX_SLOTS)
        jobs = DD_MAX_SLOTS;
    pipe_init(&p, di);
    p.f = f;
    p.cache = cache;
    p.out = out;
    p.t = t;
    if (pthread_create(&io, NULL, io_main, &p) != 0) {
        pipe_release(&p);
        return DC_EIO;
    }
    while (started < jobs &&
           pthread_create(&th[started], NULL, canon_main, &p) == 0)
        started++;
    if (!started)
        pipe_fail(&p, DC_EIO);
    cache_loop(&p);
    pthread_join(io, NULL);
    pipe_fail(&p, DC_OK); /* wakes canonicalizers waiting for a slot */
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    rc = p.err;
    pipe_release(&p);
    return rc;
}
