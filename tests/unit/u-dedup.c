/*
 * u-dedup.c: URL fingerprints, SHA-1 base32 digests, the seen-set key
 * layout and the bounded fingerprint cache.
 *
 * The MurmurHash3 check is SMHasher's VerificationTest, whose expected
 * value comes from the reference implementation, not from this code.
 * tests/data/fingerprints.tsv was generated only after that check passed;
 * it pins the fingerprints so they cannot drift between builds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "t.h"

/* --- (a) MurmurHash3_x64_128 ------------------------------------------ */

static void put_le64(unsigned char *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* SMHasher VerificationTest: keys {}, {0}, {0,1}, ... {0..254}, key i
 * hashed with seed 256 - i; the 256 results are hashed with seed 0 and
 * the first four bytes of that, little-endian, are the verification value. */
static uint32_t smhasher_verification(void)
{
    unsigned char key[256], hashes[256 * 16];
    uint64_t h[2];
    int i;

    for (i = 0; i < 256; i++) {
        key[i] = (unsigned char)i;
        dedup_murmur3_x64_128(key, (size_t)i, (uint32_t)(256 - i), h);
        put_le64(hashes + 16 * i, h[0]);
        put_le64(hashes + 16 * i + 8, h[1]);
    }
    dedup_murmur3_x64_128(hashes, sizeof(hashes), 0, h);
    return (uint32_t)(h[0] & 0xffffffffu);
}

/* Published MurmurHash3_x64_128 outputs (seed 0) from other
 * implementations, as two 64-bit halves. */
static const struct {
    const char *in;
    uint64_t h1, h2;
} mm3_vectors[] = {
    {"", 0, 0},
    {"hello", 0xcbd8a7b341bd9b02ULL, 0x5b1e906a48ae1d19ULL},
    {"The quick brown fox jumps over the lazy dog", 0xe34bbc7bbc071b6cULL,
     0x7a433ca9c49a9347ULL},
};

static void test_murmur3(void)
{
    unsigned char buf[64 + 1];
    uint64_t a[2], b[2];
    size_t i, len;
    uint32_t v = smhasher_verification();

    CHECK(v == 0x6384BA69u,
          "SMHasher verification 0x%08" PRIX32 ", want 0x6384BA69", v);
    for (i = 0; i < sizeof(mm3_vectors) / sizeof(mm3_vectors[0]); i++) {
        len = strlen(mm3_vectors[i].in);
        dedup_murmur3_x64_128(mm3_vectors[i].in, len, 0, a);
        CHECK(a[0] == mm3_vectors[i].h1 && a[1] == mm3_vectors[i].h2,
              "'%s': %016" PRIx64 "%016" PRIx64, mm3_vectors[i].in, a[0], a[1]);
        CHECK(dedup_fingerprint(mm3_vectors[i].in, len) == a[0],
              "fingerprint is out[0] for '%s'", mm3_vectors[i].in);
    }
    /* unaligned input hashes the same as aligned */
    for (len = 0; len <= 48; len++) {
        memcpy(buf + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN",
               len);
        dedup_murmur3_x64_128(buf + 1, len, 7, a);
        memmove(buf, buf + 1, len);
        dedup_murmur3_x64_128(buf, len, 7, b);
        CHECK(a[0] == b[0] && a[1] == b[1], "alignment changes len %zu", len);
    }
}

/* --- (b) SHA-1 as base32 ------------------------------------------------ */

static void test_sha1(void)
{
    char out[DEDUP_SHA1_STRLEN];
    unsigned char d[20];

    dedup_sha1_base32("", 0, out);
    CHECK(!strcmp(out, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"), "'': %s", out);
    /*
     * SHA1("abc") = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d (FIPS 180).
     * Base32, five bytes -> eight 5-bit groups:
     *   a9 99 3e 36 47 = 10101 00110 01100 10011 11100 01101 10010 00111
     *                  = 21 6 12 19 28 13 18 7      -> V G M T 4 N S H
     *   06 81 6a ba 3e = 00000 11010 00000 10110 10101 01110 10001 11110
     *                  = 0 26 0 22 21 14 17 30      -> A 2 A W V O R 6
     *   25 71 78 50 c2 = 00100 10101 11000 10111 10000 10100 00110 00010
     *                  = 4 21 24 23 16 20 6 2       -> E V Y X Q U G C
     *   6c 9c d0 d8 9d = 01101 10010 01110 01101 00001 10110 00100 11101
     *                  = 13 18 14 13 1 22 4 29      -> N S O N B W E 5
     */
    dedup_sha1_base32("abc", 3, out);
    CHECK(!strcmp(out, "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"), "abc: %s",
          out);
    CHECK(strlen(out) + 1 == DEDUP_SHA1_STRLEN, "length %zu", strlen(out));
    memset(d, 0, sizeof(d));
    dedup_sha1_format(d, out);
    CHECK(!strcmp(out, "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), "zeros: %s",
          out);
    memset(d, 0xff, sizeof(d));
    dedup_sha1_format(d, out);
    CHECK(!strcmp(out, "sha1:77777777777777777777777777777777"), "ones: %s",
          out);
}

/* --- (c) pinned fingerprints ------------------------------------------- */

/* Every line of a pinned file, with the algorithm selected process-wide
 * (dedup_fingerprint) and given explicitly (dedup_fingerprint_with). */
static void test_pinned_file(const char *path, int algo)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    int n = 0, lines = 0;

    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    while (lines++ < 1000 && fgets(line, sizeof(line), f)) {
        char *tab, *end;
        uint64_t want, got;

        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || !line[0])
            continue;
        tab = strchr(line, '\t');
        CHECK(tab != NULL, "no tab in '%s'", line);
        if (!tab)
            continue;
        *tab = '\0';
        want = strtoull(tab + 1, &end, 16);
        CHECK(*end == '\0' && strlen(tab + 1) == 16, "bad hex '%s'", tab + 1);
        dedup_fingerprint_use(algo);
        got = dedup_fingerprint(line, strlen(line));
        CHECK(got == want, "%s: %016" PRIx64 ", pinned %016" PRIx64, line, got,
              want);
        CHECK(dedup_fingerprint_with(algo, line, strlen(line)) == want,
              "%s: _with", line);
        dedup_fingerprint_use(DEDUP_FP_MURMUR3);
        n++;
    }
    fclose(f);
    CHECK(n >= 20, "only %d pinned fingerprints", n);
}

static void test_pinned(void)
{
    test_pinned_file(DC_SOURCE_DIR "/tests/data/fingerprints.tsv",
                     DEDUP_FP_MURMUR3);
    test_pinned_file(DC_SOURCE_DIR "/tests/data/fingerprints-md5.tsv",
                     DEDUP_FP_MD5);
    CHECK(dedup_fp_algo_parse("murmur3") == DEDUP_FP_MURMUR3, "parse murmur3");
    CHECK(dedup_fp_algo_parse("md5") == DEDUP_FP_MD5, "parse md5");
    CHECK(dedup_fp_algo_parse("sha1") == -1 && dedup_fp_algo_parse(NULL) == -1,
          "parse bad");
    CHECK(!strcmp(dedup_fp_algo_name(DEDUP_FP_MD5), "md5"), "name md5");
    CHECK(dedup_fingerprint_algo() == DEDUP_FP_MURMUR3, "default murmur3");
}

/* --- (e) seen-set layout ----------------------------------------------- */

static const struct {
    const char *prefix;
    int partition;
    uint64_t fp;
    const char *key;
} seen_keys[] = {
    {"dc", 0, 0, "dc:{0}:s:0"},
    {"dc", 7, 0x00ffffffffffffffULL, "dc:{7}:s:0"},
    {"dc", 7, 0x0100000000000000ULL, "dc:{7}:s:1"},
    {"dc", 7, 0x1000000000000000ULL, "dc:{7}:s:16"},
    {"dc", 1023, 0xa097098a4e7151f8ULL, "dc:{1023}:s:160"},
    {"crawl2", 65535, 0xffffffffffffffffULL, "crawl2:{65535}:s:255"},
};

static const struct {
    uint64_t fp;
    const char *member;
} seen_members[] = {
    {0, "0"},
    {1, "1"},
    {0x7fffffffffffffffULL, "9223372036854775807"},
    {0x8000000000000000ULL, "-9223372036854775808"},
    {0xffffffffffffffffULL, "-1"},
    {0xfffffffffffffffeULL, "-2"},
    {0xa097098a4e7151f8ULL, "-6875015816531586568"},
};

static void test_seen_layout(void)
{
    char out[64];
    size_t i, n;

    for (i = 0; i < sizeof(seen_keys) / sizeof(seen_keys[0]); i++) {
        int rc = dedup_seen_key(seen_keys[i].prefix, seen_keys[i].partition,
                                seen_keys[i].fp, out, sizeof(out));
        CHECK(rc == DC_OK && !strcmp(out, seen_keys[i].key), "key %zu: %s", i,
              out);
        n = strlen(seen_keys[i].key);
        CHECK(dedup_seen_key(seen_keys[i].prefix, seen_keys[i].partition,
                             seen_keys[i].fp, out, n) == DC_ETOOBIG,
              "key %zu fits in %zu", i, n);
        CHECK(dedup_seen_key(seen_keys[i].prefix, seen_keys[i].partition,
                             seen_keys[i].fp, out, n + 1) == DC_OK,
              "key %zu needs %zu", i, n + 1);
    }
    for (i = 0; i < sizeof(seen_members) / sizeof(seen_members[0]); i++) {
        int rc = dedup_seen_member(seen_members[i].fp, out, sizeof(out));
        CHECK(rc == DC_OK && !strcmp(out, seen_members[i].member),
              "member %zu: %s", i, out);
        n = strlen(seen_members[i].member);
        CHECK(dedup_seen_member(seen_members[i].fp, out, n) == DC_ETOOBIG,
              "member %zu fits in %zu", i, n);
    }
    CHECK(dedup_seen_member(1, out, 0) == DC_ETOOBIG, "cap 0");
    CHECK(dedup_seen_key("dc", 1, 1, out, 0) == DC_ETOOBIG, "key cap 0");
}

/* --- (d) the cache ----------------------------------------------------- */

static void stats_of(struct dedup_cache *c, struct dedup_cache_stats *s)
{
    dedup_cache_stats(c, s);
}

static void test_cache_basics(void)
{
    struct dedup_cache *c = dedup_cache_new(100);
    struct dedup_cache_stats s;
    uint64_t i;

    stats_of(c, &s);
    CHECK(s.capacity == 100 && s.entries == 0, "new: cap %" PRIu64, s.capacity);
    CHECK(!dedup_cache_hit(c, 5), "empty hit");
    dedup_cache_put(c, 5);
    CHECK(dedup_cache_hit(c, 5), "5 after put");
    CHECK(!dedup_cache_hit(c, 6), "6 never put");
    dedup_cache_put(c, 5);
    stats_of(c, &s);
    CHECK(s.hits == 1 && s.misses == 2 && s.inserts == 1 && s.entries == 1,
          "stats h%" PRIu64 " m%" PRIu64 " i%" PRIu64, s.hits, s.misses,
          s.inserts);

    /* fingerprint 0 and all-ones are ordinary members */
    CHECK(!dedup_cache_hit(c, 0), "0 before put");
    dedup_cache_put(c, 0);
    CHECK(dedup_cache_hit(c, 0), "0 after put");
    CHECK(!dedup_cache_hit(c, UINT64_MAX), "max before put");
    dedup_cache_put(c, UINT64_MAX);
    CHECK(dedup_cache_hit(c, UINT64_MAX) && dedup_cache_hit(c, 0),
          "max and 0 after put");

    for (i = 1000; i < 2000; i++)
        dedup_cache_put(c, i);
    stats_of(c, &s);
    CHECK(s.entries == 100, "capacity respected: %" PRIu64, s.entries);
    CHECK(s.inserts - s.evictions == s.entries,
          "inserts %" PRIu64 " evictions %" PRIu64, s.inserts, s.evictions);
    /* One-offs of equal frequency: the newer wins (recency), so all but
     * a few of the 100 newest stay (the repeated 0, 5 and max keep their
     * places); the last put is always there. */
    {
        int recent = 0;
        for (i = 1900; i < 2000; i++)
            recent += dedup_cache_contains(c, i);
        CHECK(recent >= 80, "only %d of the 100 newest kept", recent);
        CHECK(dedup_cache_contains(c, 1999), "last put missing");
    }
    dedup_cache_free(&c);
    CHECK(c == NULL, "free clears the pointer");
    dedup_cache_free(&c);
    dedup_cache_free(NULL);

    c = dedup_cache_new(0);
    stats_of(c, &s);
    CHECK(s.capacity == 16, "minimum capacity %" PRIu64, s.capacity);
    dedup_cache_free(&c);
}

/*
 * Eviction order, table-driven. A cache of 16 is one set of 16 ways, so
 * the whole cache is the eviction sample. It is filled with keys 1..16 in
 * order, then `hits` are applied left to right, then key 100 is put:
 * `victim` must be the one evicted. Expected victims are worked by hand
 * from the rules in cache.c: rank = place in recency order (0 = most
 * recent put or hit, 15 = least recent), count = hits since the put (at
 * most 7), weight = count - rank, the lowest weight goes (rank 0
 * never; ties: the less recent). window 0 and prot 0 select recency alone
 * (count ignored); the other shares select the weighted policy.
 */
static const struct {
    const char *name;
    int window, prot;
    int hits[24];   /* keys, 0-terminated */
    int victim;
} evict_order[] = {
    /* all asked once: 13 (count 1) vs 1 (count 1), a tie: the old 1 goes */
    {"oldest one-off goes", 25, 80, {0}, 1},
    /* 1 hit: protected. 13 vs 2, both count 1: 2 goes */
    {"a repeat is protected", 25, 80, {1, 0}, 2},
    /* 2..12 hit: 2..10 fill protected, 11 and 12 push 2, 3 back to
     * probation (after 1); 13..16 hit in the window (count 2). 13 (2) vs
     * 1 (1): old and rare 1 goes */
    {"frequent and recent beat old and rare", 25, 80,
     {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0}, 1},
    /* 1 hit 4 times (count 4), then 2..16 once (count 1): 1 is the least
     * recent (rank 15, weight 4 - 15 = -11), 2 the next (rank 14, weight
     * 1 - 14 = -13): 2 goes although 1 is older */
    {"frequency outweighs age", 25, 80,
     {1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0},
     2},
    /* the same with recency alone: the least recent, 1, goes */
    {"recency alone ignores frequency", 0, 0,
     {1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0},
     1},
    /* 1..12 hit once (count 1, ranks 0..11); 13 (rank 15, weight -15) vs
     * 1 (rank 11, weight -10): the one-off 13 goes, the older repeat stays */
    {"one-off before repeat", 25, 80,
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0}, 13},
    /* other shares, same policy: 1 hit, 2 goes */
    {"shares: a repeat is protected", 0, 50, {1, 0}, 2},
    /* 1..9 hit: 10 (count 0, rank 15) goes */
    {"shares: old one-off goes", 0, 50, {1, 2, 3, 4, 5, 6, 7, 8, 9, 0}, 10},
    /* 16 hit 3 times then 1..15 once: 16 (count 3, rank 15, weight -12)
     * stays, 1 (count 1, rank 14, weight -13) goes */
    {"repeat beats one hit", 25, 80,
     {16, 16, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0}, 1},
    /* plain LRU: 1 refreshed, 2 is the oldest */
    {"plain LRU", 0, 0, {1, 0}, 2},
};

static void test_cache_evict_order(void)
{
    for (size_t r = 0; r < sizeof(evict_order) / sizeof(evict_order[0]); r++) {
        struct dedup_cache *c = dedup_cache_new_tuned(16, evict_order[r].window,
                                                      evict_order[r].prot);
        struct dedup_cache_stats s;
        int missing = 0, gone = -1;

        for (int k = 1; k <= 16; k++)
            dedup_cache_put(c, (uint64_t)k);
        for (int h = 0; h < 24 && evict_order[r].hits[h]; h++)
            CHECK(dedup_cache_hit(c, (uint64_t)evict_order[r].hits[h]),
                  "%s: hit %d", evict_order[r].name, evict_order[r].hits[h]);
        CHECK(dedup_cache_put(c, 100) == 1, "%s: put evicts",
              evict_order[r].name);
        for (int k = 1; k <= 16; k++)
            if (!dedup_cache_contains(c, (uint64_t)k))
                missing++, gone = k;
        CHECK(missing == 1 && gone == evict_order[r].victim,
              "%s: evicted %d (%d missing), want %d", evict_order[r].name,
              gone, missing, evict_order[r].victim);
        CHECK(dedup_cache_contains(c, 100), "%s: new entry",
              evict_order[r].name);
        dedup_cache_stats(c, &s);
        CHECK(s.evictions == 1 && s.entries == 16, "%s: stats",
              evict_order[r].name);
        dedup_cache_free(&c);
    }
}

/* In a long stream, a hot entry (hit between every put) is never evicted;
 * one that stops being asked for ages out (its count is halved now and
 * then); segments: a repeat is protected (1), a new put is not (0). */
static void test_cache_hot(void)
{
    struct dedup_cache *c = dedup_cache_new(16);
    uint64_t i;

    dedup_cache_put(c, 42);
    for (i = 0; i < 1000; i++) {
        CHECK(dedup_cache_hit(c, 42), "hot entry lost at %" PRIu64, i);
        dedup_cache_put(c, 100000 + i);
    }
    CHECK(dedup_cache_segment(c, 100999) == 0, "new put: segment %d",
          dedup_cache_segment(c, 100999));
    CHECK(dedup_cache_segment(c, 42) == 1, "hot: segment %d",
          dedup_cache_segment(c, 42));
    CHECK(dedup_cache_segment(c, 7) == -1, "absent segment");
    /* 42 is no longer asked for: without aging its count (7) would keep
     * it above every older one-off forever */
    for (i = 0; i < 20000 && dedup_cache_contains(c, 42); i++)
        dedup_cache_put(c, 200000 + i);
    CHECK(!dedup_cache_contains(c, 42), "hot entry never aged out");
    CHECK(i > 15, "hot entry evicted after only %" PRIu64 " puts", i);
    dedup_cache_free(&c);

    c = dedup_cache_new_tuned(16, 0, 50);
    dedup_cache_put(c, 1);
    CHECK(dedup_cache_segment(c, 1) == 0, "no window: put in probation");
    dedup_cache_hit(c, 1);
    CHECK(dedup_cache_segment(c, 1) == 1, "hit: protected");
    dedup_cache_free(&c);
}

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rnd(uint64_t *st)
{
    *st ^= *st >> 12;
    *st ^= *st << 25;
    *st ^= *st >> 27;
    return *st * 0x2545f4914f6cdd1dULL;
}

#define UNIVERSE 50000
#define CACHE_N 4096
#define OPS 1000000

/* Universe of fingerprints: 0, runs of small integers, random values. */
static void make_universe(uint64_t *u, uint64_t *st)
{
    size_t i;

    u[0] = 0;
    for (i = 1; i < UNIVERSE; i++)
        u[i] = i < UNIVERSE / 4 ? (uint64_t)i : rnd(st);
}

/* Every universe member in the cache, counted by asking the cache. */
static uint64_t count_present(struct dedup_cache *c, const uint64_t *u,
                              const unsigned char *ever, uint64_t *bad)
{
    uint64_t n = 0;
    size_t i;

    for (i = 0; i < UNIVERSE; i++) {
        if (dedup_cache_hit(c, u[i])) {
            n++;
            if (!ever[i])
                (*bad)++;
        }
    }
    return n;
}

static void test_cache_random(void)
{
    uint64_t *u = xmalloc(UNIVERSE * sizeof(*u));
    unsigned char *ever = xcalloc(UNIVERSE, 1);
    struct dedup_cache *c = dedup_cache_new(CACHE_N);
    struct dedup_cache_stats s;
    uint64_t st = 0x9e3779b97f4a7c15ULL, calls = 0, hits = 0, bad = 0;
    uint64_t lost = 0, distinct = 0, scans = 0, present;
    long op;

    make_universe(u, &st);
    for (op = 0; op < OPS; op++) {
        size_t k = (size_t)(rnd(&st) % UNIVERSE);

        if (rnd(&st) % 10 < 6) {
            calls++;
            if (dedup_cache_hit(c, u[k])) {
                hits++;
                if (!ever[k])
                    bad++;
            }
        } else {
            distinct += !ever[k];
            ever[k] = 1;
            dedup_cache_put(c, u[k]);
            calls++;
            if (!dedup_cache_hit(c, u[k]))
                lost++;
            else
                hits++;
        }
        if (op % 100000 == 99999) {
            stats_of(c, &s);
            present = count_present(c, u, ever, &bad);
            calls += UNIVERSE;
            hits += present;
            scans++;
            CHECK(present == s.entries,
                  "scan: %" PRIu64 " present, %" PRIu64 " entries", present,
                  s.entries);
        }
    }
    stats_of(c, &s);
    CHECK(bad == 0, "%" PRIu64 " hits on never-put fingerprints", bad);
    CHECK(lost == 0, "%" PRIu64 " puts not found right after", lost);
    CHECK(s.hits == hits && s.hits + s.misses == calls,
          "hits %" PRIu64 "/%" PRIu64 " calls %" PRIu64 "/%" PRIu64, s.hits,
          hits, s.hits + s.misses, calls);
    CHECK(s.entries == (distinct < CACHE_N ? distinct : CACHE_N),
          "entries %" PRIu64 " distinct %" PRIu64, s.entries, distinct);
    CHECK(s.inserts - s.evictions == s.entries, "inserts - evictions");
    CHECK(s.evictions > 0 && scans == 10, "evictions %" PRIu64, s.evictions);
    dedup_cache_free(&c);
    free(u);
    free(ever);
}

/* A large cache grows its sets as entries arrive (cache.c, Growth; with
 * a capacity of 16 * a power of two or not): every
 * put is found right after, the entries are exactly what is present,
 * almost nothing is evicted before the cache is full, and it fills to its
 * capacity. */
static void test_cache_growth(void)
{
    static const size_t sizes[] = {1000, 30000, 300000};
    static const size_t caps[] = {65536, 40000}; /* 40000: 9-10 ways */

    for (size_t k = 0; k < 2 * sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t cap = caps[k % 2];
        struct dedup_cache *c = dedup_cache_new(cap);
        struct dedup_cache_stats s;
        uint64_t st = 0x2545f4914f6cdd1dULL + k, *fp;
        size_t n = sizes[k / 2], lost = 0, present = 0;

        fp = xmalloc(n * sizeof(*fp));
        for (size_t i = 0; i < n; i++) {
            fp[i] = rnd(&st);
            dedup_cache_put(c, fp[i]);
            lost += !dedup_cache_contains(c, fp[i]);
        }
        for (size_t i = 0; i < n; i++)
            present += (size_t)dedup_cache_contains(c, fp[i]);
        stats_of(c, &s);
        CHECK(lost == 0, "%zu puts: %zu not found right after", n, lost);
        CHECK(present == s.entries, "%zu puts: %zu present, %" PRIu64
              " entries", n, present, s.entries);
        CHECK(s.inserts - s.evictions == s.entries, "inserts - evictions");
        CHECK(n > cap / 2 || s.evictions <= n / 100,
              "%zu puts: %" PRIu64 " evicted", n, s.evictions);
        CHECK(n < 4 * cap || s.entries == cap, "%zu puts: %" PRIu64
              " entries", n, s.entries);
        free(fp);
        dedup_cache_free(&c);
    }
}

/* A rank in [0, n) with P(k) about 1/(k + 1) (Zipf, s = 1): a power-of-
 * two range picked uniformly, then a value in it. */
static uint64_t zipfish(uint64_t *st, uint64_t n)
{
    int top = 0, e;
    uint64_t lo, k;

    while (top < 62 && ((uint64_t)2 << top) <= n + 1)
        top++;
    e = (int)(rnd(st) % (uint64_t)(top + 1));
    lo = (uint64_t)1 << e;
    k = lo + rnd(st) % lo - 1;
    return k < n ? k : n - 1;
}

/* Hit rate of a cache over a link stream: 30 % new ids, the rest either
 * (popular) a Zipf rank over all ids or (recency) a Zipf distance back
 * from the newest; `popular` % of repeats are popular. */
static double stream_rate(struct dedup_cache *c, int popular, long n)
{
    uint64_t st = 0x2545f4914f6cdd1dULL, next = 0, id, hits = 0;

    for (long i = 0; i < n; i++) {
        unsigned pick = (unsigned)(rnd(&st) % 100);
        if (next < 16 || pick < 30)
            id = next++;
        else if ((int)(rnd(&st) % 100) < popular)
            id = zipfish(&st, next);
        else
            id = next - 1 - zipfish(&st, next);
        id = id * 0x9e3779b97f4a7c15ULL + 1;
        if (dedup_cache_hit(c, id))
            hits++;
        else
            dedup_cache_put(c, id);
    }
    return (double)hits / (double)n;
}

/* Exact LRU for the comparison: a doubly linked recency list over entry
 * numbers (1-based, 0 = none) and an open-addressing index. */
#define LRU_CAP 4096
#define LRU_SLOTS 8192
struct lru {
    uint64_t key[LRU_CAP + 1];
    uint32_t prev[LRU_CAP + 1], next[LRU_CAP + 1]; /* toward older, newer */
    uint32_t slot[LRU_SLOTS];                      /* entry, 0 = empty */
    uint32_t oldest, newest, n;
};

static size_t lru_home(uint64_t k)
{
    return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 51);
}

