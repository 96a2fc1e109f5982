/*
 * status.c: frontier_status, a read-only picture of a crawl (frontier.h).
 *
 * Three pipelined passes, each split into batches of FRONTIER_STATUS_BATCH
 * calls (frontier__run, so every call names one key and the pass also
 * works where keys live in different slots):
 *   1. global keys: HGETALL <prefix>:meta, the nodes ZSET (highest
 *      heartbeat deadline first, at most FRONTIER_STATUS_MAX_NODES),
 *      EXISTS and BITCOUNT of <prefix>:used;
 *   2. each node's <prefix>:node:<id> hash, and per partition: GET own,
 *      HGETALL pend, HGETALL stat, ZCARD lease, the first
 *      FRONTIER_STATUS_LEASES_PER_PART lease entries and the top
 *      FRONTIER_STATUS_FAIL_HOSTS of the fail ZSET (a host lives in one
 *      partition, so the top of the merged lists is the global top);
 *   3. for each (partition, depth) with pending work: three ZCOUNTs of
 *      h:<d> (ready, waiting on politeness, at the connection limit);
 *      DCFRONT.QCOUNT in the native queue layout (frontier.h).
 * Nothing is written: the figures may be a few ms apart from each other
 * (no transaction), which a status display tolerates.
 *
 * Ownership: the result is owned by the caller (frontier_status_free).
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* ---- batches of calls ---- */

struct batch {
    struct frontier_call *calls;
    size_t n, cap;
    redisReply **rep;
};

/* Append a plain command; its arguments are pushed by the caller. */
static struct frontier_call *batch_cmd(struct batch *b, const char *name)
{
    struct frontier_call *c;

    xgrow((void **)&b->calls, &b->cap, b->n + 1, sizeof(*b->calls));
    c = &b->calls[b->n++];
    frontier__call_init(c, -1);
    frontier__strv_pushs(&c->args, name);
    return c;
}

static void batch_release(struct batch *b)
{
    if (b->rep)
        frontier__replies_free(b->rep, b->n);
    free(b->rep);
    frontier__calls_free(b->calls, b->n);
    memset(b, 0, sizeof(*b));
}

/* Run every call, FRONTIER_STATUS_BATCH per pipeline; b->rep[i] answers
 * call i. On error every reply is freed. */
static int batch_run(struct frontier *f, struct batch *b)
{
    b->rep = xcalloc(b->n ? b->n : 1, sizeof(*b->rep));
    for (size_t i = 0; i < b->n; i += FRONTIER_STATUS_BATCH) {
        size_t k = b->n - i < FRONTIER_STATUS_BATCH ? b->n - i
                                                    : FRONTIER_STATUS_BATCH;
        int rc = frontier__run(f, b->calls + i, k, b->rep + i);
        if (rc) {
            frontier__replies_free(b->rep, i);
            return rc;
        }
    }
    return DC_OK;
}

/* ---- reply helpers ---- */

static int64_t rint64(const redisReply *r, int64_t def)
{
    char *end;
    long long v;

    if (!r)
        return def;
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type != REDIS_REPLY_STRING || !r->len)
        return def;
    v = strtoll(r->str, &end, 10);
    if (*end == '.') /* "12.0" from a float formatter */
        return (int64_t)strtod(r->str, NULL);
    return *end ? def : (int64_t)v;
}

static double rdouble(const redisReply *r, double def)
{
    char *end;
    double v;

    if (!r || r->type != REDIS_REPLY_STRING || !r->len)
        return def;
    v = strtod(r->str, &end);
    return *end ? def : v;
}

/* Value of field in an HGETALL reply (field, value pairs), or NULL. */
static const redisReply *hfield(const redisReply *h, const char *field)
{
    if (!h || h->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < h->elements; i += 2)
        if (h->element[i]->type == REDIS_REPLY_STRING &&
            strcmp(h->element[i]->str, field) == 0)
            return h->element[i + 1];
    return NULL;
}

