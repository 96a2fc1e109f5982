/*
 * sweep.c: the calls that visit every partition in one pipeline:
 * frontier_reclaim (expired leases back to their queues,
 * frontier/lua/reclaim.lua), frontier_level (pending URLs per depth) and
 * frontier_stats (totals of the stat hashes).
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

/* ---- reclaim, level, stats: one call per partition ---- */

typedef void (*part_call_fn)(struct frontier *f, struct frontier_call *c,
                             int p, void *ud);

/* Build k calls per partition with fn, run them in one pipeline: the np
 * partitions of part, or every partition when part is NULL. */
static int run_parts(struct frontier *f, const int *part, size_t np, size_t k,
                     part_call_fn fn, void *ud, redisReply ***rep)
{
    size_t n = np * k;
    struct frontier_call *calls = xcalloc(n ? n : 1, sizeof(*calls));
    int rc;

    for (size_t i = 0; i < np; i++)
        fn(f, &calls[i * k], part ? part[i] : (int)i, ud);
    *rep = xcalloc(n ? n : 1, sizeof(**rep));
    rc = n ? frontier__run(f, calls, n, *rep) : DC_OK;
    frontier__calls_free(calls, n);
    if (rc) {
        free(*rep);
        *rep = NULL;
    }
    return rc;
}

static int run_all(struct frontier *f, size_t k, part_call_fn fn, void *ud,
                   redisReply ***rep)
{
    return run_parts(f, NULL, (size_t)f->nparts, k, fn, ud, rep);
}

static void free_parts(size_t n, redisReply **rep)
{
    frontier__replies_free(rep, n);
    free(rep);
}

static void free_all(struct frontier *f, size_t k, redisReply **rep)
{
    free_parts((size_t)f->nparts * k, rep);
}

struct reclaim_arg {
    int64_t now;
    int own;
};

static void reclaim_call(struct frontier *f, struct frontier_call *c, int p,
                         void *ud)
{
    const struct reclaim_arg *a = ud;

    frontier__lease_call(f, c, FRONTIER_SCRIPT_RECLAIM, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:", f->prefix, p);
    frontier__strv_pushf(&c->args, "%lld", (long long)a->now);
    frontier__strv_pushs(&c->args, a->own ? "1" : "0");
    frontier__strv_pushs(&c->args, f->node);
    frontier__strv_pushf(&c->args, "%d", f->conns);
    frontier__strv_pushs(&c->args, f->qnative ? "1" : "0");
}

/* The periodic reclaim of a cluster node (own_node 0) visits only the
 * partitions known used: one that never had a URL holds no lease, and one
 * that got its first URL since this node's last read of <prefix>:used
 * (every FRONTIER_POLL_MS) is visited at the next reclaim. With 60 hosts
 * that is 60 script calls instead of one per partition (1,024 by
 * default), which under load had taken 0.9 s of the node loop. A node's
 * own leases (own_node) are looked for everywhere: at start it has not
 * read the used set yet. */
int frontier_reclaim(struct frontier *f, int64_t now_ms, int own_node,
                     size_t *reclaimed)
{
    struct reclaim_arg a = { frontier__rnow(f, now_ms), own_node != 0 };
    int *part = xcalloc((size_t)f->nparts, sizeof(*part));
    size_t n = 0;
    redisReply **rep;
    int rc;

    *reclaimed = 0;
    for (int p = 0; p < f->nparts; p++)
        if (own_node || !f->cl || frontier__is_used(f, p))
            part[n++] = p;
    rc = run_parts(f, part, n, 1, reclaim_call, &a, &rep);
    for (size_t i = 0; !rc && i < n; i++) {
        if (rep[i]->integer <= 0)
            continue;
        *reclaimed += (size_t)rep[i]->integer;
        frontier__index_lower(f, part[i], a.now);
    }
    if (!rc)
        free_parts(n, rep);
    free(part);
    return rc;
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
        if (r->element[i]->type != REDIS_REPLY_STRING)
            continue; /* a field is a string; anything else is no depth */
        int d = atoi(r->element[i]->str);
        int64_t v = frontier__reply_int(r->element[i + 1], 0);
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
        int64_t v = frontier__reply_int(r->element[i + 1], 0);
        if (r->element[i]->type != REDIS_REPLY_STRING)
            continue;
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