static size_t lru_find(const struct lru *l, uint64_t k)
{
    size_t i = lru_home(k);

    while (l->slot[i] && l->key[l->slot[i]] != k)
        i = (i + 1) & (LRU_SLOTS - 1);
    return i;
}

static void lru_remove(struct lru *l, size_t i)
{
    size_t j = i;

    for (;;) {
        j = (j + 1) & (LRU_SLOTS - 1);
        if (!l->slot[j])
            break;
        size_t home = lru_home(l->key[l->slot[j]]);
        if (((j - home) & (LRU_SLOTS - 1)) >= ((j - i) & (LRU_SLOTS - 1))) {
            l->slot[i] = l->slot[j];
            i = j;
        }
    }
    l->slot[i] = 0;
}

static void lru_unlink(struct lru *l, uint32_t x)
{
    if (l->prev[x])
        l->next[l->prev[x]] = l->next[x];
    else
        l->oldest = l->next[x];
    if (l->next[x])
        l->prev[l->next[x]] = l->prev[x];
    else
        l->newest = l->prev[x];
}

static void lru_push(struct lru *l, uint32_t x)
{
    l->prev[x] = l->newest;
    l->next[x] = 0;
    if (l->newest)
        l->next[l->newest] = x;
    else
        l->oldest = x;
    l->newest = x;
}

