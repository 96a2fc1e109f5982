/*
 * level-type.c: the native queue layout's value (level-type.h): a host
 * table, a heap of ready hosts and each host's queue bytes.
 *
 * Host table: otab.h (open addressing, hash inline), so a lookup reads
 * slots and only the record whose hash matches.
 *
 * Ready order: entries (score, first 8 name bytes big-endian, record,
 * generation) for the hosts of the set whose score is below FRONT_BUSY and
 * that no pop has taken out (lvl_take), ordered as a ZSET orders members:
 * score, then name bytes (memcmp, then length). They live in two places:
 * a run, a ring buffer in ascending order that takes every entry not
 * before its last one (a host re-scored to now + its politeness delay,
 * the usual case), and a binary min-heap for the others; the smallest is
 * the smaller of the run's first and the heap's top. So a pop reads the
 * front of the run and a completion writes at its end, instead of sifting
 * through a cold heap. Lazy: a new score adds a new entry and bumps the
 * record's generation, so the old entry is stale and dropped when it
 * comes first; nothing is searched for and sifting never reads a record.
 * Both are compacted when stale entries outnumber the live. A
 * record counts the entries that point to it: one that leaves the set and
 * its queue leaves the table, and is freed with its last entry.
 *
 * Queue: one buffer per host, each string as its length (LEB128) then its
 * bytes, live between head and tail: a pop moves head, a push at the tail
 * appends (compacting or growing by half), a push at the head writes
 * before head when there is room, else copies into a new buffer.
 *
 * RDB: the number of records, then per record its name, whether it is in
 * the set, its score (the double's bits), its queue's length and bytes.
 * AOF: DCFRONT.QRESTORE key host inset scorebits bytes, one per record.
 */
#include <stdio.h>
#include <string.h>

#include "front-state.h"
#include "level-type.h"
#include "otab.h"

RedisModuleType *lvl_type;

struct lvl_host {
    double score;
    uint32_t gen;   /* the generation of its live heap entry */
    uint8_t inheap; /* it has a live heap entry */
    uint8_t inset;
    uint8_t dead;   /* out of the table, freed with its last heap entry */
    uint32_t refs;  /* heap entries, live or stale, that point to it */
    size_t nq;      /* strings queued */
    size_t head, tail, cap; /* one host may queue more than 4 GB */
    char *q;
    uint64_t hv;
    uint32_t nlen;
    char name[];
};

struct hent {
    double score;
    uint64_t key8;
    struct lvl_host *h;
    uint32_t gen;
};

struct lvl {
    struct otab tab;
    struct hent *run;           /* ring buffer, ascending */
    size_t rhead, nrun, runcap; /* runcap: a power of two */
    struct hent *heap;
    size_t nheap, heapcap, stale;
    size_t nset;
    size_t qbytes;  /* queue buffer capacity, for mem_usage */
};

static size_t vget(const char *p, const char *end, size_t *n);

/* ---- the table ---- */

static int host_is(const void *rec, const char *name, size_t len)
{
    const struct lvl_host *h = rec;

    return h->nlen == len && !memcmp(h->name, name, len);
}

static uint64_t key8(const char *s, size_t n)
{
    uint64_t k = 0;

    for (size_t i = 0; i < 8; i++)
        k = (k << 8) | (i < n ? (unsigned char)s[i] : 0);
    return k;
}

/* ---- heap ---- */

static int name_cmp(const struct lvl_host *a, const struct lvl_host *b)
{
    size_t n = a->nlen < b->nlen ? a->nlen : b->nlen;
    int c = memcmp(a->name, b->name, n);

    if (c)
        return c;
    return a->nlen < b->nlen ? -1 : a->nlen > b->nlen;
}

static int less(const struct hent *a, const struct hent *b)
{
    if (a->score != b->score)
        return a->score < b->score;
    if (a->key8 != b->key8)
        return a->key8 < b->key8;
    return name_cmp(a->h, b->h) < 0;
}

static void sift_up(struct lvl *l, size_t i)
{
    struct hent e = l->heap[i];

    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!less(&e, &l->heap[p]))
            break;
        l->heap[i] = l->heap[p];
        i = p;
    }
    l->heap[i] = e;
}

static void sift_down(struct lvl *l, size_t i)
{
    struct hent e = l->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->nheap)
            break;
        if (c + 1 < l->nheap && less(&l->heap[c + 1], &l->heap[c]))
            c++;
        if (!less(&l->heap[c], &e))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    l->heap[i] = e;
}

