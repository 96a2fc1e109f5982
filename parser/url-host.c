/*
 * url-host.c: the host and port states of the URL parser (see url.c for
 * the whole design): a host is percent-decoded, ASCII-lowercased, checked
 * for forbidden domain code points, then parsed as IPv4 (WHATWG "ends in a
 * number" rule, hex and octal parts) or IPv6 (compressed serialization).
 * A non-ASCII host goes through the small IDNA subset described in url.c
 * (idna_simple() code points only, then RFC 3492 punycode). Everything is
 * written through the bounded writer of url-internal.h; no heap memory.
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "parser-internal.h"
#include "url-internal.h"

/* Forbidden domain code points (ASCII part). */
static int forbidden_domain(unsigned char c)
{
    return has(c, U_FORBID);
}

/* ------------------------------------------------------------- IPv4 */

/* WHATWG IPv4 number parser; values saturate above 2^32. */
static int ipv4_number(const char *s, size_t n, uint64_t *out)
{
    unsigned radix = 10;
    uint64_t v = 0;
    size_t i;

    if (n == 0)
        return -1;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        radix = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        radix = 8;
        s++;
        n--;
    }
    for (i = 0; i < n; i++) {
        int d = dc_hexval((unsigned char)s[i]);
        if (d < 0 || (unsigned)d >= radix)
            return -1;
        v = v * radix + (unsigned)d;
        if (v > 0x1FFFFFFFFull)
            v = 0x1FFFFFFFFull;
    }
    *out = v;
    return 0;
}

static size_t last_label(const char *h, size_t n, size_t *start)
{
    size_t b;

    if (n > 0 && h[n - 1] == '.')
        n--;
    b = n;
    while (b > 0 && h[b - 1] != '.')
        b--;
    *start = b;
    return n - b;
}

static int ends_in_number(const char *h, size_t n)
{
    size_t b, len = last_label(h, n, &b), i;
    uint64_t v;

    if (len == 0)
        return 0;
    for (i = 0; i < len && is_digit(h[b + i]); i++)
        ;
    return i == len || ipv4_number(h + b, len, &v) == 0;
}

static int ipv4_parse(const char *h, size_t n, uint32_t *addr)
{
    uint64_t num[4], v = 0;
    size_t parts = 0, b = 0, i;

    if (n > 0 && h[n - 1] == '.')
        n--;
    for (i = 0; i <= n; i++) {
        if (i < n && h[i] != '.')
            continue;
        if (parts == 4 || ipv4_number(h + b, i - b, &num[parts]) < 0)
            return -1;
        parts++;
        b = i + 1;
    }
    for (i = 0; i + 1 < parts; i++) {
        if (num[i] > 255)
            return -1;
        v |= num[i] << (8 * (3 - i));
    }
    if (num[parts - 1] >= (1ull << (8 * (5 - parts))))
        return -1;
    *addr = (uint32_t)(v + num[parts - 1]);
    return 0;
}

static void put_ipv4(struct ubuf *o, uint32_t a)
{
    int i;

    for (i = 3; i >= 0; i--) {
        put_dec(o, (a >> (8 * i)) & 255);
        if (i)
            put(o, '.');
    }
}

/* ------------------------------------------------------------- IPv6 */

/* The dotted IPv4 tail of an IPv6 address into a[*pi], a[*pi + 1]. */
static int ipv6_v4tail(const char *s, size_t n, size_t p, uint16_t *a,
                       int *pi)
{
    int seen = 0;

    if (*pi > 6)
        return -1;
    while (p < n) {
        int piece = -1;
        if (seen > 0) {
            if (s[p] != '.' || seen >= 4)
                return -1;
            p++;
        }
        if (p >= n || !is_digit(s[p]))
            return -1;
        while (p < n && is_digit(s[p])) {
            if (piece == 0)
                return -1;
            piece = (piece < 0 ? 0 : piece * 10) + (s[p++] - '0');
            if (piece > 255)
                return -1;
        }
        a[*pi] = (uint16_t)(a[*pi] * 0x100 + piece);
        if (++seen == 2 || seen == 4)
            (*pi)++;
    }
    return seen == 4 ? 0 : -1;
}

static void ipv6_uncompress(uint16_t *a, int pi, int compress)
{
    int swaps = pi - compress;

    pi = 7;
    while (pi != 0 && swaps > 0) {
        uint16_t t = a[pi];
        a[pi] = a[compress + swaps - 1];
        a[compress + swaps - 1] = t;
        pi--;
        swaps--;
    }
}

