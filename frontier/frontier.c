/*
 * frontier.c: the public frontier API (frontier.h) on top of the scripts.
 *
 * Every operation groups its work by partition and sends one script call
 * (or plain command) per partition in a single pipeline, so each call is
 * one round trip; the scripts do the per-URL work inside Redis.
 *
 * Pop keeps a local index of when each partition may next have a ready
 * host at the depth being popped (part_next). Only partitions whose time
 * has come are polled, round-robin from where the last pop stopped. Replies
 * of pop and complete keep the index exact for this process's own work;
 * work pushed by other processes is found by a full rescan (one cheap
 * range query per partition, pipelined), done at most every
 * FRONTIER_SCAN_MS, or every FRONTIER_IDLE_SCAN_MS while the index knows of
 * nothing ready. The index is reset when the popped depth changes.
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

#define MAX_PARTITIONS 65536

/* ---- open / close ---- */

static int bad_name(const char *s, const char *reject)
{
    return !s || !*s || strpbrk(s, reject) != NULL;
}

static int64_t reply_int(const redisReply *r, int64_t def)
{
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_STRING)
        return (int64_t)strtod(r->str, NULL);
    return def;
}

/*
 * Record our partition count, fingerprint algorithm and seen-set layout
 * unless recorded; adopt the recorded count, algorithm and layout (every
 * client of a crawl must agree on them). The layout recorded first is
 * mod-u64 when the server has the dcrawl-seen module, else b256-i64; a
 * Redis keeps its layout for good. A recorded mod-u64 without the module
 * loaded, or an unknown layout, is an error.
 */
#define META_FIELDS 4
static const char *const meta_fields[META_FIELDS] = {
    "partitions", "created", "fingerprint", "seen_layout"
};

static int meta_check(struct frontier *f, redisReply **rep)
{
    int64_t p = reply_int(rep[0], 0);
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
        strcmp(rep[2]->str, FRONTIER_SEEN_LAYOUT_B256) == 0) {
        f->seen_mod = 0;
        return DC_OK;
    }
    if (rep[2]->type == REDIS_REPLY_STRING &&
        strcmp(rep[2]->str, FRONTIER_SEEN_LAYOUT_MOD) == 0) {
        f->seen_mod = 1;
        if (f->have_module)
            return DC_OK;
        return frontier__seterr(f, DC_ECONFIG,
                                "%s:meta seen_layout is '%s' but this Redis "
                                "has no DCSEEN.ADD: load the module "
                                "(--loadmodule dcrawl-seen.so)",
                                f->prefix, FRONTIER_SEEN_LAYOUT_MOD);
    }
    return frontier__seterr(f, DC_ECONFIG,
                            "%s:meta seen_layout is '%s', this build knows "
                            "'%s' and '%s': use another redis.prefix",
                            f->prefix,
                            rep[2]->type == REDIS_REPLY_STRING ? rep[2]->str
                                                               : "?",
                            FRONTIER_SEEN_LAYOUT_B256,
                            FRONTIER_SEEN_LAYOUT_MOD);
}

