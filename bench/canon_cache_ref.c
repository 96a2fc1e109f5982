/*
 * canon_cache_ref.c: the dedup cache as it was before the set-associative
 * rewrite (W-TinyLFU: window + count-min filter + segmented LRU), kept
 * only so bench/canon_cache.c can compare hit rates and speed with it in
 * one run. With window 0 and protected 0 it is an exact LRU. Symbols are
 * renamed dedup_cache -> ref_cache; the text below is otherwise the old
 * dedup/cache.c (see git history for its full design notes).
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "canon_cache_ref.h"

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

struct ref_cache {
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

static size_t home_of(const struct ref_cache *c, uint32_t h)
{
    return (size_t)(h >> (32 - c->bits));
}

struct ref_cache *ref_cache_new_tuned(size_t entries, int window_pct,
                                          int protected_pct)
{
    struct ref_cache *c = xcalloc(1, sizeof(*c));
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

struct ref_cache *ref_cache_new(size_t entries)
{
    return ref_cache_new_tuned(entries, DEDUP_CACHE_WINDOW_PCT,
                                 DEDUP_CACHE_PROTECTED_PCT);
}

void ref_cache_free(struct ref_cache **cp)
{
    struct ref_cache *c;

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

static void list_unlink(struct ref_cache *c, uint32_t x)
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

static void list_push_mru(struct ref_cache *c, uint32_t x, uint32_t seg)
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
static size_t probe(const struct ref_cache *c, uint64_t fp)
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
static void slot_delete(struct ref_cache *c, size_t i)
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
static uint64_t *cm_word(const struct ref_cache *c, uint64_t fp,
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

static unsigned cm_estimate(const struct ref_cache *c, uint64_t fp)
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
static void cm_add(struct ref_cache *c, uint64_t fp)
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

void ref_cache_prefetch(const struct ref_cache *c, uint64_t fp)
{
    uint64_t h;

    __builtin_prefetch(&c->slots[home_of(c, slot_hash(fp))]);
    if (c->cm)
        __builtin_prefetch(cm_word(c, fp, &h));
}

/* ---- API ---- */

int ref_cache_contains(const struct ref_cache *c, uint64_t fp)
{
    return c->slots[probe(c, fp)] != 0;
}

int ref_cache_segment(const struct ref_cache *c, uint64_t fp)
{
    uint64_t s = c->slots[probe(c, fp)];

    return s ? (int)c->node[(uint32_t)s].seg : -1;
}

int ref_cache_hit(struct ref_cache *c, uint64_t fp)
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
static void evict(struct ref_cache *c, uint32_t x)
{
    list_unlink(c, x);
    slot_delete(c, probe(c, c->node[x].fp));
    c->st.evictions++;
}

/* The main area's victim: least recent of probation, else of protected. */
static uint32_t main_victim(const struct ref_cache *c)
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
static uint32_t make_room(struct ref_cache *c)
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

int ref_cache_put(struct ref_cache *c, uint64_t fp)
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

void ref_cache_stats(const struct ref_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
