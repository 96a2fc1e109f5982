/*
 * url.c: resolve an href against a base URL and canonicalize it.
 *
 * The parser is the WHATWG URL Standard's basic URL parser
 * (https://url.spec.whatwg.org/#concept-basic-url-parser) cut down to the
 * two special schemes we crawl, http and https; every other scheme (and
 * file:) is DC_EURL. The state machine is unrolled into functions:
 *
 *   url_parse      scheme state, no-scheme state, special authority slashes
 *   parse_relative relative and relative slash states (needs the base)
 *   parse_authority authority, host and port states
 *   parse_path     path start and path states (dot segments)
 *   parse_query    query state; the fragment is dropped
 *
 * The serialization is written straight into the caller's buffer through a
 * bounded writer (struct ubuf): on overflow it stops writing and the call
 * ends with DC_ETOOBIG. No heap memory is used; the scratch is a copy of
 * the input when tab/newline/edge whitespace must be removed and the parsed
 * base URL (PARSER_URL_MAX bytes of stack each, the base parsed only for
 * relative refs), plus about 2 KiB for a non-ASCII host.
 *
 * Canonicalization happens while writing, so the output is the WHATWG
 * serialization with these changes:
 *  - no fragment;
 *  - every %XX kept is written with upper-case hex digits;
 *  - a %XX that decodes to an unreserved character (ALPHA DIGIT - . _ ~)
 *    is decoded, in userinfo, path and query alike. Two guards keep the
 *    output a fixed point of the function: (1) "%2e" is decoded before the
 *    dot-segment test, which is equivalent to WHATWG's test on ".", "%2e",
 *    ".%2e", "%2e." and "%2e%2e", so no new dot segment can appear; (2) a
 *    hex digit is left encoded when the output already ends in a lone '%'
 *    or '%' plus one hex digit, since decoding it would forge a new escape
 *    ("%%34%31" stays "%%34%31" rather than become "%41");
 *  - with PARSER_URL_STRIP_INDEX a last path segment "index.html" is cut,
 *    whether or not a query follows ("/a/index.html?x" -> "/a/?x").
 *
 * Hosts: percent-decoded, ASCII-lowercased, checked for forbidden domain
 * code points, and parsed as IPv4 (WHATWG "ends in a number" rule, hex and
 * octal parts) or IPv6 (compressed serialization). Non-ASCII hosts need
 * IDNA (UTS #46 mapping, then punycode). The mapping table is not carried
 * here: a label is punycode-encoded only when every non-ASCII code point is
 * in a small set that UTS #46 leaves unchanged (idna_simple(): lower-case
 * Latin-1, Greek, Cyrillic, Hiragana, CJK, Hangul); any other non-ASCII
 * host (upper-case or full-width letters, ignored code points such as
 * U+200B, U+3002 as a dot, right-to-left scripts) is rejected with DC_EURL.
 * ASCII "xn--" labels are passed through without punycode validation.
 *
 * Speed: parser_url_canon() first tries a fast path (parser__url_canon_
 * fast, below): one pass over a plain absolute http(s) URL, then a copy
 * with the few edits canonicalization makes there (lower-case scheme and
 * host, default port and fragment dropped, "/" for an empty path,
 * index.html). Anything it does not fully understand goes to the parser
 * above, so the fast path only ever answers with the same bytes (tests/
 * unit/u-url.c checks both paths against each other). The parser itself
 * tests bytes through one compile-time class table (ucls) and copies runs
 * of bytes that need no change in one memcpy.
 *
 * Limits: an input longer than PARSER_URL_MAX-1 bytes after whitespace
 * removal is DC_ETOOBIG, as is an output that overflows before dot
 * segments or index.html are removed, even if it would fit afterwards.
 * Bytes >= 0x80 are percent-encoded one by one, which equals WHATWG for
 * valid UTF-8 (invalid UTF-8 is not replaced by U+FFFD as a browser would).
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "parser.h"
#include "parser-internal.h"

enum { SET_USERINFO, SET_PATH, SET_QUERY };

/* The output under construction and where its components start. */
struct ubuf {
    char *buf;
    size_t len, lim; /* bytes written; most bytes allowed */
    int over;        /* a write did not fit */
    int https;
    size_t auth;  /* just after "//" */
    size_t path;  /* the path's first '/' */
    size_t query; /* the '?', or SIZE_MAX when there is no query */
};

