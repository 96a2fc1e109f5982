/*
 * seen-module.c: dcrawl-seen.so, a Redis module holding the URL seen-set as
 * one native value per frontier partition (layout "mod-u64": key
 * "<prefix>:{p}:S", see seen/seen.h).
 *
 * Value: 256 sub-arrays indexed by a fingerprint's top 8 bits, each a
 * sorted array of distinct uint64 fingerprints. Lookup is a binary search,
 * insert a memmove of the larger members. A sub-array's capacity is a pure
 * function of its length (sub_cap: the length rounded up to one of
 * jemalloc's size classes, 4 per doubling), so only the length is stored
 * and no allocation carries rounding it does not use: about 8.5 bytes per
 * URL, plus 3 KiB per key (the 256 pointers and lengths), which is about
 * 2 bytes per URL at 1.5 M URLs over 1024 partitions. Insert cost grows
 * with the members per sub-array (key size / 256): a partition of 2 M URLs
 * moves about 30 KiB per insert on average.
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
 * The module also holds the frontier's native commands (front-module.h:
 * DCFRONT.POP, .COMPLETE, .ADMIT and their native-queue-layout twins
 * .QPOP, .QCOMPLETE, .QADMIT) and that layout's value types with their
 * small commands: dcfrontq1, a depth's ready set and queues (level-type.h,
 * level-cmds.c), and dcfronts1, a partition's host fields (state-type.h).
 *
 * Thread rules: everything runs on Redis's main thread.
 */
#include <stdlib.h>
#include <string.h>

#include "module-api.h"
#include "front-module.h"
#include "level-type.h"
#include "state-type.h"
#include "seen-set.h"

#define SEEN_SUBS 256
#define SEEN_TYPE_NAME "dcseenset"  /* exactly 9 characters */
#define SEEN_ENCVER 0
#define SEEN_AOF_CHUNK 65536
#define ERR_BLOB "ERR blob length must be a multiple of 8"

/* 3072 bytes: itself a jemalloc size class. */
struct seen_set {
    uint64_t *v[SEEN_SUBS];     /* sub-array b: sorted, distinct, top byte b */
    uint32_t n[SEEN_SUBS];      /* its length; capacity sub_cap(n) */
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

/* Capacity of a sub-array of n members: n itself up to 2, even up to 8,
 * then rounded up to a quarter of the power of two below it (10, 12, 14,
 * 16, 20, 24, ...): times 8 bytes, exactly jemalloc's size classes. */
static uint64_t sub_cap(uint64_t n)
{
    uint64_t step;

    if (n <= 2)
        return n;
    if (n <= 8)
        return (n + 1) & ~(uint64_t)1;
    step = (uint64_t)1 << (63 - __builtin_clzll(n - 1) - 2);
    return (n + step - 1) & ~(step - 1);
}

static uint64_t set_count(const struct seen_set *set)
{
    uint64_t c = 0;

    for (int i = 0; i < SEEN_SUBS; i++)
        c += set->n[i];
    return c;
}

/* First index of v[0..n) whose member is >= fp. */
static uint32_t sub_lower(const uint64_t *v, uint32_t n, uint64_t fp)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int set_has(const struct seen_set *set, uint64_t fp)
{
    const uint64_t *v = set->v[fp >> 56];
    uint32_t n = set->n[fp >> 56], i = sub_lower(v, n, fp);

    return i < n && v[i] == fp;
}

/* 1 if inserted, 0 if present, -1 if the sub-array is full (2^32 - 1
 * members, 32 GiB). */
static int set_add(struct seen_set *set, uint64_t fp)
{
    unsigned b = (unsigned)(fp >> 56);
    uint64_t *v = set->v[b];
    uint32_t n = set->n[b], i = sub_lower(v, n, fp);

    if (i < n && v[i] == fp)
        return 0;
    if (n == UINT32_MAX)
        return -1;
    if (sub_cap(n) == n) {
        v = RedisModule_Realloc(v, (size_t)sub_cap(n + 1) * sizeof(*v));
        set->v[b] = v;
    }
    memmove(v + i + 1, v + i, (size_t)(n - i) * sizeof(*v));
    v[i] = fp;
    set->n[b] = n + 1;
    return 1;
}

static void set_free(void *value)
{
    struct seen_set *set = value;

    if (!set)
        return;
    for (int i = 0; i < SEEN_SUBS; i++)
        RedisModule_Free(set->v[i]);
    RedisModule_Free(set);
}

/* ---- commands ---- */

/* Open name with mode: *key (NULL for a missing key opened read-only) and
 * *set = its value, or NULL when empty. Returns -1 (the key closed) when
 * it holds another type. */
static int open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
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
        return -1;
    }
    *set = RedisModule_ModuleTypeGetValue(*key);
    return 0;
}

