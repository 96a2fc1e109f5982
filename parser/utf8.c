/*
 * utf8.c: one code point to UTF-8 and back, for the parser's files that
 * build or read text by code point: sitemap entities, robots.txt in
 * UTF-16, IDNA labels, and the folded-run markers of html-strip.c and
 * html-walk.c. Encoding takes any code point below 0x110000 (callers
 * replace surrogates first); decoding is strict (no overlong form, no
 * surrogate, nothing above U+10FFFF).
 *
 * Thread rules: pure functions.
 */
#include "parser-internal.h"

size_t parser__utf8_put(unsigned long cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t parser__utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len, i;
    uint32_t v, min;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2, v = s[0] & 0x1F, min = 0x80;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, v = s[0] & 0x0F, min = 0x800;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, v = s[0] & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}
