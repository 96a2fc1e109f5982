/*
 * front-state.c: a host's state field (front-state.h), parsed and written
 * exactly as frontier/lua/lib/common.lua does (parse_st, hset_st, low,
 * lease_add, mark), and the small helpers the native commands share
 * (HINCRBY on a hash, qenc).
 */
#include <stdio.h>
#include <string.h>

#include "front-state.h"
#include "state-type.h"

static const char *digits(const char *p, const char *end, long long *v,
                          int *n)
{
    *v = 0;
    *n = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, (*n)++)
        *v = *v * 10 + (*p - '0');
    return p;
}

/* parse_st's pattern '^(%-?%d+)@?(%d*):?(%d*) (%d+) ?([%d,]*)$'; 0 when
 * it does not match. */
static int parse(const char *p, size_t len, struct front_st *st)
{
    const char *end = p + len, *q;
    long long a, td = 0, tn = 0, nx;
    int neg = 0, n, ntd = 0, ntn = 0;

    if (p < end && *p == '-')
        neg = 1, p++;
    p = digits(p, end, &a, &n);
    if (!n)
        return 0;
    if (p < end && *p == '@')
        p++;
    p = digits(p, end, &td, &ntd);
    if (p < end && *p == ':')
        p++;
    p = digits(p, end, &tn, &ntn);
    if (p >= end || *p != ' ')
        return 0;
    p = digits(p + 1, end, &nx, &n);
    if (!n)
        return 0;
    if (p < end && *p == ' ')
        p++;
    for (q = p; q < end; q++)
        if (!((*q >= '0' && *q <= '9') || *q == ','))
            return 0;
    if ((size_t)(end - p) >= sizeof(st->m))
        return 0;
    st->act = neg ? -a : a;
    st->nx = nx;
    st->has_td = ntd > 0;
    st->td = td;
    st->tn = st->has_td ? (ntn ? tn : st->act) : 0;
    memcpy(st->m, p, (size_t)(end - p));
    st->m[end - p] = '\0';
    return 1;
}

void front_st_get(RedisModuleKey *hash, RedisModuleString *host,
                  struct front_st *st)
{
    RedisModuleString *v = NULL;
    const char *p;
    size_t len, hlen;
    int wrong;
    struct hst *m = hst_of(hash, 0, &wrong);

    memset(st, 0, sizeof(*st));
    if (m) { /* the native layout's map */
        const char *h = RedisModule_StringPtrLen(host, &hlen);
        if (!(p = hst_get(m, h, hlen, &len)))
            return;
    } else {
        if (RedisModule_KeyType(hash) != REDISMODULE_KEYTYPE_HASH ||
            RedisModule_HashGet(hash, REDISMODULE_HASH_NONE, host, &v,
                                NULL) != REDISMODULE_OK || !v)
            return;
        p = RedisModule_StringPtrLen(v, &len);
    }
    if (!parse(p, len, st))
        memset(st, 0, sizeof(*st));
}

void front_st_set(RedisModuleCtx *ctx, RedisModuleKey *hash, int native,
                  RedisModuleString *host, const struct front_st *st)
{
    char buf[FRONT_MARKS + 96];
    int n, wrong, del = st->act <= 0 && st->nx <= 0 && !st->m[0];
    struct hst *m = native ? hst_of(hash, !del, &wrong) : NULL;
    size_t hlen;
    const char *h = RedisModule_StringPtrLen(host, &hlen);

    if (del && m) {
        hst_del(m, h, hlen);
        if (!hst_count(m)) /* as Redis deletes an emptied HASH */
            RedisModule_DeleteKey(hash);
        return;
    }
    if (del) {
        if (!native)
            RedisModule_HashSet(hash, REDISMODULE_HASH_NONE, host,
                                REDISMODULE_HASH_DELETE, NULL);
        return;
    }
    n = snprintf(buf, sizeof(buf), "%lld", st->act > 0 ? st->act : 0);
    if (st->act > 0 && st->has_td && st->tn > 0) {
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "@%lld", st->td);
        if (st->tn != st->act)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":%lld", st->tn);
    }
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %lld", st->nx);
    if (st->m[0])
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s", st->m);
    if (m)
        hst_set(m, h, hlen, buf, (size_t)n);
    else
        RedisModule_HashSet(hash, REDISMODULE_HASH_NONE, host,
                            RedisModule_CreateString(ctx, buf, (size_t)n),
                            NULL);
}

