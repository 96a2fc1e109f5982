/*
 * cache.c: a bounded set of 64-bit fingerprints with segmented-LRU
 * eviction. See dedup.h for what the cache means to the crawler.
 *
 * Weight = repetition and recency, as two segments (SLRU):
 *   probation  entries asked for once (put, never hit since), LRU order;
 *   protected  entries asked for again while cached, LRU order, at most
 *              `prot_cap` (DEDUP_CACHE_PROTECTED_PCT of the capacity).
 * A put enters probation at the most-recent end. A hit in probation
 * promotes the entry to the most-recent end of protected; a hit in
 * protected moves it to that end again. When protected is over its cap,
 * its least recent entry is demoted to the most-recent end of probation
 * (a second chance, not an eviction). When the cache is full the victim is
 * the least recent entry of probation (of protected only if probation is
 * empty). So an entry's rank combines how often it was asked for (one
 * level: once, or more than once) and how recently: an old one-off goes
 * first, a repeated entry outlives any number of one-offs until it stops
 * being asked for and ages out of protected, then out of probation. While
 * nothing is ever hit, probation is the whole cache and the policy is
 * exactly LRU; protected never takes more than its cap, so a stream of
 * pure recency keeps at least the remaining share as an LRU window.
 * Every operation is O(1): a hash probe and a few list-link updates.
 *
 * Lookup: an open-addressing table `slots` of 2^bits >= 2 * capacity slots.
 * A slot holds the fingerprint's low 32 bits as a tag (high half) and node
 * number (low half, 1-based; 0 = empty), so a probe rarely touches a node.
 * Fingerprint 0 is an ordinary member. Linear probing, load <= 1/2;
 * removal by backward-shift deletion, so there are no tombstones.
 *
 * Nodes 1..capacity live in one array; the two lists are doubly linked by
 * node number (0 = none). Memory: 24 bytes per entry plus 16 to 32 of
 * table, allocated once at creation.
 *
 * Invariants: entries = probation + protected <= capacity; protected <=
 * prot_cap; nodes 1..entries are in use, each referenced by exactly one
 * slot and on exactly one list; inserts - evictions == entries.
 *
 * Thread rules: a cache belongs to one thread; there is no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"

#define CACHE_MIN_ENTRIES 16
#define CACHE_MAX_ENTRIES ((size_t)1 << 30)

enum { SEG_PROBATION = 0, SEG_PROTECTED = 1, SEG_WINDOW = 2 };
#define SKETCH_ROWS 4

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
    /* frequency sketch (count-min, 4-bit saturating counters in bytes) */
    unsigned char *cm;
    size_t cm_mask, cm_adds, cm_period;
    int cm_bits;
    struct dedup_cache_stats st;
};

static size_t home_slot(const struct dedup_cache *c, uint64_t fp)
{
    fp ^= fp >> 33;
    fp *= 0xff51afd7ed558ccdULL;
    fp ^= fp >> 33;
    fp *= 0xc4ceb9fe1a85ec53ULL;
    fp ^= fp >> 33;
    return (size_t)(fp >> (64 - c->bits));
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
        c->cm_bits = c->bits - 1;
        c->cm_mask = ((size_t)1 << c->cm_bits) - 1;
        c->cm = xcalloc(SKETCH_ROWS << c->cm_bits, 1);
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
    size_t i = home_slot(c, fp);
    uint32_t tag = (uint32_t)fp;

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
        home = home_slot(c, c->node[(uint32_t)c->slots[j]].fp);
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

static size_t cm_index(const struct dedup_cache *c, uint64_t h, int row)
{
    uint64_t x = h + (uint64_t)row * ((h >> 32) | 1) * 0x9e3779b97f4a7c15ULL;
    return ((size_t)row << c->cm_bits) | (size_t)(x >> (64 - c->cm_bits));
}

static uint64_t cm_hash(uint64_t fp)
{
    fp ^= fp >> 31;
    fp *= 0x7fb5d329728ea185ULL;
    fp ^= fp >> 27;
    fp *= 0x81dadef4bc2dd44dULL;
    return fp ^ (fp >> 33);
}

static unsigned cm_estimate(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = cm_hash(fp);
    unsigned m = 15;

    for (int r = 0; r < SKETCH_ROWS; r++) {
        unsigned v = c->cm[cm_index(c, h, r)];
        if (v < m)
            m = v;
    }
    return m;
}

/* Count one access (conservative update); halve everything every
 * cm_period accesses so old popularity fades. */
static void cm_add(struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = cm_hash(fp);
    size_t ix[SKETCH_ROWS];
    unsigned m = 15;

    if (!c->cm)
        return;
    for (int r = 0; r < SKETCH_ROWS; r++) {
        ix[r] = cm_index(c, h, r);
        if (c->cm[ix[r]] < m)
            m = c->cm[ix[r]];
    }
    if (m < 15)
        for (int r = 0; r < SKETCH_ROWS; r++)
            if (c->cm[ix[r]] == m)
                c->cm[ix[r]]++;
    if (++c->cm_adds >= c->cm_period) {
        size_t n = (size_t)SKETCH_ROWS << c->cm_bits;
        for (size_t i = 0; i < n; i++)
            c->cm[i] >>= 1;
        c->cm_adds = 0;
    }
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
 * window, its least recent entry (the candidate) moves on to probation if
 * the sketch says it is asked for more often than the main victim, which
 * is then evicted; else the candidate is evicted.
 */
static uint32_t make_room(struct dedup_cache *c)
{
    uint32_t cand, vict;

    if (!c->win_cap || !c->seg[SEG_WINDOW].n) {
        vict = main_victim(c);
        evict(c, vict);
        return vict;
    }
    cand = c->seg[SEG_WINDOW].lru;
    if (c->seg[SEG_WINDOW].n < c->win_cap) {
        vict = main_victim(c);
    } else {
        vict = c->seg[SEG_PROBATION].n + c->seg[SEG_PROTECTED].n
                   ? main_victim(c) : cand;
        if (vict != cand &&
            cm_estimate(c, c->node[cand].fp) <= cm_estimate(c, c->node[vict].fp))
            vict = cand;
    }
    evict(c, vict);
    if (vict != cand) {
        list_unlink(c, cand);
        list_push_mru(c, cand, SEG_PROBATION);
    }
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
    if (c->win_cap && c->seg[SEG_WINDOW].n > c->win_cap) {
        /* not full yet: the window's oldest moves on freely */
        lru = c->seg[SEG_WINDOW].lru;
        list_unlink(c, lru);
        list_push_mru(c, lru, SEG_PROBATION);
    }
    c->slots[i] = ((uint64_t)(uint32_t)fp << 32) | x;
    c->st.inserts++;
    return evicted;
}

void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
