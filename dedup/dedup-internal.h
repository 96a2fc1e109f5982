/*
 * dedup-internal.h: what the dedup module's files share.
 *
 * Code outside of the dedup module should use only the public functions
 * defined in "dedup.h", and should *not* include this file.
 */
#ifndef DC_DEDUP_INTERNAL_H
#define DC_DEDUP_INTERNAL_H

#include <stdint.h>

/* MurmurHash3's 64-bit finalizer: a cheap full-avalanche mix of k (used
 * by the fingerprint and to spread fingerprints over the cache's slots). */
uint64_t dedup__fmix64(uint64_t k);

#endif