int front_open_state(RedisModuleCtx *ctx, RedisModuleString *name,
                     int native, RedisModuleKey **k)
{
    int wrong;

    if (!native)
        return front_open_as(ctx, name, REDISMODULE_KEYTYPE_HASH, k);
    *k = front_open(ctx, name);
    hst_of(*k, 0, &wrong);
    return wrong ? -1 : 0;
}

long long front_low(const struct front_st *st, long long d)
{
    if (st->has_td && d < st->td)
        return st->act - st->tn;
    return st->act;
}

void front_lease_add(struct front_st *st, long long d, long long k)
{
    if (k <= 0)
        return;
    if (st->has_td && st->td == d) {
        st->act += k;
        st->tn += k;
    } else if (!st->has_td || d > st->td) {
        st->act += k;
        st->has_td = 1;
        st->td = d;
        st->tn = k;
    } else {
        st->act += k;
    }
}

int front_mark(const char *m, const char *d, char *out)
{
    size_t lm = strlen(m), ld = strlen(d);
    const char *p;

    if (!lm || !strcmp(m, d)) {
        if (strcmp(m, d) && ld < FRONT_MARKS)
            memmove(out, d, ld + 1);
        else if (out != m)
            memmove(out, m, lm + 1);
        return strcmp(m, d) != 0;
    }
    for (p = m; p; p = strchr(p, ',')) { /* ','..m..',' holds ','..d..',' */
        if (*p == ',')
            p++;
        if (!strncmp(p, d, ld) && (p[ld] == ',' || !p[ld])) {
            if (out != m)
                memmove(out, m, lm + 1);
            return 0;
        }
    }
    if (out != m)
        memmove(out, m, lm + 1);
    if (lm + 1 + ld < FRONT_MARKS) {
        out[lm] = ',';
        memcpy(out + lm + 1, d, ld + 1);
    }
    return 1;
}

/* HINCRBY hash field k; *out the new value. -1 when the field is not an
 * integer. */
int front_hincr(RedisModuleCtx *ctx, RedisModuleKey *hash, const char *field,
                size_t flen, long long k, long long *out)
{
    RedisModuleString *f = RedisModule_CreateString(ctx, field, flen);
    RedisModuleString *v = NULL;
    long long x = 0;
    char buf[32];
    int n;

    if (RedisModule_HashGet(hash, REDISMODULE_HASH_NONE, f, &v, NULL) !=
        REDISMODULE_OK)
        return -1;
    if (v && RedisModule_StringToLongLong(v, &x) != REDISMODULE_OK)
        return -1;
    x += k;
    n = snprintf(buf, sizeof(buf), "%lld", x);
    RedisModule_HashSet(hash, REDISMODULE_HASH_NONE, f,
                        RedisModule_CreateString(ctx, buf, (size_t)n), NULL);
    *out = x;
    return 0;
}

/* qenc(url, host): "http://<host>" or "https://<host>" kept as \1 or \2 */
size_t front_qsplit(const char *url, size_t ulen, const char *host,
                    size_t hlen, char *tag)
{
    *tag = 0;
    if (ulen >= 7 + hlen && !memcmp(url, "http://", 7) &&
        !memcmp(url + 7, host, hlen)) {
        *tag = 1;
        return 7 + hlen;
    }
    if (ulen >= 8 + hlen && !memcmp(url, "https://", 8) &&
        !memcmp(url + 8, host, hlen)) {
        *tag = 2;
        return 8 + hlen;
    }
    return 0;
}

