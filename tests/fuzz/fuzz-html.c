/*
 * fuzz-html.c: HTML link and block extraction (parser/html*.c) with the
 * charset step the crawler runs before it (parser/charset.c).
 *
 * Input: one option byte, then the body. Option bits: 0 blocks on, 1 small
 * DOM and slice limits (the body is cut into pieces, html-slice.c), 2
 * PARSER_URL_STRIP_INDEX, 3-6 the Content-Type charset (0: none, so the
 * BOM / <meta> decides). A charset other than UTF-8 converts the body
 * first, as the crawler does. Checks: each link is a NUL-terminated
 * canonical URL of its stated length, starting with http; block indexes
 * are in range and parents come first.
 */
#include <string.h>

#include "conf.h"
#include "fuzz.h"
#include "parser.h"

static const char *const charsets[16] = {
    NULL, "utf-8", "windows-1252", "shift_jis", "euc-jp", "iso-2022-jp",
    "gb18030", "big5", "koi8-r", "utf-16le", "utf-16be", "euc-kr",
    "iso-8859-2", "x-unknown-charset", "utf-16", "windows-1251"
};

static void check(const struct parser_result *res)
{
    for (size_t i = 0; i < res->nlinks; i++) {
        const struct parser_link *l = &res->links[i];
        FUZZ_CHECK(strlen(l->url) == l->len);
        FUZZ_CHECK(strncmp(l->url, "http", 4) == 0);
        FUZZ_CHECK(l->block == PARSER_BLOCK_NONE ||
                   (res->blocks ? l->block < res->nblocks : l->block == 0));
    }
    for (size_t i = 0; res->blocks && i < res->nblocks; i++)
        FUZZ_CHECK(res->blocks[i].parent <= i &&
                   res->blocks[i].link_text <= res->blocks[i].text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct parser *ps[2];
    struct parser *p;
    const struct parser_result *res;
    const char *body, *cs_name;
    char ct[64], cs[32], *conv = NULL;
    size_t len, clen;
    int trunc;

    if (size < 1)
        return 0;
    if (!ps[0]) {
        ps[0] = parser_new(0, 2048);
        ps[1] = parser_new(PARSER_URL_STRIP_INDEX, 2048);
        parser_set_agent(ps[0], "dcrawl");
        parser_set_agent(ps[1], "dcrawl");
    }
    p = ps[(data[0] >> 2) & 1];
    body = (const char *)data + 1;
    len = size - 1;
    cs_name = charsets[(data[0] >> 3) & 15];
    snprintf(ct, sizeof(ct), "text/html%s%s", cs_name ? "; charset=" : "",
             cs_name ? cs_name : "");
    if (parser_charset_detect(ct, body, len, cs, sizeof(cs)) &&
        !parser_charset_is_utf8(cs) &&
        parser_charset_to_utf8(cs, body, len, (size_t)1 << 20, &conv, &clen,
                               &trunc) == DC_OK) {
        FUZZ_CHECK(conv[clen] == '\0' && clen <= (size_t)1 << 20);
        body = conv;
        len = clen;
    }
    FUZZ_CHECK(parser_set_blocks(p, data[0] & 1 ? "td th p div nav li" : NULL) ==
               DC_OK);
    if (data[0] & 2)
        parser_set_limits(p, 2048, 512);
    else
        parser_set_limits(p, 0, 0);
    FUZZ_CHECK(parser_parse_html(p, "http://example.com/dir/page.html", body,
                                 len, &res) == DC_OK);
    check(res);
    free(conv);
    return 0;
}
