/*
 * dedup.h: "have we seen this URL?" and "have we seen this content?".
 *
 * Fingerprints. Every canonical URL maps to a 64-bit fingerprint. The
 * default (dedup.fingerprint = murmur3) is the first 64 bits of
 * MurmurHash3_x64_128, seed 0, over the canonical URL's bytes; "md5" takes
 * the first 8 bytes of the URL's MD5 digest read big-endian (the first 16
 * hex digits of the usual MD5 hex string), for compatibility with seen-sets
 * keyed by MD5. The same URL gets the same fingerprint on every node and
 * every run (pinned vectors: tests/data/fingerprints*.tsv). The algorithm
 * is process-wide (dedup_fingerprint_use, set once before threads start;
 * the frontier records it in Redis so every client of a crawl agrees).
 *
 * Seen-set. The source of truth is a set in Redis, written insert-if-absent
 * by the frontier (its admit script, or seen_batch) so that "new"
 * happens exactly once whoever asks. This module defines where a
 * fingerprint lives (dedup_seen_key / dedup_seen_member):
 *   key    "<prefix>:{<p>}:s:<b>"  p = the URL's host partition (so the
 *          admit script touches one hash slot), b = the top 8 bits of the
 *          fingerprint (DEDUP_SUBBUCKETS = 256 buckets per partition);
 *   member the whole fingerprint as a signed 64-bit decimal integer.
 * (Recorded in <prefix>:meta as layout "b256-i64".) Integer members keep
 * each bucket in Redis's intset encoding: 8 bytes per URL plus allocator
 * slack, plus about 80 bytes per bucket key. With the default 1024
 * partitions there are 262144 buckets: at 15 M URLs the keys add about
 * 1.4 bytes per URL, at 100 M about 0.2. A bucket stays an intset while it
 * holds at most set-max-intset-entries members; the project's Redis runs
 * with DEDUP_INTSET_ENTRIES = 8192, so one partition holds 256 * 8192 = 2 M
 * URLs compactly: hosts are not spread evenly (the busiest host of a crawl
 * can carry several % of its links), and 16 buckets per partition (the
 * earlier layout) overflowed into hash tables (about 50 bytes per member)
 * at a few million URLs. Small buckets also make inserts cheap (an intset
 * insert moves the members after it) and cost nothing in commands: batch
 * dedup (seen_batch) sends one script call per partition, which routes
 * members to their buckets inside Redis. Past 2 M URLs in one partition
 * its fuller buckets still work but become hash tables, which the crawl
 * summary reports as buckets not intset.
 *
 * That layout (b256-i64) is the fallback. When the Redis has the
 * project's module (dcrawl-seen.so, seen/module/), the frontier uses
 * layout "mod-u64" instead: one module key "<prefix>:{<p>}:S" per
 * partition holding the whole fingerprints in 256 sorted arrays (about 9
 * bytes per URL, one native command per partition per batch; see
 * seen/client-mod.c). dedup_seen_key / dedup_seen_member describe only
 * b256-i64.
 *
 * Why not members of 32 bits (4 bytes)? The key implies only the 8 bucket
 * bits and the partition (a hash of the host, not of the URL), so 32-bit
 * members would mean 40-bit fingerprints per host partition: a new URL
 * would be wrongly "seen" with probability (URLs in its partition) / 2^40,
 * thousands of lost URLs at 10^9. The layout keeps all 64 bits.
 *
 * False positives (fingerprint collisions). Two distinct URLs share a
 * fingerprint with probability 2^-64. After n URLs are stored, a new URL is
 * wrongly reported "seen" with probability n / 2^64; over a crawl of
 * n = 10^9 URLs the expected number of such losses is n^2 / 2^65 = 0.027
 * (the probability of even one is about 2.7 %). That is an upper bound:
 * with the partition in the key only URLs of the same host partition can
 * collide, so with URLs spread evenly over P partitions (1024 by default)
 * it is 0.027 / P. No Bloom filter: nothing else is approximate.
 *
 * In front of Redis, a bounded in-process cache (struct dedup_cache)
 * answers most repeated "seen?" questions without a round trip. A URL is
 * put in the cache only once Redis has answered for it (new or not), so a
 * cache hit is always a URL the seen-set already holds. Eviction combines
 * how often an entry was asked for and how recently (set-associative,
 * weighted eviction inside each 16-way set; see cache.c).
 *
 * Thread rules: dedup_fingerprint and the key functions are reentrant; a
 * struct dedup_cache is owned by one thread.
 */
#ifndef DC_DEDUP_H
#define DC_DEDUP_H

