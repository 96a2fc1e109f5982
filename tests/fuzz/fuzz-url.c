/*
 * fuzz-url.c: URL resolution and canonicalization (parser/url*.c).
 *
 * Input: one option byte, then the reference; with option bit 1 the text
 * up to the first newline is a base URL (canonicalized first; when it does
 * not parse the reference is resolved without a base).
 *
 * Checks, beyond ASan/UBSan:
 *  - differential: whenever the fast path answers (DC_OK) the full parser
 *    answers too, with the same bytes, and parser_url_canon gives them;
 *  - the canonical form is a fixed point (canonicalizing it again gives it
 *    back) and parser_url_host / parser_url_path accept it;
 *  - warc_surt (CDXJ keys) on the result and on the raw input.
 */
#include <string.h>

#include "conf.h"
#include "fuzz.h"
#include "parser-internal.h"
#include "parser.h"
#include "warc.h"

static const size_t max_lens[4] = { PARSER_URL_MAX, 2048, 64, 16 };

static void check_canonical(const char *url, size_t len, unsigned flags)
{
    static char again[PARSER_URL_MAX];
    char surt[256];
    const char *host;
    size_t n, hlen;

    FUZZ_CHECK(strlen(url) == len);
    FUZZ_CHECK(parser_url_canon(NULL, url, len, flags, PARSER_URL_MAX, again,
                                sizeof(again), &n) == DC_OK);
    FUZZ_CHECK(n == len && memcmp(again, url, len) == 0);
    FUZZ_CHECK(parser_url_host(url, &host, &hlen) == DC_OK && hlen > 0);
    FUZZ_CHECK(parser_url_path(url) != NULL);
    warc_surt(url, surt, sizeof(surt));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char base[PARSER_URL_MAX], fast[PARSER_URL_MAX],
        slow[PARSER_URL_MAX], out[PARSER_URL_MAX];
    const char *ref, *b = NULL;
    size_t reflen, blen, nf = 0, ns = 0, no = 0, maxl;
    unsigned flags;
    int rf, rs, ro;

    if (size < 1)
        return 0;
    flags = data[0] & 1 ? PARSER_URL_STRIP_INDEX : 0;
    maxl = max_lens[(data[0] >> 2) & 3];
    ref = (const char *)data + 1;
    reflen = size - 1;
    if (data[0] & 2) {
        const char *nl = memchr(ref, '\n', reflen);
        if (!nl)
            return 0;
        if (parser_url_canon(NULL, ref, (size_t)(nl - ref), 0, PARSER_URL_MAX,
                             base, sizeof(base), &blen) == DC_OK) {
            check_canonical(base, blen, 0);
            b = base;
        }
        reflen -= (size_t)(nl + 1 - ref);
        ref = nl + 1;
    }
    rf = parser__url_canon_fast(b, ref, reflen, flags, maxl, fast,
                                sizeof(fast), &nf);
    rs = parser__url_canon_slow(b, ref, reflen, flags, maxl, slow,
                                sizeof(slow), &ns);
    ro = parser_url_canon(b, ref, reflen, flags, maxl, out, sizeof(out), &no);
    FUZZ_CHECK(rf == DC_OK || rf == -1);
    if (rf == DC_OK) {
        if (rs != DC_OK || nf != ns || memcmp(fast, slow, nf) != 0) {
            fprintf(stderr, "fast: %.*s\nslow (%d): %.*s\n", (int)nf, fast,
                    rs, (int)ns, slow);
            abort();
        }
    }
    FUZZ_CHECK(ro == rs);
    if (ro == DC_OK) {
        FUZZ_CHECK(no == ns && memcmp(out, slow, no) == 0 && no <= maxl);
        check_canonical(out, no, flags);
    }
    {
        char *raw = strndup(ref, reflen), surt[512];
        warc_surt(raw, surt, sizeof(surt));
        free(raw);
    }
    return 0;
}
