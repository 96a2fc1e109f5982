/*
 * url-parse.c: the WHATWG basic URL parser for http and https (see url.c
 * for the whole design and the canonicalization it does while writing).
 * The state machine is unrolled into functions:
 *
 *   url_parse       scheme state, no-scheme state, special authority slashes
 *   parse_relative  relative and relative slash states (needs the base)
 *   parse_authority authority state (userinfo here; host and port states
 *                   in url-host.c)
 *   parse_path      path start and path states (dot segments)
 *   parse_query     query state; the fragment is dropped
 *
 * parser__url_canon_slow() is this parser behind the public contract of
 * parser_url_canon(): whitespace cleanup, the size checks, index.html.
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "parser.h"
#include "parser-internal.h"
#include "url-internal.h"

enum { SET_USERINFO, SET_PATH, SET_QUERY };

/* The userinfo, path and special-query percent-encode sets. */
static int must_encode(unsigned char c, int set)
{
    static const uint16_t bit[] = { U_ENC_USERINFO, U_ENC_PATH,
                                    U_ENC_QUERY };

    return has(c, bit[set]);
}

/* Write one input unit of s[i..n) with encoding and %XX normalization;
 * returns the bytes consumed. A '%' that starts no %XX is written %25, as
 * Nutch, crawler-commons and wget do: WHATWG keeps it bare, and servers
 * answer a bare one 400 (Boost's docs link "operator%.html"). */
static size_t put_enc(struct ubuf *o, const char *s, size_t n, size_t i,
                      int set)
{
    unsigned char c = (unsigned char)s[i];

    if (c == '%' && i + 2 < n && has(s[i + 1], U_HEX) &&
        has(s[i + 2], U_HEX)) {
        int v = dc_hexval(s[i + 1]) * 16 + dc_hexval(s[i + 2]);
        if (is_unreserved(v))
            put(o, (char)v);
        else
            put_pct(o, (unsigned char)v);
        return 3;
    }
    if (c == '%' || must_encode(c, set)) /* a '%' that starts no %XX */
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
    rc = parser__url_host(o, s + hs, he - hs);
    if (!rc && he < e)
        rc = parser__url_port(o, s + he + 1, e - he - 1);
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

/* Cut a last path segment "index.html", keeping its slash (also used by
 * the fast path in url.c). */
void parser__url_strip_index(struct ubuf *o)
{
    size_t end = o->query == SIZE_MAX ? o->len : o->query;

    if (end - o->path < 11 ||
        memcmp(o->buf + end - 11, "/index.html", 11) != 0)
        return;
    memmove(o->buf + end - 10, o->buf + end, o->len - end);
    o->len -= 10;
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
        parser__url_strip_index(&o);
    out[o.len] = '\0';
    *outlen = o.len;
    return DC_OK;
}