static int meta_adopt(struct frontier *f, int algo)
{
    struct frontier_call calls[META_FIELDS + 3];
    redisReply *rep[META_FIELDS + 3];
    const size_t n = META_FIELDS + 3;
    int rc;

    for (size_t i = 0; i < n; i++) {
        const char *field = i < META_FIELDS ? meta_fields[i]
                            : meta_fields[i == META_FIELDS ? 0 : i - 3];
        frontier__call_init(&calls[i], -1);
        frontier__strv_pushs(&calls[i].args, i < META_FIELDS ? "HSETNX" : "HGET");
        frontier__strv_pushf(&calls[i].args, "%s:meta", f->prefix);
        frontier__strv_pushs(&calls[i].args, field);
    }
    frontier__strv_pushf(&calls[0].args, "%d", f->nparts);
    frontier__strv_pushf(&calls[1].args, "%lld", (long long)dc_now_ms());
    frontier__strv_pushs(&calls[2].args, dedup_fp_algo_name(algo));
    frontier__strv_pushs(&calls[3].args, f->have_module
                                             ? FRONTIER_SEEN_LAYOUT_MOD
                                             : FRONTIER_SEEN_LAYOUT_B256);
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
    f->host_budget = c->scope_host_budget > 0 ? c->scope_host_budget : 0;
    f->lease_ms = (int64_t)(c->frontier_lease * 1000.0);
    if (f->lease_ms < 1)
        f->lease_ms = 1;
    f->depth = -1;
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
    rc = frontier__connect(f, err, errlen);
    if (!rc)
        rc = frontier__scripts_load(f);
    if (!rc)
        rc = frontier__probe_module(f);
    if (!rc)
        rc = meta_adopt(f, algo);
    if (!rc)
        rc = meta_part_by(f, c->cluster_partition_by);
    if (!rc)
        frontier__probe_intset(f);
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s", f->err);
        frontier_close(&f);
        return rc;
    }
    f->part_next = xmalloc((size_t)f->nparts * sizeof(*f->part_next));
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
    free(f->url);
    free(f->prefix);
    free(f->node);
    free(f->part_next);
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

/* ---- crawl-wide settings ---- */

static int meta_cmd(struct frontier *f, const char *cmd, const char *field,
                    const char *value, redisReply **rep)
{
    struct frontier_call c;
    int rc;

    if (!field || !*field)
        return frontier__seterr(f, DC_EINVAL, "meta: empty field");
    frontier__call_init(&c, -1);
    frontier__strv_pushs(&c.args, cmd);
    frontier__strv_pushf(&c.args, "%s:meta", f->prefix);
    frontier__strv_pushs(&c.args, field);
    if (value)
        frontier__strv_pushs(&c.args, value);
    rc = frontier__run(f, &c, 1, rep);
    frontier__call_release(&c);
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

struct slot {
    int part;
    size_t idx;
};

static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;

    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Number of runs of equal partitions in sorted s. */
static size_t count_runs(const struct slot *s, size_t n)
{
    size_t runs = 0;

    for (size_t i = 0; i < n; i++)
        if (i == 0 || s[i].part != s[i - 1].part)
            runs++;
    return runs;
}

static void lower_next(struct frontier *f, int p, int64_t t)
{
    if (f->depth >= 0 && f->part_next[p] > t)
        f->part_next[p] = t;
}

/* ---- admit ---- */

static int admit_add(struct frontier *f, struct frontier_call *c, int p,
                     const struct frontier_url *u)
{
    char key[512], member[32];

    if (f->seen_mod) { /* the fingerprint goes in the call's blob */
        frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:%.*s", f->prefix, p,
                             u->depth, (int)u->hostlen, u->host);
        frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p,
                             u->depth);
        frontier__strv_push(&c->args, u->url, u->len);
        frontier__strv_push(&c->args, u->host, u->hostlen);
        frontier__strv_pushf(&c->args, "%d", u->depth);
        return DC_OK;
    }
    if (dedup_seen_key(f->prefix, p, u->fp, key, sizeof(key)) ||
        dedup_seen_member(u->fp, member, sizeof(member)))
        return frontier__seterr(f, DC_EINVAL, "seen key too long");
    frontier__strv_pushs(&c->keys, key);
    frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:%.*s", f->prefix, p,
                         u->depth, (int)u->hostlen, u->host);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, u->depth);
    frontier__strv_pushs(&c->args, member);
    frontier__strv_push(&c->args, u->url, u->len);
    frontier__strv_push(&c->args, u->host, u->hostlen);
    frontier__strv_pushf(&c->args, "%d", u->depth);
    return DC_OK;
}

