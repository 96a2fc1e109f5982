/*
 * cache.c: a bounded set of 64-bit fingerprints whose eviction combines
 * repetition and recency. See dedup.h for what the cache means to the
 * crawler.
 *
 * Layout: set-associative. A set (bucket) is CACHE_WAYS (16) 64-bit words
 * in one aligned 128-byte block, i.e. the two cache lines of an aligned
 * pair, which the prefetch below asks for together (and which the CPU's
 * adjacent-line prefetcher pairs anyway): one memory round trip per
 * operation, no pointers, no second array. Each word is one way:
 *
 *   bits 63..8  the top 56 bits of h = fmix64(fp)
 *   bit  7      used
 *   bits 6..3   rank 0..15: the way's place in the set's recency order
 *               (0 = most recently put or hit; used ways hold 0..used-1)
 *   bits 2..0   count 0..7: hits since the put (saturating, aged)
 *
 * fmix64 is a bijection and the set number is h's low bits, so the set
 * (at least 8 bits of h: sets >= 256) plus the stored 56 bits give back
 * the whole fingerprint: a hit is exact, with no tag collisions, and
 * fingerprint 0 is an ordinary member. A cache with fewer than 256 sets
 * (capacity <= 2048, in L1/L2 anyway) keeps the low 8 bits of h in a
 * side array. The set count is the smallest power of two with sets * 16
 * >= capacity; each set holds capacity / sets ways (one more for the
 * first capacity % sets sets), so entries <= capacity exactly. Memory: 8
 * bytes per entry when the capacity is 16 * a power of two, at most 16
 * otherwise (18 for the small caches with a side array).
 *
 * Growth. The sets of a large cache are allocated at once (calloc: pages
 * the cache never touches cost no memory) but used from CACHE_START_SETS
 * on: a put into a full set while fewer sets are in use doubles them
 * instead of evicting (set i splits into i and i + sets by the next bit of
 * h, which the words hold: sets >= 256; recency order kept). Sets in use
 * before the last doubling hold 16 ways; the last one trims any set past
 * its final ways by the usual victim. The cache's resident memory thus
 * follows its entries (about 16 bytes each while it grows) instead of
 * its capacity: a crawl of a few thousand URLs touched most of the 8 MB
 * of the default 1 M entries, hashed at random over its pages. Nothing is
 * evicted before the full layout is reached.
 *
 * Policy. A put into a full set evicts the used way of lowest weight
 *   weight = CACHE_W_COUNT * count - rank   (ties: the less recent goes)
 * so among entries asked for equally often the least recent goes (LRU
 * within the set), and each hit is worth CACHE_W_COUNT places of
 * recency: frequent and recent stay, old one-offs go first. The most
 * recent way (rank 0) is never the victim, so a fresh entry gets a chance
 * to be asked for again. Counts age: after CACHE_AGE_PERIOD accesses to a
 * set all its counts are halved, so an entry that stops being asked for
 * loses its lead and ages out like any one-off. The period is counted
 * without a clock in the set: each access halves the set's counts with
 * probability 1 / CACHE_AGE_PERIOD (a per-cache xorshift generator with a
 * fixed seed, so runs repeat), the way Redis's LFU counter is
 * probabilistic. This is Redis's sampled eviction with the set as the
 * sample; with many sets it approaches a global weighted LRU.
 *
 * Hit rates on the bench/dedup link stream with 1 M entries
 * (bench/canon_cache; the 50 M figure from the same generator):
 *                    10 M links   50 M links
 *   this cache         65.47 %      57.42 %
 *   previous cache     65.56 %      57.27 %  (W-TinyLFU, 24+ B/entry)
 *   exact LRU          65.43 %      57.06 %
 * On a stream of recency only (no lasting popularity, where LRU is the
 * best a cache can do), 67.69 % against LRU's 67.93 % at 10 M links.
 * Other weights (with counts of 0..3): 4 places per hit, 65.59 % at 10 M
 * but 56.85 % at 50 M, below LRU; 2 places, 65.47 % and 57.09 %. 8 ways
 * in one 64-byte line stayed below LRU at 10 M links in every setting
 * tried (65.24 to 65.40 %), hence 16 ways.
 *
 * dedup_cache_new_tuned(): window_pct == 0 and protected_pct == 0 give
 * recency alone (count ignored: LRU within each set); any other shares
 * give the weighted policy (the shares themselves are not used).
 * Segments (dedup_cache_segment): 1 ("protected") for an entry with a
 * count, i.e. hit since its put and not aged back to 0; else 0.
 *
 * Every operation is O(CACHE_WAYS) on one set: no lists, no probing.
 *
 * Invariants: entries = used ways <= capacity; ways fill in order and are
 * only reused, never emptied; in a set the used ways' ranks are exactly
 * 0..used-1; inserts - evictions == entries.
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
#define CACHE_WAYS 16
#define CACHE_SET_BYTES (CACHE_WAYS * 8)
#define CACHE_IMPLIED_SETS 256 /* sets >= this: the set gives h's low byte */
#define CACHE_START_SETS 256   /* sets in use at first (32 KB), see Growth */
#define CACHE_W_COUNT 1
#define CACHE_AGE_PERIOD 512 /* accesses to a set per halving, a power of 2 */

