/*
 * otab.h: the open-addressing table the module's frontier values index
 * their records by name with (level-type.c: hosts of a depth,
 * state-type.c: host fields): slots of (64-bit hash, record), linear
 * probing, at most half full, backward-shift deletion (no tombstones), so
 * a lookup reads slots and only the records whose hash matches.
 *
 * Ownership: the table owns its slots, not the records.
 *
 * Thread rules: Redis's main thread.
 */
#ifndef DC_OTAB_H
#define DC_OTAB_H

#include <stddef.h>
#include <stdint.h>

struct otab_slot {
    uint64_t hv;
    void *rec; /* NULL: free */
};

struct otab {
    struct otab_slot *s;
    size_t cap, live; /* cap: 0 or a power of two */
};

/* a record is the one named key (len bytes) */
typedef int (*otab_eq)(const void *rec, const char *key, size_t len);

uint64_t otab_hash(const char *s, size_t n);
/* The slot of key, or (size_t)-1. */
size_t otab_find(const struct otab *t, uint64_t hv, otab_eq eq,
                 const char *key, size_t len);
/* Cache warming for a lookup of hv to come: its home slot's line, and
 * with rec, the first record there whose hash is hv (reads the slots). */
void otab_prefetch(const struct otab *t, uint64_t hv, int rec);
/* Add a record (not there yet), growing the table first when needed. */
void otab_add(struct otab *t, uint64_t hv, void *rec);
/* Take slot i's record out. */
void otab_del(struct otab *t, size_t i);
/* The records one by one: *at starts at 0; NULL after the last. */
void *otab_next(const struct otab *t, size_t *at);
void otab_free(struct otab *t);

#endif
