/*
 * tjson.h: a small JSON reader for unit-test data files (RFC 8259).
 *
 * Header-only; every function is static and marked unused so a test may use
 * any subset. tj_parse() builds a tree of struct tj nodes: strings are
 * decoded (escapes, \uXXXX with surrogate pairs -> UTF-8; a string may hold
 * NUL bytes, so use len), arrays keep items/n, objects keep keys+items/n in
 * file order. Nesting is limited to TJ_MAX_DEPTH so hostile input cannot
 * exhaust the stack. Memory comes from malloc; a failure returns NULL.
 */
#ifndef DC_TJSON_H
#define DC_TJSON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TJ_UNUSED __attribute__((unused))
#define TJ_MAX_DEPTH 256

enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ };

struct tj {
    int type;
    char *str;  /* TJ_STR: decoded bytes, NUL-terminated, len excludes it */
    size_t len;
    double num; /* TJ_NUM */
    int b;      /* TJ_BOOL */
    struct tj **items; /* TJ_ARR, TJ_OBJ */
    char **keys;       /* TJ_OBJ */
    size_t n;
};

struct tj__in {
    const char *s;
    size_t len, pos;
};

static struct tj *tj__value(struct tj__in *in, int depth);

static TJ_UNUSED void tj_free(struct tj *v)
{
    size_t i;

    if (!v)
        return;
    for (i = 0; i < v->n; i++) {
        tj_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static void tj__ws(struct tj__in *in)
{
    while (in->pos < in->len) {
        char c = in->s[in->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        in->pos++;
    }
}

static int tj__peek(struct tj__in *in)
{
    tj__ws(in);
    return in->pos < in->len ? (unsigned char)in->s[in->pos] : -1;
}

static int tj__lit(struct tj__in *in, const char *word)
{
    size_t n = strlen(word);

    if (in->len - in->pos < n || memcmp(in->s + in->pos, word, n) != 0)
        return 0;
    in->pos += n;
    return 1;
}

static long tj__hex4(struct tj__in *in)
{
    long v = 0;
    int i;

    if (in->len - in->pos < 4)
        return -1;
    for (i = 0; i < 4; i++) {
        char c = in->s[in->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t tj__utf8(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \u escape (the "\u" already read), pairing surrogates; lone
 * surrogates become U+FFFD as most decoders do. */
static long tj__uescape(struct tj__in *in)
{
    long hi = tj__hex4(in), lo;
    size_t save;

    if (hi < 0)
        return -1;
    if (hi < 0xD800 || hi > 0xDFFF)
        return hi;
    if (hi > 0xDBFF)
        return 0xFFFD;
    save = in->pos;
    if (in->len - in->pos >= 2 && in->s[in->pos] == '\\' &&
        in->s[in->pos + 1] == 'u') {
        in->pos += 2;
        lo = tj__hex4(in);
        if (lo >= 0xDC00 && lo <= 0xDFFF)
            return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
    }
    in->pos = save;
    return 0xFFFD;
}

static int tj__escape(struct tj__in *in, char *out, size_t *o)
{
    char c;
    long cp;

    if (in->pos >= in->len)
        return -1;
    c = in->s[in->pos++];
    switch (c) {
    case '"': case '\\': case '/': out[(*o)++] = c; return 0;
    case 'b': out[(*o)++] = '\b'; return 0;
    case 'f': out[(*o)++] = '\f'; return 0;
    case 'n': out[(*o)++] = '\n'; return 0;
    case 'r': out[(*o)++] = '\r'; return 0;
    case 't': out[(*o)++] = '\t'; return 0;
    case 'u':
        cp = tj__uescape(in);
        if (cp < 0)
            return -1;
        *o += tj__utf8(out + *o, (unsigned long)cp);
        return 0;
    default:
        return -1;
    }
}

/* A string at in->pos (the opening quote). Decoded output never exceeds
 * the encoded length plus one, so one buffer of that size suffices. */
static char *tj__string(struct tj__in *in, size_t *lenp)
{
    size_t start = in->pos + 1, end = start, o = 0;
    char *out;

    while (end < in->len && in->s[end] != '"')
        end += in->s[end] == '\\' ? 2 : 1;
    if (end >= in->len)
        return NULL;
    out = malloc(end - start + 4);
    if (!out)
        return NULL;
    in->pos = start;
    while (in->pos < end) {
        char c = in->s[in->pos];
        if ((unsigned char)c < 0x20)
            goto fail;
        in->pos++;
        if (c != '\\')
            out[o++] = c;
        else if (tj__escape(in, out, &o) < 0)
            goto fail;
    }
    in->pos = end + 1;
    out[o] = '\0';
    *lenp = o;
    return out;
fail:
    free(out);
    return NULL;
}

static struct tj *tj__new(int type)
{
    struct tj *v = calloc(1, sizeof(*v));

    if (v)
        v->type = type;
    return v;
}

static int tj__push(struct tj *v, char *key, struct tj *item)
{
    struct tj **items = realloc(v->items, (v->n + 1) * sizeof(*items));

    if (!items)
        return -1;
    v->items = items;
    if (v->type == TJ_OBJ) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
        if (!keys)
            return -1;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

/* One member of an object or array: optional "key":, then a value. */
static int tj__member(struct tj__in *in, struct tj *v, int depth)
{
    char *key = NULL;
    size_t klen;
    struct tj *item;

    if (v->type == TJ_OBJ) {
        if (tj__peek(in) != '"' || !(key = tj__string(in, &klen)))
            return -1;
        if (tj__peek(in) != ':') {
            free(key);
            return -1;
        }
        in->pos++;
    }
    item = tj__value(in, depth + 1);
    if (!item || tj__push(v, key, item) < 0) {
        free(key);
        tj_free(item);
        return -1;
    }
    return 0;
}

static struct tj *tj__container(struct tj__in *in, int type, int depth)
{
    char close = type == TJ_OBJ ? '}' : ']';
    struct tj *v = tj__new(type);

    if (!v)
        return NULL;
    in->pos++;
    if (tj__peek(in) == close) {
        in->pos++;
        return v;
    }
    for (;;) {
        int c;
        if (tj__member(in, v, depth) < 0)
            break;
        c = tj__peek(in);
        in->pos++;
        if (c == close)
            return v;
        if (c != ',')
            break;
    }
    tj_free(v);
    return NULL;
}

static struct tj *tj__number(struct tj__in *in)
{
    char buf[64];
    size_t n = 0;
    char *end;
    struct tj *v;

    while (in->pos < in->len && n < sizeof(buf) - 1 && in->s[in->pos] &&
           strchr("+-0123456789.eE", in->s[in->pos]))
        buf[n++] = in->s[in->pos++];
    buf[n] = '\0';
    if (n == 0 || !(v = tj__new(TJ_NUM)))
        return NULL;
    v->num = strtod(buf, &end);
    if (*end != '\0') {
        tj_free(v);
        return NULL;
    }
    return v;
}

static struct tj *tj__value(struct tj__in *in, int depth)
{
    int c = tj__peek(in);
    struct tj *v;

    if (depth > TJ_MAX_DEPTH)
        return NULL;
    if (c == '{' || c == '[')
        return tj__container(in, c == '{' ? TJ_OBJ : TJ_ARR, depth);
    if (c == '"') {
        if (!(v = tj__new(TJ_STR)))
            return NULL;
        if (!(v->str = tj__string(in, &v->len))) {
            free(v);
            return NULL;
        }
        return v;
    }
    if (tj__lit(in, "null"))
        return tj__new(TJ_NULL);
    if (tj__lit(in, "true") || tj__lit(in, "false")) {
        if ((v = tj__new(TJ_BOOL)))
            v->b = in->s[in->pos - 1] == 'e' && in->s[in->pos - 2] == 'u';
        return v;
    }
    return tj__number(in);
}

static TJ_UNUSED struct tj *tj_parse(const char *s, size_t len)
{
    struct tj__in in = { s, len, 0 };
    struct tj *v;

    if (!s)
        return NULL;
    v = tj__value(&in, 0);
    if (v && tj__peek(&in) != -1) {
        tj_free(v);
        return NULL;
    }
    return v;
}

static TJ_UNUSED struct tj *tj_load_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    struct tj *v = NULL;

    if (!f)
        return NULL;
    do {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap + 65536 + 1);
            if (!nb)
                goto out;
            buf = nb;
            cap += 65536;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    if (!ferror(f))
        v = tj_parse(buf, len);
out:
    free(buf);
    fclose(f);
    return v;
}

static TJ_UNUSED const struct tj *tj_get(const struct tj *obj, const char *key)
{
    size_t i;

    if (!obj || obj->type != TJ_OBJ)
        return NULL;
    for (i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

static TJ_UNUSED const char *tj_str(const struct tj *v)
{
    return v && v->type == TJ_STR ? v->str : NULL;
}

#endif
