/*
 * ring.h: a consistent-hash ring of node ids with bounded loads: which
 * node owns which item (the frontier's partitions, frontier/cluster.c).
 * Pure computation: no Redis, no I/O, no global state (ring/ring.c says
 * how points are placed and items assigned).
 *
 * ring_new copies, sorts and de-duplicates ids; node index i (ring_node)
 * refers to that sorted order. DC_EINVAL when vnodes < 1. ring_assign
 * writes owner[i] (a node index, UINT32_MAX when the ring is empty) for
 * items placed in the given order; c >= 1 caps every node at
 * ceil(c * nitems / nodes) items, c < 1 is plain consistent hashing.
 *
 * Thread rules: a ring is immutable after ring_new; any number of threads
 * may call ring_assign and the lookups on it.
 */
#ifndef DC_RING_H
#define DC_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

int ring_new(struct ring **r, const char *const *ids, size_t n, int vnodes);
void ring_free(struct ring **r);
size_t ring_nodes(const struct ring *r);
const char *ring_node(const struct ring *r, size_t i);
/* Index of id in the sorted order, -1 when absent. */
long ring_find(const struct ring *r, const char *id);
void ring_assign(const struct ring *r, const uint64_t *item_hash,
                 size_t nitems, double c, uint32_t *owner);
/* The ring's 64-bit hash of bytes, and of a partition number. */
uint64_t ring_hash(const void *p, size_t len);
uint64_t ring_item(uint64_t key);

#endif
