/*
 * cache.c: a bounded set of 64-bit fingerprints whose eviction combines
 * repetition and recency. See dedup.h for what the cache means to the
 * crawler.
 *
 * Policy: a window in front of a segmented LRU, with a frequency filter
 * between them (the W-TinyLFU arrangement; the filter is a count-min
 * sketch of recent accesses). Three LRU lists:
 *   window     newly put entries (win_cap of the capacity);
 *   probation  entries that left the window, or were demoted;
 *   protected  entries hit while in probation or protected, at most
 *              prot_cap (DEDUP_CACHE_PROTECTED_PCT of the non-window part).
 * A put enters the window at its most-recent end. A hit refreshes a window
 * entry in place, and moves a main entry to the most-recent end of
 * protected; protected over its cap demotes its least recent entry to the
 * most-recent end of probation (a second chance, not an eviction). When
 * the cache is full, the window's least recent entry (the candidate) and
 * the main victim (least recent of probation; of protected if probation
 * is empty) are compared by how often the sketch has seen them: the rarer
 * is evicted, on a tie the victim (the candidate is more recent). A victim
 * that wins goes back to probation's recent end, so one entry whose
 * counters collisions inflated cannot turn every candidate away. So a
 * one-off that is old goes before one that is recent, and an entry asked
 * for often outlives newer ones asked for rarely; one that stops being
 * asked for ages out of protected, then probation, as its counters halve.
 *
 * Sketch: one 64-bit word of sixteen 4-bit counters per hash, four of them
 * chosen by the hash; count-min estimate, conservative increment (only the
 * smallest grow), every counter halved each 10 * capacity accesses so
 * popularity fades. One cache line per access, 4 to 8 bytes per entry.
 *
 * Shares: the window is DEDUP_CACHE_WINDOW_PCT of the capacity, so most
 * of the cache is plain recency and a small main area, behind the filter,
 * keeps what is asked for often over a long time (a site's navigation
 * links). bench/dedup measured at 50 M links, 1 M entries, against plain
 * LRU (57.06 % on the bench stream, 61.75 % on its recency-only variant):
 * window 80 %: +1.01 / -0.51 points; 90 %: +0.76 / -0.23; 95 %: +0.48 /
 * -0.11; 98 %: +0.21 / -0.04; no window (segmented LRU alone): +0.06. A
 * window adapted by hill climbing on the hit rate did worse than these
 * fixed shares on both streams, so the shares are fixed.
 *
 * Every operation is O(1): a hash probe, a few list-link updates and one
 * sketch word (halving: O(capacity) every 10 * capacity accesses).
 *
 * Lookup: an open-addressing table `slots` of 2^bits >= 2 * capacity slots.
 * A slot holds 32 bits of the fingerprint's hash as a tag (high half; its
 * top bits are the home slot) and the node number (low half, 1-based; 0 =
 * empty), so a probe rarely touches a node and a deletion's backward
 * shift never does.
 * Fingerprint 0 is an ordinary member. Linear probing, load <= 1/2;
 * removal by backward-shift deletion, so there are no tombstones.
 *
 * Nodes 1..capacity live in one array; the lists are doubly linked by node
 * number (0 = none). Memory, allocated at creation: 24 bytes per entry
 * plus 16 to 32 of table plus the sketch.
 *
 * Invariants: entries = window + probation + protected <= capacity; nodes
 * 1..entries are in use, each referenced by exactly one slot and on
 * exactly one list; inserts - evictions == entries; window <= win_cap;
 * protected <= prot_cap.
 *
 * Thread rules: a cache belongs to one thread; there is no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "dedup-internal.h"

#define CACHE_MIN_ENTRIES 16
#define CACHE_MAX_ENTRIES ((size_t)1 << 30)

enum { SEG_PROBATION = 0, SEG_PROTECTED = 1, SEG_WINDOW = 2 };
#define SKETCH_ROWS 4
#define SKETCH_MIN_BITS 10 /* at least 1024 words (8 KB) */

