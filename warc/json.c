/*
 * json.c: JSON for the page lines: writing strings (RFC 8259 escaping) and
 * parsing one flat object back (merge_run reads the nodes' .jsonl lines),
 * and the growable byte buffer (struct warc_buf) they are built in.
 *
 * Writing: '"' and '\\' are escaped, control characters become \u00XX
 * (\n, \r, \t, \b, \f by their short forms), valid UTF-8 passes through and
 * every byte that is not part of a valid UTF-8 sequence (overlong forms,
 * surrogates, code points above U+10FFFF, stray continuation bytes) becomes
 * \uFFFD, so the output is always valid UTF-8 JSON.
 *
 * Parsing: only what the lines hold: one object, string / number / true /
 * false / null values, and one level of arrays of those (the "outlinks"
 * array), no objects inside. \uXXXX escapes (surrogate pairs too) are
 * decoded to UTF-8; a lone surrogate decodes to U+FFFD. Every value also
 * keeps a pointer to its raw JSON text so a line can be re-emitted with a
 * few values replaced and the rest untouched.
 *
 * All reentrant.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "warc.h"

/* --------------------------------------------------------------- buffer */

/* Room for n more bytes and a terminating NUL. */
static void buf_reserve(struct warc_buf *b, size_t n)
{
    void *t = b->p;

    if (b->len + n + 1 <= b->cap)
        return;
    xgrow(&t, &b->cap, b->len + n + 1, 1);
    b->p = t;
}

void warc_buf_add(struct warc_buf *b, const void *data, size_t n)
{
    buf_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void warc_buf_str(struct warc_buf *b, const char *s)
{
    warc_buf_add(b, s, strlen(s));
}

void warc_buf_printf(struct warc_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        warc_buf_add(b, small, (size_t)n);
        return;
    }
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* -------------------------------------------------------------- writing */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s)
{
    unsigned char c = s[0];

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
        unsigned char hi = c == 0xed ? 0x9f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 ||
            (s[3] & 0xc0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: return NULL;
    }
}

void warc_json_str(char **buf, size_t *len, size_t *cap, const char *s)
{
    struct warc_buf b = { *buf, *len, *cap };
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    warc_buf_add(&b, "\"", 1);
    while (*p) {
        const char *e = short_escape(*p);
        size_t n;

        if (e) {
            warc_buf_str(&b, e);
            p++;
        } else if (*p < 0x20) {
            warc_buf_printf(&b, "\\u%04x", *p);
            p++;
        } else if ((n = utf8_valid_len(p)) != 0) {
            /* the checks above stop at the terminating NUL (not 10xxxxxx) */
            warc_buf_add(&b, p, n);
            p += n;
        } else {
            warc_buf_str(&b, "\\ufffd");
            p++;
        }
    }
    warc_buf_add(&b, "\"", 1);
    *buf = b.p;
    *len = b.len;
    *cap = b.cap;
}

/* -------------------------------------------------------------- parsing */

struct jp {
    const char *s, *end;
    struct warc_jobj *o; /* strings go to o->arena; NULL: malloc'd */
};

static void jp_ws(struct jp *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' ||
                             *j->s == '\n' || *j->s == '\r'))
        j->s++;
}