static int admit_call(struct frontier *f, struct frontier_call *c, int p,
                      int64_t now)
{
    frontier__call_init(c, f->seen_mod ? FRONTIER_SCRIPT_ADMIT_MOD
                                       : FRONTIER_SCRIPT_ADMIT);
    frontier__strv_pushf(&c->keys, "%s:{%d}:pend", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:stat", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:next", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:act", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:budget", f->prefix, p);
    if (f->seen_mod) {
        char key[512];
        if (frontier__seen_modkey(f, p, key, sizeof(key)))
            return frontier__seterr(f, DC_EINVAL, "seen key too long");
        frontier__strv_pushs(&c->keys, key);
    }
    frontier__strv_pushf(&c->args, "%lld", (long long)now);
    frontier__strv_pushf(&c->args, "%d", f->conns);
    frontier__strv_pushf(&c->args, "%lld", (long long)f->host_budget);
    return DC_OK;
}

/* mod layout: the fingerprints of URLs s[from .. to) (one partition) as
 * one blob, the call's last argument. */
static void admit_blob(struct frontier_call *c, const struct frontier_url *urls,
                       const struct slot *s, size_t from, size_t to)
{
    unsigned char *blob = xmalloc((to - from) * 8);

    for (size_t i = from; i < to; i++)
        frontier__put_le64(blob + 8 * (i - from), urls[s[i].idx].fp);
    frontier__strv_push(&c->args, (const char *)blob, (to - from) * 8);
    free(blob);
}

static int admit_build(struct frontier *f, const struct frontier_url *urls,
                       const struct slot *s, size_t n,
                       struct frontier_call *calls, int64_t now)
{
    size_t c = 0, from = 0;

    for (size_t i = 0; i < n; i++) {
        int rc = DC_OK;
        if (i > 0 && s[i].part != s[i - 1].part)
            c++;
        if (i == 0 || s[i].part != s[i - 1].part) {
            from = i;
            rc = admit_call(f, &calls[c], s[i].part, now);
        }
        if (!rc)
            rc = admit_add(f, &calls[c], s[i].part, &urls[s[i].idx]);
        if (rc)
            return rc;
        if (f->seen_mod && (i + 1 == n || s[i + 1].part != s[i].part))
            admit_blob(&calls[c], urls, s, from, i + 1);
    }
    return DC_OK;
}

static int admit_read(struct frontier *f, redisReply **rep,
                      const struct frontier_url *urls, const struct slot *s,
                      size_t n, unsigned char *isnew, int64_t now)
{
    size_t c = 0, j = 0;

    for (size_t i = 0; i < n; i++, j++) {
        if (i > 0 && s[i].part != s[i - 1].part) {
            c++;
            j = 0;
        }
        if (rep[c]->type != REDIS_REPLY_ARRAY || j >= rep[c]->elements)
            return frontier__seterr(f, DC_EREDIS, "admit: bad reply");
        isnew[s[i].idx] = rep[c]->element[j]->integer == 1;
        if (rep[c]->element[j]->integer == 2)
            f->budget_refused++;
        if (isnew[s[i].idx] && urls[s[i].idx].depth == f->depth)
            lower_next(f, s[i].part, now);
    }
    return DC_OK;
}

static int check_url(const struct frontier_url *u)
{
    return u->url && u->host && u->hostlen > 0 && u->depth >= 0 && u->len > 0;
}

int frontier_admit(struct frontier *f, const struct frontier_url *urls,
                   size_t n, int64_t now_ms, unsigned char *isnew)
{
    struct frontier_call *calls = NULL;
    redisReply **rep = NULL;
    struct slot *s;
    size_t ncalls = 0, nall = 0, nmark = 0;
    int rc = DC_OK;

    if (n == 0)
        return DC_OK;
    s = xmalloc(n * sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        if (!check_url(&urls[i])) {
            free(s);
            return frontier__seterr(f, DC_EINVAL, "admit: bad URL entry");
        }
        s[i].part = frontier_partition(f, urls[i].host, urls[i].hostlen);
        s[i].idx = i;
    }
    qsort(s, n, sizeof(*s), slot_cmp);
    ncalls = count_runs(s, n);
    /* one SETBIT <prefix>:used per partition first seen here, sent
     * before the admit calls in the same pipeline: a partition with
     * queued URLs is always marked used (frontier_level relies on it) */
    calls = xcalloc(2 * ncalls, sizeof(*calls));
    rep = xcalloc(2 * ncalls, sizeof(*rep));
    for (size_t i = 0; i < n; i++)
        if (i == 0 || s[i].part != s[i - 1].part)
            frontier__mark_used(f, s[i].part, calls, &nmark);
    rc = admit_build(f, urls, s, n, calls + nmark, now_ms);
    nall = nmark + ncalls;
    if (!rc)
        rc = frontier__run(f, calls, nall, rep);
    if (!rc)
        rc = admit_read(f, rep + nmark, urls, s, n, isnew, now_ms);
    for (size_t i = 0; !rc && i < n; i++)
        frontier__used_set(f, s[i].part);
    frontier__replies_free(rep, nall);
    free(rep);
    frontier__calls_free(calls, nall);
    free(s);
    return rc;
}

