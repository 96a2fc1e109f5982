/*
 * state-type.c: the host-field map of the native queue layout
 * (state-type.h): an otab.h table of records, each the host's name then
 * its field text; a field that outgrows its record moves the record (the
 * table is the only pointer to it).
 *
 * RDB: the number of fields, then each host and field as two strings.
 * AOF: DCFRONT.SSET key host field, one per field.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "front-state.h"
#include "otab.h"
#include "state-type.h"

RedisModuleType *hst_type;

struct hrec {
    uint32_t hlen, vlen, cap; /* cap: bytes for the field */
    char data[];              /* host, then the field */
};

struct hst {
    struct otab tab;
    size_t bytes; /* records, for mem_usage */
};

static int rec_is(const void *rec, const char *host, size_t len)
{
    const struct hrec *r = rec;

    return r->hlen == len && !memcmp(r->data, host, len);
}

static void hst_free(void *v)
{
    struct hst *m = v;

    for (size_t at = 0; at < m->tab.cap;) {
        void *r = otab_next(&m->tab, &at);
        RedisModule_Free(r);
    }
    otab_free(&m->tab);
    RedisModule_Free(m);
}

static void *hst_make(void)
{
    return RedisModule_Calloc(1, sizeof(struct hst));
}

struct hst *hst_of(RedisModuleKey *k, int create, int *wrong)
{
    return front_value_of(k, hst_type, create ? hst_make : NULL, wrong);
}

const char *hst_get(const struct hst *m, const char *host, size_t hlen,
                    size_t *vlen)
{
    size_t i;
    const struct hrec *r;

    if (!m)
        return NULL;
    i = otab_find(&m->tab, otab_hash(host, hlen), rec_is, host, hlen);
    if (i == (size_t)-1)
        return NULL;
    r = m->tab.s[i].rec;
    *vlen = r->vlen;
    return r->data + r->hlen;
}

int hst_set(struct hst *m, const char *host, size_t hlen, const char *v,
            size_t vlen)
{
    uint64_t hv = otab_hash(host, hlen);
    size_t i = otab_find(&m->tab, hv, rec_is, host, hlen);
    struct hrec *r = i == (size_t)-1 ? NULL : m->tab.s[i].rec;

    if (r && r->cap >= vlen) {
        memcpy(r->data + r->hlen, v, vlen);
        r->vlen = (uint32_t)vlen;
        return 0;
    }
    if (r) { /* outgrown: a larger record in its slot */
        size_t cap = vlen + 8;
        m->bytes += cap - r->cap;
        r = RedisModule_Realloc(r, sizeof(*r) + hlen + cap);
        r->cap = (uint32_t)cap;
        memcpy(r->data + hlen, v, vlen);
        r->vlen = (uint32_t)vlen;
        m->tab.s[i].rec = r;
        return 0;
    }
    r = RedisModule_Alloc(sizeof(*r) + hlen + vlen + 8);
    r->hlen = (uint32_t)hlen;
    r->vlen = (uint32_t)vlen;
    r->cap = (uint32_t)vlen + 8;
    memcpy(r->data, host, hlen);
    memcpy(r->data + hlen, v, vlen);
    m->bytes += sizeof(*r) + hlen + r->cap;
    otab_add(&m->tab, hv, r);
    return 1;
}

int hst_del(struct hst *m, const char *host, size_t hlen)
{
    size_t i;
    struct hrec *r;

    if (!m)
        return 0;
    i = otab_find(&m->tab, otab_hash(host, hlen), rec_is, host, hlen);
    if (i == (size_t)-1)
        return 0;
    r = m->tab.s[i].rec;
    m->bytes -= sizeof(*r) + r->hlen + r->cap;
    otab_del(&m->tab, i);
    RedisModule_Free(r);
    return 1;
}

void hst_prefetch(const struct hst *m, uint64_t hv, int rec)
{
    otab_prefetch(&m->tab, hv, rec);
}

size_t hst_count(const struct hst *m)
{
    return m ? m->tab.live : 0;
}

int hst_next(const struct hst *m, size_t *at, const char **host,
             size_t *hlen, const char **v, size_t *vlen)
{
    const struct hrec *r = m ? otab_next(&m->tab, at) : NULL;

    if (!r)
        return 0;
    *host = r->data;
    *hlen = r->hlen;
    *v = r->data + r->hlen;
    *vlen = r->vlen;
    return 1;
}

/* ---- persistence ---- */

static void hst_rdb_save(RedisModuleIO *io, void *v)
{
    struct hst *m = v;
    const char *h, *f;
    size_t hl, fl, at = 0;

    RedisModule_SaveUnsigned(io, m->tab.live);
    while (hst_next(m, &at, &h, &hl, &f, &fl)) {
        RedisModule_SaveStringBuffer(io, h, hl);
        RedisModule_SaveStringBuffer(io, f, fl);
    }
}

static void *hst_rdb_load(RedisModuleIO *io, int encver)
{
    struct hst *m;
    uint64_t n;

    if (encver != 1)
        return NULL;
    m = RedisModule_Calloc(1, sizeof(*m));
    n = RedisModule_LoadUnsigned(io);
    for (uint64_t i = 0; i < n; i++) {
        size_t hl = 0, fl = 0;
        char *h = RedisModule_LoadStringBuffer(io, &hl);
        char *f = RedisModule_LoadStringBuffer(io, &fl);
        int bad = !h || !f || !hl || hl > UINT32_MAX || fl > UINT32_MAX - 8 ||
                  hst_get(m, h, hl, &fl) != NULL;
        if (!bad)
            hst_set(m, h, hl, f, fl);
        RedisModule_Free(h);
        RedisModule_Free(f);
        if (bad) {
            RedisModule_Log(NULL, "warning", "dcfront: corrupt host fields "
                                             "in RDB");
            hst_free(m);
            return NULL;
        }
    }
    return m;
}

