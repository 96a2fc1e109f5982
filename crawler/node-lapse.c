/*
 * node-lapse.c: what the node does the moment it stops counting a
 * partition as its own (frontier/cluster.c: its local validity ended, on
 * the monotonic clock, before Redis lets another node take it; or Redis
 * said another node holds it).
 *
 *   - Every running transfer of a host in that partition (pages,
 *     robots.txt, sitemaps) is aborted: libcurl closes its connection,
 *     nothing is written for it and its lease is not completed (the URL
 *     stays leased in Redis: the partition's next owner puts it back when
 *     it takes the partition, or this node's orphan reclaim does, or the
 *     lease's expiry). So no host is fetched by two nodes at once even
 *     when a response is slow.
 *   - Pages fetched before and not yet written are dropped the same way
 *     when their results come (node__job_lapsed).
 *
 * The check (node__lapse_check) is one clock read when nothing is due.
 * It runs every turn of the loop and, through the frontier's wait hook
 * (on_redis_wait), before every Redis attempt and during the reconnect
 * back-off, so a node cut off from Redis still aborts in time; the hook
 * keeps libcurl running meanwhile (finished transfers wait in the
 * fetcher for the loop). The hook only aborts: the slots of the aborted
 * transfers are given back by node__lapse_flush at the next fetch phase,
 * outside any frontier call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"
#include "node-internal.h"

/* The longest libcurl wait inside the hook: the lapse check's period
 * while Redis is unreachable. */
#define LAPSE_POLL_MS 50

int node__inflight_partition(struct node *n, const struct inflight *in)
{
    const char *h;
    if (in->kind == INFLIGHT_PAGE)
        return in->lease.partition;
    h = in->robots->host;
    return frontier_partition(n->f, h, strlen(h));
}

static int lapsed(void *ud, void *arg)
{
    struct node *n = arg;
    const struct inflight *in = ud;
    if (in->kind == INFLIGHT_PROBE) /* of no partition */
        return 0;
    return !frontier_cluster_holds(n->f, node__inflight_partition(n, in));
}

void node__lapse_check(struct node *n)
{
    uint64_t lost = frontier_cluster_expire(n->f);
    struct fetch_result *r;
    if (lost == n->lapse.lost_seen)
        return;
    n->lapse.lost_seen = lost;
    while ((r = fetcher_cancel_if(n->fetch, lapsed, n))) {
        xgrow((void **)&n->lapse.v, &n->lapse.cap, n->lapse.n + 1,
              sizeof(*n->lapse.v));
        n->lapse.v[n->lapse.n++] = r;
    }
}

/* Leases of a partition this node lost: forgotten, not completed. */
static void drop_lease(struct node *n, struct frontier_lease *l)
{
    frontier_lease_drop(n->f, l);
    node__lease_clear(l);
    n->st->lapse_dropped++;
    n->orphans_due = 1; /* back to their queues at the next tick */
}

/* An aborted robots.txt fetch: the rules are unknown again, the leases
 * parked on them belong to the same lost partition. */
static void robots_aborted(struct node *n, struct robots_entry *e)
{
    e->state = ROBOTS_UNKNOWN;
    for (size_t i = 0; i < e->nparked; i++)
        drop_lease(n, &e->parked[i]);
    n->parked -= e->nparked;
    free(e->parked);
    e->parked = NULL;
    e->nparked = e->capparked = 0;
}

void node__lapse_flush(struct node *n)
{
    int64_t now = dc_now_ms();
    for (size_t i = 0; i < n->lapse.n; i++) {
        struct fetch_result *r = n->lapse.v[i];
        struct inflight *in = r->ud;
        polite_ended(n->polite, node__inflight_host(in), in->ipkey, NULL, now);
        n->st->lapse_aborted++;
        if (in->kind == INFLIGHT_PAGE)
            drop_lease(n, &in->lease);
        else if (in->kind == INFLIGHT_ROBOTS)
            robots_aborted(n, in->robots);
        else
            sitemaps_not_read(n, in->robots, 1); /* not read here */
        node__inflight_free(in);
        fetch_result_free(r);
    }
    n->lapse.n = 0;
}

int node__lease_lapsed(struct node *n, struct frontier_lease *l)
{
    if (frontier_cluster_holds(n->f, l->partition))
        return 0;
    drop_lease(n, l);
    return 1;
}

int node__job_lapsed(struct node *n, struct work_job *j)
{
    return node__lease_lapsed(n, &j->lease);
}

static void on_redis_wait(void *ud, int64_t ms)
{
    struct node *n = ud;
    int64_t end = dc_mono_us() / 1000 + ms, left;
    node__lapse_check(n);
    while ((left = end - dc_mono_us() / 1000) > 0) {
        (void)fetcher_run(n->fetch, (int)(left < LAPSE_POLL_MS ? left
                                                               : LAPSE_POLL_MS));
        node__lapse_check(n);
    }
}

void node__lapse_init(struct node *n)
{
    frontier_set_wait_hook(n->f, on_redis_wait, n);
}

void node__lapse_release(struct node *n)
{
    if (n->f)
        frontier_set_wait_hook(n->f, NULL, NULL);
    for (size_t i = 0; i < n->lapse.n; i++)
        node__result_drop(n->lapse.v[i]);
    free(n->lapse.v);
    memset(&n->lapse, 0, sizeof(n->lapse));
}
