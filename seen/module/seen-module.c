/*
 * seen-module.c: dcrawl-seen.so, a Redis module holding the URL seen-set as
 * one native value per frontier partition (layout "mod-u64": key
 * "<prefix>:{p}:S", see seen/seen.h).
 *
 * Value: 256 sub-arrays indexed by a fingerprint's top 8 bits, each a
 * sorted array of distinct uint64 fingerprints. Lookup is a binary search,
 * insert a memmove of the larger members; an array grows by about 1/8 of
 * its size, so Redis holds about 9 bytes per URL (plus 4 KiB per key).
 * Insert cost grows with the members per sub-array (key size / 256): a
 * partition of 2 M URLs moves about 30 KiB per insert on average.
 *
 * Commands (blob = N little-endian uint64 fingerprints, 8*N bytes):
 *   DCSEEN.ADD key blob    insert if absent; reply: N bytes, '1' = this
 *                          call inserted it, '0' = was present (a repeat
 *                          inside the blob: its first copy '1', later '0')
 *   DCSEEN.CHECK key blob  the same flags, nothing written ('1' = absent)
 *   DCSEEN.CARD key        number of fingerprints
 * ADD is replicated verbatim (it is idempotent) when it inserted anything.
 * The value persists in RDB (per sub-array: count, then the members as one
 * little-endian string) and rewrites to AOF as DCSEEN.ADD chunks of at
 * most 64 Ki members.
 *
 * Thread rules: everything runs on Redis's main thread.
 */
#include <stdlib.h>
#include <string.h>

#include "module-api.h"

#define SEEN_SUBS 256
#define SEEN_TYPE_NAME "dcseenset"  /* exactly 9 characters */
#define SEEN_ENCVER 0
#define SEEN_AOF_CHUNK 65536
#define ERR_BLOB "ERR blob length must be a multiple of 8"

struct seen_sub {
    uint64_t *v;                /* sorted, distinct */
    uint32_t n, cap;
};

struct seen_set {
    uint64_t count;
    struct seen_sub sub[SEEN_SUBS];
};

static RedisModuleType *seen_type;

