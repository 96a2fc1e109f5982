/*
 * cache.c: a bounded set of 64-bit fingerprints with CLOCK eviction.
 * See dedup.h for what the cache means to the crawler.
 *
 * Layout: entries live in a dense ring `fps[0..capacity)` with one
 * reference bit each (`ref`). An open-addressing hash table `slots` of
 * 2^bits >= 2 * capacity slots maps a fingerprint to its ring position;
 * a slot holds position + 1, and 0 means empty. Because emptiness is
 * marked in the slot and not by a reserved key, fingerprint 0 is an
 * ordinary member.
 *
 * Lookup: linear probing from the fingerprint's home slot until the
 * fingerprint or an empty slot is found. The load factor stays <= 1/2, so
 * probe chains are short and lookups and inserts are O(1) on average.
 *
 * Eviction (CLOCK, second chance): a hit sets the entry's reference bit.
 * When the ring is full, the hand sweeps forward clearing set bits and
 * evicts the first entry whose bit is already clear; the new entry takes
 * its ring position with the bit clear. A sweep clears at most `capacity`
 * bits before it finds a victim, and the bits it clears were each set by
 * a hit, so insertion is O(1) amortized.
 *
 * Removal uses backward-shift deletion: the entries after the freed slot
 * in its probe run are moved back when their home slot allows it, so no
 * tombstones are needed and every chain stays intact.
 *
 * Invariants: `entries` <= `capacity`; ring positions [0, entries) are in
 * use, each referenced by exactly one slot; inserts - evictions == entries.
 *
 * Thread rules: a cache belongs to one thread; there is no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"

#define CACHE_MIN_ENTRIES 16
#define CACHE_MAX_ENTRIES ((size_t)1 << 30)

struct dedup_cache {
    uint64_t *fps;      /* ring of cached fingerprints */
    unsigned char *ref; /* reference bit per ring position */
    uint32_t *slots;    /* ring position + 1, or 0 when empty */
    size_t capacity;    /* ring size */
    size_t entries;     /* ring positions in use */
    size_t hand;        /* CLOCK hand, a ring position */
    size_t mask;        /* slot count - 1 */
    int bits;           /* log2(slot count) */
    struct dedup_cache_stats st;
};

/* Home slot: the fingerprint's bits mixed (keys need not be random) and
 * the top `bits` bits taken. */
static size_t home_slot(const struct dedup_cache *c, uint64_t fp)
{
    fp ^= fp >> 33;
    fp *= 0xff51afd7ed558ccdULL;
    fp ^= fp >> 33;
    fp *= 0xc4ceb9fe1a85ec53ULL;
    fp ^= fp >> 33;
    return (size_t)(fp >> (64 - c->bits));
}

struct dedup_cache *dedup_cache_new(size_t entries)
{
    struct dedup_cache *c = xcalloc(1, sizeof(*c));
    size_t nslots;

    if (entries < CACHE_MIN_ENTRIES)
        entries = CACHE_MIN_ENTRIES;
    if (entries > CACHE_MAX_ENTRIES)
        entries = CACHE_MAX_ENTRIES;
    c->bits = 1;
    while (((size_t)1 << c->bits) < 2 * entries)
        c->bits++;
    nslots = (size_t)1 << c->bits;
    c->mask = nslots - 1;
    c->capacity = entries;
    c->fps = xmalloc(entries * sizeof(*c->fps));
    c->ref = xcalloc(entries, 1);
    c->slots = xcalloc(nslots, sizeof(*c->slots));
    c->st.capacity = entries;
    return c;
}

void dedup_cache_free(struct dedup_cache **cp)
{
    struct dedup_cache *c;

    if (!cp || !*cp)
        return;
    c = *cp;
    free(c->fps);
    free(c->ref);
    free(c->slots);
    free(c);
    *cp = NULL;
}

/* Slot holding fp, or the empty slot where the probe for it stops. */
static size_t probe(const struct dedup_cache *c, uint64_t fp)
{
    size_t i = home_slot(c, fp);

    while (c->slots[i] && c->fps[c->slots[i] - 1] != fp)
        i = (i + 1) & c->mask;
    return i;
}

int dedup_cache_hit(struct dedup_cache *c, uint64_t fp)
{
    size_t i = probe(c, fp);

    if (!c->slots[i]) {
        c->st.misses++;
        return 0;
    }
    c->ref[c->slots[i] - 1] = 1;
    c->st.hits++;
    return 1;
}

/* Empty slot i, shifting later members of its run back into the hole. */
static void slot_delete(struct dedup_cache *c, size_t i)
{
    size_t j = i, home;

    for (;;) {
        j = (j + 1) & c->mask;
        if (!c->slots[j])
            break;
        home = home_slot(c, c->fps[c->slots[j] - 1]);
        /* The entry at j may move to i unless its home lies cyclically in
         * (i, j]: then i is before where its probe starts. */
        if (((j - home) & c->mask) >= ((j - i) & c->mask)) {
            c->slots[i] = c->slots[j];
            i = j;
        }
    }
    c->slots[i] = 0;
}

/* Ring position of the CLOCK victim; its reference bit is clear. */
static size_t clock_victim(struct dedup_cache *c)
{
    while (c->ref[c->hand]) {
        c->ref[c->hand] = 0;
        c->hand = (c->hand + 1) % c->capacity;
    }
    return c->hand;
}

/* Free a ring position for a new entry: the next one, or a victim's. */
static size_t ring_take(struct dedup_cache *c)
{
    size_t pos;

    if (c->entries < c->capacity)
        return c->entries++;
    pos = clock_victim(c);
    slot_delete(c, probe(c, c->fps[pos]));
    c->hand = (pos + 1) % c->capacity;
    c->st.evictions++;
    return pos;
}

void dedup_cache_put(struct dedup_cache *c, uint64_t fp)
{
    size_t pos;

    if (c->slots[probe(c, fp)])
        return;
    pos = ring_take(c);
    c->fps[pos] = fp;
    c->ref[pos] = 0;
    /* The victim's removal may have shifted slots: probe again. */
    c->slots[probe(c, fp)] = (uint32_t)(pos + 1);
    c->st.inserts++;
}

void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s)
{
    *s = c->st;
    s->entries = c->entries;
    s->capacity = c->capacity;
}