/* open_value, replying WRONGTYPE on -1 */
static int open_seen(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                     RedisModuleKey **key, struct seen_set **set)
{
    if (open_value(ctx, name, mode, key, set)) {
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return -1;
    }
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

int seen_add_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                  const unsigned char *blob, size_t n, char *out,
                  size_t *added)
{
    struct seen_set *set;
    RedisModuleKey *key;
    int full = 0;

    *added = 0;
    if (open_value(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, &key,
                   &set))
        return SEEN_WRONGTYPE;
    if (!set && n) {
        set = RedisModule_Calloc(1, sizeof(*set));
        RedisModule_ModuleTypeSetValue(key, seen_type, set);
    }
    for (size_t i = 0; i < n && !full; i++) {
        int isnew = set_add(set, load_le(blob + 8 * i));
        full = isnew < 0;
        out[i] = isnew > 0 ? '1' : '0';
        *added += isnew > 0;
    }
    RedisModule_CloseKey(key);
    return full ? SEEN_FULL : 0; /* what was inserted stays */
}

void seen_prefetch_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                        const unsigned char *blob, size_t n)
{
    struct seen_set *set;
    RedisModuleKey *key;

    if (open_value(ctx, name, REDISMODULE_READ, &key, &set))
        return;
    for (size_t i = 0; set && i < n; i++) {
        unsigned b = blob[8 * i + 7]; /* the top byte: little-endian */
        const char *v = (const char *)set->v[b];
        size_t bytes = (size_t)set->n[b] * sizeof(uint64_t);

        if (bytes > 2048)
            bytes = 2048;
        for (size_t at = 0; at < bytes; at += 64)
            __builtin_prefetch(v + at);
    }
    RedisModule_CloseKey(key);
}

/* "CMD key blob": the blob, its n fingerprints and a flags buffer of n
 * bytes (the caller frees it); NULL after replying to a bad call. */
