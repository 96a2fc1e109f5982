/*
 * fuzz-inflate.c: the capped inflate (parser/inflate.c) that page bodies,
 * robots.txt and sitemaps go through.
 *
 * Input: one option byte (bit 0: raw deflate; bits 1-3: the cap, 1 byte
 * to 1 MiB), then the compressed stream. Checks: the output never passes
 * the cap and is NUL-terminated; *cut only with a full buffer; on error
 * nothing is returned.
 */
#include <string.h>

#include "conf.h"
#include "fuzz.h"
#include "parser.h"

static const size_t caps[8] = { 1, 7, 64, 1000, 4096, 65536, 300000,
                                (size_t)1 << 20 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t outlen = 7, cap;
    int cut = 5, rc;

    if (size < 1)
        return 0;
    cap = caps[(data[0] >> 1) & 7];
    rc = parser_inflate((const char *)data + 1, size - 1, data[0] & 1, cap,
                        &out, &outlen, &cut);
    if (rc != DC_OK) {
        FUZZ_CHECK(out == NULL && outlen == 0 && cut == 0);
        return 0;
    }
    FUZZ_CHECK(out != NULL && outlen <= cap && out[outlen] == '\0');
    FUZZ_CHECK(cut == 0 || outlen == cap);
    free(out);
    return 0;
}
