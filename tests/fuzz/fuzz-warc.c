/*
 * fuzz-warc.c: the WARC reader (warc/reader.c) and digest checks, on plain
 * and gzipped files.
 *
 * Input: one option byte, then the file. With option bit 0 the file is
 * gzipped first, a new gzip member starting before every "WARC/" after the
 * first byte (one member per record, as most writers do), and the result
 * cut to keep/16 of its length (bits 4-7, 15 = whole) for torn files.
 * Every record is read to the end (at most 1000), its digests verified,
 * its header block looked at and, when the reader allows it, its raw
 * member copied out. Once the reader stops it keeps giving the same code.
 */
#include <string.h>
#include <zlib.h>

#include "conf.h"
#include "fuzz.h"
#include "warc.h"

static void member(const uint8_t *in, size_t n, unsigned char **out,
                   size_t *len, size_t *cap)
{
    z_stream z;
    size_t need = *len + compressBound((uLong)n) + 64;

    if (need > *cap) {
        *cap = need;
        *out = xrealloc(*out, *cap);
    }
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    z.next_in = (unsigned char *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = *out + *len;
    z.avail_out = (uInt)(*cap - *len);
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    *len += z.total_out;
    deflateEnd(&z);
}

static unsigned char *gz_members(const uint8_t *in, size_t n, unsigned keep,
                                 size_t *len)
{
    unsigned char *out = NULL;
    size_t cap = 0, start = 0;

    *len = 0;
    for (size_t i = 1; i + 5 <= n; i++)
        if (memcmp(in + i, "WARC/", 5) == 0) {
            member(in + start, i - start, &out, len, &cap);
            start = i;
        }
    member(in + start, n - start, &out, len, &cap);
    if (keep < 15)
        *len = *len * keep / 16;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    struct warc_reader *r;
    struct warc_record rec;
    unsigned char *z = NULL;
    const unsigned char *head;
    size_t hlen, len = size ? size - 1 : 0;
    const void *file = data + 1;
    char path[64];
    int fd, rc = DC_OK;

    if (size < 1)
        return 0;
    if (!sink)
        sink = fopen("/dev/null", "w");
    if (data[0] & 1) {
        z = gz_members(data + 1, size - 1, data[0] >> 4, &len);
        file = z;
    }
    fd = fuzz_memfile(file, len, path, sizeof(path));
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(warc_reader_open(&r, path) == DC_OK);
    for (int i = 0; i < 1000 && (rc = warc_reader_next(r, &rec)) == DC_OK;
         i++) {
        FUZZ_CHECK(strlen(rec.type) < sizeof(rec.type));
        FUZZ_CHECK(rec.block_len == 0 || rec.block != NULL);
        (void)warc_record_verify(&rec);
        warc_reader_head(r, &rec, &head, &hlen);
        if (warc_reader_raw_ok(r))
            FUZZ_CHECK(warc_reader_copy_raw(r, sink) == DC_OK);
    }
    if (rc != DC_OK) /* stopped: the same answer again */
        FUZZ_CHECK(warc_reader_next(r, &rec) == rc);
    warc_reader_close(&r);
    FUZZ_CHECK(r == NULL);
    close(fd);
    free(z);
    return 0;
}
