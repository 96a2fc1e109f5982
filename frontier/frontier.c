/*
 * frontier.c: opening a frontier (connect, adopt or record the crawl's
 * <prefix>:meta: partition count, fingerprint, seen-set layout, partition
 * mode), closing it, the meta settings, and the helpers the other files
 * share to group a batch by partition.
 *
 * The API is split by what it does: admit.c (admit: seen-set + enqueue),
 * lease.c (pop, complete and the local ready index), sweep.c (calls on
 * every partition: reclaim, level, stats), cluster.c (membership and
 * partition ownership), status.c (`dcrawl status`), digest.c, held.c,
 * partkey.c, robots-store.c and noise-store.c; redis.c and
 * cluster-route.c carry every call to Redis, scripts.c the Lua scripts
 * (frontier/lua/). Every operation groups its work by partition and sends
 * one script call (or plain command) per partition in a single pipeline,
 * so each call is one round trip; the scripts do the per-URL work inside
 * Redis.
 *
 * Thread rules: a struct frontier is used by one thread at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "seen-internal.h"

#define MAX_PARTITIONS 65536

/* ---- open / close ---- */

static int bad_name(const char *s, const char *reject)
{
    return !s || !*s || strpbrk(s, reject) != NULL;
}

int64_t frontier__reply_int(const redisReply *r, int64_t def)
{
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_STRING)
        return (int64_t)strtod(r->str, NULL);
    return def;
}

/*
 * Record our partition count, fingerprint algorithm, seen-set layout and
 * queue layout unless recorded; adopt the recorded ones (every client of
 * a crawl must agree on them). The seen-set layout recorded first is
 * mod-u64 when the server has the dcrawl-seen module, else b256-i64; the
 * queue layout native when it has the module's Q commands (and neither
 * DCRAWL_LUA_FRONTIER nor DCRAWL_QUEUE_LAYOUT=zset-list is set), else
 * zset-list; a meta recorded by a build that knew no queue layout (no
 * queue_layout field) gets zset-list, the layout its queues are in. A
 * Redis keeps its layouts for good. A recorded layout the server's module
 * cannot serve, or an unknown one, is an error.
 */
#define META_FIELDS 5
static const char *const meta_fields[META_FIELDS] = {
    "partitions", "created", "fingerprint", "seen_layout", "queue_layout"
};
/* the fields read back after the HSETNX, in meta_check's order */
static const int meta_read[] = { 0, 2, 3, 4 };
#define META_READ (sizeof(meta_read) / sizeof(meta_read[0]))

static int queue_check(struct frontier *f, const redisReply *r)
{
    if (r->type == REDIS_REPLY_STRING &&
        strcmp(r->str, QUEUE_LAYOUT_ZSET) == 0) {
        f->qnative = 0;
        return DC_OK;
    }
    if (r->type == REDIS_REPLY_STRING &&
        strcmp(r->str, QUEUE_LAYOUT_NATIVE) == 0) {
        f->qnative = 1;
        if (!f->seen_mod) /* only a hand-made meta has both */
            return frontier__seterr(f, DC_ECONFIG,
                                    "%s:meta queue_layout '%s' needs "
                                    "seen_layout '%s'", f->prefix,
                                    QUEUE_LAYOUT_NATIVE, SEEN_LAYOUT_MOD);
        if (f->have_qlayout)
            return DC_OK;
        return frontier__seterr(f, DC_ECONFIG,
                                "%s:meta queue_layout is '%s' but this "
                                "Redis has no DCFRONT.QPOP: load this "
                                "build's module (--loadmodule "
                                "dcrawl-seen.so)",
                                f->prefix, QUEUE_LAYOUT_NATIVE);
    }
    return frontier__seterr(f, DC_ECONFIG,
                            "%s:meta queue_layout is '%s', this build knows "
                            "'%s' and '%s': use another redis.prefix",
                            f->prefix,
                            r->type == REDIS_REPLY_STRING ? r->str : "?",
                            QUEUE_LAYOUT_ZSET, QUEUE_LAYOUT_NATIVE);
}