/* ---- pop ---- */

static void index_reset(struct frontier *f, int depth)
{
    f->depth = depth;
    f->scanned = 0;
    for (int p = 0; p < f->nparts; p++)
        f->part_next[p] = INT64_MAX;
}

static int64_t index_min(const struct frontier *f)
{
    int64_t m = INT64_MAX;

    for (int p = 0; p < f->nparts; p++)
        if (f->part_next[p] < m)
            m = f->part_next[p];
    return m;
}

static int need_scan(const struct frontier *f, int64_t now)
{
    if (!f->scanned || now < f->last_scan ||
        now - f->last_scan >= FRONTIER_SCAN_MS)
        return 1;
    return index_min(f) > now && now - f->last_scan >= FRONTIER_IDLE_SCAN_MS;
}

static int64_t ready_time(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2)
        return INT64_MAX;
    return reply_int(r->element[1], INT64_MAX);
}

/* Ask every partition for its earliest ready host at f->depth. */
static int rescan(struct frontier *f, int64_t now)
{
    size_t n = (size_t)f->nparts, k = 0;
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    redisReply **rep = xcalloc(n, sizeof(*rep));
    int *part = xcalloc(n, sizeof(*part));
    int rc = DC_OK;

    for (int p = 0; p < f->nparts; p++) {
        struct frontier_strv *a = &calls[k].args;
        f->part_next[p] = INT64_MAX;
        if (!frontier__may_pop(f, p)) /* another node's partition */
            continue;
        frontier__call_init(&calls[k], -1);
        frontier__strv_pushs(a, "ZRANGEBYSCORE");
        frontier__strv_pushf(a, "%s:{%d}:h:%d", f->prefix, p, f->depth);
        frontier__strv_pushs(a, "-inf");
        frontier__strv_pushf(a, "(%lld", (long long)FRONTIER_BUSY);
        frontier__strv_pushs(a, "WITHSCORES");
        frontier__strv_pushs(a, "LIMIT");
        frontier__strv_pushs(a, "0");
        frontier__strv_pushs(a, "1");
        part[k++] = p;
    }
    if (k)
        rc = frontier__run(f, calls, k, rep);
    for (size_t i = 0; !rc && i < k; i++)
        f->part_next[part[i]] = ready_time(rep[i]);
    if (!rc) {
        f->scanned = 1;
        f->last_scan = now;
    }
    if (k)
        frontier__replies_free(rep, k);
    free(rep);
    free(part);
    frontier__calls_free(calls, k);
    return rc;
}

void frontier__index_wake(struct frontier *f, int p)
{
    (void)p;
    f->scanned = 0; /* the next pop rescans, this partition included */
}

/* Up to `want` partitions ready at now, round-robin from f->rr, looking at
 * no more than *budget positions (decreased by the positions looked at). */
static size_t pick_batch(struct frontier *f, int64_t now, size_t want,
                         int *parts, int *budget)
{
    size_t nb = 0;

    while (nb < want && *budget > 0) {
        int p = f->rr;
        f->rr = (f->rr + 1) % f->nparts;
        (*budget)--;
        if (f->part_next[p] <= now && frontier__may_pop(f, p))
            parts[nb++] = p;
    }
    return nb;
}

