/*
 * inflate.c: gzip / zlib / raw-deflate decoding with a hard output cap,
 * shared by page bodies (Content-Encoding), robots.txt and sitemaps.
 *
 * The buffer grows by doubling from a guess (4x the input) but never past
 * the cap, so a decompression bomb costs at most cap bytes of memory; once
 * the cap is full decoding stops and *cut says so. gzip allows several
 * members back to back: each is decoded in turn. A stream cut short keeps
 * what it gave.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "conf.h"
#include "parser.h"

int parser_inflate(const char *in, size_t len, int raw, size_t cap,
                   char **out, size_t *outlen, int *cut)
{
    z_stream z;
    size_t have = 0, size;
    int rc;

    *out = NULL;
    *outlen = 0;
    if (cut)
        *cut = 0;
    if (!in || cap == 0 || len > 0x7fffffffu)
        return DC_EINVAL;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, raw ? -15 : 15 + 32) != Z_OK) /* 32: gzip or zlib */
        return DC_ENOMEM;
    size = len * 4 + 4096;
    if (size > cap)
        size = cap;
    *out = xmalloc(size + 1);
    z.next_in = (unsigned char *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    do {
        if (have == size) {
            if (size >= cap) {
                if (cut)
                    *cut = 1;
                break; /* the cap: keep what fits */
            }
            size = size * 2 > cap ? cap : size * 2;
            *out = xrealloc(*out, size + 1);
        }
        z.next_out = (unsigned char *)*out + have;
        z.avail_out = (uInt)(size - have);
        rc = inflate(&z, Z_NO_FLUSH);
        have = size - z.avail_out;
        if (rc == Z_STREAM_END && !raw && z.avail_in &&
            inflateReset(&z) == Z_OK)
            rc = Z_OK; /* the next gzip member */
    } while (rc == Z_OK);
    inflateEnd(&z);
    if ((rc != Z_STREAM_END && rc != Z_OK && rc != Z_BUF_ERROR) ||
        (have == 0 && rc != Z_STREAM_END)) {
        free(*out);
        *out = NULL;
        return DC_EPARSE;
    }
    (*out)[have] = '\0';
    *outlen = have;
    return DC_OK;
}