static int meta_check(struct frontier *f, redisReply **rep)
{
    int64_t p = frontier__reply_int(rep[0], 0);
    int algo;

    if (p < 1 || p > MAX_PARTITIONS)
        return frontier__seterr(f, DC_EREDIS, "bad %s:meta partitions",
                                f->prefix);
    f->nparts = (int)p;
    algo = rep[1]->type == REDIS_REPLY_STRING
               ? dedup_fp_algo_parse(rep[1]->str) : -1;
    if (algo < 0)
        return frontier__seterr(f, DC_EREDIS, "bad %s:meta fingerprint",
                                f->prefix);
    dedup_fingerprint_use(algo);
    if (rep[2]->type == REDIS_REPLY_STRING &&
        strcmp(rep[2]->str, SEEN_LAYOUT_B256) == 0) {
        f->seen_mod = 0;
        return queue_check(f, rep[3]);
    }
    if (rep[2]->type == REDIS_REPLY_STRING &&
        strcmp(rep[2]->str, SEEN_LAYOUT_MOD) == 0) {
        f->seen_mod = 1;
        if (f->have_module)
            return queue_check(f, rep[3]);
        return frontier__seterr(f, DC_ECONFIG,
                                "%s:meta seen_layout is '%s' but this Redis "
                                "has no DCSEEN.ADD: load the module "
                                "(--loadmodule dcrawl-seen.so)",
                                f->prefix, SEEN_LAYOUT_MOD);
    }
    return frontier__seterr(f, DC_ECONFIG,
                            "%s:meta seen_layout is '%s', this build knows "
                            "'%s' and '%s': use another redis.prefix",
                            f->prefix,
                            rep[2]->type == REDIS_REPLY_STRING ? rep[2]->str
                                                               : "?",
                            SEEN_LAYOUT_B256,
                            SEEN_LAYOUT_MOD);
}

/* The queue layout to record: zset-list for a meta of a build without
 * queue layouts (partitions recorded, queue_layout not) or a seen-set
 * layout b256-i64 (recorded, or to be: no module), else native when this
 * server and client can run it. */
static int queue_want(struct frontier *f, const char **want)
{
    redisReply *r = NULL;
    const char *env = getenv("DCRAWL_QUEUE_LAYOUT");
    char key[300];
    int rc, legacy;

    snprintf(key, sizeof(key), "%s:meta", f->prefix);
    rc = frontier__command(f, &r, "HMGET", key, "partitions", "queue_layout",
                           "seen_layout", (char *)NULL);
    if (rc)
        return rc;
    legacy = r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
             (r->element[0]->type == REDIS_REPLY_STRING &&
              r->element[1]->type != REDIS_REPLY_STRING) ||
             (r->element[2]->type == REDIS_REPLY_STRING &&
              strcmp(r->element[2]->str, SEEN_LAYOUT_MOD) != 0);
    freeReplyObject(r);
    *want = !legacy && f->have_qlayout && f->native &&
                    !(env && !strcmp(env, QUEUE_LAYOUT_ZSET))
                ? QUEUE_LAYOUT_NATIVE
                : QUEUE_LAYOUT_ZSET;
    return DC_OK;
}