static void pop_call(struct frontier *f, struct frontier_call *c, int p,
                     int64_t now, size_t share)
{
    struct frontier_strv *a = &c->args;

    frontier__call_init(c, FRONTIER_SCRIPT_POP);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, f->depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:next", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:act", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:", f->prefix, p, f->depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:own", f->prefix, p);
    frontier__strv_pushf(a, "%lld", (long long)now);
    frontier__strv_pushf(a, "%d", f->depth);
    frontier__strv_pushf(a, "%zu", share);
    frontier__strv_pushf(a, "%lld", (long long)(now + f->lease_ms));
    frontier__strv_pushf(a, "%d", f->conns);
    frontier__strv_pushs(a, f->node);
    frontier__strv_pushs(a, f->cl ? "1" : "0");
}

/* Split "<node>\t<d>\t<host>\t<url>" into a lease. */
static int lease_parse(struct frontier_lease *l, const char *e, size_t len,
                       int p)
{
    const char *end = e + len, *t1, *t2, *t3;

    t1 = memchr(e, '\t', len);
    t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
    t3 = t2 ? memchr(t2 + 1, '\t', (size_t)(end - t2 - 1)) : NULL;
    if (!t3)
        return DC_EPROTO;
    l->entry = xstrndup(e, len);
    l->depth = atoi(t1 + 1);
    l->host = xstrndup(t2 + 1, (size_t)(t3 - t2 - 1));
    l->url = xstrndup(t3 + 1, (size_t)(end - t3 - 1));
    l->partition = p;
    return DC_OK;
}

struct lease_vec {
    struct frontier_lease *v;
    size_t n, cap;
};

static int pop_read(struct frontier *f, const redisReply *r, int p,
                    struct lease_vec *out)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
        return frontier__seterr(f, DC_EREDIS, "pop: bad reply");
    if (r->element[0]->integer == -2) { /* not ours (any more) */
        f->part_next[p] = INT64_MAX;
        frontier__cluster_lost(f, p);
        return DC_OK;
    }
    f->part_next[p] = r->element[0]->integer < 0 ? INT64_MAX
                                                 : r->element[0]->integer;
    for (size_t i = 1; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v));
        if (e->type != REDIS_REPLY_STRING ||
            lease_parse(&out->v[out->n], e->str, e->len, p))
            return frontier__seterr(f, DC_EREDIS, "pop: bad lease entry");
        out->n++;
        frontier__held_add(f, p, out->v[out->n - 1].entry);
    }
    return DC_OK;
}

/* One pipelined round: poll nb partitions for `want` leases in total. */
static int pop_round(struct frontier *f, const int *parts, size_t nb,
                     int64_t now, size_t want, struct lease_vec *out)
{
    struct frontier_call calls[FRONTIER_POP_BATCH];
    redisReply *rep[FRONTIER_POP_BATCH];
    int rc;

    for (size_t i = 0; i < nb; i++)
        pop_call(f, &calls[i], parts[i], now,
                 want / nb + (i < want % nb ? 1 : 0));
    rc = frontier__run(f, calls, nb, rep);
    for (size_t i = 0; !rc && i < nb; i++)
        rc = pop_read(f, rep[i], parts[i], out);
    frontier__replies_free(rep, nb);
    for (size_t i = 0; i < nb; i++)
        frontier__call_release(&calls[i]);
    return rc;
}

int frontier_pop(struct frontier *f, int depth, int64_t now_ms, size_t max,
                 struct frontier_lease **out, size_t *nout, int64_t *next_ms)
{
    struct lease_vec v = { NULL, 0, 0 };
    int parts[FRONTIER_POP_BATCH];
    int idle = 0, rc = DC_OK;