static int hash_pairs(const redisReply *h)
{
    return h && h->type == REDIS_REPLY_ARRAY;
}

/* "12" -> 12 when 0 <= d < FRONTIER_STATUS_DEPTHS, else -1. */
static int depth_of(const char *s, size_t len)
{
    int d = 0;

    if (len == 0 || len > 2)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        d = d * 10 + (s[i] - '0');
    }
    return d < FRONTIER_STATUS_DEPTHS ? d : -1;
}

/* ---- open ---- */

int frontier_status_open(struct frontier **fp, const char *redis_url,
                         const struct conf *c, char *err, size_t errlen)
{
    struct frontier *f;
    const char *prefix = c && c->redis_prefix && *c->redis_prefix
                             ? c->redis_prefix : "dc";
    int rc;

    *fp = NULL;
    if (!redis_url || strpbrk(prefix, "{}")) {
        if (err && errlen)
            snprintf(err, errlen, "bad redis URL or prefix");
        return DC_EINVAL;
    }
    f = xcalloc(1, sizeof(*f));
    f->url = xstrdup(redis_url);
    f->prefix = xstrdup(prefix);
    f->node = xstrdup("status");
    f->conns = 1;
    f->lease_ms = 1;
    f->ix.depth = -1;
    f->alt.depth = -1;
    rc = frontier__auth_conf(f, c);
    if (rc && err && errlen)
        snprintf(err, errlen, "%s", f->err);
    if (!rc)
        rc = frontier__connect(f, err, errlen);
    if (rc) {
        frontier_close(&f);
        return rc;
    }
    *fp = f;
    return DC_OK;
}

/* ---- nodes ---- */

static int node_cmp_id(const void *a, const void *b)
{
    const struct frontier_status_node *x = a, *y = b;
    return strcmp(x->id, y->id);
}

static int node_cmp_show(const void *a, const void *b)
{
    const struct frontier_status_node *x = a, *y = b;
    if (x->live != y->live)
        return y->live - x->live;
    return strcmp(x->id, y->id);
}

