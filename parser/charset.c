/*
 * charset.c: a page's character encoding, and its conversion to UTF-8
 * before gumbo (which reads UTF-8 only) sees it.
 *
 * Detection, in the order HTML gives the sources (WHATWG HTML "determining
 * the character encoding", simplified): a byte order mark; the charset
 * parameter of the Content-Type header; a prescan of the first 1024 bytes
 * for <meta charset=...> or <meta http-equiv=content-type
 * content="...; charset=...">. Labels are lower-cased; the ones WHATWG maps
 * to another encoding that iconv spells differently are mapped here
 * (iso-8859-1, latin1, us-ascii -> windows-1252; a utf-16 label found by
 * the prescan -> utf-8, as the bytes were readable as ASCII).
 *
 * Conversion uses glibc iconv. Bytes that are invalid in the source
 * encoding, and an incomplete sequence at the end, become U+FFFD; the
 * output is capped (max_out) so a page cannot grow without bound.
 *
 * Thread rules: reentrant (each call opens its own iconv descriptor).
 */
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "parser.h"
#include "parser-internal.h"

#define PRESCAN_BYTES 1024

/* Copy a label (trimmed, quotes dropped, lower-cased) into out. */
static int label_copy(const char *s, size_t n, char *out, size_t cap)
{
    size_t i, k = 0;

    while (n && (parser__ws(*s) || *s == '"' || *s == '\''))
        s++, n--;
    while (n && (parser__ws(s[n - 1]) || s[n - 1] == '"' || s[n - 1] == '\''))
        n--;
    if (!n || n >= cap)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (!(c == '-' || c == '_' || c == ':' || c == '.' ||
              (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z')))
            return 0; /* not a label: refuse rather than guess */
        out[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[k] = '\0';
    return 1;
}

/* The value of "charset=" inside s[0..n) (a Content-Type or a meta
 * content attribute), or 0. */
static int charset_param(const char *s, size_t n, char *out, size_t cap)
{
    size_t i;

    for (i = 0; i + 7 <= n; i++) {
        size_t j, e;
        if (strncasecmp(s + i, "charset", 7) != 0)
            continue;
        j = i + 7;
        while (j < n && parser__ws(s[j]))
            j++;
        if (j >= n || s[j] != '=')
            continue;
        j++;
        while (j < n && parser__ws(s[j]))
            j++;
        if (j < n && (s[j] == '"' || s[j] == '\'')) {
            char q = s[j++];
            for (e = j; e < n && s[e] != q; e++)
                ;
        } else {
            for (e = j; e < n && s[e] != ';' && !parser__ws(s[e]); e++)
                ;
        }
        return label_copy(s + j, e - j, out, cap);
    }
    return 0;
}

/* One attribute of a tag at s[*i..n): name and value spans. 0 at the
 * tag's end. */
static int next_attr(const char *s, size_t n, size_t *i, const char **name,
                     size_t *nlen, const char **val, size_t *vlen)
{
    size_t k = *i;

    while (k < n && (parser__ws(s[k]) || s[k] == '/'))
        k++;
    if (k >= n || s[k] == '>')
        return 0;
    *name = s + k;
    while (k < n && !parser__ws(s[k]) && s[k] != '=' && s[k] != '>' &&
           s[k] != '/')
        k++;
    *nlen = (size_t)(s + k - *name);
    *val = s + k;
    *vlen = 0;
    while (k < n && parser__ws(s[k]))
        k++;
    if (k < n && s[k] == '=') {
        k++;
        while (k < n && parser__ws(s[k]))
            k++;
        if (k < n && (s[k] == '"' || s[k] == '\'')) {
            char q = s[k++];
            *val = s + k;
            while (k < n && s[k] != q)
                k++;
            *vlen = (size_t)(s + k - *val);
            if (k < n)
                k++;
        } else {
            *val = s + k;
            while (k < n && !parser__ws(s[k]) && s[k] != '>')
                k++;
            *vlen = (size_t)(s + k - *val);
        }
    }
    *i = k;
    return 1;
}

/* The charset a <meta> tag starting at s[0..n) (after "<meta") declares. */
static int meta_charset(const char *s, size_t n, char *out, size_t cap)
{
    const char *name, *val, *content = NULL;
    size_t nlen, vlen, clen = 0, i = 0;
    int equiv = 0;

    while (next_attr(s, n, &i, &name, &nlen, &val, &vlen)) {
        if (nlen == 7 && strncasecmp(name, "charset", 7) == 0)
            return label_copy(val, vlen, out, cap);
        if (nlen == 10 && strncasecmp(name, "http-equiv", 10) == 0)
            equiv = vlen == 12 && strncasecmp(val, "content-type", 12) == 0;
        if (nlen == 7 && strncasecmp(name, "content", 7) == 0) {
            content = val;
            clen = vlen;
        }
    }
    return equiv && content && charset_param(content, clen, out, cap);
}

static int prescan(const char *b, size_t len, char *out, size_t cap)
{
    size_t i;

    if (len > PRESCAN_BYTES)
        len = PRESCAN_BYTES;
    for (i = 0; i < len; i++) {
        if (b[i] != '<')
            continue;
        if (i + 4 <= len && memcmp(b + i, "<!--", 4) == 0) {
            const char *e = NULL;
            size_t k;
            for (k = i + 4; k + 3 <= len; k++)
                if (memcmp(b + k, "-->", 3) == 0) {
                    e = b + k;
                    break;
                }
            if (!e)
                return 0;
            i = (size_t)(e - b) + 2;
            continue;
        }
        if (i + 6 <= len && strncasecmp(b + i, "<meta", 5) == 0 &&
            (parser__ws(b[i + 5]) || b[i + 5] == '/') &&
            meta_charset(b + i + 5, len - i - 5, out, cap))
            return 1;
    }
    return 0;
}

/* WHATWG label -> the name iconv knows for that encoding. */
static void label_map(char *l, size_t cap, int from_meta)
{
    static const char *const w1252[] = {
        "iso-8859-1", "iso8859-1", "latin1", "l1", "us-ascii", "ascii",
        "iso_8859-1", "cp1252", "x-cp1252", "cp819", "ibm819",
        "iso-ir-100", "windows-1252", NULL,
    };
    size_t i;

    for (i = 0; w1252[i]; i++)
        if (strcmp(l, w1252[i]) == 0) {
            snprintf(l, cap, "windows-1252");
            return;
        }
    if (strcmp(l, "utf8") == 0 || strcmp(l, "unicode-1-1-utf-8") == 0 ||
        (from_meta && strncmp(l, "utf-16", 6) == 0))
        snprintf(l, cap, "utf-8");
}

int parser_charset_detect(const char *content_type, const char *body,
                          size_t len, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)body;

    if (!out || cap < 16)
        return 0;
    if (body && len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
        snprintf(out, cap, "utf-8");
        return 1;
    }
    if (body && len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) ||
                             (u[0] == 0xFE && u[1] == 0xFF))) {
        snprintf(out, cap, u[0] == 0xFF ? "utf-16le" : "utf-16be");
        return 1;
    }
    if (content_type &&
        charset_param(content_type, strlen(content_type), out, cap)) {
        label_map(out, cap, 0);
        return 1;
    }
    if (body && prescan(body, len, out, cap)) {
        label_map(out, cap, 1);
        return 1;
    }
    return 0;
}

int parser_charset_is_utf8(const char *charset)
{
    return !charset || !*charset || strcasecmp(charset, "utf-8") == 0;
}

/* Room for n more bytes: grow buf (doubling, at most max_out). */
static int out_room(char **buf, size_t *cap, size_t have, size_t n,
                    size_t max_out)
{
    size_t c = *cap;

    if (have + n > max_out)
        return 0;
    while (c < have + n)
        c = c * 2 > max_out ? max_out : c * 2;
    if (c != *cap) {
        *buf = xrealloc(*buf, c + 1);
        *cap = c;
    }
    return 1;
}

int parser_charset_to_utf8(const char *charset, const char *in, size_t len,
                           size_t max_out, char **out, size_t *outlen,
                           int *truncated)
{
    iconv_t cd;
    char *buf, *ip = (char *)in;
    size_t have = 0, left = len, cap;

    if (!charset || !out || !outlen || !truncated || (!in && len))
        return DC_EINVAL;
    cd = iconv_open("UTF-8", charset);
    if (cd == (iconv_t)-1)
        return DC_EINVAL;
    *truncated = 0;
    cap = len + len / 2 + 64 < max_out ? len + len / 2 + 64 : max_out;
    buf = xmalloc(cap + 1);
    while (left) {
        char *op = buf + have;
        size_t room = cap - have;
        size_t r = iconv(cd, &ip, &left, &op, &room);
        int e = errno;
        have = cap - room;
        if (r != (size_t)-1)
            break;
        if (e == E2BIG) { /* grow, or stop at the cap */
            if (cap >= max_out) {
                *truncated = 1;
                break;
            }
            (void)out_room(&buf, &cap, have,
                           (cap * 2 > max_out ? max_out : cap * 2) - have,
                           max_out);
            continue;
        }
        /* EILSEQ: U+FFFD for one byte; EINVAL: for an incomplete tail */
        if (!out_room(&buf, &cap, have, 3, max_out)) {
            *truncated = 1;
            break;
        }
        memcpy(buf + have, "\xEF\xBF\xBD", 3);
        have += 3;
        if (e != EILSEQ)
            break;
        ip++;
        left--;
        iconv(cd, NULL, NULL, NULL, NULL); /* back to the initial state */
    }
    iconv_close(cd);
    buf[have] = '\0';
    *out = buf;
    *outlen = have;
    return DC_OK;
}