static const unsigned char *blob_call(RedisModuleCtx *ctx,
                                      RedisModuleString **argv, int argc,
                                      size_t *n, char **out)
{
    const unsigned char *blob;

    if (argc != 3) {
        RedisModule_WrongArity(ctx);
        return NULL;
    }
    if (!(blob = blob_arg(argv[2], n))) {
        RedisModule_ReplyWithError(ctx, ERR_BLOB);
        return NULL;
    }
    *out = RedisModule_Alloc(*n ? *n : 1);
    return blob;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    const unsigned char *blob;
    size_t n, added = 0;
    char *out;
    int rc;

    if (!(blob = blob_call(ctx, argv, argc, &n, &out)))
        return REDISMODULE_OK;
    rc = seen_add_blob(ctx, argv[1], blob, n, out, &added);
    if (rc) /* full: a retry answers what was inserted '0' */
        RedisModule_ReplyWithError(ctx, seen_errstr(rc));
    else
        RedisModule_ReplyWithStringBuffer(ctx, out, n);
    RedisModule_Free(out);
    if (added)
        RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

const char *seen_errstr(int rc)
{
    return rc == SEEN_FULL ? "ERR seen-set sub-array full"
                           : REDISMODULE_ERRORMSG_WRONGTYPE;
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

int seen_check_blob(RedisModuleCtx *ctx, RedisModuleString *name,
                    const unsigned char *blob, size_t n, char *out)
{
    struct seen_set *set;
    RedisModuleKey *key;

    if (open_value(ctx, name, REDISMODULE_READ, &key, &set))
        return SEEN_WRONGTYPE;
    for (size_t i = 0; i < n; i++)
        out[i] = set && set_has(set, load_le(blob + 8 * i)) ? '0' : '1';
    RedisModule_CloseKey(key);
    unflag_repeats(blob, out, n);
    return 0;
}

static int cmd_check(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    const unsigned char *blob;
    size_t n;
    char *out;
    int rc;

    if (!(blob = blob_call(ctx, argv, argc, &n, &out)))
        return REDISMODULE_OK;
    if ((rc = seen_check_blob(ctx, argv[1], blob, n, out)))
        RedisModule_ReplyWithError(ctx, seen_errstr(rc));
    else
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
    count = set ? (long long)set_count(set) : 0;
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

    RedisModule_SaveUnsigned(io, set_count(set));
    for (int i = 0; i < SEEN_SUBS; i++) {
        size_t n = set->n[i];
        RedisModule_SaveUnsigned(io, n);
        if (!n)
            continue;
        if (n * 8 > cap) {
            cap = n * 8;
            buf = RedisModule_Realloc(buf, cap);
        }
        members_le(set->v[i], n, buf);
        RedisModule_SaveStringBuffer(io, (const char *)buf, n * 8);
    }
    RedisModule_Free(buf);
}

/* Sub-array i from an RDB string: sorted, distinct, top byte i. */
static int sub_load(struct seen_set *set, int i, const char *buf, size_t len,
                    uint64_t n)
{
    uint64_t *v;

    if (len != n * 8)
        return -1;
    v = set->v[i] = RedisModule_Alloc((size_t)sub_cap(n) * sizeof(*v));
    set->n[i] = (uint32_t)n;
    for (uint64_t k = 0; k < n; k++) {
        v[k] = load_le((const unsigned char *)buf + 8 * k);
        if ((int)(v[k] >> 56) != i || (k && v[k] <= v[k - 1]))
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
        bad = !buf || sub_load(set, i, buf, len, n);
        RedisModule_Free(buf);
        if (bad)
            goto bad;
        total += n;
    }
    if (total != count)
        goto bad;
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
        for (uint32_t k = 0; k < set->n[i]; k++) {
            store_le(buf + 8 * m++, set->v[i][k]);
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
        bytes += (size_t)sub_cap(set->n[i]) * sizeof(uint64_t);
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

    if (module_api_init(ctx, "dcseen", 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    (void)argv;
    (void)argc;
    if (lvl_register(ctx) != REDISMODULE_OK ||
        hst_register(ctx) != REDISMODULE_OK)
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
                                  "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.pop", front_cmd_pop,
                                  "write deny-oom getkeys-api", 0, 0, 0) ||
        RedisModule_CreateCommand(ctx, "dcfront.complete", front_cmd_complete,
                                  "write deny-oom getkeys-api", 0, 0, 0) ||
        RedisModule_CreateCommand(ctx, "dcfront.admit", front_cmd_admit,
                                  "write deny-oom getkeys-api", 0, 0, 0) ||
        RedisModule_CreateCommand(ctx, "dcfront.qpop", front_cmd_qpop,
                                  "write deny-oom getkeys-api", 0, 0, 0) ||
        RedisModule_CreateCommand(ctx, "dcfront.qcomplete", front_cmd_qcomplete,
                                  "write deny-oom getkeys-api", 0, 0, 0) ||
        RedisModule_CreateCommand(ctx, "dcfront.qadmit", front_cmd_qadmit,
                                  "write deny-oom getkeys-api", 0, 0, 0))
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
