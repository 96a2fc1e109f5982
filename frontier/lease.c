/*
 * lease.c: frontier_pop and frontier_complete, and the local ready index
 * they keep.
 *
 * Pop keeps a local index of when each partition may next have a ready
 * host at the depth being popped (part_next). Only partitions whose time
 * has come are polled, round-robin from where the last pop stopped. Replies
 * of pop and complete keep the index exact for this process's own work;
 * work pushed by other processes is found by a full rescan (one cheap
 * range query per partition, pipelined), done at most every
 * FRONTIER_SCAN_MS, or every FRONTIER_IDLE_SCAN_MS while the index knows of
 * nothing ready. Two depths keep an index each (a node pops its level and,
 * while that level drains, the next one): a pop at a third depth starts a
 * new one.
 *
 * A host is leased up to host_connections URLs at a time, or up to
 * host_connections + the lease-ahead window (frontier_set_lease_ahead)
 * while its last completion set no politeness gap (lua/pop.lua).
 *
 * Complete sends one complete script call per partition touched
 * (frontier/lua/complete.lua), in one pipeline; a lease that may no longer
 * run here comes back as FRONTIER_RETRY.
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"

/* ---- pop ---- */

/* Make the active index the one of `depth`: swap in the kept one when it
 * is of that depth, else keep the active one aside (a node alternates
 * between its level and the next) and start a new one. */
static void index_reset(struct frontier *f, int depth)
{
    struct frontier_index a = f->alt;

    f->alt = f->ix;
    f->ix = a;
    if (a.depth == depth && a.part_next)
        return;
    if (!f->ix.part_next)
        f->ix.part_next = xmalloc((size_t)f->nparts * sizeof(*f->ix.part_next));
    f->ix.depth = depth;
    f->ix.scanned = 0;
    for (int p = 0; p < f->nparts; p++)
        f->ix.part_next[p] = INT64_MAX;
}

static int64_t index_min(const struct frontier *f)
{
    int64_t m = INT64_MAX;

    for (int p = 0; p < f->nparts; p++)
        if (f->ix.part_next[p] < m)
            m = f->ix.part_next[p];
    return m;
}

static int need_scan(const struct frontier *f, int64_t now)
{
    if (!f->ix.scanned || now < f->ix.last_scan ||
        now - f->ix.last_scan >= FRONTIER_SCAN_MS)
        return 1;
    return index_min(f) > now && now - f->ix.last_scan >= FRONTIER_IDLE_SCAN_MS;
}

static int64_t ready_time(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2)
        return INT64_MAX;
    return frontier__reply_int(r->element[1], INT64_MAX);
}

/* Ask every partition for its earliest ready host at f->ix.depth. */
static int rescan(struct frontier *f, int64_t now)
{
    size_t n = (size_t)f->nparts, k = 0;
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    redisReply **rep = xcalloc(n, sizeof(*rep));
    int *part = xcalloc(n, sizeof(*part));
    int rc = DC_OK;

    for (int p = 0; p < f->nparts; p++) {
        struct frontier_strv *a = &calls[k].args;
        f->ix.part_next[p] = INT64_MAX;
        if (!frontier__may_pop(f, p)) /* another node's partition */
            continue;
        frontier__call_init(&calls[k], -1);
        if (f->qnative) {
            frontier__strv_pushs(a, "DCFRONT.QREADY");
            frontier__strv_pushf(a, "%s:{%d}:h:%d", f->prefix, p, f->ix.depth);
        } else {
        frontier__strv_pushs(a, "ZRANGEBYSCORE");
        frontier__strv_pushf(a, "%s:{%d}:h:%d", f->prefix, p, f->ix.depth);
        frontier__strv_pushs(a, "-inf");
        frontier__strv_pushf(a, "(%lld", (long long)FRONTIER_BUSY);
        frontier__strv_pushs(a, "WITHSCORES");
        frontier__strv_pushs(a, "LIMIT");
        frontier__strv_pushs(a, "0");
        frontier__strv_pushs(a, "1");
        }
        part[k++] = p;
    }
    if (k)
        rc = frontier__run(f, calls, k, rep);
    for (size_t i = 0; !rc && i < k; i++)
        f->ix.part_next[part[i]] = ready_time(rep[i]);
    if (!rc) {
        f->ix.scanned = 1;
        f->ix.last_scan = now;
    }
    if (k)
        frontier__replies_free(rep, k);
    free(rep);
    free(part);
    frontier__calls_free(calls, k);
    return rc;
}