/* 1 on a hit; on a miss, insert (evicting the least recent when full). */
static int lru_access(struct lru *l, uint64_t k)
{
    size_t i = lru_find(l, k);
    uint32_t x = l->slot[i];

    if (x) {
        lru_unlink(l, x);
        lru_push(l, x);
        return 1;
    }
    if (l->n < LRU_CAP) {
        x = ++l->n;
    } else {
        x = l->oldest;
        lru_unlink(l, x);
        lru_remove(l, lru_find(l, l->key[x]));
        i = lru_find(l, k);
    }
    l->key[x] = k;
    l->slot[i] = x;
    lru_push(l, x);
    return 0;
}

static double lru_rate(int popular, long n)
{
    struct lru *l = xcalloc(1, sizeof(*l));
    uint64_t st = 0x2545f4914f6cdd1dULL, next = 0, id, hits = 0;

    for (long i = 0; i < n; i++) {
        unsigned pick = (unsigned)(rnd(&st) % 100);
        if (next < 16 || pick < 30)
            id = next++;
        else if ((int)(rnd(&st) % 100) < popular)
            id = zipfish(&st, next);
        else
            id = next - 1 - zipfish(&st, next);
        hits += lru_access(l, id * 0x9e3779b97f4a7c15ULL + 1);
    }
    free(l);
    return (double)hits / (double)n;
}