static int hex4(const char *s, const char *end, unsigned *out)
{
    unsigned v = 0;

    if (end - s < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void put_utf8(struct warc_buf *b, unsigned cp)
{
    unsigned char o[4];
    size_t n;

    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        o[0] = (unsigned char)(0xf0 | (cp >> 18));
        o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    warc_buf_add(b, o, n);
}

/* A \u escape at j->s (just after the "\u"); handles surrogate pairs. */
static int jp_uescape(struct jp *j, struct warc_buf *b)
{
    unsigned cp, lo;

    if (hex4(j->s, j->end, &cp))
        return DC_EPARSE;
    j->s += 4;
    if (cp >= 0xd800 && cp <= 0xdbff && j->end - j->s >= 6 &&
        j->s[0] == '\\' && j->s[1] == 'u' &&
        hex4(j->s + 2, j->end, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
        j->s += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
        cp = 0xfffd;
    }
    put_utf8(b, cp);
    return DC_OK;
}

static int jp_escape(struct jp *j, struct warc_buf *b)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *f;

    if (j->s >= j->end)
        return DC_EPARSE;
    if (*j->s == 'u') {
        j->s++;
        return jp_uescape(j, b);
    }
    f = memchr(from, *j->s, sizeof(from) - 1);
    if (!f)
        return DC_EPARSE;
    warc_buf_add(b, &to[f - from], 1);
    j->s++;
    return DC_OK;
}

/* Plain bytes at j->s: up to the next quote, backslash or control byte. */
static void jp_plain(struct jp *j)
{
    const unsigned char *s = (const unsigned char *)j->s,
                        *end = (const unsigned char *)j->end;

    while (s < end && *s >= 0x20 && *s != '"' && *s != '\\')
        s++;
    j->s = (const char *)s;
}

/* Room for a decoded string of n bytes: in j->o's block, which
 * warc_json_parse sized to hold every string of the line (decoding never
 * lengthens a string: an escape of 2, 6 or 12 bytes becomes 1 to 4), or
 * malloc'd. */
static char *jp_room(struct jp *j, size_t n)
{
    char *p;

    if (!j->o)
        return xmalloc(n + 1);
    p = j->o->arena + j->o->used;
    j->o->used += n + 1;
    return p;
}

/* A string at j->s (on the opening quote) into *out (see jp_room), or
 * only checked when out is NULL. A string without escapes (nearly all of
 * them) is one scan and one copy. */
static int jp_string(struct jp *j, char **out)
{
    struct warc_buf b = { 0 };
    const char *run = ++j->s;

    jp_plain(j);
    if (j->s < j->end && *j->s == '"') {
        size_t n = (size_t)(j->s - run);
        j->s++;
        if (out) {
            *out = jp_room(j, n);
            memcpy(*out, run, n);
            (*out)[n] = '\0';
        }
        return DC_OK;
    }
    warc_buf_add(&b, run, (size_t)(j->s - run));
    while (j->s < j->end) {
        unsigned char c = (unsigned char)*j->s;
        if (c == '"') {
            j->s++;
            if (out) {
                *out = jp_room(j, b.len);
                memcpy(*out, b.p, b.len + 1);
            }
            free(b.p);
            return DC_OK;
        }
        if (c < 0x20)
            break;
        if (c == '\\') {
            j->s++;
            if (jp_escape(j, &b))
                break;
            continue;
        }
        run = j->s; /* plain bytes up to the next quote, escape or control
                       byte: one copy */
        jp_plain(j);
        warc_buf_add(&b, run, (size_t)(j->s - run));
    }
    free(b.p);
    return DC_EPARSE;
}

static int jp_digits(struct jp *j)
{
    const char *start = j->s;

    while (j->s < j->end && *j->s >= '0' && *j->s <= '9')
        j->s++;
    return j->s > start ? 0 : -1;
}

/* A number per RFC 8259's grammar. */
static int jp_number(struct jp *j, double *out)
{
    const char *start = j->s;
    char tmp[64];

    if (j->s < j->end && *j->s == '-')
        j->s++;
    if (j->s < j->end && *j->s == '0')
        j->s++;
    else if (jp_digits(j))
        return DC_EPARSE;
    if (j->s < j->end && *j->s == '.') {
        j->s++;
        if (jp_digits(j))
            return DC_EPARSE;
    }
    if (j->s < j->end && (*j->s == 'e' || *j->s == 'E')) {
        j->s++;
        if (j->s < j->end && (*j->s == '+' || *j->s == '-'))
            j->s++;
        if (jp_digits(j))
            return DC_EPARSE;
    }
    if ((size_t)(j->s - start) >= sizeof(tmp))
        return DC_EPARSE;
    memcpy(tmp, start, (size_t)(j->s - start));
    tmp[j->s - start] = '\0';
    *out = strtod(tmp, NULL);
    return DC_OK;
}

static int jp_word(struct jp *j, const char *w)
{
    size_t n = strlen(w);

    if ((size_t)(j->end - j->s) < n || memcmp(j->s, w, n) != 0)
        return DC_EPARSE;
    j->s += n;
    return DC_OK;
}

static int jp_scalar(struct jp *j, struct warc_jkv *kv);

/* An array of scalars: checked and skipped; the raw text is its value. */
static int jp_array(struct jp *j)
{
    struct warc_jkv e;
    int rc;

    j->s++;
    jp_ws(j);
    if (j->s < j->end && *j->s == ']') {
        j->s++;
        return DC_OK;
    }
    for (;;) {
        jp_ws(j);
        if (j->s < j->end && *j->s == '"') {
            rc = jp_string(j, NULL);
        } else {
            memset(&e, 0, sizeof(e));
            rc = jp_scalar(j, &e);
        }
        if (rc)
            return rc;
        jp_ws(j);
        if (j->s < j->end && *j->s == ',') {
            j->s++;
            continue;
        }
        if (j->s < j->end && *j->s == ']') {
            j->s++;
            return DC_OK;
        }
        return DC_EPARSE;
    }
}

int warc_json_array_next(const char *raw, size_t len, size_t *pos, char **out)
{
    struct jp j = { raw + *pos, raw + len, NULL };
    struct warc_jkv e;

    *out = NULL;
    if (*pos == 0) {
        jp_ws(&j);
        if (j.s >= j.end || *j.s != '[')
            return DC_EPARSE;
        j.s++;
    }
    for (;;) {
        jp_ws(&j);
        if (j.s < j.end && *j.s == ',') {
            j.s++;
            jp_ws(&j);
        }
        if (j.s >= j.end)
            return DC_EPARSE;
        if (*j.s == ']')
            return DC_ENOTFOUND;
        memset(&e, 0, sizeof(e));
        if (jp_scalar(&j, &e)) {
            free(e.str);
            return DC_EPARSE;
        }
        *pos = (size_t)(j.s - raw);
        if (e.type == WARC_JSTR) {
            *out = e.str;
            return DC_OK;
        }
    }
}

static int jp_value(struct jp *j, struct warc_jkv *kv)
{
    const char *start = j->s;
    int rc;

    if (j->s < j->end && *j->s == '[') {
        kv->type = WARC_JARR;
        rc = jp_array(j);
        kv->raw = start;
        kv->raw_len = (size_t)(j->s - start);
        return rc;
    }
    return jp_scalar(j, kv);
}

static int jp_scalar(struct jp *j, struct warc_jkv *kv)
{
    const char *start = j->s;
    int rc;

    if (j->s >= j->end)
        return DC_EPARSE;
    switch (*j->s) {
    case '"':
        kv->type = WARC_JSTR;
        rc = jp_string(j, &kv->str);
        break;
    case 't':
    case 'f':
        kv->type = WARC_JBOOL;
        kv->boolean = *j->s == 't';
        rc = jp_word(j, kv->boolean ? "true" : "false");
        break;
    case 'n':
        kv->type = WARC_JNULL;
        rc = jp_word(j, "null");
        break;
    default:
        kv->type = WARC_JNUM;
        rc = jp_number(j, &kv->num);
        break;
    }
    kv->raw = start;
    kv->raw_len = (size_t)(j->s - start);
    return rc;
}

static int jp_member(struct jp *j, struct warc_jobj *o)
{
    struct warc_jkv *kv;

    jp_ws(j);
    if (j->s >= j->end || *j->s != '"')
        return DC_EPARSE;
    if (o->n == o->cap) {
        void *t = o->kv;
        xgrow(&t, &o->cap, o->n < 40 ? 40 : o->n + 1, sizeof(*o->kv));
        o->kv = t;
    }
    kv = &o->kv[o->n++];
    memset(kv, 0, sizeof(*kv));
    kv->raw_key = j->s;
    if (jp_string(j, &kv->key))
        return DC_EPARSE;
    kv->raw_key_len = (size_t)(j->s - kv->raw_key);
    jp_ws(j);
    if (j->s >= j->end || *j->s != ':')
        return DC_EPARSE;
    j->s++;
    jp_ws(j);
    return jp_value(j, kv);
}

int warc_json_parse(const char *line, size_t len, struct warc_jobj *o)
{
    struct jp j = { line, line + len, o };

    memset(o, 0, sizeof(*o));
    o->arena = xmalloc(len + 1);
    jp_ws(&j);
    if (j.s >= j.end || *j.s != '{')
        return DC_EPARSE;
    j.s++;
    jp_ws(&j);
    if (j.s < j.end && *j.s == '}') {
        j.s++;
    } else {
        for (;;) {
            if (jp_member(&j, o))
                return DC_EPARSE;
            jp_ws(&j);
            if (j.s < j.end && *j.s == ',') {
                j.s++;
                continue;
            }
            if (j.s < j.end && *j.s == '}') {
                j.s++;
                break;
            }
            return DC_EPARSE;
        }
    }
    jp_ws(&j);
    return j.s == j.end ? DC_OK : DC_EPARSE;
}

void warc_jobj_release(struct warc_jobj *o)
{
    if (!o)
        return;
    free(o->kv);
    free(o->arena);
    memset(o, 0, sizeof(*o));
}

const struct warc_jkv *warc_jobj_get(const struct warc_jobj *o, const char *key)
{
    /* the last occurrence wins, as in most JSON readers */
    for (size_t i = o->n; i-- > 0;)
        if (o->kv[i].key[0] == key[0] && strcmp(o->kv[i].key, key) == 0)
            return &o->kv[i];
    return NULL;
}