RedisModuleString *front_qenc(RedisModuleCtx *ctx, const char *url,
                              size_t ulen, const char *host, size_t hlen)
{
    char small[1024], *b = small, tag;
    RedisModuleString *s;
    size_t pre = front_qsplit(url, ulen, host, hlen, &tag);

    if (!tag)
        return RedisModule_CreateString(ctx, url, ulen);
    if (ulen - pre + 1 > sizeof(small))
        b = RedisModule_Alloc(ulen - pre + 1);
    b[0] = tag;
    memcpy(b + 1, url + pre, ulen - pre);
    s = RedisModule_CreateString(ctx, b, ulen - pre + 1);
    if (b != small)
        RedisModule_Free(b);
    return s;
}

RedisModuleKey *front_open(RedisModuleCtx *ctx, RedisModuleString *name)
{
    return RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
}

RedisModuleKey *front_open_text(RedisModuleCtx *ctx, const char *name,
                                size_t len)
{
    return front_open(ctx, RedisModule_CreateString(ctx, name, len));
}

int front_is(RedisModuleKey *k, int type)
{
    int t = RedisModule_KeyType(k);
    return t == REDISMODULE_KEYTYPE_EMPTY || t == type;
}

int front_open_as(RedisModuleCtx *ctx, RedisModuleString *name, int type,
                  RedisModuleKey **k)
{
    *k = front_open(ctx, name);
    return front_is(*k, type) ? 0 : -1;
}

void *front_value_of(RedisModuleKey *k, RedisModuleType *t,
                     void *(*make)(void), int *wrong)
{
    int kt = RedisModule_KeyType(k);
    void *v;

    *wrong = 0;
    if (kt == REDISMODULE_KEYTYPE_EMPTY) {
        if (!make)
            return NULL;
        v = make();
        RedisModule_ModuleTypeSetValue(k, t, v);
        return v;
    }
    if (kt != REDISMODULE_KEYTYPE_MODULE ||
        RedisModule_ModuleTypeGetType(k) != t) {
        *wrong = 1;
        return NULL;
    }
    return RedisModule_ModuleTypeGetValue(k);
}

long long front_ready(RedisModuleKey *h)
{
    double score = -1;

    if (RedisModule_KeyType(h) != REDISMODULE_KEYTYPE_ZSET ||
        RedisModule_ZsetFirstInScoreRange(h, -1.0 / 0.0, FRONT_BUSY, 0, 1) !=
            REDISMODULE_OK)
        return -1;
    if (RedisModule_ZsetRangeEndReached(h) ||
        !RedisModule_ZsetRangeCurrentElement(h, &score))
        score = -1;
    RedisModule_ZsetRangeStop(h);
    return (long long)score;
}

void front_count_add(struct front_counts *c, const char *name, long long k)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].name, name)) {
            c->v[i].n += k;
            return;
        }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->v = RedisModule_Realloc(c->v, c->cap * sizeof(*c->v));
    }
    snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%s", name);
    c->v[c->n++].n = k;
}

int front_counts_flush(RedisModuleCtx *ctx, RedisModuleKey *hash,
                       struct front_counts *c, int sign, int drop)
{
    int rc = 0;

    for (size_t i = 0; i < c->n && !rc; i++) {
        const char *f = c->v[i].name;
        long long v;

        if (front_hincr(ctx, hash, f, strlen(f), sign * c->v[i].n, &v))
            rc = -1;
        else if (drop && v <= 0)
            RedisModule_HashSet(hash, REDISMODULE_HASH_NONE,
                                RedisModule_CreateString(ctx, f, strlen(f)),
                                REDISMODULE_HASH_DELETE, NULL);
    }
    RedisModule_Free(c->v);
    memset(c, 0, sizeof(*c));
    return rc;
}
