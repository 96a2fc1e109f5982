/*
 * seen-set.h: the seen-set value's work (seen-module.c) on a key, for the
 * commands that need it besides DCSEEN.ADD and .CHECK: DCFRONT.ADMIT
 * (admit-module.c) inserts an admission's fingerprints with the same code
 * and the same answers. Nothing is replied or replicated here.
 */
#ifndef DC_SEEN_SET_H
#define DC_SEEN_SET_H

#include <stddef.h>

#include "module-api.h"

#define SEEN_WRONGTYPE -1 /* the key holds another type */
#define SEEN_FULL -2      /* a sub-array is full (2^32 - 1 members) */

/* DCSEEN.ADD: insert the n fingerprints of blob (8 little-endian bytes
 * each) into the seen-set at name; out[i] = '1' when this call inserted
 * fingerprint i, '0' when it was there (a repeat inside blob: its first
 * copy '1'); *added counts the '1's. 0, SEEN_WRONGTYPE or SEEN_FULL (what
 * was inserted stays). */
int seen_add_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                  const unsigned char *blob, size_t n, char *out,
                  size_t *added);
/* DCSEEN.CHECK: the same flags, nothing written. 0 or SEEN_WRONGTYPE. */
int seen_check_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                    const unsigned char *blob, size_t n, char *out);
/* The error reply for a code above. */
const char *seen_errstr(int rc);
/* Cache warming for seen_add_blob of the same fingerprints to come: the
 * sub-arrays they fall in (up to 2 KiB of each: a binary search's probes
 * fetched together, not one after the other). Nothing when the key holds
 * no seen-set. */
void seen_prefetch_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                        const unsigned char *blob, size_t n);

#endif