static void lower(struct frontier_index *x, int p, int64_t t)
{
    if (x->depth >= 0 && x->part_next[p] > t)
        x->part_next[p] = t;
}

void frontier__index_lower(struct frontier *f, int p, int64_t t)
{
    lower(&f->ix, p, t);
    lower(&f->alt, p, t);
}

void frontier__index_lower_at(struct frontier *f, int depth, int p, int64_t t)
{
    if (depth == f->ix.depth)
        lower(&f->ix, p, t);
    else if (depth == f->alt.depth)
        lower(&f->alt, p, t);
}

void frontier__index_wake(struct frontier *f, int p)
{
    (void)p;
    f->ix.scanned = 0; /* the next pop rescans, this partition included */
    f->alt.scanned = 0;
}

/* Up to `want` partitions ready at now, round-robin from f->ix.rr, looking at
 * no more than *budget positions (decreased by the positions looked at). */
static size_t pick_batch(struct frontier *f, int64_t now, size_t want,
                         int *parts, int *budget)
{
    size_t nb = 0;

    while (nb < want && *budget > 0) {
        int p = f->ix.rr;
        f->ix.rr = (f->ix.rr + 1) % f->nparts;
        (*budget)--;
        if (f->ix.part_next[p] <= now && frontier__may_pop(f, p))
            parts[nb++] = p;
    }
    return nb;
}

static void pop_call(struct frontier *f, struct frontier_call *c, int p,
                     int64_t now, size_t share)
{
    struct frontier_strv *a = &c->args;

    frontier__call_init(c, FRONTIER_SCRIPT_POP);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, f->ix.depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:host", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:lease", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:", f->prefix, p, f->ix.depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:own", f->prefix, p);
    frontier__strv_pushf(a, "%lld", (long long)now);
    frontier__strv_pushf(a, "%d", f->ix.depth);
    frontier__strv_pushf(a, "%zu", share);
    frontier__strv_pushf(a, "%lld", (long long)f->lease_ms); /* + Redis's now */
    frontier__strv_pushf(a, "%d", f->conns);
    frontier__strv_pushs(a, f->node);
    frontier__strv_pushs(a, f->cl ? "1" : "0");
    frontier__strv_pushf(a, "%d", f->host_conns);
}

void frontier_set_lease_ahead(struct frontier *f, int extra)
{
    f->conns = f->host_conns + (extra > 0 ? extra : 0);
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
    l->retry_ms = 0;
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
        f->ix.part_next[p] = INT64_MAX;
        frontier__cluster_lost(f, p);
        return DC_OK;
    }
    f->ix.part_next[p] = r->element[0]->integer < 0 ? INT64_MAX
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
    now_ms = frontier__rnow(f, now_ms); /* the index is on Redis's clock */
    if (depth < 0)
        return frontier__seterr(f, DC_EINVAL, "pop: negative depth");
    if (depth != f->ix.depth)
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
    *next_ms = frontier__rlocal(f, index_min(f));
    return DC_OK;
}

void frontier_lease_drop(struct frontier *f, const struct frontier_lease *l)
{
    frontier__held_del(f, l->partition, l->entry);
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
    frontier__lease_call(f, c, FRONTIER_SCRIPT_COMPLETE, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:pend", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:stat", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, depth);
    frontier__strv_pushf(&c->keys, "%s:{%d}:fail", f->prefix, p);
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
    frontier__strv_pushf(&c->args, "%lld",
                         (long long)(l->retry_ms < 0 ? 0 : l->retry_ms));
}

static int check_lease(const struct frontier *f, const struct frontier_lease *l,
                       int outcome)
{
    return l->entry && l->url && l->host && l->depth >= 0 &&
           l->partition >= 0 && l->partition < f->nparts &&
           outcome >= FRONTIER_DONE && outcome <= FRONTIER_RETRY;
}

/* Leases grouped by partition for one script call each: s sorts them
 * (frontier__slots_sort), calls[c] and rep[c] are partition c's. */
struct lease_batch {
    struct frontier_slot *s;
    size_t ncalls;
    struct frontier_call *calls;
    redisReply **rep;
};

/* The batch of leases l[0..n), each checked (outcome NULL: any); DC_EINVAL
 * when one is malformed (f's error names `what`). */
