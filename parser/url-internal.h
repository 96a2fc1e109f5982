/*
 * url-internal.h: what the three files of the URL parser share (url.c the
 * fast path and the public calls, url-parse.c the WHATWG state machine,
 * url-host.c hosts and ports): the bounded output writer (struct ubuf),
 * the compile-time byte class table and the small character tests.
 *
 * Only parser/url*.c include this file; everything else, tests included,
 * uses "parser.h" and "parser-internal.h". The helpers are static inline
 * so that the hot loops keep them inlined as they were in one file.
 */
#ifndef DC_URL_INTERNAL_H
#define DC_URL_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "conf.h"

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

/* ----------------------------------------------------------- writer */

static inline void put(struct ubuf *o, char c)
{
    if (o->len < o->lim)
        o->buf[o->len++] = c;
    else
        o->over = 1;
}

static inline void put_mem(struct ubuf *o, const char *s, size_t n)
{
    if (n > o->lim - o->len) {
        n = o->lim - o->len;
        o->over = 1;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static inline void put_pct(struct ubuf *o, unsigned char c)
{
    static const char hexdig[] = "0123456789ABCDEF";

    put(o, '%');
    put(o, hexdig[c >> 4]);
    put(o, hexdig[c & 15]);
}

static inline void put_dec(struct ubuf *o, unsigned long v)
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

static inline int has(int c, unsigned bits)
{
    return (ucls[(unsigned char)c] & bits) != 0;
}
static inline int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static inline int is_unreserved(int c)
{
    return has(c, U_UNRES);
}

static inline int is_slash(int c)
{
    return c == '/' || c == '\\';
}

static inline int to_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}


/* url-host.c: the host s[0..n) (a domain, IPv4 or [IPv6]) written in
 * canonical form; DC_EURL when it is not a valid host. */
int parser__url_host(struct ubuf *o, const char *s, size_t n);
/* url-host.c: the port digits s[0..n), written as ":N" unless empty or
 * the scheme's default; DC_EURL when not a port. */
int parser__url_port(struct ubuf *o, const char *s, size_t n);

/* url-parse.c: cut a last path segment "index.html", keeping its slash. */
void parser__url_strip_index(struct ubuf *o);

#endif