static int live_ent(const struct hent *e)
{
    return e->h->inheap && e->h->gen == e->gen;
}

static void host_free(struct lvl *l, struct lvl_host *h);

/* an entry leaves the heap: its record goes when dead and unreferenced */
static void unref(struct lvl *l, struct lvl_host *h)
{
    if (!--h->refs && h->dead)
        host_free(l, h);
}

static struct hent *run_at(const struct lvl *l, size_t i)
{
    return &l->run[(l->rhead + i) & (l->runcap - 1)];
}

static void run_push(struct lvl *l, struct hent e)
{
    if (l->nrun == l->runcap) {
        size_t cap = l->runcap ? l->runcap * 2 : 16;
        struct hent *v = RedisModule_Alloc(cap * sizeof(*v));
        for (size_t i = 0; i < l->nrun; i++)
            v[i] = *run_at(l, i);
        RedisModule_Free(l->run);
        l->run = v;
        l->runcap = cap;
        l->rhead = 0;
    }
    *run_at(l, l->nrun++) = e;
}

/* drop the stale entries: the run keeps its order, the heap is rebuilt */
static void heap_rebuild(struct lvl *l)
{
    size_t k = 0, n = l->nrun;

    l->nrun = 0;
    for (size_t i = 0; i < n; i++) {
        struct hent e = *run_at(l, i);
        if (live_ent(&e))
            *run_at(l, l->nrun++) = e; /* in place: l->nrun <= i */
        else
            unref(l, e.h);
    }
    for (size_t i = 0; i < l->nheap; i++)
        if (live_ent(&l->heap[i]))
            l->heap[k++] = l->heap[i];
        else
            unref(l, l->heap[i].h);
    l->nheap = k;
    l->stale = 0;
    for (size_t i = k / 2; i-- > 0;)
        sift_down(l, i);
}

/* the host's live entry (if any) goes stale */
static void heap_drop(struct lvl *l, struct lvl_host *h)
{
    if (!h->inheap)
        return;
    h->inheap = 0;
    h->gen++;
    if (++l->stale > (l->nrun + l->nheap) / 2 + 64)
        heap_rebuild(l);
}

/* A new entry goes at the end of the run when it is not before the run's
 * last (a host re-scored to now + its delay, the usual case), else into
 * the heap. */
static void heap_add(struct lvl *l, struct lvl_host *h)
{
    struct hent e = { h->score, key8(h->name, h->nlen), h, 0 };

    heap_drop(l, h);
    e.gen = ++h->gen;
    h->inheap = 1;
    h->refs++;
    if (!l->nrun || !less(&e, run_at(l, l->nrun - 1))) {
        run_push(l, e);
        return;
    }
    if (l->nheap == l->heapcap) {
        l->heapcap = l->heapcap ? l->heapcap * 2 : 16;
        l->heap = RedisModule_Realloc(l->heap, l->heapcap * sizeof(*l->heap));
    }
    l->heap[l->nheap++] = e;
    sift_up(l, l->nheap - 1);
}

/* The smallest live entry (stale ones in front of it dropped), or NULL;
 * *from_run: it is the run's first, else the heap's top. */
static struct hent *first_live(struct lvl *l, int *from_run)
{
    while (l->nrun && !live_ent(run_at(l, 0))) {
        unref(l, run_at(l, 0)->h);
        l->rhead = (l->rhead + 1) & (l->runcap - 1);
        l->nrun--;
        l->stale--;
    }
    while (l->nheap && !live_ent(&l->heap[0])) {
        unref(l, l->heap[0].h);
        l->heap[0] = l->heap[--l->nheap];
        if (l->nheap)
            sift_down(l, 0);
        l->stale--;
    }
    if (l->nrun && (!l->nheap || !less(&l->heap[0], run_at(l, 0)))) {
        *from_run = 1;
        return run_at(l, 0);
    }
    *from_run = 0;
    return l->nheap ? &l->heap[0] : NULL;
}

/* first_live's entry leaves */
static void first_pop(struct lvl *l, int from_run)
{
    if (from_run) {
        unref(l, run_at(l, 0)->h);
        l->rhead = (l->rhead + 1) & (l->runcap - 1);
        l->nrun--;
        return;
    }
    unref(l, l->heap[0].h);
    l->heap[0] = l->heap[--l->nheap];
    if (l->nheap)
        sift_down(l, 0);
}

