/*
 * fuzz-sitemap.c: sitemap parsing (parser/sitemap.c): XML urlset and
 * index, RSS, Atom, text, gzipped or not.
 *
 * Input: one option byte, then the body. Option bits: 0 gzip the body
 * first (so the fuzzer's XML also goes through the gzip path, cut at a
 * point given by bits 4-7), 1-2 max_urls (1, 3, 50, 50000), 3 a small
 * max_bytes (300). Checks: counts within the caps, every URL a
 * NUL-terminated string, the gzip flag set for a gzip body.
 */
#include <string.h>
#include <zlib.h>

#include "conf.h"
#include "fuzz.h"
#include "parser.h"

static const size_t urls_cap[4] = { 1, 3, 50, 50000 };

/* gzip of in[0..n), cut to keep/16 of its length when keep < 15. */
static unsigned char *gz(const uint8_t *in, size_t n, unsigned keep,
                         size_t *outlen)
{
    z_stream z;
    size_t cap = compressBound((uLong)n) + 64;
    unsigned char *out = xmalloc(cap);

    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    z.next_in = (unsigned char *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    *outlen = z.total_out;
    deflateEnd(&z);
    if (keep < 15)
        *outlen = *outlen * keep / 16;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct parser_sitemap sm;
    unsigned char *z = NULL;
    const char *body;
    size_t len, max_urls, max_bytes;
    int rc;

    if (size < 1)
        return 0;
    body = (const char *)data + 1;
    len = size - 1;
    if (data[0] & 1) {
        z = gz(data + 1, size - 1, data[0] >> 4, &len);
        body = (const char *)z;
    }
    max_urls = urls_cap[(data[0] >> 1) & 3];
    max_bytes = data[0] & 8 ? 300 : (size_t)1 << 20;
    memset(&sm, 0, sizeof(sm));
    rc = parser_sitemap_parse(body, len, max_bytes, max_urls, &sm);
    FUZZ_CHECK(rc == DC_OK || rc == DC_EINVAL);
    FUZZ_CHECK(sm.nurls + sm.nsitemaps <= max_urls);
    for (size_t i = 0; i < sm.nurls; i++)
        FUZZ_CHECK(strlen(sm.urls[i]) <= max_bytes);
    for (size_t i = 0; i < sm.nsitemaps; i++)
        FUZZ_CHECK(strlen(sm.sitemaps[i]) <= max_bytes);
    if (rc == DC_OK && len >= 2 && (unsigned char)body[0] == 0x1f &&
        (unsigned char)body[1] == 0x8b)
        FUZZ_CHECK(sm.gzip);
    parser_sitemap_release(&sm);
    free(z);
    return 0;
}