#define W_COUNT 0x07u
#define W_RANK_SHIFT 3
#define W_RANK (0xFu << W_RANK_SHIFT)
#define W_USED 0x80u
#define W_KEY (~(uint64_t)0xFF)

struct dedup_cache {
    uint64_t *set;         /* CACHE_SET_BYTES-aligned, nsets_max * WAYS */
    void *raw;             /* what was allocated (set points into it) */
    uint8_t *low;          /* h's low byte per way when nsets < 256 */
    size_t nsets, capacity, entries;
    size_t nsets_max;      /* sets of the full layout (nsets grows to it) */
    size_t base_ways, extra; /* sets < extra hold base_ways + 1 ways */
    int recency_only;      /* (0, 0): LRU within each set */
    uint64_t rng;          /* aging draws */
    uint64_t missed;       /* fp of the last miss of dedup_cache_hit() */
    int missed_valid;      /* ... and no put since */
    struct dedup_cache_stats st;
};

_Static_assert(CACHE_WAYS <= 16, "ranks fit their 4 bits");

static unsigned rank_of(uint64_t w)
{
    return (unsigned)(w & W_RANK) >> W_RANK_SHIFT;
}

static unsigned count_of(uint64_t w)
{
    return (unsigned)(w & W_COUNT);
}

static uint64_t hash_of(uint64_t fp)
{
    return dedup__fmix64(fp);
}

static size_t set_index(const struct dedup_cache *c, uint64_t h)
{
    return (size_t)(h & (c->nsets - 1));
}

static size_t ways_in(const struct dedup_cache *c, size_t set)
{
    if (c->nsets < c->nsets_max)
        return CACHE_WAYS;
    return c->base_ways + (set < c->extra);
}

/* The way of set si holding h, or -1. */
static int find_way(const struct dedup_cache *c, size_t si, uint64_t h)
{
    const uint64_t *s = c->set + si * CACHE_WAYS;
    const uint8_t *low = c->low ? c->low + si * CACHE_WAYS : NULL;

    for (int w = 0; w < CACHE_WAYS; w++)
        if (((s[w] ^ h) & W_KEY) == 0 && (s[w] & W_USED) &&
            (!low || low[w] == (uint8_t)h))
            return w;
    return -1;
}