/* ---- the value ---- */

static struct lvl *lvl_new(void)
{
    return RedisModule_Calloc(1, sizeof(struct lvl));
}

static void host_free(struct lvl *l, struct lvl_host *h)
{
    l->qbytes -= h->cap;
    RedisModule_Free(h->q);
    RedisModule_Free(h);
}

static void lvl_free(void *v)
{
    struct lvl *l = v;

    for (size_t i = 0; i < l->nrun; i++)
        unref(l, run_at(l, i)->h); /* dead records go here, live below */
    for (size_t i = 0; i < l->nheap; i++)
        unref(l, l->heap[i].h);
    for (size_t at = 0; at < l->tab.cap;) {
        struct lvl_host *h = otab_next(&l->tab, &at);
        if (h)
            host_free(l, h);
    }
    otab_free(&l->tab);
    RedisModule_Free(l->heap);
    RedisModule_Free(l->run);
    RedisModule_Free(l);
}

static void *lvl_make(void)
{
    return lvl_new();
}

struct lvl *lvl_of(RedisModuleKey *k, int create, int *wrong)
{
    return front_value_of(k, lvl_type, create ? lvl_make : NULL, wrong);
}

int lvl_exists(const struct lvl *l)
{
    return l && l->nset > 0;
}

void lvl_close(RedisModuleKey *k)
{
    int wrong;
    struct lvl *l = lvl_of(k, 0, &wrong);

    if (l && !l->tab.live)
        RedisModule_DeleteKey(k);
    RedisModule_CloseKey(k);
}

struct lvl_host *lvl_host(struct lvl *l, const char *name, size_t len,
                          int create)
{
    uint64_t hv = otab_hash(name, len);
    size_t i = otab_find(&l->tab, hv, host_is, name, len);
    struct lvl_host *h;

    if (i != (size_t)-1)
        return l->tab.s[i].rec;
    if (!create)
        return NULL;
    h = RedisModule_Calloc(1, sizeof(*h) + len + 1);
    h->hv = hv;
    h->nlen = (uint32_t)len;
    memcpy(h->name, name, len);
    otab_add(&l->tab, hv, h);
    return h;
}

const char *lvl_host_name(const struct lvl_host *h, size_t *len)
{
    *len = h->nlen;
    return h->name;
}

struct lvl_host *lvl_next(const struct lvl *l, size_t *at)
{
    return l ? otab_next(&l->tab, at) : NULL;
}

/* The queue's strings one by one (lvl_qnext): *at starts at 0. */
const char *lvl_qnext(const struct lvl_host *h, size_t *at, size_t *n)
{
    size_t k;
    const char *s;

    if (*at < h->head)
        *at = h->head;
    if (*at >= h->tail)
        return NULL;
    k = vget(h->q + *at, h->q + h->tail, n);
    if (!k)
        return NULL;
    s = h->q + *at + k;
    *at += k + *n;
    return s;
}

int lvl_host_gc(struct lvl *l, struct lvl_host *h)
{
    size_t i;

    if (h->inset || h->nq)
        return 0;
    i = otab_find(&l->tab, h->hv, host_is, h->name, h->nlen);
    if (i != (size_t)-1)
        otab_del(&l->tab, i);
    if (h->refs) { /* stale heap entries still point to it */
        h->dead = 1;
        l->qbytes -= h->cap;
        RedisModule_Free(h->q);
        h->q = NULL;
        h->cap = 0;
        return 1;
    }
    host_free(l, h);
    return 1;
}

/* ---- the ready set ---- */

int lvl_inset(const struct lvl_host *h)
{
    return h->inset;
}

double lvl_score(const struct lvl_host *h)
{
    return h->score;
}

void lvl_zadd(struct lvl *l, struct lvl_host *h, double score, int xx)
{
    if (!h->inset) {
        if (xx)
            return;
        h->inset = 1;
        l->nset++;
    } else if (h->inheap && score == h->score) {
        return;
    }
    h->score = score;
    if (score < FRONT_BUSY)
        heap_add(l, h);
    else
        heap_drop(l, h);
}

void lvl_zrem(struct lvl *l, struct lvl_host *h)
{
    if (!h->inset)
        return;
    heap_drop(l, h);
    h->inset = 0;
    l->nset--;
}