    *out = NULL;
    *nout = 0;
    *next_ms = INT64_MAX;
    if (depth < 0)
        return frontier__seterr(f, DC_EINVAL, "pop: negative depth");
    if (depth != f->depth)
        index_reset(f, depth);
    if (need_scan(f, now_ms) && (rc = rescan(f, now_ms)) != DC_OK)
        return rc;
    /* Rounds go on while they yield leases; rounds that yield nothing
     * stop once they have looked at the whole ring. */
    while (!rc && v.n < max && idle < f->nparts) {
        size_t want = max - v.n, before = v.n;
        int budget = f->nparts - idle;
        size_t nb = pick_batch(f, now_ms, want < FRONTIER_POP_BATCH
                               ? want : FRONTIER_POP_BATCH, parts, &budget);
        if (nb == 0)
            break;
        rc = pop_round(f, parts, nb, now_ms, want, &v);
        idle = v.n > before ? 0 : f->nparts - budget;
    }
    if (rc) {
        frontier_leases_free(v.v, v.n);
        return rc;
    }
    *out = v.v;
    *nout = v.n;
    *next_ms = index_min(f);
    return DC_OK;
}

void frontier_leases_free(struct frontier_lease *l, size_t n)
{
    if (!l)
        return;
    for (size_t i = 0; i < n; i++) {
        free(l[i].entry);
        free(l[i].url);
        free(l[i].host);
    }
    free(l);
}

/* ---- complete ---- */

static void complete_call(struct frontier *f, struct frontier_call *c, int p,
                          int depth, int64_t now)
{
    frontier__call_init(c, FRONTIER_SCRIPT_COMPLETE);
    frontier__strv_pushf(&c->keys, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:act", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:next", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:pend", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:stat", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, depth);
    frontier__strv_pushf(&c->args, "%lld", (long long)now);
    frontier__strv_pushf(&c->args, "%d", f->conns);
}

static void complete_add(struct frontier *f, struct frontier_call *c,
                         const struct frontier_lease *l, int outcome,
                         int64_t delay)
{
    int p = l->partition;

    frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:%s", f->prefix, p, l->depth,
                         l->host);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, l->depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, l->depth + 1);
    frontier__strv_pushs(&c->args, l->entry);
    frontier__strv_pushf(&c->args, "%d", outcome);
    frontier__strv_pushf(&c->args, "%lld", (long long)(delay < 0 ? 0 : delay));
    frontier__strv_pushf(&c->args, "%d", l->depth);
    frontier__strv_pushs(&c->args, l->host);
    frontier__strv_pushs(&c->args, l->url);
}

static int check_lease(const struct frontier *f, const struct frontier_lease *l,
                       int outcome)
{
    return l->entry && l->url && l->host && l->depth >= 0 &&
           l->partition >= 0 && l->partition < f->nparts &&
           outcome >= FRONTIER_DONE && outcome <= FRONTIER_RETRY;
}

static void complete_build(struct frontier *f, const struct frontier_lease *l,
                           const int *outcome, const int64_t *delay_ms,
                           const struct slot *s, size_t n,
                           struct frontier_call *calls, int64_t now)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++) {
        const struct frontier_lease *x = &l[s[i].idx];
        if (i > 0 && s[i].part != s[i - 1].part)
            c++;
        if (i == 0 || s[i].part != s[i - 1].part)
            complete_call(f, &calls[c], s[i].part,
                          f->depth >= 0 ? f->depth : x->depth, now);
        complete_add(f, &calls[c], x, outcome[s[i].idx],
                     delay_ms ? delay_ms[s[i].idx] : 0);
    }
}

int frontier_complete(struct frontier *f, const struct frontier_lease *l,
                      const int *outcome, const int64_t *delay_ms, size_t n,
                      int64_t now_ms)
{
    struct frontier_call *calls;
    redisReply **rep;
    struct slot *s;
    size_t ncalls;
    int rc;

    if (n == 0)
        return DC_OK;
    s = xmalloc(n * sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        if (!check_lease(f, &l[i], outcome[i])) {
            free(s);
            return frontier__seterr(f, DC_EINVAL, "complete: bad lease");
        }
        s[i].part = l[i].partition;
        s[i].idx = i;
    }
    qsort(s, n, sizeof(*s), slot_cmp);
    ncalls = count_runs(s, n);
    calls = xcalloc(ncalls, sizeof(*calls));
    rep = xcalloc(ncalls, sizeof(*rep));
    complete_build(f, l, outcome, delay_ms, s, n, calls, now_ms);
    rc = frontier__run(f, calls, ncalls, rep);
    for (size_t i = 0; !rc && i < n; i++)
        frontier__held_del(f, l[i].partition, l[i].entry);
    for (size_t i = 0, c = 0; !rc && i < n; i++) {
        if (i > 0 && s[i].part != s[i - 1].part)
            c++;
        if (f->depth >= 0)
            f->part_next[s[i].part] = rep[c]->integer < 0 ? INT64_MAX
                                                          : rep[c]->integer;
    }
    frontier__replies_free(rep, ncalls);
    free(rep);
    frontier__calls_free(calls, ncalls);
    free(s);
    return rc;
}