static size_t pct_of(size_t n, int pct)
{
    return n / 100 * (size_t)pct + n % 100 * (size_t)pct / 100;
}

struct cache_node {
    uint64_t fp;
    uint32_t prev, next; /* toward the less / more recent end; 0 = none */
    uint32_t seg;
};

struct cache_list {
    uint32_t lru, mru;   /* least and most recent node, 0 = empty */
    size_t n;
};

struct dedup_cache {
    struct cache_node *node; /* [0] unused */
    uint64_t *slots;         /* tag << 32 | node; 0 = empty */
    size_t capacity, prot_cap, entries, mask;
    int bits;                /* log2(slot count) */
    size_t win_cap;          /* window share; 0: no window, no filter */
    struct cache_list seg[3];
    /* frequency sketch: count-min, 4 of the 16 4-bit counters of one
     * 64-bit word per fingerprint (one cache line per access) */
    uint64_t *cm;            /* words of 16 counters */
    size_t cm_adds, cm_period;
    int cm_bits;
    struct dedup_cache_stats st;
};

/* 32 hash bits of fp: the slot's tag, and its top bits the home slot. */
static uint32_t slot_hash(uint64_t fp)
{
    return (uint32_t)(dedup__fmix64(fp) >> 32);
}

static size_t home_of(const struct dedup_cache *c, uint32_t h)
{
    return (size_t)(h >> (32 - c->bits));
}

struct dedup_cache *dedup_cache_new_tuned(size_t entries, int window_pct,
                                          int protected_pct)
{
    struct dedup_cache *c = xcalloc(1, sizeof(*c));
    size_t nslots, main_cap;

    if (entries < CACHE_MIN_ENTRIES)
        entries = CACHE_MIN_ENTRIES;
    if (entries > CACHE_MAX_ENTRIES)
        entries = CACHE_MAX_ENTRIES;
    protected_pct = protected_pct < 0 ? 0 : protected_pct > 95 ? 95 : protected_pct;
    window_pct = window_pct < 0 ? 0 : window_pct > 100 ? 100 : window_pct;
    c->bits = 1;
    while (((size_t)1 << c->bits) < 2 * entries)
        c->bits++;
    /* CACHE_MAX_ENTRIES keeps bits <= 31: the home is a tag prefix */
    nslots = (size_t)1 << c->bits;
    c->mask = nslots - 1;
    c->capacity = entries;
    c->win_cap = pct_of(entries, window_pct);
    if (window_pct > 0 && c->win_cap < 1)
        c->win_cap = 1;
    main_cap = entries - c->win_cap;
    c->prot_cap = pct_of(main_cap, protected_pct);
    c->node = xmalloc((entries + 1) * sizeof(*c->node));
    c->slots = xcalloc(nslots, sizeof(*c->slots));
    if (c->win_cap) {
        c->cm_bits = c->bits - 2 > SKETCH_MIN_BITS ? c->bits - 2
                                                   : SKETCH_MIN_BITS;
        c->cm = xcalloc((size_t)1 << c->cm_bits, sizeof(*c->cm));
        c->cm_period = 10 * entries;
    }
    c->st.capacity = entries;
    return c;
}

struct dedup_cache *dedup_cache_new(size_t entries)
{
    return dedup_cache_new_tuned(entries, DEDUP_CACHE_WINDOW_PCT,
                                 DEDUP_CACHE_PROTECTED_PCT);
}

void dedup_cache_free(struct dedup_cache **cp)
{
    struct dedup_cache *c;

    if (!cp || !*cp)
        return;
    c = *cp;
    free(c->node);
    free(c->slots);
    free(c->cm);
    free(c);
    *cp = NULL;
}

/* ---- lists ---- */

static void list_unlink(struct dedup_cache *c, uint32_t x)
{
    struct cache_node *e = &c->node[x];
    struct cache_list *l = &c->seg[e->seg];

    if (e->prev)
        c->node[e->prev].next = e->next;
    else
        l->lru = e->next;
    if (e->next)
        c->node[e->next].prev = e->prev;
    else
        l->mru = e->prev;
    l->n--;
}