static int meta_adopt(struct frontier *f, int algo)
{
    struct frontier_call calls[META_FIELDS + META_READ];
    redisReply *rep[META_FIELDS + META_READ];
    const size_t n = META_FIELDS + META_READ;
    const char *qwant;
    int rc;

    if ((rc = queue_want(f, &qwant)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        const char *field = i < META_FIELDS
                                ? meta_fields[i]
                                : meta_fields[meta_read[i - META_FIELDS]];
        frontier__call_init(&calls[i], -1);
        frontier__strv_pushs(&calls[i].args, i < META_FIELDS ? "HSETNX" : "HGET");
        frontier__strv_pushf(&calls[i].args, "%s:meta", f->prefix);
        frontier__strv_pushs(&calls[i].args, field);
    }
    frontier__strv_pushf(&calls[0].args, "%d", f->nparts);
    frontier__strv_pushf(&calls[1].args, "%lld", (long long)dc_now_ms());
    frontier__strv_pushs(&calls[2].args, dedup_fp_algo_name(algo));
    frontier__strv_pushs(&calls[3].args, f->have_module
                                             ? SEEN_LAYOUT_MOD
                                             : SEEN_LAYOUT_B256);
    frontier__strv_pushs(&calls[4].args, qwant);
    rc = frontier__run(f, calls, n, rep);
    if (!rc)
        rc = meta_check(f, rep + META_FIELDS);
    frontier__replies_free(rep, n);
    for (size_t i = 0; i < n; i++)
        frontier__call_release(&calls[i]);
    return rc;
}

static struct frontier *frontier_new(const char *url, const struct conf *c,
                                     const char *node_id)
{
    struct frontier *f = xcalloc(1, sizeof(*f));

    f->url = xstrdup(url);
    f->prefix = xstrdup(c->redis_prefix && *c->redis_prefix ? c->redis_prefix
                                                            : "dc");
    f->node = xstrdup(node_id);
    f->nparts = c->frontier_partitions < 1 ? 1 : c->frontier_partitions;
    if (f->nparts > MAX_PARTITIONS)
        f->nparts = MAX_PARTITIONS;
    f->conns = c->politeness_host_connections < 1
                   ? 1 : c->politeness_host_connections;
    f->host_conns = f->conns;
    f->host_budget = c->scope_host_budget > 0 ? c->scope_host_budget : 0;
    f->lease_ms = (int64_t)(c->frontier_lease * 1000.0);
    if (f->lease_ms < 1)
        f->lease_ms = 1;
    f->ix.depth = -1;
    f->alt.depth = -1;
    return f;
}

/* Adopt <prefix>:meta partition_by, recording `want` if unset. */
static int meta_part_by(struct frontier *f, const char *want)
{
    struct frontier_call calls[2];
    redisReply *rep[2];
    int rc;

    if (!want || frontier__partkey_mode(want) < 0)
        want = "host";
    for (int i = 0; i < 2; i++) {
        frontier__call_init(&calls[i], -1);
        frontier__strv_pushs(&calls[i].args, i ? "HGET" : "HSETNX");
        frontier__strv_pushf(&calls[i].args, "%s:meta", f->prefix);
        frontier__strv_pushs(&calls[i].args, "partition_by");
    }
    frontier__strv_pushs(&calls[0].args, want);
    rc = frontier__run(f, calls, 2, rep);
    if (!rc) {
        int m = rep[1]->type == REDIS_REPLY_STRING
                    ? frontier__partkey_mode(rep[1]->str) : -1;
        if (m < 0)
            rc = frontier__seterr(f, DC_EREDIS, "bad %s:meta partition_by",
                                  f->prefix);
        else
            f->part_by = m;
        frontier__replies_free(rep, 2);
    }
    for (int i = 0; i < 2; i++)
        frontier__call_release(&calls[i]);
    return rc;
}

int frontier_open(struct frontier **fp, const char *redis_url,
                  const struct conf *c, const char *node_id, char *err,
                  size_t errlen)
{
    struct frontier *f;
    int rc, algo;

    *fp = NULL;
    if (!redis_url || !c || bad_name(node_id, "\t\r\n") ||
        (c->redis_prefix && strpbrk(c->redis_prefix, "{}"))) {
        if (err && errlen)
            snprintf(err, errlen, "bad redis URL, node id or prefix");
        return DC_EINVAL;
    }
    algo = dedup_fp_algo_parse(c->dedup_fingerprint ? c->dedup_fingerprint
                                                    : "murmur3");
    if (algo < 0) {
        if (err && errlen)
            snprintf(err, errlen, "dedup.fingerprint must be murmur3 or md5");
        return DC_EINVAL;
    }
    f = frontier_new(redis_url, c, node_id);
    rc = frontier__auth_conf(f, c);
    if (!rc)
        rc = frontier__connect(f, err, errlen);
    if (!rc)
        rc = frontier__scripts_load(f);
    if (!rc)
        rc = seen__probe_module(f);
    if (!rc)
        rc = meta_adopt(f, algo);
    if (!rc)
        rc = meta_part_by(f, c->cluster_partition_by);
    if (!rc)
        seen__probe_intset(f);
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s", f->err);
        frontier_close(&f);
        return rc;
    }
    f->ix.part_next = xmalloc((size_t)f->nparts * sizeof(*f->ix.part_next));
    f->held = xcalloc((size_t)f->nparts, sizeof(*f->held));
    f->used = xcalloc(((size_t)f->nparts + 7) / 8, 1);
    f->retry_ms = (int64_t)(c->redis_retry * 1000.0);
    *fp = f;
    return DC_OK;
}