long long lvl_ready(struct lvl *l)
{
    struct hent *e;
    int from_run;

    if (!l || !(e = first_live(l, &from_run)))
        return -1;
    return (long long)e->score;
}

struct lvl_host *lvl_first(struct lvl *l)
{
    struct hent *e;
    int from_run;

    if (!l || !(e = first_live(l, &from_run)))
        return NULL;
    return e->h;
}

void lvl_prefetch_name(const struct lvl *l, const char *name, size_t len,
                       int rec)
{
    otab_prefetch(&l->tab, otab_hash(name, len), rec);
}

uint64_t lvl_prefetch_host(const struct lvl *l, const struct lvl_host *h)
{
    __builtin_prefetch((const char *)h + 64); /* the name */
    if (h->nq) {
        __builtin_prefetch(h->q + h->head);
        __builtin_prefetch(h->q + h->head + 64);
    }
    otab_prefetch(&l->tab, h->hv, 0);
    return h->hv;
}

/* the hosts the next lvl_take is likely to return (at most n and
 * LVL_WARM_MAX): the run's first ones and the heap's top, stale or not */
static size_t next_hosts(const struct lvl *l, size_t n,
                         const struct lvl_host **out)
{
    size_t k = 0;

    for (size_t i = 0; i < n && i < l->nrun && k < LVL_WARM_MAX; i++)
        out[k++] = run_at(l, i)->h;
    if (l->nheap && k < LVL_WARM_MAX)
        out[k++] = l->heap[0].h;
    return k;
}

void lvl_prefetch_run(const struct lvl *l, size_t n)
{
    const struct lvl_host *hs[LVL_WARM_MAX];
    size_t k = next_hosts(l, n, hs);

    for (size_t i = 0; i < k; i++)
        __builtin_prefetch(hs[i]);
}

size_t lvl_prefetch_next(const struct lvl *l, size_t n, uint64_t *hv)
{
    const struct lvl_host *hs[LVL_WARM_MAX];
    size_t k = next_hosts(l, n, hs);

    for (size_t i = 0; i < k; i++)
        hv[i] = lvl_prefetch_host(l, hs[i]);
    return k;
}

size_t lvl_take(struct lvl *l, double max, size_t n, struct lvl_host **out)
{
    size_t k = 0;

    /* the records first_live reads below, fetched together, not one by
     * one (the run's, and the heap's top) */
    lvl_prefetch_run(l, n);

    while (k < n) {
        int from_run;
        struct hent *e = first_live(l, &from_run);
        if (!e || e->score > max)
            break;
        out[k] = e->h;
        out[k++]->inheap = 0;
        first_pop(l, from_run); /* inset: not dead, so not freed */
    }
    return k;
}

size_t lvl_heap_size(const struct lvl *l)
{
    return l ? l->nrun + l->nheap : 0;
}

void lvl_restore(struct lvl *l, struct lvl_host *h)
{
    if (h->inset && !h->inheap && h->score < FRONT_BUSY)
        heap_add(l, h);
}

/* ---- queues ---- */

static size_t vlen(size_t n)
{
    size_t k = 1;

    while (n >= 0x80) {
        n >>= 7;
        k++;
    }
    return k;
}

static void vput(char *p, size_t n)
{
    while (n >= 0x80) {
        *p++ = (char)(0x80 | (n & 0x7f));
        n >>= 7;
    }
    *p = (char)n;
}

/* the length at p (below end); 0 bytes read on a malformed one */
static size_t vget(const char *p, const char *end, size_t *n)
{
    size_t v = 0, k = 0;
    int shift = 0;

    while (p + k < end && shift < 35) {
        unsigned char c = (unsigned char)p[k++];
        v |= (size_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *n = v;
            return k;
        }
        shift += 7;
    }
    return 0;
}

size_t lvl_qlen(const struct lvl_host *h)
{
    return h->nq;
}

/* a new buffer of cap bytes holding gap free bytes then the live ones */
static void requeue_buf(struct lvl *l, struct lvl_host *h, size_t cap,
                        size_t gap)
{
    size_t live = h->tail - h->head;
    char *q = RedisModule_Alloc(cap);

    if (live)
        memcpy(q + gap, h->q + h->head, live);
    RedisModule_Free(h->q);
    l->qbytes += cap - h->cap;
    h->q = q;
    h->cap = cap;
    h->head = gap;
    h->tail = gap + live;
}