static const char hexdig[] = "0123456789ABCDEF";

/* ----------------------------------------------------------- writer */

static void put(struct ubuf *o, char c)
{
    if (o->len < o->lim)
        o->buf[o->len++] = c;
    else
        o->over = 1;
}

static void put_mem(struct ubuf *o, const char *s, size_t n)
{
    if (n > o->lim - o->len) {
        n = o->lim - o->len;
        o->over = 1;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put_pct(struct ubuf *o, unsigned char c)
{
    put(o, '%');
    put(o, hexdig[c >> 4]);
    put(o, hexdig[c & 15]);
}

static void put_dec(struct ubuf *o, unsigned long v)
{
    char tmp[24];
    size_t n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put(o, tmp[--n]);
}

/* ------------------------------------------------------- characters */

/*
 * One table of byte classes, computed at compile time (CLS below), so the
 * hot loops test a bit instead of a chain of comparisons:
 *   U_ENC_*   must be percent-encoded in userinfo, path, query
 *             (the WHATWG userinfo, path and special-query encode sets);
 *   U_UNRES   unreserved (ALPHA DIGIT - . _ ~);  U_HEX  hex digit;
 *   U_FORBID  forbidden domain code point (ASCII part);
 *   U_RUN_P   copied as is inside a path segment (ends at '/', '\\',
 *             '?', '#', '%' or a byte to encode);
 *   U_RUN_Q   copied as is inside a query (ends at '#', '%' or a byte to
 *             encode);
 *   U_F_HOST  host byte the fast path copies, lower-cased (A-Z a-z 0-9
 *             - . _ ~);
 *   U_F_PATH  path byte the fast path copies: U_RUN_P and '/', not '.'.
 */
enum {
    U_ENC_USERINFO = 1 << 0,
    U_ENC_PATH = 1 << 1,
    U_ENC_QUERY = 1 << 2,
    U_UNRES = 1 << 3,
    U_HEX = 1 << 4,
    U_FORBID = 1 << 5,
    U_RUN_P = 1 << 6,
    U_RUN_Q = 1 << 7,
    U_F_HOST = 1 << 8,
    U_F_PATH = 1 << 9
};

#define IS_LOW(c) ((c) >= 'a' && (c) <= 'z')
#define IS_UP(c) ((c) >= 'A' && (c) <= 'Z')
#define IS_DIG(c) ((c) >= '0' && (c) <= '9')
#define ENC_C0(c) ((c) <= 0x20 || (c) >= 0x7F || (c) == '"' || (c) == '#' || \
                   (c) == '<' || (c) == '>')
#define ENC_P(c) (ENC_C0(c) || (c) == '?' || (c) == '^' || (c) == '`' ||    \
                  (c) == '{' || (c) == '}')
#define ENC_Q(c) (ENC_C0(c) || (c) == '\'')
#define ENC_U(c) (ENC_P(c) || (c) == '/' || (c) == ':' || (c) == ';' ||      \
                  (c) == '=' || (c) == '@' || (c) == '[' || (c) == '\\' ||   \
                  (c) == ']' || (c) == '|')
#define UNRES(c) (IS_LOW(c) || IS_UP(c) || IS_DIG(c) || (c) == '-' ||        \
                  (c) == '.' || (c) == '_' || (c) == '~')
#define HEXD(c) (IS_DIG(c) || ((c) >= 'a' && (c) <= 'f') ||                 \
                 ((c) >= 'A' && (c) <= 'F'))
#define FORBID(c) ((c) <= 0x20 || (c) == 0x7F || (c) == '#' || (c) == '%' || \
                   (c) == '/' || (c) == ':' || (c) == '<' || (c) == '>' ||   \
                   (c) == '?' || (c) == '@' || (c) == '[' || (c) == '\\' ||  \
                   (c) == ']' || (c) == '^' || (c) == '|')
#define RUN_P(c) (!ENC_P(c) && (c) != '%' && (c) != '/' && (c) != '\\')
#define RUN_Q(c) (!ENC_Q(c) && (c) != '%')
#define F_HOST(c) (IS_LOW(c) || IS_UP(c) || IS_DIG(c) || (c) == '-' ||      \
                   (c) == '.' || (c) == '_' || (c) == '~')