struct dedup_cache *dedup_cache_new_tuned(size_t entries, int window_pct,
                                          int protected_pct)
{
    struct dedup_cache *c = xcalloc(1, sizeof(*c));
    size_t words;

    if (entries < CACHE_MIN_ENTRIES)
        entries = CACHE_MIN_ENTRIES;
    if (entries > CACHE_MAX_ENTRIES)
        entries = CACHE_MAX_ENTRIES;
    c->capacity = entries;
    c->nsets = 1;
    while (c->nsets * CACHE_WAYS < entries)
        c->nsets <<= 1;
    c->base_ways = entries / c->nsets;
    c->extra = entries % c->nsets;
    c->nsets_max = c->nsets;
    if (c->nsets > CACHE_START_SETS && CACHE_START_SETS >= CACHE_IMPLIED_SETS)
        c->nsets = CACHE_START_SETS;
    c->recency_only = window_pct == 0 && protected_pct == 0;
    c->rng = 0x9e3779b97f4a7c15ULL;
    words = c->nsets_max * CACHE_WAYS;
    c->raw = xcalloc(1, words * 8 + CACHE_SET_BYTES);
    c->set = (uint64_t *)(((uintptr_t)c->raw + CACHE_SET_BYTES - 1) &
                          ~(uintptr_t)(CACHE_SET_BYTES - 1));
    if (c->nsets_max < CACHE_IMPLIED_SETS)
        c->low = xcalloc(words, 1);
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
    free(c->raw);
    free(c->low);
    free(c);
    *cp = NULL;
}

void dedup_cache_prefetch(const struct dedup_cache *c, uint64_t fp)
{
    const char *p = (const char *)(c->set + set_index(c, hash_of(fp)) *
                                                CACHE_WAYS);

    __builtin_prefetch(p);
    if (CACHE_SET_BYTES > 64)
        __builtin_prefetch(p + 64);
}

/* ---- recency and aging inside one set ---- */

/* Make way w the most recent: the used ways more recent than it move one
 * place back. */
static void touch(uint64_t *s, int w)
{
    unsigned r = rank_of(s[w]);

    for (int i = 0; i < CACHE_WAYS; i++)
        s[i] += (uint64_t)((s[i] & W_USED) && rank_of(s[i]) < r)
                << W_RANK_SHIFT;
    s[w] &= ~(uint64_t)W_RANK;
}


/* Count one access to the set: with probability 1 / CACHE_AGE_PERIOD,
 * halve its counts. */
static void tick(struct dedup_cache *c, uint64_t *s)
{
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    if (c->rng & (CACHE_AGE_PERIOD - 1))
        return;
    for (int i = 0; i < CACHE_WAYS; i++)
        s[i] = (s[i] & ~(uint64_t)W_COUNT) | (count_of(s[i]) >> 1);
}

/* The used way to evict from a full set of n ways (see the top): the
 * smallest key (weight, then recency, then way number), branch-free. */
static int victim(const struct dedup_cache *c, const uint64_t *s, int n)
{
    unsigned wc = c->recency_only ? 0 : CACHE_W_COUNT, best = ~0u;

    for (int i = 0; i < n; i++) {
        unsigned r = rank_of(s[i]);
        /* weight + 16 >= 1; rank 0 gets the largest weight there is */
        unsigned wt = r ? wc * count_of(s[i]) + 16 - r : 0xFFFu;
        unsigned key = (wt << 8) | (15 - r) << 4 | (unsigned)i;
        best = key < best ? key : best;
    }
    return (int)(best & 15);
}

/* ---- growth ---- */

/* Split set s into s and t (t empty) by bit `bit` of h, each keeping its
 * ways' recency order (ranks renumbered 0..used-1). */
static void split_set(uint64_t *s, uint64_t *t, unsigned bit)
{
    uint64_t a[CACHE_WAYS] = {0}, b[CACHE_WAYS] = {0};
    unsigned na = 0, nb = 0;

    for (unsigned r = 0; r < CACHE_WAYS; r++)
        for (int w = 0; w < CACHE_WAYS; w++) {
            uint64_t x = s[w] & ~(uint64_t)W_RANK;
            if (!(s[w] & W_USED) || rank_of(s[w]) != r)
                continue;
            if ((x >> bit) & 1)
                b[nb] = x | (uint64_t)nb << W_RANK_SHIFT, nb++;
            else
                a[na] = x | (uint64_t)na << W_RANK_SHIFT, na++;
        }
    memcpy(s, a, sizeof(a));
    memcpy(t, b, sizeof(b));
}