/* ---- reclaim, level, stats: one call per partition ---- */

typedef void (*part_call_fn)(struct frontier *f, struct frontier_call *c,
                             int p, void *ud);

/* Build k calls per partition with fn, run them in one pipeline. */
static int run_all(struct frontier *f, size_t k, part_call_fn fn, void *ud,
                   redisReply ***rep)
{
    size_t n = (size_t)f->nparts * k;
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    int rc;

    for (int p = 0; p < f->nparts; p++)
        fn(f, &calls[(size_t)p * k], p, ud);
    *rep = xcalloc(n, sizeof(**rep));
    rc = frontier__run(f, calls, n, *rep);
    frontier__calls_free(calls, n);
    if (rc) {
        free(*rep);
        *rep = NULL;
    }
    return rc;
}

static void free_all(struct frontier *f, size_t k, redisReply **rep)
{
    frontier__replies_free(rep, (size_t)f->nparts * k);
    free(rep);
}

struct reclaim_arg {
    int64_t now;
    int own;
};

static void reclaim_call(struct frontier *f, struct frontier_call *c, int p,
                         void *ud)
{
    const struct reclaim_arg *a = ud;

    frontier__call_init(c, FRONTIER_SCRIPT_RECLAIM);
    frontier__strv_pushf(&c->keys, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:act", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:next", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:", f->prefix, p);
    frontier__strv_pushf(&c->args, "%lld", (long long)a->now);
    frontier__strv_pushs(&c->args, a->own ? "1" : "0");
    frontier__strv_pushs(&c->args, f->node);
    frontier__strv_pushf(&c->args, "%d", f->conns);
}

int frontier_reclaim(struct frontier *f, int64_t now_ms, int own_node,
                     size_t *reclaimed)
{
    struct reclaim_arg a = { now_ms, own_node != 0 };
    redisReply **rep;
    int rc;

    *reclaimed = 0;
    rc = run_all(f, 1, reclaim_call, &a, &rep);
    if (rc)
        return rc;
    for (int p = 0; p < f->nparts; p++) {
        if (rep[p]->integer <= 0)
            continue;
        *reclaimed += (size_t)rep[p]->integer;
        lower_next(f, p, now_ms);
    }
    free_all(f, 1, rep);
    return DC_OK;
}

static void hgetall_call(struct frontier *f, struct frontier_call *c, int p,
                         const char *what)
{
    frontier__call_init(c, -1);
    frontier__strv_pushs(&c->args, "HGETALL");
    frontier__strv_pushf(&c->args, "%s:{%d}:%s", f->prefix, p, what);
}

static void level_call(struct frontier *f, struct frontier_call *c, int p,
                       void *ud)
{
    (void)ud;
    hgetall_call(f, c, p, "pend");
}

/* Add the pend counts of one HGETALL reply into pending[0..maxd). */
static void sum_pend(const redisReply *r, int maxd, int64_t *pending,
                     int64_t *total)
{
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        int d = atoi(r->element[i]->str);
        int64_t v = reply_int(r->element[i + 1], 0);
        if (d >= 0 && d < maxd)
            pending[d] += v;
        if (total)
            *total += v;
    }
}

/* Sum pend over the partitions known used, then read <prefix>:used again
 * in the same pipeline (after the pend reads). Admit marks a partition
 * used before it queues anything there, so a partition that had work when
 * its pend was (or would have been) read is in that last read: when it
 * adds nothing new, the sum is complete. 1: complete, 0: read again. */
