/*
 * cache.c: a bounded set of 64-bit fingerprints with weighted eviction.
 * See dedup.h for what the cache means to the crawler.
 *
 * Weight. Every entry keeps a repetition count (puts and hits) and the
 * logical time it was last asked for (`last`; the clock `tick` advances on
 * every hit and put). Its weight is
 *
 *     w = (1 + log2(count)) / r,   r = (age + 1) / (span + 1)  in (0, 1]
 *
 * (log2 interpolated linearly between powers of two), where age = tick -
 * last and span = tick - floor is the cache's current time span: `floor`
 * is a running estimate of the oldest last-seen time still cached (the
 * oldest time met in an eviction window). r is the recency normalized to
 * that span (about 1/span: just asked; 1: as old as the oldest entries), so
 * a one-off as old as the oldest entries weighs 1 and the weights of a
 * window compare at one instant. The count stretches an entry's life
 * logarithmically: a URL asked for 8 times outlives a one-off of a quarter
 * of its age, and an entry that stops being asked for still ages out (its
 * weight falls as 1/age). Equal weights evict the older entry first.
 *
 * Eviction (sampled, as Redis approximates LRU/LFU): when full, the entry
 * of lowest weight among `samples` consecutive ring positions at the hand
 * is the victim and the hand moves on by samples - 1, so successive windows
 * overlap and regroup. The new entry takes the victim's ring position. The
 * window is contiguous memory (two cache lines for 8 samples), so eviction
 * is O(samples) = O(1) and cheap. With samples >= capacity the victim is
 * the exact minimum (used by tests).
 *
 * Lookup: an open-addressing table `slots` of 2^bits >= 2 * capacity slots.
 * A slot holds the fingerprint's low 32 bits as a tag (high half) and ring
 * position + 1 (low half; 0 = empty), so a probe rarely touches the ring.
 * Fingerprint 0 is an ordinary member. Linear probing, load <= 1/2;
 * removal by backward-shift deletion, so there are no tombstones.
 *
 * Invariants: entries <= capacity; ring positions [0, entries) are in use,
 * each referenced by exactly one slot; inserts - evictions == entries.
 *
 * Thread rules: a cache belongs to one thread; there is no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"

#define CACHE_MIN_ENTRIES 16
#define CACHE_MAX_ENTRIES ((size_t)1 << 30)
#define CACHE_MAX_SAMPLES 64

struct cache_entry {
    uint64_t fp;
    uint32_t last;  /* low 32 bits of tick when last asked for */
    uint32_t count; /* puts + hits, saturating */
};

struct dedup_cache {
    struct cache_entry *ring;
    uint64_t *slots;    /* tag << 32 | (ring position + 1); 0 = empty */
    size_t capacity;
    size_t entries;
    size_t hand;        /* start of the next eviction window */
    size_t mask;        /* slot count - 1 */
    size_t samples;
    int bits;           /* log2(slot count) */
    uint32_t tick;      /* logical clock */
    uint32_t floor;     /* estimate of the oldest last-seen time */
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

static uint64_t slot_make(uint64_t fp, size_t pos)
{
    return (fp << 32) | (uint64_t)(pos + 1);
}

static size_t slot_pos(uint64_t s)
{
    return (size_t)(s & 0xffffffffu) - 1;
}

struct dedup_cache *dedup_cache_new_sampled(size_t entries, int samples)
{
    struct dedup_cache *c = xcalloc(1, sizeof(*c));
    size_t nslots;

    if (entries < CACHE_MIN_ENTRIES)
        entries = CACHE_MIN_ENTRIES;
    if (entries > CACHE_MAX_ENTRIES)
        entries = CACHE_MAX_ENTRIES;
    if (samples < 1)
        samples = 1;
    c->samples = (size_t)samples;
    if (c->samples > entries)
        c->samples = entries;
    c->bits = 1;
    while (((size_t)1 << c->bits) < 2 * entries)
        c->bits++;
    nslots = (size_t)1 << c->bits;
    c->mask = nslots - 1;
    c->capacity = entries;
    c->ring = xmalloc(entries * sizeof(*c->ring));
    c->slots = xcalloc(nslots, sizeof(*c->slots));
    c->st.capacity = entries;
    return c;
}

struct dedup_cache *dedup_cache_new(size_t entries)
{
    return dedup_cache_new_sampled(entries, DEDUP_CACHE_SAMPLES);
}

void dedup_cache_free(struct dedup_cache **cp)
{
    struct dedup_cache *c;

    if (!cp || !*cp)
        return;
    c = *cp;
    free(c->ring);
    free(c->slots);
    free(c);
    *cp = NULL;
}

/* Slot holding fp, or the empty slot where the probe for it stops. */
static size_t probe(const struct dedup_cache *c, uint64_t fp)
{
    size_t i = home_slot(c, fp);
    uint32_t tag = (uint32_t)fp;

    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            return i;
        if ((uint32_t)(s >> 32) == tag && c->ring[slot_pos(s)].fp == fp)
            return i;
        i = (i + 1) & c->mask;
    }
}