static struct frontier_status_node *node_find(struct frontier_status *st,
                                              const char *id, size_t len)
{
    size_t lo = 0, hi = st->nnodes;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = st->nodes[mid].id;
        int c = strncmp(m, id, len);
        if (c == 0 && m[len] != '\0')
            c = 1;
        if (c == 0)
            return &st->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The nodes ZSET reply (member, score pairs) into
 * st->nodes, sorted by id. */
static void nodes_read(struct frontier_status *st, const redisReply *z)
{
    size_t n = 0;

    if (!z || z->type != REDIS_REPLY_ARRAY)
        return;
    st->nodes = xcalloc(z->elements / 2 + 1, sizeof(*st->nodes));
    for (size_t i = 0; i + 1 < z->elements; i += 2) {
        const redisReply *m = z->element[i], *s = z->element[i + 1];
        struct frontier_status_node *nd = &st->nodes[n];
        if (m->type != REDIS_REPLY_STRING)
            continue;
        nd->id = xstrndup(m->str, m->len);
        nd->deadline_ms = (int64_t)rdouble(s, 0);
        nd->live = nd->deadline_ms > st->now_ms;
        nd->pid = nd->started_ms = nd->updated_ms = nd->pages = -1;
        nd->inflight = nd->parts_reported = nd->level = -1;
        nd->pages_s = -1;
        n++;
    }
    st->nnodes = n;
    qsort(st->nodes, n, sizeof(*st->nodes), node_cmp_id);
}

static char *hstr(const redisReply *h, const char *field)
{
    const redisReply *v = hfield(h, field);
    return v && v->type == REDIS_REPLY_STRING ? xstrndup(v->str, v->len)
                                              : NULL;
}

static void node_info(struct frontier_status_node *nd, const redisReply *h)
{
    if (!hash_pairs(h) || h->elements == 0)
        return;
    nd->has_info = 1;
    nd->host = hstr(h, "host");
    nd->state = hstr(h, "state");
    nd->pid = rint64(hfield(h, "pid"), -1);
    nd->started_ms = rint64(hfield(h, "started_ms"), -1);
    nd->updated_ms = rint64(hfield(h, "updated_ms"), -1);
    nd->pages = rint64(hfield(h, "pages"), -1);
    nd->inflight = rint64(hfield(h, "inflight"), -1);
    nd->parts_reported = rint64(hfield(h, "parts"), -1);
    nd->level = rint64(hfield(h, "level"), -1);
    nd->pages_s = rdouble(hfield(h, "pages_s"), -1);
}

/* Drop dead nodes whose figures expired, unless they still hold leases or
 * partitions. */
static void nodes_prune(struct frontier_status *st)
{
    size_t k = 0;

    for (size_t i = 0; i < st->nnodes; i++) {
        struct frontier_status_node *nd = &st->nodes[i];
        if (!nd->live && !nd->has_info && !nd->leases && !nd->parts) {
            free(nd->id);
            continue;
        }
        st->nodes[k++] = *nd;
    }
    st->nnodes = k;
}

/* ---- pass 1: global keys ---- */

static void meta_read(struct frontier *f, struct frontier_status *st,
                      const redisReply *meta)
{
    const redisReply *v;

    st->crawl = hash_pairs(meta) && meta->elements > 0;
    st->partitions = (int)rint64(hfield(meta, "partitions"), 0);
    if (st->partitions < 0 || st->partitions > 65536)
        st->partitions = 0;
    st->max_depth = (int)rint64(hfield(meta, "max_depth"), -1);
    if (st->max_depth >= FRONTIER_STATUS_DEPTHS)
        st->max_depth = FRONTIER_STATUS_DEPTHS - 1;
    v = hfield(meta, "partition_by");
    if (v && v->type == REDIS_REPLY_STRING)
        snprintf(st->partition_by, sizeof(st->partition_by), "%s", v->str);
    v = hfield(meta, "queue_layout"); /* how pass 3 counts hosts */
    f->qnative = v && v->type == REDIS_REPLY_STRING &&
                 !strcmp(v->str, QUEUE_LAYOUT_NATIVE);
}

static int pass_global(struct frontier *f, struct frontier_status *st)
{
    struct batch b = {0};
    int rc;

    frontier__strv_pushf(&batch_cmd(&b, "HGETALL")->args, "%s:meta", f->prefix);
    struct frontier_call *z = batch_cmd(&b, "ZREVRANGE");
    frontier__strv_pushf(&z->args, "%s:nodes", f->prefix);
    frontier__strv_pushs(&z->args, "0");
    frontier__strv_pushf(&z->args, "%d", FRONTIER_STATUS_MAX_NODES - 1);
    frontier__strv_pushs(&z->args, "WITHSCORES");
    frontier__strv_pushf(&batch_cmd(&b, "EXISTS")->args, "%s:used", f->prefix);
    frontier__strv_pushf(&batch_cmd(&b, "BITCOUNT")->args, "%s:used", f->prefix);
    rc = batch_run(f, &b);
    if (!rc) {
        meta_read(f, st, b.rep[0]);
        nodes_read(st, b.rep[1]);
        st->parts_used = rint64(b.rep[2], 0) ? rint64(b.rep[3], 0) : -1;
    }
    batch_release(&b);
    return rc;
}

/* ---- pass 2: node figures and partitions ---- */

#define PART_CALLS 6 /* own, pend, stat, lease count, lease entries, fail */

static void part_calls(struct frontier *f, struct batch *b, int p)
{
    struct frontier_call *c;

    frontier__strv_pushf(&batch_cmd(b, "GET")->args, "%s:{%d}:own", f->prefix, p);
    frontier__strv_pushf(&batch_cmd(b, "HGETALL")->args, "%s:{%d}:pend",
                         f->prefix, p);
    frontier__strv_pushf(&batch_cmd(b, "HGETALL")->args, "%s:{%d}:stat",
                         f->prefix, p);
    frontier__strv_pushf(&batch_cmd(b, "ZCARD")->args, "%s:{%d}:lease",
                         f->prefix, p);
    c = batch_cmd(b, "ZRANGE");
    frontier__strv_pushf(&c->args, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushs(&c->args, "0");
    frontier__strv_pushf(&c->args, "%d", FRONTIER_STATUS_LEASES_PER_PART - 1);
    c = batch_cmd(b, "ZREVRANGE");
    frontier__strv_pushf(&c->args, "%s:{%d}:fail", f->prefix, p);
    frontier__strv_pushs(&c->args, "0");
    frontier__strv_pushf(&c->args, "%d", FRONTIER_STATUS_FAIL_HOSTS - 1);
    frontier__strv_pushs(&c->args, "WITHSCORES");
}

/* Merge a partition's top failing hosts (ZREVRANGE WITHSCORES: host,
 * count pairs) into st->fail, kept sorted by count, most first. */
static void fail_read(struct frontier_status *st, const redisReply *z)
{
    if (!z || z->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i + 1 < z->elements; i += 2) {
        const redisReply *m = z->element[i];
        int64_t n = (int64_t)rdouble(z->element[i + 1], 0);
        size_t k = st->nfail;
        if (m->type != REDIS_REPLY_STRING || n <= 0)
            continue;
        if (k == FRONTIER_STATUS_FAIL_HOSTS) {
            if (st->fail[k - 1].failed >= n)
                continue;
            free(st->fail[--k].host);
        } else {
            st->nfail++;
        }
        for (; k > 0 && st->fail[k - 1].failed < n; k--)
            st->fail[k] = st->fail[k - 1];
        st->fail[k].host = xstrndup(m->str, m->len);
        st->fail[k].failed = n;
    }
}

static void owner_count(struct frontier_status *st, const redisReply *own,
                        int64_t pending)
{
    struct frontier_status_node *nd;

    if (!own || own->type != REDIS_REPLY_STRING) {
        if (pending > 0)
            st->parts_unowned_pending++;
        return;
    }
    st->parts_owned++;
    nd = node_find(st, own->str, own->len);
    if (nd)
        nd->parts++;
    else
        st->parts_owner_unknown++;
}

/* Sum a partition's pend hash; pend_d[d] gets the per-depth counts. */
static int64_t pend_read(struct frontier_status *st, const redisReply *h,
                         int64_t *pend_d)
{
    int64_t total = 0;

    if (!hash_pairs(h))
        return 0;
    for (size_t i = 0; i + 1 < h->elements; i += 2) {
        const redisReply *k = h->element[i];
        int64_t v = rint64(h->element[i + 1], 0);
        int d = k->type == REDIS_REPLY_STRING ? depth_of(k->str, k->len) : -1;
        total += v;
        if (d >= 0) {
            pend_d[d] += v;
            if (d + 1 > st->ndepths && v > 0)
                st->ndepths = d + 1;
        }
    }
    return total;
}

static void stat_read(struct frontier_status *st, const redisReply *h)
{
    static const char *const names[3] = { "done:", "failed:", "skipped:" };

    if (!hash_pairs(h))
        return;
    for (size_t i = 0; i + 1 < h->elements; i += 2) {
        const char *k;
        int64_t v = rint64(h->element[i + 1], 0);
        if (h->element[i]->type != REDIS_REPLY_STRING)
            continue;
        k = h->element[i]->str;
        if (strcmp(k, "admitted") == 0)
            st->admitted += v;
        else if (strcmp(k, "seen") == 0)
            st->seen += v;
        else if (strcmp(k, "budget") == 0)
            st->budget += v;
        for (int o = 0; o < 3; o++) {
            size_t n = strlen(names[o]);
            int d;
            if (strncmp(k, names[o], n) != 0 ||
                (d = depth_of(k + n, strlen(k + n))) < 0)
                continue;
            int64_t *dst = o == 0 ? &st->depths[d].done
                           : o == 1 ? &st->depths[d].failed
                                    : &st->depths[d].skipped;
            *dst += v;
            if (v > 0 && d + 1 > st->ndepths)
                st->ndepths = d + 1;
        }
    }
}

/* Lease entries "<node>\t<d>\t<host>\t<url>": in flight per depth and
 * per node. */
static void leases_read(struct frontier_status *st, const redisReply *card,
                        const redisReply *z)
{
    size_t got = z && z->type == REDIS_REPLY_ARRAY ? z->elements : 0;

    if (rint64(card, 0) > (int64_t)got)
        st->leases_unread += rint64(card, 0) - (int64_t)got;
    for (size_t i = 0; i < got; i++) {
        const redisReply *e = z->element[i];
        const char *t1, *t2;
        struct frontier_status_node *nd;
        int d;
        if (e->type != REDIS_REPLY_STRING ||
            !(t1 = memchr(e->str, '\t', e->len)) ||
            !(t2 = memchr(t1 + 1, '\t', e->len - (size_t)(t1 + 1 - e->str))))
            continue;
        d = depth_of(t1 + 1, (size_t)(t2 - t1 - 1));
        if (d >= 0) {
            st->depths[d].inflight++;
            if (d + 1 > st->ndepths)
                st->ndepths = d + 1;
        }
        nd = node_find(st, e->str, (size_t)(t1 - e->str));
        if (nd)
            nd->leases++;
        else
            st->leases_other++;
    }
}

/* pend[p * DEPTHS + d] is kept for pass 3. */
static int pass_parts(struct frontier *f, struct frontier_status *st,
                      int64_t *pend)
{
    struct batch b = {0};
    size_t base;
    int rc;

    for (size_t i = 0; i < st->nnodes; i++)
        frontier__strv_pushf(&batch_cmd(&b, "HGETALL")->args, "%s:node:%s",
                             f->prefix, st->nodes[i].id);
    base = b.n;
    for (int p = 0; p < st->partitions; p++)
        part_calls(f, &b, p);
    rc = batch_run(f, &b);
    if (rc) {
        batch_release(&b);
        return rc;
    }
    for (size_t i = 0; i < st->nnodes; i++)
        node_info(&st->nodes[i], b.rep[i]);
    for (int p = 0; p < st->partitions; p++) {
        redisReply **r = b.rep + base + (size_t)p * PART_CALLS;
        int64_t *pd = pend + (size_t)p * FRONTIER_STATUS_DEPTHS;
        int64_t pending = pend_read(st, r[1], pd);
        owner_count(st, r[0], pending);
        stat_read(st, r[2]);
        leases_read(st, r[3], r[4]);
        fail_read(st, r[5]);
        for (int d = 0; d < FRONTIER_STATUS_DEPTHS; d++)
            st->depths[d].queued += pd[d];
    }
    batch_release(&b);
    return DC_OK;
}

/* ---- pass 3: hosts per depth ---- */

static void zcount(struct frontier *f, struct batch *b, int p, int d,
                   const char *min, const char *max)
{
    struct frontier_call *c = batch_cmd(b, f->qnative ? "DCFRONT.QCOUNT"
                                                      : "ZCOUNT");
    frontier__strv_pushf(&c->args, "%s:{%d}:h:%d", f->prefix, p, d);
    frontier__strv_pushs(&c->args, min);
    frontier__strv_pushs(&c->args, max);
}

static int pass_hosts(struct frontier *f, struct frontier_status *st,
                      const int64_t *pend)
{
    struct batch b = {0};
    char now[32], after[32], busy[32], below[32];
    size_t k = 0;
    int rc;

    snprintf(now, sizeof(now), "%lld", (long long)st->now_ms);
    snprintf(after, sizeof(after), "(%lld", (long long)st->now_ms);
    snprintf(busy, sizeof(busy), "%lld", (long long)FRONTIER_BUSY);
    snprintf(below, sizeof(below), "(%lld", (long long)FRONTIER_BUSY);
    for (int p = 0; p < st->partitions; p++)
        for (int d = 0; d < FRONTIER_STATUS_DEPTHS; d++) {
            if (pend[(size_t)p * FRONTIER_STATUS_DEPTHS + d] <= 0)
                continue;
            zcount(f, &b, p, d, "-inf", now);
            zcount(f, &b, p, d, after, below);
            zcount(f, &b, p, d, busy, busy);
        }
    rc = b.n ? batch_run(f, &b) : DC_OK;
    for (int p = 0; !rc && p < st->partitions; p++)
        for (int d = 0; d < FRONTIER_STATUS_DEPTHS; d++) {
            struct frontier_status_depth *sd = &st->depths[d];
            if (pend[(size_t)p * FRONTIER_STATUS_DEPTHS + d] <= 0)
                continue;
            sd->hosts_ready += rint64(b.rep[k++], 0);
            sd->hosts_polite += rint64(b.rep[k++], 0);
            sd->hosts_busy += rint64(b.rep[k++], 0);
        }
    batch_release(&b);
    return rc;
}

/* ---- the whole picture ---- */

static void totals(struct frontier_status *st)
{
    struct frontier_status_depth *t = &st->total;

    if (st->max_depth >= 0 && st->max_depth + 1 > st->ndepths)
        st->ndepths = st->max_depth + 1;
    memset(t, 0, sizeof(*t));
    for (int d = 0; d < FRONTIER_STATUS_DEPTHS; d++) {
        struct frontier_status_depth *sd = &st->depths[d];
        /* queued held pend (queued + in flight) until here */
        sd->queued = sd->queued > sd->inflight ? sd->queued - sd->inflight : 0;
        sd->hosts = sd->hosts_ready + sd->hosts_polite + sd->hosts_busy;
        t->hosts += sd->hosts;
        t->hosts_ready += sd->hosts_ready;
        t->hosts_polite += sd->hosts_polite;
        t->hosts_busy += sd->hosts_busy;
        t->queued += sd->queued;
        t->inflight += sd->inflight;
        t->done += sd->done;
        t->failed += sd->failed;
        t->skipped += sd->skipped;
    }
    for (size_t i = 0; i < st->nnodes; i++)
        st->nlive += st->nodes[i].live != 0;
    if (st->nnodes > 1) /* nodes is NULL when the reply had none */
        qsort(st->nodes, st->nnodes, sizeof(*st->nodes), node_cmp_show);
}

int frontier_status(struct frontier *f, int64_t now_ms,
                    struct frontier_status **out)
{
    struct frontier_status *st = xcalloc(1, sizeof(*st));
    uint64_t rt0 = f->roundtrips;
    int64_t *pend = NULL;
    int rc;

    *out = NULL;
    st->now_ms = now_ms;
    st->max_depth = -1;
    rc = pass_global(f, st);
    if (!rc && st->partitions > 0) {
        pend = xcalloc((size_t)st->partitions * FRONTIER_STATUS_DEPTHS,
                       sizeof(*pend));
    }
    if (!rc)
        rc = pass_parts(f, st, pend);
    if (!rc)
        nodes_prune(st);
    if (!rc && pend)
        rc = pass_hosts(f, st, pend);
    free(pend);
    if (rc) {
        frontier_status_free(&st);
        return rc;
    }
    totals(st);
    st->roundtrips = f->roundtrips - rt0;
    *out = st;
    return DC_OK;
}

void frontier_status_free(struct frontier_status **stp)
{
    struct frontier_status *st;

    if (!stp || !*stp)
        return;
    st = *stp;
    for (size_t i = 0; i < st->nnodes; i++) {
        free(st->nodes[i].id);
        free(st->nodes[i].host);
        free(st->nodes[i].state);
    }
    free(st->nodes);
    for (size_t i = 0; i < st->nfail; i++)
        free(st->fail[i].host);
    free(st);
    *stp = NULL;
}
