/*
 * node-cluster.c: the membership phase of the node loop (the tick timer of
 * node.c's table): the changed noise state saved (node-store.c; before a
 * tick may hand a partition over), then the heartbeat with the node's
 * figures, membership and partition ownership (frontier/cluster.c), as
 * often as frontier_cluster_tick asks.
 */
#include <stdint.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"
#include "noise.h"

/* Pages/s over the last NODE_RATE_WINDOW_S s, or since the node started
 * (0 pages then) while it has run for less (summary.c). */
static double pages_rate(struct node *n, int64_t now)
{
    if (n->rate.pages.n == 0)
        node_rate_add(&n->rate.pages,
                      now - (dc_mono_us() - n->st->started_us) / 1000, 0);
    return node_rate_add(&n->rate.pages, now, n->st->pages);
}

static const char *node_state(struct node *n, int stopping)
{
    if (stopping)
        return "draining";
    if (n->net.offline_since) /* no host answers (node-offline.c) */
        return "offline";
    if (fetcher_active(n->fetch) > 0 || workers_pending(n->workers, NULL) > 0)
        return "fetching";
    if (polite_waiting(n->polite) > 0 || n->parked > 0 ||
        n->next_ready != INT64_MAX) /* owned hosts wait out their gap */
        return "politeness";
    return n->waiting_level ? "level-wait" : "idle";
}

/* Heartbeat, membership and partition ownership (frontier/cluster.c).
 * After a reconnect: a Redis that went away and came back may have lost
 * its last writes (AOF fsync'd once a second), so the dedup cache is
 * emptied (no URL is dropped as "seen" on the word of the cache alone);
 * and a pop whose reply was lost with the connection left leases of this
 * node that nobody holds, so they go back to their queues. */
static int cluster_tick(struct node *n, int64_t now, int stopping,
                        int64_t *next_tick)
{
    struct frontier_node_info in = {0};
    int rc;

    in.started_ms = now - (dc_mono_us() - n->st->started_us) / 1000;
    in.pages = (int64_t)n->st->pages;
    in.pages_s = pages_rate(n, now);
    in.inflight = (int64_t)(fetcher_active(n->fetch) + n->parked +
                            polite_waiting(n->polite));
    in.level = n->level;
    in.state = node_state(n, stopping);
    rc = frontier_cluster_tick(n->f, now, &in, next_tick);
    node__failover_check(n); /* a new server: orphans_due */
    if (!rc && (frontier_reconnects(n->f) != n->rate.reconnects ||
                n->orphans_due)) {
        size_t orphans = 0;
        n->rate.reconnects = frontier_reconnects(n->f);
        n->orphans_due = 0;
        dedup_cache_free(&n->cache);
        n->cache = dedup_cache_new((size_t)n->c->dedup_cache_entries);
        rc = frontier_reclaim_orphans(n->f, now, &orphans);
        n->st->leases_reclaimed += orphans;
    }
    return rc;
}

int node__timer_tick(struct node *n, struct node_timer *t, int64_t now)
{
    if (noise_state_used(n->noise)) /* before a tick may hand a partition over */
        node__noise_flush(n);
    return cluster_tick(n, now, n->loop.stopping, &t->due);
}