/* The cache against an exact LRU of the same size (4096): at least as
 * good with lasting popularity (the crawl's stream shape); on recency
 * alone, where LRU is the best a cache can do, within `slack` points (set
 * associativity and the weight given to one repeat cost a little). */
static void test_cache_vs_lru(void)
{
    static const struct {
        int popular;
        double slack; /* points the cache may trail LRU by */
    } streams[] = {{50, 0.0}, {0, 1.5}};

    for (size_t k = 0; k < sizeof(streams) / sizeof(streams[0]); k++) {
        struct dedup_cache *w = dedup_cache_new(4096);
        double rw = stream_rate(w, streams[k].popular, 400000);
        double rl = lru_rate(streams[k].popular, 400000);
        CHECK(100 * rw >= 100 * rl - streams[k].slack,
              "popular %d %%: cache %.2f %%, LRU %.2f %%", streams[k].popular,
              100 * rw, 100 * rl);
        printf("stream popular %d %%: cache %.2f %%, exact LRU %.2f %%\n",
               streams[k].popular, 100 * rw, 100 * rl);
        dedup_cache_free(&w);
    }
}

int main(void)
{
    test_murmur3();
    test_sha1();
    test_pinned();
    test_seen_layout();
    test_cache_basics();
    test_cache_evict_order();
    test_cache_hot();
    test_cache_random();
    test_cache_growth();
    test_cache_vs_lru();
    return t_done("u-dedup");
}