static int level_used(struct frontier *f, int maxd, int64_t *pending,
                      int *rc)
{
    size_t k = 0;
    struct frontier_call *calls = xcalloc((size_t)f->nparts + 1, sizeof(*calls));
    redisReply **rep = xcalloc((size_t)f->nparts + 1, sizeof(*rep));
    int complete = 1;

    for (int p = 0; p < f->nparts; p++)
        if (frontier__is_used(f, p))
            level_call(f, &calls[k++], p, NULL);
    frontier__call_init(&calls[k], -1);
    frontier__strv_pushs(&calls[k].args, "GET");
    frontier__strv_pushf(&calls[k++].args, "%s:used", f->prefix);
    *rc = frontier__run(f, calls, k, rep);
    for (size_t i = 0; !*rc && i + 1 < k; i++)
        sum_pend(rep[i], maxd, pending, NULL);
    if (!*rc && frontier__used_merge(f, rep[k - 1]))
        complete = 0;
    if (!*rc)
        frontier__replies_free(rep, k);
    free(rep);
    frontier__calls_free(calls, k);
    return complete;
}

int frontier_level(struct frontier *f, int maxd, int64_t *pending, int *level)
{
    redisReply **rep;
    int rc = DC_OK;

    *level = -1;
    /* a cluster node reads only the partitions that ever had a URL (a
     * few tries while the used set grows under it), anyone else all */
    for (int tries = 0; f->cl && tries < 4; tries++) {
        for (int d = 0; d < maxd; d++)
            pending[d] = 0;
        if (level_used(f, maxd, pending, &rc))
            goto done;
        if (rc)
            return rc;
    }
    for (int d = 0; d < maxd; d++)
        pending[d] = 0;
    rc = run_all(f, 1, level_call, NULL, &rep);
    if (rc)
        return rc;
    for (int p = 0; p < f->nparts; p++)
        sum_pend(rep[p], maxd, pending, NULL);
    free_all(f, 1, rep);
done:
    if (rc)
        return rc;
    for (int d = 0; d < maxd && *level < 0; d++)
        if (pending[d] > 0)
            *level = d;
    return DC_OK;
}

static void stats_call(struct frontier *f, struct frontier_call *c, int p,
                       void *ud)
{
    (void)ud;
    hgetall_call(f, &c[0], p, "stat");
    hgetall_call(f, &c[1], p, "pend");
    frontier__call_init(&c[2], -1);
    frontier__strv_pushs(&c[2].args, "ZCARD");
    frontier__strv_pushf(&c[2].args, "%s:{%d}:lease", f->prefix, p);
}

static void sum_stat(const redisReply *r, struct frontier_stats *st)
{
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const char *k = r->element[i]->str;
        int64_t v = reply_int(r->element[i + 1], 0);
        if (strcmp(k, "admitted") == 0)
            st->admitted += v;
        else if (strcmp(k, "seen") == 0)
            st->seen += v;
        else if (strncmp(k, "done:", 5) == 0)
            st->done += v;
        else if (strncmp(k, "failed:", 7) == 0)
            st->failed += v;
        else if (strncmp(k, "skipped:", 8) == 0)
            st->skipped += v;
        else if (strcmp(k, "budget") == 0)
            st->budget += v;
    }
}

uint64_t frontier_budget_refused(const struct frontier *f)
{
    return f->budget_refused;
}

int frontier_stats(struct frontier *f, struct frontier_stats *st)
{
    redisReply **rep;
    int64_t pend = 0;
    int rc;

    memset(st, 0, sizeof(*st));
    rc = run_all(f, 3, stats_call, NULL, &rep);
    if (rc)
        return rc;
    for (int p = 0; p < f->nparts; p++) {
        sum_stat(rep[3 * p], st);
        sum_pend(rep[3 * p + 1], 0, NULL, &pend);
        st->leased += rep[3 * p + 2]->integer;
    }
    free_all(f, 3, rep);
    st->queued = pend - st->leased;
    return DC_OK;
}