#define F_PATH(c) ((RUN_P(c) && (c) != '.') || (c) == '/')
#define CLS(c)                                                           \
    (uint16_t)((ENC_U(c) ? U_ENC_USERINFO : 0) |                         \
               (ENC_P(c) ? U_ENC_PATH : 0) | (ENC_Q(c) ? U_ENC_QUERY : 0) | \
               (UNRES(c) ? U_UNRES : 0) | (HEXD(c) ? U_HEX : 0) |        \
               (FORBID(c) ? U_FORBID : 0) | (RUN_P(c) ? U_RUN_P : 0) |   \
               (RUN_Q(c) ? U_RUN_Q : 0) | (F_HOST(c) ? U_F_HOST : 0) |   \
               (F_PATH(c) ? U_F_PATH : 0))
#define CLS4(c) CLS(c), CLS((c) + 1), CLS((c) + 2), CLS((c) + 3)
#define CLS16(c) CLS4(c), CLS4((c) + 4), CLS4((c) + 8), CLS4((c) + 12)
#define CLS64(c) CLS16(c), CLS16((c) + 16), CLS16((c) + 32), CLS16((c) + 48)

static const uint16_t ucls[256] = { CLS64(0), CLS64(64), CLS64(128),
                                    CLS64(192) };

static int has(int c, unsigned bits)
{
    return (ucls[(unsigned char)c] & bits) != 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_unreserved(int c)
{
    return has(c, U_UNRES);
}

static int is_slash(int c)
{
    return c == '/' || c == '\\';
}

static int to_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The userinfo, path and special-query percent-encode sets. */
static int must_encode(unsigned char c, int set)
{
    static const uint16_t bit[] = { U_ENC_USERINFO, U_ENC_PATH,
                                    U_ENC_QUERY };

    return has(c, bit[set]);
}

/* Forbidden domain code points (ASCII part). */
static int forbidden_domain(unsigned char c)
{
    return has(c, U_FORBID);
}

/* Would a decoded hex digit join the output's tail into a new %XX? */
static int pct_pending(const struct ubuf *o)
{
    size_t n = o->len;

    if (n >= 1 && o->buf[n - 1] == '%')
        return 1;
    return n >= 2 && o->buf[n - 2] == '%' && hexval(o->buf[n - 1]) >= 0;
}

/* Write one input unit of s[i..n) with encoding and %XX normalization;
 * returns the bytes consumed. */
static size_t put_enc(struct ubuf *o, const char *s, size_t n, size_t i,
                      int set)
{
    unsigned char c = (unsigned char)s[i];

    if (c == '%' && i + 2 < n && has(s[i + 1], U_HEX) &&
        has(s[i + 2], U_HEX)) {
        int v = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
        if (is_unreserved(v) && !(has(v, U_HEX) && pct_pending(o)))
            put(o, (char)v);
        else
            put_pct(o, (unsigned char)v);
        return 3;
    }
    if (must_encode(c, set))
        put_pct(o, c);
    else
        put(o, (char)c);
    return 1;
}

/* Copy the run of bytes of class `run` at s[i..n) unchanged (they need
 * neither encoding nor %XX handling); returns the new position. */
static size_t put_run(struct ubuf *o, const char *s, size_t n, size_t i,
                      unsigned run)
{
    size_t e = i;

    while (e < n && has(s[e], run))
        e++;
    put_mem(o, s + i, e - i);
    return e;
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
        int d = hexval((unsigned char)s[i]);
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
        while (len < 4 && p < n && hexval(s[p]) >= 0) {
            v = v * 16 + (unsigned)hexval(s[p++]);
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

/* Strict UTF-8 decode of one code point; returns its length or 0. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
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
        if (k == IDNA_LABEL_MAX || !(step = utf8_next(s + i, n - i, &cp[k])))
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
            c = (unsigned char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
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

static int parse_host(struct ubuf *o, const char *s, size_t n)
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

static int parse_port(struct ubuf *o, const char *s, size_t n)
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

/* -------------------------------------------------------- authority */

static void put_userinfo(struct ubuf *o, const char *s, size_t n)
{
    size_t i = 0, mark;

    while (i < n && s[i] != ':')
        i += put_enc(o, s, n, i, SET_USERINFO);
    if (i < n) {
        mark = o->len;
        put(o, ':');
        for (i++; i < n;)
            i += put_enc(o, s, n, i, SET_USERINFO);
        if (o->len == mark + 1)
            o->len = mark;
    }
    if (o->len > o->auth)
        put(o, '@');
}

static int is_auth_end(int c)
{
    return c == '/' || c == '\\' || c == '?' || c == '#';
}

/* Authority from s[*pos]; leaves *pos at the first byte after it. */
static int parse_authority(struct ubuf *o, const char *s, size_t n,
                           size_t *pos)
{
    size_t b = *pos, e, hs = b, he = SIZE_MAX;
    int inbr = 0, rc;

    /* One pass: the end, the last '@' (the host starts after it) and the
     * host's first ':' outside brackets (the port's), counted from there. */
    for (e = b; e < n; e++) {
        if (has(s[e], U_F_HOST))
            continue;
        if (is_auth_end(s[e]))
            break;
        if (s[e] == '@') {
            hs = e + 1;
            he = SIZE_MAX;
            inbr = 0;
        } else if (s[e] == '[') {
            inbr = 1;
        } else if (s[e] == ']') {
            inbr = 0;
        } else if (s[e] == ':' && !inbr && he == SIZE_MAX) {
            he = e;
        }
    }
    if (hs > b)
        put_userinfo(o, s + b, hs - 1 - b);
    if (he == SIZE_MAX)
        he = e;
    rc = parse_host(o, s + hs, he - hs);
    if (!rc && he < e)
        rc = parse_port(o, s + he + 1, e - he - 1);
    *pos = e;
    return rc;
}

/* ------------------------------------------------------- path, query */

/* Drop the path's last segment. */
static void shorten(struct ubuf *o)
{
    while (o->len > o->path && o->buf[o->len - 1] != '/')
        o->len--;
    if (o->len > o->path)
        o->len--;
}

/* Path state from s[pos]; returns the position of '?', '#' or n. */
static size_t parse_path(struct ubuf *o, const char *s, size_t n, size_t pos)
{
    for (;;) {
        size_t sep = o->len, sl;
        int slash;
        put(o, '/');
        for (;;) {
            pos = put_run(o, s, n, pos, U_RUN_P);
            if (pos >= n || is_auth_end(s[pos]))
                break;
            pos += put_enc(o, s, n, pos, SET_PATH);
        }
        slash = pos < n && is_slash(s[pos]);
        sl = o->len > sep ? o->len - sep - 1 : 0;
        if (sl == 2 && memcmp(o->buf + sep + 1, "..", 2) == 0) {
            o->len = sep;
            shorten(o);
            if (!slash)
                put(o, '/');
        } else if (sl == 1 && o->buf[sep + 1] == '.') {
            o->len = slash ? sep : sep + 1;
        }
        if (!slash)
            return pos;
        pos++;
    }
}

static void parse_query(struct ubuf *o, const char *s, size_t n, size_t pos)
{
    o->query = o->len;
    put(o, '?');
    for (;;) {
        pos = put_run(o, s, n, pos, U_RUN_Q);
        if (pos >= n || s[pos] == '#')
            break;
        pos += put_enc(o, s, n, pos, SET_QUERY);
    }
}

static void parse_path_query(struct ubuf *o, const char *s, size_t n,
                             size_t pos)
{
    pos = parse_path(o, s, n, pos);
    if (pos < n && s[pos] == '?')
        parse_query(o, s, n, pos + 1);
}

/* ------------------------------------------------------ whole URLs */

static void put_scheme(struct ubuf *o, int https)
{
    o->https = https;
    if (https)
        put_mem(o, "https://", 8);
    else
        put_mem(o, "http://", 7);
    o->auth = o->len;
}

/* Special authority ignore slashes state, then authority and path. */
static int parse_from_authority(struct ubuf *o, const char *s, size_t n,
                                size_t pos)
{
    int rc;

    while (pos < n && is_slash(s[pos]))
        pos++;
    rc = parse_authority(o, s, n, &pos);
    if (rc)
        return rc;
    if (o->over)
        return DC_ETOOBIG;
    o->path = o->len;
    if (pos < n && is_slash(s[pos]))
        pos++;
    parse_path_query(o, s, n, pos);
    return DC_OK;
}

static void copy_base(struct ubuf *o, const struct ubuf *b, size_t from,
                      size_t to)
{
    put_mem(o, b->buf + from, to - from);
}

/* Relative and relative slash states, ref s[pos..n) against base b. */
static int parse_relative(struct ubuf *o, const char *s, size_t n, size_t pos,
                          const struct ubuf *b)
{
    int c = pos < n ? (unsigned char)s[pos] : -1;
    size_t bq = b->query == SIZE_MAX ? b->len : b->query;

    put_scheme(o, b->https);
    if (is_slash(c) && pos + 1 < n && is_slash(s[pos + 1]))
        return parse_from_authority(o, s, n, pos);
    copy_base(o, b, b->auth, b->path);
    o->path = o->len;
    if (is_slash(c)) {
        parse_path_query(o, s, n, pos + 1);
        return DC_OK;
    }
    copy_base(o, b, b->path, bq);
    if (c == -1 || c == '#') {
        if (bq < b->len)
            o->query = o->len;
        copy_base(o, b, bq, b->len);
    } else if (c == '?') {
        parse_query(o, s, n, pos + 1);
    } else {
        shorten(o);
        parse_path_query(o, s, n, pos);
    }
    return DC_OK;
}

/* Length of a leading "scheme:" (not counting the colon), or 0. */
static size_t scheme_len(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !is_alpha(s[0]))
        return 0;
    for (i = 1; i < n; i++) {
        if (s[i] == ':')
            return i;
        if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '+' &&
            s[i] != '-' && s[i] != '.')
            return 0;
    }
    return 0;
}

/* 0 http, 1 https, -1 anything else. */
static int scheme_kind(const char *s, size_t n)
{
    if ((n != 4 && n != 5) || to_lower(s[0]) != 'h' ||
        to_lower(s[1]) != 't' || to_lower(s[2]) != 't' ||
        to_lower(s[3]) != 'p')
        return -1;
    if (n == 4)
        return 0;
    return to_lower(s[4]) == 's' ? 1 : -1;
}

static int base_kind(const char *base)
{
    size_t n = base ? strnlen(base, 8) : 0;

    return scheme_kind(base, scheme_len(base, n));
}

static int url_parse(struct ubuf *o, const char *s, size_t n,
                     const char *base);

static int parse_with_base(struct ubuf *o, const char *s, size_t n, size_t pos,
                           const char *base)
{
    char bbuf[PARSER_URL_MAX];
    struct ubuf b = { bbuf, 0, sizeof(bbuf) - 1, 0, 0, 0, 0, SIZE_MAX };
    int rc;

    if (!base)
        return DC_EURL;
    rc = url_parse(&b, base, strlen(base), NULL);
    if (rc)
        return rc == DC_ETOOBIG ? DC_EURL : rc;
    return parse_relative(o, s, n, pos, &b);
}

static int url_parse(struct ubuf *o, const char *s, size_t n,
                     const char *base)
{
    size_t sl = scheme_len(s, n);
    int kind;

    if (sl == 0)
        return parse_with_base(o, s, n, 0, base);
    kind = scheme_kind(s, sl);
    if (kind < 0)
        return DC_EURL;
    if (base && base_kind(base) == kind &&
        !(sl + 2 < n && s[sl + 1] == '/' && s[sl + 2] == '/'))
        return parse_with_base(o, s, n, sl + 1, base);
    put_scheme(o, kind);
    return parse_from_authority(o, s, n, sl + 1);
}

/* ----------------------------------------------------------- public */

/* Strip edge C0/space and remove tab/LF/CR; copies only when needed. */
static int clean_input(const char *ref, size_t n, char *scratch,
                       const char **s, size_t *len)
{
    size_t b = 0, i, k = 0;

    while (b < n && (unsigned char)ref[b] <= 0x20)
        b++;
    while (n > b && (unsigned char)ref[n - 1] <= 0x20)
        n--;
    if (!memchr(ref + b, '\t', n - b) && !memchr(ref + b, '\n', n - b) &&
        !memchr(ref + b, '\r', n - b)) {
        *s = ref + b;
        *len = n - b;
        return DC_OK;
    }
    for (i = b; i < n; i++) {
        if (ref[i] == '\t' || ref[i] == '\n' || ref[i] == '\r')
            continue;
        if (k == PARSER_URL_MAX)
            return DC_ETOOBIG;
        scratch[k++] = ref[i];
    }
    *s = scratch;
    *len = k;
    return DC_OK;
}

/* Cut a last path segment "index.html", keeping its slash. */
static void strip_index(struct ubuf *o)
{
    size_t end = o->query == SIZE_MAX ? o->len : o->query;

    if (end - o->path < 11 ||
        memcmp(o->buf + end - 11, "/index.html", 11) != 0)
        return;
    memmove(o->buf + end - 10, o->buf + end, o->len - end);
    o->len -= 10;
}

/* ------------------------------------------------------- fast path */

/*
 * The fast path takes an absolute "http://" or "https://" URL (scheme in
 * any case, exactly two slashes) whose bytes need no change but cheap
 * ones: a host of A-Z a-z 0-9 - . _ ~ only (lower-cased), not ending in a
 * number (so not IPv4), no userinfo; a port without leading zeros
 * (dropped when it is the default); a path and query of bytes outside the
 * encode sets, any %XX in upper case and not decoding to an unreserved
 * character, no "." or ".." segment, no backslash; any fragment.
 * Everything else (tabs, spaces and controls anywhere, other bytes in the
 * host, IPv6, relative refs) goes to the full parser, as does an output
 * that does not fit. The canonical form is then the input up to the
 * fragment with scheme and host in lower case, minus a default port, plus
 * "/" when the path is empty, with index.html stripped when asked: the
 * same bytes the full parser writes.
 */

/* A fast-path %XX at s[i] (s[i] == '%'): both digits upper-case hex and
 * the byte not unreserved, so the full parser would keep it as it is. */
static int fast_pct(const char *s, size_t n, size_t i)
{
    int hi, lo;

    if (i + 2 >= n)
        return 0;
    hi = s[i + 1];
    lo = s[i + 2];
    if (!(IS_DIG(hi) || (hi >= 'A' && hi <= 'F')) ||
        !(IS_DIG(lo) || (lo >= 'A' && lo <= 'F')))
        return 0;
    return !is_unreserved(hexval(hi) * 16 + hexval(lo));
}

/* Is s[i] == '.' the start of a "." or ".." segment? i > 0 and s[i-1] is
 * the segment's '/' or not. */
static int fast_dot_segment(const char *s, size_t n, size_t i)
{
    size_t j = i + 1;

    if (s[i - 1] != '/')
        return 0;
    if (j < n && s[j] == '.')
        j++;
    return j == n || s[j] == '/' || s[j] == '?' || s[j] == '#';
}

/* Host at s[b..e): last label (after one trailing dot) must not start
 * with a digit, or the host would be parsed as IPv4. */
static int fast_host_ok(const char *s, size_t b, size_t e)
{
    size_t l;

    if (e > b && s[e - 1] == '.')
        e--;
    if (e == b)
        return 0;
    for (l = e; l > b && s[l - 1] != '.'; l--)
        ;
    return l < e && !IS_DIG(s[l]);
}

/* Port digits at s[b..e): 1 and *keep set when the full parser writes
 * them unchanged (keep = 1) or drops them as the default (keep = 0). */
static int fast_port(const char *s, size_t b, size_t e, int https, int *keep)
{
    unsigned long v = 0;
    size_t i;

    if (e == b || e - b > 5 || s[b] == '0')
        return 0;
    for (i = b; i < e; i++) {
        if (!IS_DIG(s[i]))
            return 0;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > 65535)
        return 0;
    *keep = v != (https ? 443u : 80u);
    return 1;
}

/* Path and query from s[i]: the end of the URL proper (the '#' or n) and
 * the '?' in *q (n when none); 0 when the full parser is needed. */
static int fast_rest(const char *s, size_t n, size_t i, size_t *end,
                     size_t *q)
{
    *q = n;
    for (;;) {
        while (i < n && has(s[i], U_F_PATH))
            i++;
        if (i == n || s[i] == '?' || s[i] == '#')
            break;
        if (s[i] == '%' ? !fast_pct(s, n, i)
                        : s[i] != '.' || fast_dot_segment(s, n, i))
            return 0;
        i += s[i] == '%' ? 3 : 1;
    }
    if (i < n && s[i] == '?') {
        *q = i++;
        for (;;) {
            while (i < n && has(s[i], U_RUN_Q))
                i++;
            if (i == n || s[i] == '#')
                break;
            if (s[i] != '%' || !fast_pct(s, n, i))
                return 0;
            i += 3;
        }
    }
    *end = i;
    return 1;
}

int parser__url_canon_fast(const char *base, const char *ref, size_t reflen,
                           unsigned flags, size_t max_len, char *out,
                           size_t cap, size_t *outlen)
{
    struct ubuf o = { out, 0, 0, 0, 0, 0, 0, SIZE_MAX };
    size_t p, h, he, ae, end, q, len, slash, hk;
    int https, keep = 0;

    (void)base; /* "scheme://" ignores the base */
    if (!ref || !out || !outlen || cap == 0 || reflen > PARSER_URL_MAX ||
        reflen < 8 || (ref[0] | 0x20) != 'h' || (ref[1] | 0x20) != 't' ||
        (ref[2] | 0x20) != 't' || (ref[3] | 0x20) != 'p')
        return -1;
    https = (ref[4] | 0x20) == 's';
    p = https ? 5 : 4;
    if (memcmp(ref + p, "://", 3) != 0)
        return -1;
    h = p + 3;
    for (he = h; he < reflen && has(ref[he], U_F_HOST); he++)
        ;
    if (!fast_host_ok(ref, h, he))
        return -1;
    ae = he;
    if (ae < reflen && ref[ae] == ':') {
        for (ae++; ae < reflen && IS_DIG(ref[ae]); ae++)
            ;
        if (!fast_port(ref, he + 1, ae, https, &keep))
            return -1;
    }
    if (ae < reflen && ref[ae] != '/' && ref[ae] != '?' && ref[ae] != '#')
        return -1;
    if (!fast_rest(ref, reflen, ae, &end, &q))
        return -1;
    hk = keep ? ae : he; /* no port, or the default one: dropped */
    slash = ae == end || ref[ae] != '/';
    len = hk + slash + (end - ae);
    o.lim = max_len < cap - 1 ? max_len : cap - 1;
    if (len > o.lim)
        return -1;
    memcpy(out, https ? "https://" : "http://", h);
    for (size_t i = h; i < hk; i++)
        out[i] = (char)to_lower(ref[i]);
    out[hk] = '/';
    memcpy(out + hk + slash, ref + ae, end - ae);
    o.len = len;
    o.path = hk;
    if (q < reflen)
        o.query = q - ae + hk + slash;
    if (flags & PARSER_URL_STRIP_INDEX)
        strip_index(&o);
    out[o.len] = '\0';
    *outlen = o.len;
    return DC_OK;
}

int parser__url_canon_slow(const char *base, const char *ref, size_t reflen,
                           unsigned flags, size_t max_len, char *out,
                           size_t cap, size_t *outlen)
{
    char scratch[PARSER_URL_MAX];
    struct ubuf o = { out, 0, 0, 0, 0, 0, 0, SIZE_MAX };
    const char *s;
    size_t n;
    int rc;

    if (!ref || !out || !outlen)
        return DC_EINVAL;
    if (cap == 0)
        return DC_ETOOBIG;
    o.lim = max_len < cap - 1 ? max_len : cap - 1;
    rc = clean_input(ref, reflen, scratch, &s, &n);
    if (rc)
        return rc;
    if (n > PARSER_URL_MAX)
        return DC_ETOOBIG;
    rc = url_parse(&o, s, n, base);
    if (rc)
        return rc;
    if (o.over)
        return DC_ETOOBIG;
    if (flags & PARSER_URL_STRIP_INDEX)
        strip_index(&o);
    out[o.len] = '\0';
    *outlen = o.len;
    return DC_OK;
}

int parser_url_canon(const char *base, const char *ref, size_t reflen,
                     unsigned flags, size_t max_len, char *out, size_t cap,
                     size_t *outlen)
{
    if (parser__url_canon_fast(base, ref, reflen, flags, max_len, out, cap,
                               outlen) == DC_OK)
        return DC_OK;
    return parser__url_canon_slow(base, ref, reflen, flags, max_len, out,
                                  cap, outlen);
}

/* Length of "http://" or "https://" at url's start, or 0. */
static size_t prefix_len(const char *url)
{
    if (strncmp(url, "http://", 7) == 0)
        return 7;
    if (strncmp(url, "https://", 8) == 0)
        return 8;
    return 0;
}

int parser_url_host(const char *url, const char **host, size_t *hostlen)
{
    size_t p = url ? prefix_len(url) : 0, e, h;

    if (p == 0)
        return DC_EURL;
    e = p + strcspn(url + p, "/");
    if (url[e] != '/')
        return DC_EURL;
    for (h = e; h > p && url[h - 1] != '@'; h--)
        ;
    if (h == e)
        return DC_EURL;
    *host = url + h;
    *hostlen = e - h;
    return DC_OK;
}

const char *parser_url_path(const char *url)
{
    size_t p = url ? prefix_len(url) : 0;

    if (p == 0)
        return NULL;
    return strchr(url + p, '/');
}