static uint64_t load_le(const unsigned char *p)
{
    uint64_t x = 0;

    for (int i = 7; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

static void store_le(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++, x >>= 8)
        p[i] = (unsigned char)x;
}

/* First index whose member is >= fp. */
static uint32_t sub_lower(const struct seen_sub *s, uint64_t fp)
{
    uint32_t lo = 0, hi = s->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int set_has(const struct seen_set *set, uint64_t fp)
{
    const struct seen_sub *s = &set->sub[fp >> 56];
    uint32_t i = sub_lower(s, fp);

    return i < s->n && s->v[i] == fp;
}

/* 1 if inserted, 0 if present, -1 if the sub-array is full (2^32 - 1
 * members, 32 GiB). */
static int set_add(struct seen_set *set, uint64_t fp)
{
    struct seen_sub *s = &set->sub[fp >> 56];
    uint32_t i = sub_lower(s, fp);

    if (i < s->n && s->v[i] == fp)
        return 0;
    if (s->n == s->cap) {
        uint64_t cap = (uint64_t)s->cap + s->cap / 8 + 4;
        if (cap > UINT32_MAX)
            cap = UINT32_MAX;
        if (cap == s->cap)
            return -1;
        s->v = RedisModule_Realloc(s->v, (size_t)cap * sizeof(*s->v));
        s->cap = (uint32_t)cap;
    }
    memmove(s->v + i + 1, s->v + i, (size_t)(s->n - i) * sizeof(*s->v));
    s->v[i] = fp;
    s->n++;
    set->count++;
    return 1;
}

static void set_free(void *value)
{
    struct seen_set *set = value;

    if (!set)
        return;
    for (int i = 0; i < SEEN_SUBS; i++)
        RedisModule_Free(set->sub[i].v);
    RedisModule_Free(set);
}

/* ---- commands ---- */

/* Open name with mode: *key (NULL for a missing key opened read-only) and
 * *set = its value, or NULL when empty. Returns -1, after replying, when it
 * holds another type. */
static int open_seen(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                     RedisModuleKey **key, struct seen_set **set)
{
    int t;

    *key = RedisModule_OpenKey(ctx, name, mode);
    t = RedisModule_KeyType(*key);
    *set = NULL;
    if (t == REDISMODULE_KEYTYPE_EMPTY)
        return 0;
    if (t != REDISMODULE_KEYTYPE_MODULE ||
        RedisModule_ModuleTypeGetType(*key) != seen_type) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return -1;
    }
    *set = RedisModule_ModuleTypeGetValue(*key);
    return 0;
}

static const unsigned char *blob_arg(RedisModuleString *arg, size_t *n)
{
    size_t len;
    const char *p = RedisModule_StringPtrLen(arg, &len);

    if (len % 8)
        return NULL;
    *n = len / 8;
    return (const unsigned char *)p;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    const unsigned char *blob;
    struct seen_set *set;
    RedisModuleKey *key;
    size_t n, added = 0;
    int full = 0;
    char *out;

    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (!(blob = blob_arg(argv[2], &n)))
        return RedisModule_ReplyWithError(ctx, ERR_BLOB);
    if (open_seen(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key,
                  &set))
        return REDISMODULE_OK;
    if (!set && n) {
        set = RedisModule_Calloc(1, sizeof(*set));
        RedisModule_ModuleTypeSetValue(key, seen_type, set);
    }
    out = RedisModule_Alloc(n ? n : 1);
    for (size_t i = 0; i < n && !full; i++) {
        int isnew = set_add(set, load_le(blob + 8 * i));
        full = isnew < 0;
        out[i] = isnew > 0 ? '1' : '0';
        added += isnew > 0;
    }
    RedisModule_CloseKey(key);
    if (full) /* what was inserted stays: a retry answers it '0' */
        RedisModule_ReplyWithError(ctx, "ERR seen-set sub-array full");
    else
        RedisModule_ReplyWithStringBuffer(ctx, out, n);
    RedisModule_Free(out);
    if (added)
        RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

struct fp_at {
    uint64_t fp;
    size_t at;
};

static int fp_at_cmp(const void *a, const void *b)
{
    const struct fp_at *x = a, *y = b;

    if (x->fp != y->fp)
        return x->fp < y->fp ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Later copies of an absent fingerprint inside one blob answer '0'. */
static void unflag_repeats(const unsigned char *blob, char *out, size_t n)
{
    struct fp_at *a;
    size_t m = 0;

    for (size_t i = 0; i < n; i++)
        m += out[i] == '1';
    if (m < 2)
        return;
    a = RedisModule_Alloc(m * sizeof(*a));
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (out[i] == '1')
            a[m++] = (struct fp_at){load_le(blob + 8 * i), i};
    qsort(a, m, sizeof(*a), fp_at_cmp);
    for (size_t k = 1; k < m; k++)
        if (a[k].fp == a[k - 1].fp)
            out[a[k].at] = '0';
    RedisModule_Free(a);
}

static int cmd_check(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    const unsigned char *blob;
    struct seen_set *set;
    RedisModuleKey *key;
    size_t n;
    char *out;

    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (!(blob = blob_arg(argv[2], &n)))
        return RedisModule_ReplyWithError(ctx, ERR_BLOB);
    if (open_seen(ctx, argv[1], REDISMODULE_READ, &key, &set))
        return REDISMODULE_OK;
    out = RedisModule_Alloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        out[i] = set && set_has(set, load_le(blob + 8 * i)) ? '0' : '1';
    RedisModule_CloseKey(key);
    unflag_repeats(blob, out, n);
    RedisModule_ReplyWithStringBuffer(ctx, out, n);
    RedisModule_Free(out);
    return REDISMODULE_OK;
}

static int cmd_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    struct seen_set *set;
    RedisModuleKey *key;
    long long count;

    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    if (open_seen(ctx, argv[1], REDISMODULE_READ, &key, &set))
        return REDISMODULE_OK;
    count = set ? (long long)set->count : 0;
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, count);
}

/* ---- persistence and memory ---- */

/* n members of v as little-endian bytes in buf (8 * n bytes). */
static void members_le(const uint64_t *v, size_t n, unsigned char *buf)
{
    for (size_t i = 0; i < n; i++)
        store_le(buf + 8 * i, v[i]);
}

static void seen_rdb_save(RedisModuleIO *io, void *value)
{
    const struct seen_set *set = value;
    unsigned char *buf = NULL;
    size_t cap = 0;

    RedisModule_SaveUnsigned(io, set->count);
    for (int i = 0; i < SEEN_SUBS; i++) {
        const struct seen_sub *s = &set->sub[i];
        RedisModule_SaveUnsigned(io, s->n);
        if (!s->n)
            continue;
        if ((size_t)s->n * 8 > cap) {
            cap = (size_t)s->n * 8;
            buf = RedisModule_Realloc(buf, cap);
        }
        members_le(s->v, s->n, buf);
        RedisModule_SaveStringBuffer(io, (const char *)buf, (size_t)s->n * 8);
    }
    RedisModule_Free(buf);
}

/* Sub-array i from an RDB string: sorted, distinct, top byte i. */
static int sub_load(struct seen_sub *s, int i, const char *buf, size_t len,
                    uint64_t n)
{
    if (len != n * 8)
        return -1;
    s->v = RedisModule_Alloc((size_t)n * sizeof(*s->v));
    s->n = s->cap = (uint32_t)n;
    for (uint64_t k = 0; k < n; k++) {
        s->v[k] = load_le((const unsigned char *)buf + 8 * k);
        if ((int)(s->v[k] >> 56) != i || (k && s->v[k] <= s->v[k - 1]))
            return -1;
    }
    return 0;
}

static void *seen_rdb_load(RedisModuleIO *io, int encver)
{
    struct seen_set *set;
    uint64_t count, total = 0;

    if (encver != SEEN_ENCVER)
        return NULL;
    set = RedisModule_Calloc(1, sizeof(*set));
    count = RedisModule_LoadUnsigned(io);
    for (int i = 0; i < SEEN_SUBS; i++) {
        uint64_t n = RedisModule_LoadUnsigned(io);
        size_t len = 0;
        char *buf;
        int bad;
        if (!n)
            continue;
        if (n > UINT32_MAX)
            goto bad;
        buf = RedisModule_LoadStringBuffer(io, &len);
        bad = !buf || sub_load(&set->sub[i], i, buf, len, n);
        RedisModule_Free(buf);
        if (bad)
            goto bad;
        total += n;
    }
    if (total != count)
        goto bad;
    set->count = count;
    return set;
bad:
    RedisModule_Log(NULL, "warning", "dcseen: corrupt seen-set in RDB");
    set_free(set);
    return NULL;
}

static void seen_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key,
                             void *value)
{
    const struct seen_set *set = value;
    unsigned char *buf = RedisModule_Alloc(SEEN_AOF_CHUNK * 8);
    size_t m = 0;

    for (int i = 0; i < SEEN_SUBS; i++)
        for (uint32_t k = 0; k < set->sub[i].n; k++) {
            store_le(buf + 8 * m++, set->sub[i].v[k]);
            if (m == SEEN_AOF_CHUNK) {
                RedisModule_EmitAOF(aof, "DCSEEN.ADD", "sb", key,
                                    (const char *)buf, m * 8);
                m = 0;
            }
        }
    if (m)
        RedisModule_EmitAOF(aof, "DCSEEN.ADD", "sb", key, (const char *)buf,
                            m * 8);
    RedisModule_Free(buf);
}

static size_t seen_mem_usage(const void *value)
{
    const struct seen_set *set = value;
    size_t bytes = sizeof(*set);

    for (int i = 0; i < SEEN_SUBS; i++)
        bytes += (size_t)set->sub[i].cap * sizeof(uint64_t);
    return bytes;
}

__attribute__((visibility("default"))) int
RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    RedisModuleTypeMethods tm = {
        .version = REDISMODULE_TYPE_METHOD_VERSION_1,
        .rdb_load = seen_rdb_load,
        .rdb_save = seen_rdb_save,
        .aof_rewrite = seen_aof_rewrite,
        .mem_usage = seen_mem_usage,
        .digest = NULL,
        .free = set_free,
    };

    (void)argv;
    (void)argc;
    if (module_api_init(ctx, "dcseen", 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    seen_type = RedisModule_CreateDataType(ctx, SEEN_TYPE_NAME, SEEN_ENCVER,
                                           &tm);
    if (!seen_type)
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "dcseen.add", cmd_add,
                                  "write deny-oom", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcseen.check", cmd_check, "readonly",
                                  1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcseen.card", cmd_card,
                                  "readonly fast", 1, 1, 1))
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
