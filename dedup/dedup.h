/*
 * dedup.h: "have we seen this URL?" and "have we seen this content?".
 *
 * Every canonical URL maps to a 64-bit fingerprint (the first 64 bits of
 * MurmurHash3_x64_128, seed 0, over the canonical URL's bytes): the same URL
 * gets the same fingerprint on every node and every run.
 *
 * The source of truth is a set in Redis, written insert-if-absent by the
 * frontier's admit script (frontier/) so that "new" and "enqueued" happen in
 * one atomic step. This module defines where a fingerprint lives in Redis
 * (dedup_seen_key / dedup_seen_member) so the layout is one module's
 * decision: the seen-set of a URL is kept in its host partition's hash slot,
 * split into DEDUP_SUBBUCKETS keys per partition whose members are integers,
 * so Redis can keep them in its compact intset encoding.
 *
 * In front of Redis, a bounded in-process cache (struct dedup_cache)
 * answers most repeated "seen?" questions without a round trip. A URL is put
 * in the cache only once Redis has answered for it (new or not), so a cache
 * hit is always a URL the seen-set already holds.
 *
 * Thread rules: dedup_fingerprint and the key functions are reentrant; a
 * struct dedup_cache is owned by one thread.
 */
#ifndef DC_DEDUP_H
#define DC_DEDUP_H

#include <stddef.h>
#include <stdint.h>

/* Fingerprint of a canonical URL. */
uint64_t dedup_fingerprint(const char *url, size_t len);

/* Full MurmurHash3_x64_128 (for test vectors): out[0], out[1]. */
void dedup_murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                           uint64_t out[2]);

/* SHA-1 of a buffer as "sha1:" + 32 base32 characters (WARC style). out
 * must hold at least DEDUP_SHA1_STRLEN bytes. */
#define DEDUP_SHA1_STRLEN 38
void dedup_sha1_base32(const void *data, size_t len, char *out);
/* The same from a raw 20-byte digest. */
void dedup_sha1_format(const unsigned char digest[20], char *out);

/* Seen-set layout. */
#define DEDUP_SUBBUCKETS 16
/* Key of fp's seen bucket in partition p: "<prefix>:{<p>}:s:<b>". */
int dedup_seen_key(const char *prefix, int partition, uint64_t fp, char *out,
                   size_t cap);
/* Member stored for fp: fp as a signed 64-bit decimal integer. */
int dedup_seen_member(uint64_t fp, char *out, size_t cap);

/* Bounded cache of fingerprints known to be in the seen-set. */
struct dedup_cache;
struct dedup_cache_stats {
    uint64_t hits, misses, inserts, evictions, entries, capacity;
};
/* A cache of at most `entries` fingerprints (at least 16). */
struct dedup_cache *dedup_cache_new(size_t entries);
/* 1 if fp is cached (counted as a hit, its recency refreshed), else 0. */
int dedup_cache_hit(struct dedup_cache *c, uint64_t fp);
/* Remember fp (evicting an old entry when full). */
void dedup_cache_put(struct dedup_cache *c, uint64_t fp);
void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s);
void dedup_cache_free(struct dedup_cache **c);

#endif