/* WHATWG IPv6 parser over s[0..n) (no brackets). */
static int ipv6_parse(const char *s, size_t n, uint16_t *a)
{
    size_t p = 0;
    int pi = 0, compress = -1;

    memset(a, 0, 8 * sizeof(*a));
    if (n > 0 && s[0] == ':') {
        if (n < 2 || s[1] != ':')
            return -1;
        p = 2;
        compress = pi = 1;
    }
    while (p < n) {
        unsigned v = 0, len = 0;
        if (pi == 8)
            return -1;
        if (s[p] == ':') {
            if (compress != -1)
                return -1;
            p++;
            compress = ++pi;
            continue;
        }
        while (len < 4 && p < n && dc_hexval(s[p]) >= 0) {
            v = v * 16 + (unsigned)dc_hexval(s[p++]);
            len++;
        }
        if (p < n && s[p] == '.') {
            if (len == 0 || ipv6_v4tail(s, n, p - len, a, &pi) < 0)
                return -1;
            break;
        }
        if (p < n && s[p] == ':') {
            if (++p == n)
                return -1;
        } else if (p < n) {
            return -1;
        }
        a[pi++] = (uint16_t)v;
    }
    if (compress != -1)
        ipv6_uncompress(a, pi, compress);
    else if (pi != 8)
        return -1;
    return 0;
}

/* First longest run (length > 1) of zero pieces, or -1. */
static int ipv6_zero_run(const uint16_t *a)
{
    int best = -1, bestlen = 1, i, j;

    for (i = 0; i < 8; i = j + 1) {
        for (j = i; j < 8 && a[j] == 0; j++)
            ;
        if (j - i > bestlen) {
            best = i;
            bestlen = j - i;
        }
    }
    return best;
}

static void put_ipv6(struct ubuf *o, const uint16_t *a)
{
    static const char lower[] = "0123456789abcdef";
    int run = ipv6_zero_run(a), skip = 0, i, sh;

    put(o, '[');
    for (i = 0; i < 8; i++) {
        if (skip && a[i] == 0)
            continue;
        skip = 0;
        if (run == i) {
            put_mem(o, i == 0 ? "::" : ":", i == 0 ? 2 : 1);
            skip = 1;
            continue;
        }
        for (sh = 12; sh > 0 && !(a[i] >> sh); sh -= 4)
            ;
        for (; sh >= 0; sh -= 4)
            put(o, lower[(a[i] >> sh) & 15]);
        if (i != 7)
            put(o, ':');
    }
    put(o, ']');
}

/* ------------------------------------------------------------- host */

/* ------------------------------------------------------------- IDNA */

/* Code points that UTS #46 leaves unmapped and valid, and that need no
 * Bidi or ContextJ checks: lower-case Latin-1 letters, lower-case Greek
 * and Cyrillic, Hiragana, CJK unified ideographs, Hangul syllables. */
static int idna_simple(uint32_t cp)
{
    return (cp >= 0xDF && cp <= 0xFF && cp != 0xF7) ||
           (cp >= 0x3AC && cp <= 0x3CE) || (cp >= 0x430 && cp <= 0x45F) ||
           (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xAC00 && cp <= 0xD7A3);
}

static char puny_digit(uint32_t d)
{
    return (char)(d < 26 ? 'a' + d : '0' + (d - 26));
}

static uint32_t puny_adapt(uint64_t delta, uint64_t points, int first)
{
    uint32_t k = 0;

    delta = first ? delta / 700 : delta / 2;
    delta += delta / points;
    while (delta > ((36 - 1) * 26) / 2) {
        delta /= 36 - 1;
        k += 36;
    }
    return (uint32_t)(k + (36 * delta) / (delta + 38));
}

/* One variable-length integer of RFC 3492 section 6.3. */
static void puny_put_int(struct ubuf *o, uint64_t q, uint32_t bias)
{
    uint32_t k, t;

    for (k = 36;; k += 36) {
        t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (q < t)
            break;
        put(o, puny_digit(t + (uint32_t)((q - t) % (36 - t))));
        q = (q - t) / (36 - t);
    }
    put(o, puny_digit((uint32_t)q));
}