int dedup_cache_contains(const struct dedup_cache *c, uint64_t fp)
{
    return c->slots[probe(c, fp)] != 0;
}

int dedup_cache_hit(struct dedup_cache *c, uint64_t fp)
{
    size_t i = probe(c, fp);
    struct cache_entry *e;

    if (!c->slots[i]) {
        c->st.misses++;
        return 0;
    }
    e = &c->ring[slot_pos(c->slots[i])];
    e->last = ++c->tick;
    if (e->count < UINT32_MAX)
        e->count++;
    c->st.hits++;
    return 1;
}

/* log2(n) for n >= 1, piecewise linear between powers of two (exact at
 * them, monotone, no libm). */
static double log2_approx(uint32_t n)
{
    int k = 31 - __builtin_clz(n);
    return k + (double)(n - (1u << k)) / (double)(1u << k);
}

static double entry_weight(const struct dedup_cache *c,
                           const struct cache_entry *e)
{
    uint32_t span = c->tick - c->floor, age = c->tick - e->last;
    double r;

    if (age > span)
        span = age;
    r = ((double)age + 1.0) / ((double)span + 1.0);
    return (1.0 + log2_approx(e->count)) / r;
}

double dedup_cache_weight(const struct dedup_cache *c, uint64_t fp)
{
    size_t i = probe(c, fp);

    if (!c->slots[i])
        return -1;
    return entry_weight(c, &c->ring[slot_pos(c->slots[i])]);
}

/* Empty slot i, shifting later members of its run back into the hole. */
static void slot_delete(struct dedup_cache *c, size_t i)
{
    size_t j = i, home;

    for (;;) {
        j = (j + 1) & c->mask;
        if (!c->slots[j])
            break;
        home = home_slot(c, c->ring[slot_pos(c->slots[j])].fp);
        /* The entry at j may move to i unless its home lies cyclically in
         * (i, j]: then i is before where its probe starts. */
        if (((j - home) & c->mask) >= ((j - i) & c->mask)) {
            c->slots[i] = c->slots[j];
            i = j;
        }
    }
    c->slots[i] = 0;
}

/* 1 if time a is later than time b on the wrapping 32-bit clock. */
static int later(uint32_t a, uint32_t b)
{
    return a != b && (uint32_t)(a - b) < 0x80000000u;
}

/* Ring position of the lowest-weight entry in the window at the hand. */
static size_t victim(struct dedup_cache *c)
{
    size_t best = c->hand, pos = c->hand, k;
    double bw = -1;
    uint32_t oldest = c->ring[pos].last;

    for (k = 0; k < c->samples; k++) {
        const struct cache_entry *e = &c->ring[pos];
        double w = entry_weight(c, e);
        if (bw < 0 || w < bw ||
            (w == bw && later(c->ring[best].last, e->last))) {
            bw = w;
            best = pos;
        }
        if (later(oldest, e->last))
            oldest = e->last;
        if (++pos == c->capacity)
            pos = 0;
    }
    if (later(oldest, c->floor))
        c->floor = oldest;
    c->hand = (c->hand + (c->samples > 1 ? c->samples - 1 : 1)) % c->capacity;
    return best;
}

int dedup_cache_put(struct dedup_cache *c, uint64_t fp)
{
    size_t i = probe(c, fp), pos;
    int evicted = 0;

    if (c->slots[i])
        return 0;
    if (c->entries < c->capacity) {
        pos = c->entries++;
    } else {
        pos = victim(c);
        slot_delete(c, probe(c, c->ring[pos].fp));
        c->st.evictions++;
        evicted = 1;
        /* The removal may have shifted slots: probe again. */
        i = probe(c, fp);
    }
    c->ring[pos].fp = fp;
    c->ring[pos].last = ++c->tick;
    c->ring[pos].count = 1;
    c->slots[i] = slot_make(fp, pos);
    c->st.inserts++;
    return evicted;
}

void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
