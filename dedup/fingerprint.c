/*
 * fingerprint.c: URL fingerprints (MurmurHash3_x64_128), content digests
 * (SHA-1 in base32, as WARC-Payload-Digest uses them) and the Redis
 * seen-set layout. See dedup.h.
 *
 * MurmurHash3_x64_128 follows Austin Appleby's public-domain description:
 * the key is consumed in 16-byte blocks read as two little-endian 64-bit
 * words, the tail is zero-padded, and both halves go through fmix64. The
 * words are assembled byte by byte, so the result is the same on any host
 * byte order and needs no aligned input.
 *
 * The md5 fingerprint and SHA-1 go through OpenSSL's EVP interface (MD5
 * and SHA1 themselves are deprecated in OpenSSL 3 as direct calls), with
 * their implementations fetched once (digests_fetch): EVP_sha1() and
 * EVP_md5() make every EVP_Digest fetch again, a lookup in the provider's
 * method store under its lock, and the first fetch sets the provider up
 * (3 ms of a worker's first page).
 *
 * Every function here is reentrant; the only state is the process-wide
 * algorithm choice, written once before threads start, and the fetched
 * digests (pthread_once).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "conf.h"
#include "dedup.h"
#include "dedup-internal.h"

#define MM3_C1 0x87c37b91114253d5ULL
#define MM3_C2 0x4cf5ad432745937fULL

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* Eight bytes at p as a little-endian 64-bit word. */
static uint64_t load_le64(const unsigned char *p)
{
    unsigned char b[8];
    uint64_t v = 0;
    int i;

    memcpy(b, p, 8);
    for (i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

uint64_t dedup__fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint64_t mix_k1(uint64_t k1)
{
    k1 *= MM3_C1;
    k1 = rotl64(k1, 31);
    return k1 * MM3_C2;
}

static uint64_t mix_k2(uint64_t k2)
{
    k2 *= MM3_C2;
    k2 = rotl64(k2, 33);
    return k2 * MM3_C1;
}

void dedup_murmur3_x64_128(const void *key, size_t len, uint32_t seed,
                           uint64_t out[2])
{
    const unsigned char *p = key;
    size_t nblocks = len / 16, rest = len % 16, i;
    uint64_t h1 = seed, h2 = seed;
    unsigned char tail[16] = {0};

    for (i = 0; i < nblocks; i++, p += 16) {
        h1 ^= mix_k1(load_le64(p));
        h1 = rotl64(h1, 27) + h2;
        h1 = h1 * 5 + 0x52dce729;
        h2 ^= mix_k2(load_le64(p + 8));
        h2 = rotl64(h2, 31) + h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    if (rest) {
        memcpy(tail, p, rest);
        if (rest > 8)
            h2 ^= mix_k2(load_le64(tail + 8));
        h1 ^= mix_k1(load_le64(tail));
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = dedup__fmix64(h1);
    h2 = dedup__fmix64(h2);
    h1 += h2;
    h2 += h1;
    out[0] = h1;
    out[1] = h2;
}

static int fp_algo = DEDUP_FP_MURMUR3;

int dedup_fp_algo_parse(const char *name)
{
    if (name && strcmp(name, "murmur3") == 0)
        return DEDUP_FP_MURMUR3;
    if (name && strcmp(name, "md5") == 0)
        return DEDUP_FP_MD5;
    return -1;
}

const char *dedup_fp_algo_name(int algo)
{
    return algo == DEDUP_FP_MD5 ? "md5" : "murmur3";
}

void dedup_fingerprint_use(int algo)
{
    fp_algo = algo == DEDUP_FP_MD5 ? DEDUP_FP_MD5 : DEDUP_FP_MURMUR3;
}

int dedup_fingerprint_algo(void)
{
    return fp_algo;
}

static pthread_once_t digests_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha1, *md_md5; /* kept to the end of the process */

static void digests_fetch(void)
{
    md_sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    md_md5 = EVP_MD_fetch(NULL, "MD5", NULL);
}

void dedup_digests_init(void)
{
    pthread_once(&digests_once, digests_fetch);
}

/* The fetched digest, or the legacy one if the fetch failed (an OpenSSL
 * whose default provider lacks it: EVP_Digest then fails, and says so). */
static const EVP_MD *digest_md(int sha1)
{
    dedup_digests_init();
    if (sha1)
        return md_sha1 ? md_sha1 : EVP_sha1();
    return md_md5 ? md_md5 : EVP_md5();
}

/* First 8 bytes of MD5(url), big-endian. */
static uint64_t md5_fingerprint(const char *url, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    uint64_t v = 0;
    int i;

    if (!EVP_Digest(url, len, md, &mdlen, digest_md(0), NULL) ||
        mdlen != 16) {
        fprintf(stderr, "dcrawl: libcrypto MD5 failed\n");
        abort();
    }
    for (i = 0; i < 8; i++)
        v = (v << 8) | md[i];
    return v;
}

uint64_t dedup_fingerprint_with(int algo, const char *url, size_t len)
{
    uint64_t h[2];

    if (algo == DEDUP_FP_MD5)
        return md5_fingerprint(url, len);
    dedup_murmur3_x64_128(url, len, 0, h);
    return h[0];
}

uint64_t dedup_fingerprint(const char *url, size_t len)
{
    return dedup_fingerprint_with(fp_algo, url, len);
}

/* RFC 4648 base32: 20 bytes are exactly 32 characters, no padding. */
void dedup_sha1_format(const unsigned char digest[20], char *out)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    uint32_t acc = 0;
    int bits = 0, i;
    char *o = out + 5;

    memcpy(out, "sha1:", 5);
    for (i = 0; i < 20; i++) {
        acc = (acc << 8) | digest[i];
        bits += 8;
        while (bits >= 5) {
            bits -= 5;
            *o++ = alpha[(acc >> bits) & 31];
        }
    }
    *o = '\0';
}

void dedup_sha1_two(const void *a, size_t alen, const void *b, size_t blen,
                    char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    if (!ctx || !EVP_DigestInit_ex(ctx, digest_md(1), NULL) ||
        !EVP_DigestUpdate(ctx, a, alen) ||
        (blen && !EVP_DigestUpdate(ctx, b, blen)) ||
        !EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 20) {
        /* libcrypto cannot fail SHA-1 short of a broken install. */
        fprintf(stderr, "dcrawl: libcrypto SHA-1 failed\n");
        abort();
    }
    EVP_MD_CTX_free(ctx);
    dedup_sha1_format(md, out);
}

void dedup_sha1_base32(const void *data, size_t len, char *out)
{
    dedup_sha1_two(data, len, NULL, 0, out);
}

unsigned dedup_seen_bucket(uint64_t fp)
{
    return (unsigned)(fp >> (64 - DEDUP_SUBBUCKET_BITS));
}

int dedup_seen_key(const char *prefix, int partition, uint64_t fp, char *out,
                   size_t cap)
{
    int n;

    if (!prefix || !out || partition < 0)
        return DC_EINVAL;
    if (cap == 0)
        return DC_ETOOBIG;
    n = snprintf(out, cap, "%s:{%d}:s:%u", prefix, partition,
                 dedup_seen_bucket(fp));
    if (n < 0 || (size_t)n >= cap)
        return DC_ETOOBIG;
    return DC_OK;
}

/* fp's bits as a two's-complement int64, without implementation-defined
 * unsigned-to-signed conversion. */
static int64_t fp_signed(uint64_t fp)
{
    if (fp <= (uint64_t)INT64_MAX)
        return (int64_t)fp;
    return -(int64_t)(~fp) - 1;
}

int dedup_seen_member(uint64_t fp, char *out, size_t cap)
{
    int n;

    if (!out)
        return DC_EINVAL;
    if (cap == 0)
        return DC_ETOOBIG;
    n = snprintf(out, cap, "%" PRId64, fp_signed(fp));
    if (n < 0 || (size_t)n >= cap)
        return DC_ETOOBIG;
    return DC_OK;
}