/* Evict from set si until it holds at most its ways (full layout). */
static void trim_set(struct dedup_cache *c, size_t si)
{
    uint64_t *s = c->set + si * CACHE_WAYS;
    int n = (int)ways_in(c, si), used = 0;

    while (used < CACHE_WAYS && (s[used] & W_USED))
        used++;
    while (used > n) {
        int v = victim(c, s, used);
        unsigned r = rank_of(s[v]);
        s[v] = s[used - 1]; /* used ways stay a prefix */
        s[--used] = 0;
        for (int i = 0; i < used; i++)
            s[i] -= (uint64_t)(rank_of(s[i]) > r) << W_RANK_SHIFT;
        c->entries--;
        c->st.evictions++;
    }
}

/* Double the sets in use (see Growth at the top). */
static void grow(struct dedup_cache *c)
{
    size_t k = c->nsets, i;
    unsigned bit = 0;

    while (((size_t)1 << bit) < k)
        bit++;
    for (i = 0; i < k; i++)
        split_set(c->set + i * CACHE_WAYS, c->set + (i + k) * CACHE_WAYS,
                  bit);
    c->nsets = 2 * k;
    if (c->nsets == c->nsets_max && c->base_ways < CACHE_WAYS)
        for (i = 0; i < c->nsets; i++)
            trim_set(c, i);
}

/* Set si is full: while fewer sets than the full layout are in use,
 * double them; returns h's set then. */
static size_t grow_for(struct dedup_cache *c, uint64_t h, size_t si)
{
    const uint64_t *s = c->set + si * CACHE_WAYS;

    while (c->nsets < c->nsets_max && (s[CACHE_WAYS - 1] & W_USED)) {
        grow(c);
        si = set_index(c, h);
        s = c->set + si * CACHE_WAYS;
    }
    return si;
}

/* ---- API ---- */

int dedup_cache_contains(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = hash_of(fp);

    return find_way(c, set_index(c, h), h) >= 0;
}

int dedup_cache_segment(const struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = hash_of(fp);
    size_t si = set_index(c, h);
    int w = find_way(c, si, h);

    if (w < 0)
        return -1;
    return count_of(c->set[si * CACHE_WAYS + (size_t)w]) > 0;
}

int dedup_cache_hit(struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = hash_of(fp), *s;
    size_t si = set_index(c, h);
    int w = find_way(c, si, h);

    if (w < 0) {
        c->st.misses++;
        c->missed = fp; /* a put of fp may skip the search */
        c->missed_valid = 1;
        return 0;
    }
    c->st.hits++;
    s = c->set + si * CACHE_WAYS;
    if (count_of(s[w]) < W_COUNT)
        s[w]++;
    touch(s, w);
    tick(c, s);
    return 1;
}

int dedup_cache_put(struct dedup_cache *c, uint64_t fp)
{
    uint64_t h = hash_of(fp), *s;
    size_t si = set_index(c, h);
    int n = (int)ways_in(c, si), w, evicted = 0;

    if (!(c->missed_valid && c->missed == fp) && find_way(c, si, h) >= 0)
        return 0;
    c->missed_valid = 0;
    if (c->nsets < c->nsets_max) {
        si = grow_for(c, h, si);
        n = (int)ways_in(c, si);
    }
    s = c->set + si * CACHE_WAYS;
    for (w = 0; w < n && (s[w] & W_USED); w++)
        ;
    if (w == n) {
        w = victim(c, s, n);
        evicted = 1;
        c->st.evictions++;
        c->entries--;
    } else {
        /* w ways are in use (ranks 0..w-1): the new one starts behind */
        s[w] = W_USED | (uint64_t)w << W_RANK_SHIFT;
    }
    s[w] = (h & W_KEY) | (s[w] & W_RANK) | W_USED;
    if (c->low)
        c->low[si * CACHE_WAYS + (size_t)w] = (uint8_t)h;
    touch(s, w);
    tick(c, s);
    c->entries++;
    c->st.inserts++;
    return evicted;
}

void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