#include <stddef.h>
#include <stdint.h>

/* Fingerprint algorithms (conf dedup.fingerprint). */
enum dedup_fp_algo {
    DEDUP_FP_MURMUR3 = 0,
    DEDUP_FP_MD5 = 1
};
/* Algorithm by name ("murmur3", "md5"), or -1. */
int dedup_fp_algo_parse(const char *name);
const char *dedup_fp_algo_name(int algo);
/* Select the process-wide algorithm (before any thread starts). */
void dedup_fingerprint_use(int algo);
int dedup_fingerprint_algo(void);

/* Fingerprint of a canonical URL with the selected algorithm. */
uint64_t dedup_fingerprint(const char *url, size_t len);
/* With a given algorithm. */
uint64_t dedup_fingerprint_with(int algo, const char *url, size_t len);

/* Full MurmurHash3_x64_128 (for test vectors): out[0], out[1]. */
void dedup_murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                           uint64_t out[2]);

/* SHA-1 of a buffer as "sha1:" + 32 base32 characters (WARC style). out
 * must hold at least DEDUP_SHA1_STRLEN bytes. */
#define DEDUP_SHA1_STRLEN 38
void dedup_sha1_base32(const void *data, size_t len, char *out);
/* The same over two pieces (a head and a body) without joining them. */
void dedup_sha1_two(const void *a, size_t alen, const void *b, size_t blen,
                    char *out);
/* The same from a raw 20-byte digest. */
void dedup_sha1_format(const unsigned char digest[20], char *out);
/* Load the digests' implementations now (the first digest otherwise pays
 * for it: a few ms of OpenSSL provider setup). Any thread, any time. */
void dedup_digests_init(void);

/* Seen-set layout (see the top of this file). */
#define DEDUP_SUBBUCKET_BITS 8
#define DEDUP_SUBBUCKETS (1 << DEDUP_SUBBUCKET_BITS)
/* set-max-intset-entries the layout is sized for. */
#define DEDUP_INTSET_ENTRIES 8192
/* Bucket number of fp inside its partition. */
unsigned dedup_seen_bucket(uint64_t fp);
/* Key of fp's seen bucket in partition p: "<prefix>:{<p>}:s:<b>". */
int dedup_seen_key(const char *prefix, int partition, uint64_t fp, char *out,
                   size_t cap);
/* Member stored for fp: fp as a signed 64-bit decimal integer. */
int dedup_seen_member(uint64_t fp, char *out, size_t cap);

/* Bounded cache of fingerprints known to be in the seen-set. Eviction
 * combines repetition and recency (cache.c): a fingerprint picks one
 * 16-way set; a put into a full set evicts the way with the lowest
 * weight, hits (aged by halving) counted against places of recency, so
 * frequent and recent entries stay and old one-offs go first. One memory
 * round trip per operation, 8 bytes per entry. */
struct dedup_cache;
struct dedup_cache_stats {
    uint64_t hits, misses, inserts, evictions, entries, capacity;
};
#define DEDUP_CACHE_PROTECTED_PCT 80
#define DEDUP_CACHE_WINDOW_PCT 98
/* A cache of at most `entries` fingerprints (at least 16). */
struct dedup_cache *dedup_cache_new(size_t entries);
/* Policy by the shares of the earlier segmented design, kept for the
 * benches: (0, 0) is recency alone (LRU within each set); any other pair
 * gives the default weighted policy. */
struct dedup_cache *dedup_cache_new_tuned(size_t entries, int window_pct,
                                          int protected_pct);
/* 1 if fp is cached (counted as a hit; its count and recency are
 * updated), else 0 (counted as a miss). */
int dedup_cache_hit(struct dedup_cache *c, uint64_t fp);
/* Remember fp (evicting its set's lowest-weight entry when the set is
 * full). Returns 1 if an entry was evicted, else 0. */
int dedup_cache_put(struct dedup_cache *c, uint64_t fp);
/* Start loading the memory a lookup of fp will touch (call a few
 * lookups ahead to hide cache misses; no effect on the contents). */
void dedup_cache_prefetch(const struct dedup_cache *c, uint64_t fp);
/* 1 if fp is cached, without counting or updating anything. */
int dedup_cache_contains(const struct dedup_cache *c, uint64_t fp);
/* 1 if a cached fp was hit since it was put, 0 if not; -1 if absent. */
int dedup_cache_segment(const struct dedup_cache *c, uint64_t fp);
void dedup_cache_stats(const struct dedup_cache *c, struct dedup_cache_stats *s);
void dedup_cache_free(struct dedup_cache **c);

#endif