static void push(struct lvl *l, struct lvl_host *h, int head, char tag,
                 const char *s, size_t n)
{
    size_t t = tag != 0, need = vlen(n + t) + n + t, live = h->tail - h->head;
    char *at;

    if (head) {
        if (h->head < need) {
            size_t gap = need + (live + need) / 4;
            requeue_buf(l, h, gap + live, gap);
        }
        h->head -= need;
        at = h->q + h->head;
    } else {
        if (h->cap - h->tail < need) {
            size_t cap = h->cap;
            if (live + need > cap - cap / 4) {
                cap = cap + cap / 2;
                if (cap < live + need)
                    cap = live + need;
                if (cap < 64)
                    cap = 64;
            }
            requeue_buf(l, h, cap, 0);
        }
        at = h->q + h->tail;
        h->tail += need;
    }
    vput(at, n + t);
    at += vlen(n + t);
    if (t)
        *at++ = tag;
    memcpy(at, s, n);
    h->nq++;
}

void lvl_push(struct lvl *l, struct lvl_host *h, int head, const char *s,
              size_t n)
{
    push(l, h, head, 0, s, n);
}

void lvl_push_tag(struct lvl *l, struct lvl_host *h, char tag,
                  const char *s, size_t n)
{
    push(l, h, 0, tag, s, n);
}

const char *lvl_pop(struct lvl *l, struct lvl_host *h, size_t *n)
{
    size_t k;
    const char *s;

    (void)l;
    if (!h->nq)
        return NULL;
    k = vget(h->q + h->head, h->q + h->tail, n);
    s = h->q + h->head + k;
    h->head += k + *n;
    if (!--h->nq) {
        /* the string stays readable: only the offsets restart */
        h->head = h->tail = 0;
    }
    return s;
}

int lvl_rem1(struct lvl *l, struct lvl_host *h, const char *s, size_t n)
{
    size_t at = h->head;

    (void)l;
    while (at < h->tail) {
        size_t len, k = vget(h->q + at, h->q + h->tail, &len);
        if (!k)
            return 0;
        if (len == n && !memcmp(h->q + at + k, s, n)) {
            memmove(h->q + at, h->q + at + k + len, h->tail - at - k - len);
            h->tail -= k + len;
            if (!--h->nq)
                h->head = h->tail = 0;
            return 1;
        }
        at += k + len;
    }
    return 0;
}

/* ---- persistence ---- */

/* The records one by one for RDB and AOF, with the score's bits. */
static const struct lvl_host *next_saved(const struct lvl *l, size_t *at,
                                         uint64_t *bits)
{
    const struct lvl_host *h = otab_next(&l->tab, at);

    if (h)
        memcpy(bits, &h->score, sizeof(*bits));
    return h;
}

static void lvl_rdb_save(RedisModuleIO *io, void *v)
{
    struct lvl *l = v;
    const struct lvl_host *h;
    uint64_t bits;
    size_t at = 0;

    RedisModule_SaveUnsigned(io, l->tab.live);
    while ((h = next_saved(l, &at, &bits))) {
        RedisModule_SaveStringBuffer(io, h->name, h->nlen);
        RedisModule_SaveUnsigned(io, h->inset);
        RedisModule_SaveUnsigned(io, bits);
        RedisModule_SaveUnsigned(io, h->nq);
        RedisModule_SaveStringBuffer(io, h->q ? h->q + h->head : "",
                                     h->tail - h->head);
    }
}

/* one record into l from its parts; -1 when they do not make one */
static int host_load(struct lvl *l, const char *name, size_t nlen,
                     uint64_t inset, uint64_t bits, uint64_t nq,
                     const char *q, size_t qlen)
{
    struct lvl_host *h;
    size_t at = 0, count = 0;
    double score;

    while (at < qlen) {
        size_t len, k = vget(q + at, q + qlen, &len);
        if (!k || len > qlen - at - k)
            return -1;
        at += k + len;
        count++;
    }
    if (count != nq || inset > 1 || !nlen || nlen > UINT32_MAX ||
        (!inset && !nq))
        return -1;
    if (lvl_host(l, name, nlen, 0))
        return -1;
    memcpy(&score, &bits, sizeof(score));
    if (score != score)
        return -1;
    h = lvl_host(l, name, nlen, 1);
    if (qlen) {
        requeue_buf(l, h, qlen, 0);
        memcpy(h->q, q, qlen);
        h->tail = qlen;
        h->nq = nq;
    }
    if (inset)
        lvl_zadd(l, h, score, 0);
    return 0;
}