static void list_push_mru(struct dedup_cache *c, uint32_t x, uint32_t seg)
{
    struct cache_node *e = &c->node[x];
    struct cache_list *l = &c->seg[seg];

    e->seg = seg;
    e->next = 0;
    e->prev = l->mru;
    if (l->mru)
        c->node[l->mru].next = x;
    else
        l->lru = x;
    l->mru = x;
    l->n++;
}

/* ---- table ---- */

/* Slot holding fp, or the empty slot where the probe for it stops. */
static size_t probe(const struct dedup_cache *c, uint64_t fp)
{
    uint32_t tag = slot_hash(fp);
    size_t i = home_of(c, tag);

    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            return i;
        if ((uint32_t)(s >> 32) == tag && c->node[(uint32_t)s].fp == fp)
            return i;
        i = (i + 1) & c->mask;
    }
}

/* Empty slot i, shifting later members of its run back into the hole. */
static void slot_delete(struct dedup_cache *c, size_t i)
{
    size_t j = i, home;

    for (;;) {
        j = (j + 1) & c->mask;
        if (!c->slots[j])
            break;
        home = home_of(c, (uint32_t)(c->slots[j] >> 32));
        /* The entry at j may move to i unless its home lies cyclically in
         * (i, j]: then i is before where its probe starts. */
        if (((j - home) & c->mask) >= ((j - i) & c->mask)) {
            c->slots[i] = c->slots[j];
            i = j;
        }
    }
    c->slots[i] = 0;
}

/* ---- frequency sketch ---- */

/* The sketch word of fp and, in h, the bits choosing its 4 counters. */
static uint64_t *cm_word(const struct dedup_cache *c, uint64_t fp,
                         uint64_t *h)
{
    fp ^= fp >> 31;
    fp *= 0x7fb5d329728ea185ULL;
    fp ^= fp >> 27;
    fp *= 0x81dadef4bc2dd44dULL;
    fp ^= fp >> 33;
    *h = fp;
    return &c->cm[fp >> (64 - c->cm_bits)];
}

/* Counter r (0..3) of a word: nibble number from 4 bits of h. */
static unsigned cm_shift(uint64_t h, int r)
{
    return (unsigned)((h >> (4 * r)) & 15) * 4;
}

static unsigned cm_estimate(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t h, w = *cm_word(c, fp, &h);
    unsigned m = 15;

    for (int r = 0; r < SKETCH_ROWS; r++) {
        unsigned v = (unsigned)(w >> cm_shift(h, r)) & 15;
        if (v < m)
            m = v;
    }
    return m;
}

/* Count one access (conservative update: only the smallest of fp's
 * counters grow); halve everything every cm_period accesses so old
 * popularity fades. */
static void cm_add(struct dedup_cache *c, uint64_t fp)
{
    uint64_t h, *w;
    unsigned m;

    if (!c->cm)
        return;
    w = cm_word(c, fp, &h);
    m = cm_estimate(c, fp);
    if (m < 15)
        for (int r = 0; r < SKETCH_ROWS; r++)
            if (((*w >> cm_shift(h, r)) & 15) == m)
                *w += (uint64_t)1 << cm_shift(h, r);
    if (++c->cm_adds >= c->cm_period) {
        size_t n = (size_t)1 << c->cm_bits;
        for (size_t i = 0; i < n; i++)
            c->cm[i] = (c->cm[i] >> 1) & 0x7777777777777777ULL;
        c->cm_adds = 0;
    }
}

void dedup_cache_prefetch(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t h;

    __builtin_prefetch(&c->slots[home_of(c, slot_hash(fp))]);
    if (c->cm)
        __builtin_prefetch(cm_word(c, fp, &h));
}

/* ---- API ---- */

int dedup_cache_contains(const struct dedup_cache *c, uint64_t fp)
{
    return c->slots[probe(c, fp)] != 0;
}

int dedup_cache_segment(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t s = c->slots[probe(c, fp)];

    return s ? (int)c->node[(uint32_t)s].seg : -1;
}