/* RFC 3492 punycode encoding of cp[0..n), "xn--" prefixed. */
static void puny_encode(struct ubuf *o, const uint32_t *cp, size_t n)
{
    uint64_t delta = 0;
    uint32_t next = 0x80, bias = 72, m;
    size_t h = 0, b, i;

    put_mem(o, "xn--", 4);
    for (i = 0; i < n; i++) {
        if (cp[i] < 0x80) {
            put(o, (char)cp[i]);
            h++;
        }
    }
    b = h;
    if (b > 0)
        put(o, '-');
    while (h < n) {
        for (m = 0x10FFFF, i = 0; i < n; i++)
            if (cp[i] >= next && cp[i] < m)
                m = cp[i];
        delta += (uint64_t)(m - next) * (h + 1);
        next = m;
        for (i = 0; i < n; i++) {
            if (cp[i] < next)
                delta++;
            if (cp[i] != next)
                continue;
            puny_put_int(o, delta, bias);
            bias = puny_adapt(delta, h + 1, h == b);
            delta = 0;
            h++;
        }
        delta++;
        next++;
    }
}

#define IDNA_LABEL_MAX 255

/* One label of a non-ASCII host: copied when ASCII, else punycode. */
static int idna_label(struct ubuf *o, const unsigned char *s, size_t n)
{
    uint32_t cp[IDNA_LABEL_MAX];
    size_t i = 0, k = 0, step;
    int ascii = 1;

    while (i < n) {
        if (k == IDNA_LABEL_MAX || !(step = parser__utf8_next(s + i, n - i, &cp[k])))
            return DC_EURL;
        if (cp[k] >= 0x80 && !idna_simple(cp[k]))
            return DC_EURL;
        ascii &= cp[k] < 0x80;
        i += step;
        k++;
    }
    if (ascii)
        put_mem(o, (const char *)s, n);
    else
        puny_encode(o, cp, k);
    return DC_OK;
}

#define IDNA_HOST_MAX 1024

/* Rewrite the decoded host at o->buf[start..len) label by label. */
static int idna_host(struct ubuf *o, size_t start)
{
    unsigned char tmp[IDNA_HOST_MAX];
    size_t n = o->len - start, b = 0, i;
    int rc;

    if (n > sizeof(tmp))
        return DC_EURL;
    memcpy(tmp, o->buf + start, n);
    o->len = start;
    for (i = 0; i <= n; i++) {
        if (i < n && tmp[i] != '.')
            continue;
        rc = idna_label(o, tmp + b, i - b);
        if (rc)
            return rc;
        if (i < n)
            put(o, '.');
        b = i + 1;
    }
    return o->over ? DC_ETOOBIG : DC_OK;
}

/* Percent-decode and lowercase a domain into o; DC_EURL on forbidden
 * bytes or on non-ASCII text that idna_host() cannot handle. */
static int put_domain(struct ubuf *o, const char *s, size_t n)
{
    size_t i, start = o->len;
    int nonascii = 0;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (has(c, U_F_HOST)) {
            put(o, (char)to_lower(c));
            continue;
        }
        if (c == '%' && i + 2 < n && has(s[i + 1], U_HEX) &&
            has(s[i + 2], U_HEX)) {
            c = (unsigned char)(dc_hexval(s[i + 1]) * 16 + dc_hexval(s[i + 2]));
            i += 2;
        }
        if (c < 0x80 && forbidden_domain(c))
            return DC_EURL;
        nonascii |= c >= 0x80;
        put(o, (char)to_lower(c));
    }
    if (o->over)
        return DC_ETOOBIG;
    return nonascii ? idna_host(o, start) : DC_OK;
}

int parser__url_host(struct ubuf *o, const char *s, size_t n)
{
    size_t start = o->len;
    uint16_t a6[8];
    uint32_t a4;
    int rc;

    if (n == 0)
        return DC_EURL;
    if (s[0] == '[') {
        if (n < 2 || s[n - 1] != ']' || ipv6_parse(s + 1, n - 2, a6) < 0)
            return DC_EURL;
        put_ipv6(o, a6);
        return DC_OK;
    }
    rc = put_domain(o, s, n);
    if (rc)
        return rc;
    if (!ends_in_number(o->buf + start, o->len - start))
        return DC_OK;
    if (ipv4_parse(o->buf + start, o->len - start, &a4) < 0)
        return DC_EURL;
    o->len = start;
    put_ipv4(o, a4);
    return DC_OK;
}

int parser__url_port(struct ubuf *o, const char *s, size_t n)
{
    unsigned long v = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return DC_EURL;
        v = v * 10 + (unsigned long)(s[i] - '0');
        if (v > 65535)
            return DC_EURL;
    }
    if (n == 0 || v == (o->https ? 443u : 80u))
        return DC_OK;
    put(o, ':');
    put_dec(o, v);
    return DC_OK;
}

