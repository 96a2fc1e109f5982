/*
 * held.c: the URL leases this handle popped and has not completed yet,
 * counted per partition (a partition is handed over only when its count
 * is 0, cluster.c) and kept by entry, so that leases nobody here holds can
 * be told apart from ours after a reconnect.
 *
 * Why: a pipeline cut by a Redis restart may have run a pop whose reply
 * never arrived. Its leases carry this node's id, so no other node takes
 * them and the level they belong to would wait for frontier.lease.
 * frontier_reclaim_orphans puts every lease of this node's id that is not
 * in the set back in its queue (one script call per partition that has
 * any lease).
 *
 * frontier_hand_back gives every lease back and empties the set (a node
 * stopping on an error it cannot crawl through, e.g. a full disk).
 *
 * The set is a chained hash table of owned strings, grown at load 1.
 *
 * Thread rules: as struct frontier.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"

struct held_node {
    char *entry;
    int part;
    struct held_node *next;
};

struct frontier_held {
    struct held_node **slot;
    size_t nslot, n;
};

static size_t slot_of(const struct frontier_held *h, const char *e)
{
    return (size_t)(dedup_fingerprint(e, strlen(e)) & (h->nslot - 1));
}

static void grow(struct frontier_held *h)
{
    size_t old = h->nslot;
    struct held_node **s = h->slot;

    h->nslot = old ? old * 2 : 1024;
    h->slot = xcalloc(h->nslot, sizeof(*h->slot));
    for (size_t i = 0; i < old; i++)
        while (s[i]) {
            struct held_node *x = s[i];
            size_t k = slot_of(h, x->entry);
            s[i] = x->next;
            x->next = h->slot[k];
            h->slot[k] = x;
        }
    free(s);
}

void frontier__held_add(struct frontier *f, int p, const char *entry)
{
    struct frontier_held *h = f->held_set;
    struct held_node *x;
    size_t k;

    if (!h)
        h = f->held_set = xcalloc(1, sizeof(*h));
    if (h->n >= h->nslot)
        grow(h);
    x = xcalloc(1, sizeof(*x));
    x->entry = xstrdup(entry);
    x->part = p;
    k = slot_of(h, entry);
    x->next = h->slot[k];
    h->slot[k] = x;
    h->n++;
    if (p >= 0 && p < f->nparts)
        f->held[p]++;
}

void frontier__held_del(struct frontier *f, int p, const char *entry)
{
    struct frontier_held *h = f->held_set;
    struct held_node **pp;

    if (!h || !h->nslot || !entry)
        return;
    for (pp = &h->slot[slot_of(h, entry)]; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->entry, entry)) {
            struct held_node *x = *pp;
            *pp = x->next;
            free(x->entry);
            free(x);
            h->n--;
            if (p >= 0 && p < f->nparts && f->held[p] > 0)
                f->held[p]--;
            return;
        }
}

void frontier__held_free(struct frontier *f)
{
    struct frontier_held *h = f->held_set;

    if (!h)
        return;
    for (size_t i = 0; i < h->nslot; i++)
        while (h->slot[i]) {
            struct held_node *x = h->slot[i];
            h->slot[i] = x->next;
            free(x->entry);
            free(x);
        }
    free(h->slot);
    free(h);
    f->held_set = NULL;
}

static void orphans_call(struct frontier *f, struct frontier_call *c, int p,
                         int64_t now)
{
    const struct frontier_held *h = f->held_set;

    frontier__lease_call(f, c, FRONTIER_SCRIPT_ORPHANS, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:", f->prefix, p);
    frontier__strv_pushf(&c->args, "%lld", (long long)now);
    frontier__strv_pushf(&c->args, "%d", f->conns);
    frontier__strv_pushs(&c->args, f->node);
    frontier__strv_pushs(&c->args, f->qnative ? "1" : "0");
    for (size_t i = 0; h && f->held[p] > 0 && i < h->nslot; i++)
        for (const struct held_node *x = h->slot[i]; x; x = x->next)
            if (x->part == p)
                frontier__strv_pushs(&c->args, x->entry);
}

int frontier_reclaim_orphans(struct frontier *f, int64_t now_ms,
                             size_t *reclaimed)
{
    size_t n = (size_t)f->nparts, k = 0;
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    redisReply **rep = xcalloc(n, sizeof(*rep));
    int rc;

    *reclaimed = 0;
    for (int p = 0; p < f->nparts; p++)
        orphans_call(f, &calls[k++], p, frontier__rnow(f, now_ms));
    rc = frontier__run(f, calls, k, rep);
    for (size_t i = 0; !rc && i < k; i++)
        if (rep[i]->type == REDIS_REPLY_INTEGER)
            *reclaimed += (size_t)rep[i]->integer;
    if (!rc)
        frontier__replies_free(rep, k);
    free(rep);
    frontier__calls_free(calls, k);
    return rc;
}

/* Every lease of this node's id back to the front of its host queue (the
 * reclaim script with own_node), then forgotten here: no partition counts
 * a lease held any more, so frontier_cluster_leave releases them all. */
int frontier_hand_back(struct frontier *f, int64_t now_ms, size_t *returned)
{
    int rc = frontier_reclaim(f, now_ms, 1, returned);

    if (rc)
        return rc;
    frontier__held_free(f);
    memset(f->held, 0, (size_t)f->nparts * sizeof(*f->held));
    return DC_OK;
}