static void *lvl_rdb_load(RedisModuleIO *io, int encver)
{
    struct lvl *l;
    uint64_t n;

    if (encver != LVL_ENCVER)
        return NULL;
    l = lvl_new();
    n = RedisModule_LoadUnsigned(io);
    for (uint64_t i = 0; i < n; i++) {
        size_t nlen = 0, qlen = 0;
        char *name = RedisModule_LoadStringBuffer(io, &nlen), *q;
        uint64_t inset = RedisModule_LoadUnsigned(io);
        uint64_t bits = RedisModule_LoadUnsigned(io);
        uint64_t nq = RedisModule_LoadUnsigned(io);
        int bad;
        q = RedisModule_LoadStringBuffer(io, &qlen);
        bad = !name || !q ||
              host_load(l, name, nlen, inset, bits, nq, q, qlen);
        RedisModule_Free(name);
        RedisModule_Free(q);
        if (bad) {
            RedisModule_Log(NULL, "warning", "dcfront: corrupt level in RDB");
            lvl_free(l);
            return NULL;
        }
    }
    return l;
}

static void lvl_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key,
                            void *v)
{
    struct lvl *l = v;
    const struct lvl_host *h;
    uint64_t bits;
    size_t at = 0;

    while ((h = next_saved(l, &at, &bits)))
        RedisModule_EmitAOF(aof, "DCFRONT.QRESTORE", "sbllb", key, h->name,
                            (size_t)h->nlen, (long long)h->inset,
                            (long long)bits, h->q ? h->q + h->head : "",
                            (size_t)(h->tail - h->head));
}

static size_t lvl_mem_usage(const void *v)
{
    const struct lvl *l = v;
    size_t bytes = sizeof(*l) + l->tab.cap * sizeof(struct otab_slot) +
                   (l->heapcap + l->runcap) * sizeof(struct hent) +
                   l->qbytes;

    for (size_t at = 0; at < l->tab.cap;) {
        const struct lvl_host *h = otab_next(&l->tab, &at);
        if (h)
            bytes += sizeof(struct lvl_host) + h->nlen + 1;
    }
    return bytes;
}

/* DCFRONT.QRESTORE key host inset scorebits bytes: one record back (the
 * AOF rewrite's form); a host already there is an error. */
static int cmd_qrestore(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    long long inset, bits;
    const char *name, *q;
    size_t nlen, qlen, at = 0, nq = 0;
    int wrong;

    if (argc != 6)
        return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[3], &inset) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[4], &bits) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.QRESTORE: bad number");
    name = RedisModule_StringPtrLen(argv[2], &nlen);
    q = RedisModule_StringPtrLen(argv[5], &qlen);
    while (at < qlen) {
        size_t len, n = vget(q + at, q + qlen, &len);
        if (!n || len > qlen - at - n)
            return RedisModule_ReplyWithError(ctx,
                                              "ERR DCFRONT.QRESTORE: bad queue");
        at += n + len;
        nq++;
    }
    k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    l = lvl_of(k, 1, &wrong);
    if (wrong) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    if (host_load(l, name, nlen, (uint64_t)inset, (uint64_t)bits, nq, q,
                  qlen)) {
        lvl_close(k);
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.QRESTORE: bad record");
    }
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, 1);
}

int lvl_register(RedisModuleCtx *ctx)
{
    RedisModuleTypeMethods tm = {
        .version = REDISMODULE_TYPE_METHOD_VERSION_1,
        .rdb_load = lvl_rdb_load,
        .rdb_save = lvl_rdb_save,
        .aof_rewrite = lvl_aof_rewrite,
        .mem_usage = lvl_mem_usage,
        .digest = NULL,
        .free = lvl_free,
    };

    lvl_type = RedisModule_CreateDataType(ctx, LVL_TYPE_NAME "1", LVL_ENCVER,
                                          &tm);
    if (!lvl_type)
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "dcfront.qrestore", cmd_qrestore,
                                  "write deny-oom", 1, 1, 1))
        return REDISMODULE_ERR;
    return lvl_cmds_register(ctx);
}