void frontier_close(struct frontier **fp)
{
    struct frontier *f;

    if (!fp || !*fp)
        return;
    f = *fp;
    frontier__disconnect(f);
    frontier__auth_free(f);
    memset(f->url, 0, strlen(f->url)); /* it may hold a password */
    free(f->url);
    free(f->prefix);
    free(f->node);
    free(f->ix.part_next);
    free(f->alt.part_next);
    free(f->held);
    frontier__held_free(f);
    free(f->used);
    frontier__cluster_free(f);
    frontier__ipcache_free(f);
    free(f);
    *fp = NULL;
}

int frontier_partitions(const struct frontier *f)
{
    return f->nparts;
}

const char *frontier_queue_layout(const struct frontier *f)
{
    return f->qnative ? QUEUE_LAYOUT_NATIVE : QUEUE_LAYOUT_ZSET;
}

/* ---- crawl-wide settings ---- */

static int meta_cmd(struct frontier *f, const char *cmd, const char *field,
                    const char *value, redisReply **rep)
{
    size_t len;
    char *key;
    int rc;

    if (!field || !*field)
        return frontier__seterr(f, DC_EINVAL, "meta: empty field");
    len = strlen(f->prefix) + sizeof(":meta");
    key = xmalloc(len);
    snprintf(key, len, "%s:meta", f->prefix);
    /* value NULL (HGET) ends the words there */
    rc = frontier__command(f, rep, cmd, key, field, value, (char *)NULL);
    free(key);
    return rc;
}

int frontier_meta_set(struct frontier *f, const char *field, const char *value)
{
    redisReply *rep = NULL;
    int rc;

    if (!value)
        return frontier__seterr(f, DC_EINVAL, "meta: NULL value");
    rc = meta_cmd(f, "HSET", field, value, &rep);
    frontier__replies_free(&rep, 1);
    return rc;
}

int frontier_meta_get(struct frontier *f, const char *field, char *out,
                      size_t cap)
{
    redisReply *rep = NULL;
    int rc;

    if (!out || cap == 0)
        return frontier__seterr(f, DC_EINVAL, "meta: no output buffer");
    out[0] = '\0';
    rc = meta_cmd(f, "HGET", field, NULL, &rep);
    if (rc)
        return rc;
    if (rep->type == REDIS_REPLY_STRING) {
        size_t n = rep->len < cap - 1 ? rep->len : cap - 1;
        memcpy(out, rep->str, n);
        out[n] = '\0';
    } else {
        rc = DC_ENOTFOUND;
    }
    frontier__replies_free(&rep, 1);
    return rc;
}

const char *frontier_errstr(const struct frontier *f)
{
    return f ? f->err : "";
}


/* ---- grouping by partition ---- */

static int slot_cmp(const void *a, const void *b)
{
    const struct frontier_slot *x = a, *y = b;

    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

size_t frontier__slots_sort(struct frontier_slot *s, size_t n)
{
    size_t runs = 0;

    qsort(s, n, sizeof(*s), slot_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || s[i].part != s[i - 1].part)
            runs++;
    return runs;
}

void frontier__lease_call(struct frontier *f, struct frontier_call *c,
                          int script, int p)
{
    frontier__call_init(c, script);
    frontier__strv_pushf(&c->keys, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:host", f->prefix, p);
}

uint64_t frontier_roundtrips(const struct frontier *f)
{
    return f->roundtrips;
}

uint64_t frontier_budget_refused(const struct frontier *f)
{
    return f->budget_refused;
}