static int batch_open(struct frontier *f, struct lease_batch *b,
                      const struct frontier_lease *l, const int *outcome,
                      size_t n, const char *what)
{
    b->s = xmalloc(n * sizeof(*b->s));
    for (size_t i = 0; i < n; i++) {
        if (!check_lease(f, &l[i], outcome ? outcome[i] : FRONTIER_DONE)) {
            free(b->s);
            return frontier__seterr(f, DC_EINVAL, "%s: bad lease", what);
        }
        b->s[i].part = l[i].partition;
        b->s[i].idx = i;
    }
    b->ncalls = frontier__slots_sort(b->s, n);
    b->calls = xcalloc(b->ncalls, sizeof(*b->calls));
    b->rep = xcalloc(b->ncalls, sizeof(*b->rep));
    return DC_OK;
}

/* Does s[i] start a partition's call? (Its call index is then one more
 * than s[i - 1]'s.) */
static int starts_call(const struct lease_batch *b, size_t i)
{
    return i == 0 || b->s[i].part != b->s[i - 1].part;
}

static void batch_close(struct lease_batch *b)
{
    frontier__replies_free(b->rep, b->ncalls);
    free(b->rep);
    frontier__calls_free(b->calls, b->ncalls);
    free(b->s);
}

static void complete_build(struct frontier *f, const struct frontier_lease *l,
                           const int *outcome, const int64_t *delay_ms,
                           struct lease_batch *b, size_t n, int64_t now)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++) {
        const struct frontier_lease *x = &l[b->s[i].idx];
        if (starts_call(b, i)) {
            c += i > 0;
            complete_call(f, &b->calls[c], b->s[i].part,
                          f->ix.depth >= 0 ? f->ix.depth : x->depth, now);
        }
        complete_add(f, &b->calls[c], x, outcome[b->s[i].idx],
                     delay_ms ? delay_ms[b->s[i].idx] : 0);
    }
}

int frontier_complete(struct frontier *f, const struct frontier_lease *l,
                      const int *outcome, const int64_t *delay_ms, size_t n,
                      int64_t now_ms)
{
    struct lease_batch b;
    int64_t rnow;
    int rc;

    if (n == 0)
        return DC_OK;
    if ((rc = batch_open(f, &b, l, outcome, n, "complete")) != DC_OK)
        return rc;
    complete_build(f, l, outcome, delay_ms, &b, n, frontier__rnow(f, now_ms));
    rc = frontier__run(f, b.calls, b.ncalls, b.rep);
    for (size_t i = 0; !rc && i < n; i++)
        frontier__held_del(f, l[i].partition, l[i].entry);
    rnow = frontier__rnow(f, now_ms); /* the run may have re-read the clock */
    for (size_t i = 0, c = 0; !rc && i < n; i++) {
        int p = b.s[i].part;
        c += i > 0 && starts_call(&b, i);
        if (f->ix.depth >= 0)
            f->ix.part_next[p] = b.rep[c]->integer < 0 ? INT64_MAX
                                                       : b.rep[c]->integer;
        lower(&f->alt, p, rnow); /* a host freed there may be ready */
    }
    batch_close(&b);
    return rc;
}

int frontier_renew(struct frontier *f, const struct frontier_lease *l,
                   size_t n, size_t *renewed)
{
    struct lease_batch b;
    size_t c = 0, k = 0;
    int rc;

    if (renewed)
        *renewed = 0;
    if (n == 0)
        return DC_OK;
    if ((rc = batch_open(f, &b, l, NULL, n, "renew")) != DC_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (starts_call(&b, i)) {
            c += i > 0;
            frontier__call_init(&b.calls[c], FRONTIER_SCRIPT_RENEW);
            frontier__strv_pushf(&b.calls[c].keys, "%s:{%d}:lease", f->prefix,
                                 b.s[i].part);
            frontier__strv_pushf(&b.calls[c].args, "%lld",
                                 (long long)f->lease_ms);
        }
        frontier__strv_pushs(&b.calls[c].args, l[b.s[i].idx].entry);
    }
    rc = frontier__run(f, b.calls, b.ncalls, b.rep);
    for (size_t i = 0; !rc && i < b.ncalls; i++)
        if (b.rep[i]->type == REDIS_REPLY_INTEGER && b.rep[i]->integer > 0)
            k += (size_t)b.rep[i]->integer;
    if (renewed)
        *renewed = k;
    batch_close(&b);
    return rc;
}