static void hst_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key,
                            void *v)
{
    struct hst *m = v;
    const char *h, *f;
    size_t hl, fl, at = 0;

    while (hst_next(m, &at, &h, &hl, &f, &fl))
        RedisModule_EmitAOF(aof, "DCFRONT.SSET", "sbb", key, h, hl, f, fl);
}

static size_t hst_mem_usage(const void *v)
{
    const struct hst *m = v;

    return sizeof(*m) + m->tab.cap * sizeof(struct otab_slot) + m->bytes;
}

/* ---- commands ---- */

static RedisModuleKey *open_key(RedisModuleCtx *ctx, RedisModuleString *k,
                                struct hst **m, int create)
{
    RedisModuleKey *key =
        RedisModule_OpenKey(ctx, k, REDISMODULE_READ | REDISMODULE_WRITE);
    int wrong;

    *m = hst_of(key, create, &wrong);
    if (wrong) {
        RedisModule_CloseKey(key);
        return NULL;
    }
    return key;
}

static int wrongtype(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
}

static int cmd_sget(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *k;
    struct hst *m;
    size_t hl, fl;
    const char *h, *f;

    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (!(k = open_key(ctx, argv[1], &m, 0)))
        return wrongtype(ctx);
    h = RedisModule_StringPtrLen(argv[2], &hl);
    if ((f = hst_get(m, h, hl, &fl)))
        RedisModule_ReplyWithStringBuffer(ctx, f, fl);
    else
        RedisModule_ReplyWithNull(ctx);
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmd_sset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *k;
    struct hst *m;
    size_t hl, fl;
    const char *h, *f;
    int added;

    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    h = RedisModule_StringPtrLen(argv[2], &hl);
    f = RedisModule_StringPtrLen(argv[3], &fl);
    if (!hl || hl > UINT32_MAX || fl > UINT32_MAX - 8)
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.SSET: bad length");
    if (!(k = open_key(ctx, argv[1], &m, 1)))
        return wrongtype(ctx);
    added = hst_set(m, h, hl, f, fl);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, added);
}

static int cmd_sdel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *k;
    struct hst *m;
    size_t hl;
    const char *h;
    int n;

    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (!(k = open_key(ctx, argv[1], &m, 0)))
        return wrongtype(ctx);
    h = RedisModule_StringPtrLen(argv[2], &hl);
    n = hst_del(m, h, hl);
    if (m && !hst_count(m))
        RedisModule_DeleteKey(k);
    RedisModule_CloseKey(k);
    if (n)
        RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, n);
}

/* up to n distinct fields from a random slot on (a sample for the
 * clock sweep of reclaim.lua, as HRANDFIELD n WITHVALUES) */
static int cmd_srand(RedisModuleCtx *ctx, RedisModuleString **argv,
                     int argc)
{
    RedisModuleKey *k;
    struct hst *m;
    long long n;
    size_t wl, got = 0, start, cap;
    const char *w;

    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    w = RedisModule_StringPtrLen(argv[3], &wl);
    if (RedisModule_StringToLongLong(argv[2], &n) != REDISMODULE_OK ||
        n <= 0 || wl != 10 || strncasecmp(w, "withvalues", 10))
        return RedisModule_ReplyWithError(
            ctx, "ERR DCFRONT.SRAND key count(>0) WITHVALUES");
    if (!(k = open_key(ctx, argv[1], &m, 0)))
        return wrongtype(ctx);
    cap = m ? m->tab.cap : 0;
    if ((size_t)n > hst_count(m))
        n = (long long)hst_count(m);
    RedisModule_ReplyWithArray(ctx, 2 * n);
    start = cap ? (size_t)rand() & (cap - 1) : 0;
    for (size_t i = 0; got < (size_t)n && i < cap; i++) {
        const struct hrec *r = m->tab.s[(start + i) & (cap - 1)].rec;
        if (!r)
            continue;
        RedisModule_ReplyWithStringBuffer(ctx, r->data, r->hlen);
        RedisModule_ReplyWithStringBuffer(ctx, r->data + r->hlen, r->vlen);
        got++;
    }
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmd_sdump(RedisModuleCtx *ctx, RedisModuleString **argv,
                     int argc)
{
    RedisModuleKey *k;
    struct hst *m;
    const char *h, *f;
    size_t hl, fl, at = 0;

    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    if (!(k = open_key(ctx, argv[1], &m, 0)))
        return wrongtype(ctx);
    RedisModule_ReplyWithArray(ctx, 2 * (long)hst_count(m));
    while (hst_next(m, &at, &h, &hl, &f, &fl)) {
        RedisModule_ReplyWithStringBuffer(ctx, h, hl);
        RedisModule_ReplyWithStringBuffer(ctx, f, fl);
    }
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

int hst_register(RedisModuleCtx *ctx)
{
    RedisModuleTypeMethods tm = {
        .version = REDISMODULE_TYPE_METHOD_VERSION_1,
        .rdb_load = hst_rdb_load,
        .rdb_save = hst_rdb_save,
        .aof_rewrite = hst_aof_rewrite,
        .mem_usage = hst_mem_usage,
        .digest = NULL,
        .free = hst_free,
    };

    hst_type = RedisModule_CreateDataType(ctx, "dcfronts1", 1, &tm);
    if (!hst_type ||
        RedisModule_CreateCommand(ctx, "dcfront.sget", cmd_sget,
                                  "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.sset", cmd_sset,
                                  "write deny-oom fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.sdel", cmd_sdel,
                                  "write fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.srand", cmd_srand,
                                  "readonly random", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.sdump", cmd_sdump,
                                  "readonly", 1, 1, 1))
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
