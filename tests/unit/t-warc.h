/*
 * t-warc.h: helpers shared by u-warc.c and u-merge.c: expected SHA-1
 * digests ("sha1:" + base32, computed here independently of dedup), files
 * written and read whole, counting, removing a tree, and reading a WARC
 * file to its end.
 */
#ifndef DC_T_WARC_H
#define DC_T_WARC_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/sha.h>
#include <zlib.h>

#include "conf.h"
#include "warc.h"
#include "t.h"

static inline void b32(const unsigned char *d, size_t n, char *out)
{
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    size_t o = 0;

    for (size_t bit = 0; bit < n * 8; bit += 5) {
        unsigned v = 0;
        for (size_t k = 0; k < 5; k++) {
            size_t b = bit + k;
            v = (v << 1) |
                (b < n * 8 ? (d[b / 8] >> (7 - b % 8)) & 1u : 0u);
        }
        out[o++] = a[v];
    }
    out[o] = '\0';
}

static inline void sha1_expect(const void *d, size_t n, char *out)
{
    unsigned char md[20];

    SHA1(d, n, md);
    strcpy(out, "sha1:");
    b32(md, 20, out + 5);
}

static inline void spit(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");

    if (f) {
        fwrite(d, 1, n, f);
        fclose(f);
    }
}

/* Whole decompressed content of a (multi-member) gzip file. */
static inline char *gunzip_file(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    char *d = NULL;
    size_t cap = 0;
    int r;

    *n = 0;
    if (!g)
        return NULL;
    for (int i = 0; i < 100000; i++) {
        void *t = d;
        xgrow(&t, &cap, *n + 65537, 1);
        d = t;
        r = gzread(g, d + *n, 65536);
        if (r <= 0)
            break;
        *n += (size_t)r;
    }
    gzclose(g);
    d[*n] = 0;
    return d;
}

static inline size_t count_str(const char *h, size_t n, const char *needle)
{
    size_t c = 0, l = strlen(needle);

    for (const char *p = h; p && (size_t)(p - h) + l <= n;) {
        p = memmem(p, n - (size_t)(p - h), needle, l);
        if (!p)
            break;
        c++;
        p += l;
    }
    return c;
}

static inline int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
    (void)s, (void)f, (void)w;
    return remove(p);
}

static inline void rm_rf(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static inline int read_count(const char *path, int *end, int verify_bad[1])
{
    struct warc_reader *r;
    struct warc_record rec;
    int n = 0, rc;

    if (verify_bad)
        *verify_bad = 0;
    rc = warc_reader_open(&r, path);
    if (rc) {
        *end = rc;
        return 0;
    }
    while ((rc = warc_reader_next(r, &rec)) == DC_OK && n < 100000) {
        if (verify_bad && warc_record_verify(&rec) != DC_OK)
            (*verify_bad)++;
        n++;
    }
    *end = rc;
    CHECK(warc_reader_next(r, &rec) == rc, "sticky end code");
    warc_reader_close(&r);
    return n;
}

#endif