int dedup_cache_hit(struct dedup_cache *c, uint64_t fp)
{
    uint64_t s = c->slots[probe(c, fp)];
    uint32_t x, lru;

    if (!s) {
        c->st.misses++;
        return 0;
    }
    c->st.hits++;
    cm_add(c, fp);
    x = (uint32_t)s;
    if (c->node[x].seg == SEG_WINDOW) {
        list_unlink(c, x);
        list_push_mru(c, x, SEG_WINDOW);
        return 1;
    }
    if (c->seg[SEG_PROTECTED].mru == x)
        return 1;
    list_unlink(c, x);
    list_push_mru(c, x, SEG_PROTECTED);
    if (c->seg[SEG_PROTECTED].n > c->prot_cap) {
        lru = c->seg[SEG_PROTECTED].lru;
        list_unlink(c, lru);
        list_push_mru(c, lru, SEG_PROBATION);
    }
    return 1;
}

/* Drop node x from the table and its list. */
static void evict(struct dedup_cache *c, uint32_t x)
{
    list_unlink(c, x);
    slot_delete(c, probe(c, c->node[x].fp));
    c->st.evictions++;
}

/* The main area's victim: least recent of probation, else of protected. */
static uint32_t main_victim(const struct dedup_cache *c)
{
    return c->seg[SEG_PROBATION].n ? c->seg[SEG_PROBATION].lru
                                   : c->seg[SEG_PROTECTED].lru;
}

/*
 * Make room for one entry in a full cache; returns the node freed. With a
 * window, its least recent entry (the candidate) moves on to probation
 * unless the sketch says the main victim is asked for more often (then
 * the candidate is evicted); on a tie the more recent candidate wins.
 */
static uint32_t make_room(struct dedup_cache *c)
{
    uint32_t cand, vict;

    if (!c->win_cap || c->seg[SEG_WINDOW].n < c->win_cap ||
        (!c->seg[SEG_PROBATION].n && !c->seg[SEG_PROTECTED].n)) {
        vict = c->seg[SEG_PROBATION].n || c->seg[SEG_PROTECTED].n
                   ? main_victim(c) : c->seg[SEG_WINDOW].lru;
        evict(c, vict);
        return vict;
    }
    cand = c->seg[SEG_WINDOW].lru;
    vict = main_victim(c);
    if (cm_estimate(c, c->node[cand].fp) < cm_estimate(c, c->node[vict].fp)) {
        /* The victim stays, and goes round probation once more: an entry
         * whose counters are inflated by sketch collisions cannot block
         * every candidate from the same place. */
        list_unlink(c, vict);
        list_push_mru(c, vict, SEG_PROBATION);
        evict(c, cand);
        return cand;
    }
    evict(c, vict);
    list_unlink(c, cand);
    list_push_mru(c, cand, SEG_PROBATION);
    return vict;
}

int dedup_cache_put(struct dedup_cache *c, uint64_t fp)
{
    size_t i = probe(c, fp);
    uint32_t x, lru;
    int evicted = 0;

    if (c->slots[i])
        return 0;
    cm_add(c, fp);
    if (c->entries < c->capacity) {
        x = (uint32_t)++c->entries;
    } else {
        x = make_room(c);
        evicted = 1;
        /* The removal may have shifted slots: probe again. */
        i = probe(c, fp);
    }
    c->node[x].fp = fp;
    list_push_mru(c, x, c->win_cap ? SEG_WINDOW : SEG_PROBATION);
    /* Over its share while the cache fills: the window's oldest moves on
     * to probation. */
    if (c->win_cap && c->seg[SEG_WINDOW].n > c->win_cap) {
        lru = c->seg[SEG_WINDOW].lru;
        list_unlink(c, lru);
        list_push_mru(c, lru, SEG_PROBATION);
    }
    c->slots[i] = ((uint64_t)slot_hash(fp) << 32) | x;
    c->st.inserts++;
    return evicted;
}

void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
