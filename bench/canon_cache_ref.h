/*
 * canon_cache_ref.h: the previous dedup cache (bench/canon_cache_ref.c),
 * for comparisons in bench/canon_cache.c only. Same contract as the
 * dedup_cache_* functions of dedup.h at the time.
 */
#ifndef DC_CANON_CACHE_REF_H
#define DC_CANON_CACHE_REF_H

#include <stddef.h>
#include <stdint.h>

#include "dedup.h"

uint64_t dedup__fmix64(uint64_t k);

struct ref_cache;
struct ref_cache *ref_cache_new_tuned(size_t entries, int window_pct,
                                      int protected_pct);
struct ref_cache *ref_cache_new(size_t entries);
int ref_cache_hit(struct ref_cache *c, uint64_t fp);
int ref_cache_put(struct ref_cache *c, uint64_t fp);
void ref_cache_prefetch(const struct ref_cache *c, uint64_t fp);
int ref_cache_contains(const struct ref_cache *c, uint64_t fp);
int ref_cache_segment(const struct ref_cache *c, uint64_t fp);
void ref_cache_stats(const struct ref_cache *c, struct dedup_cache_stats *s);
void ref_cache_free(struct ref_cache **c);

#endif
