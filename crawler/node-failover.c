/*
 * node-failover.c: the node when its Redis server changes: a replica that
 * Sentinel promoted after the master died, or a restarted Redis
 * (frontier_epoch moves on; frontier/failover.c, frontier/redis.c).
 *
 * What the new server may lack. Replication (and the AOF's fsync) is
 * asynchronous: the new server holds a prefix of the old one's writes,
 * and any suffix of what the old one acknowledged may be missing: admits
 * (seen-set entries and queued URLs), pops (leases), completions,
 * ownership renewals, heartbeats, digest claims. Each loss alone costs a
 * fetch at most, never a URL:
 *   - a lost pop: the URL is still queued (fetched again), or the lease
 *     of this node nobody holds goes back (orphans, at the next tick);
 *   - a lost completion: the lease is still there (it expires, or the
 *     orphan pass puts it back) and the page is fetched again;
 *   - a lost admit of page P's child C: P's completion was sent after
 *     the admit (node.c: claim, admit, write, complete), so on a prefix
 *     it is lost too and P is fetched again, admitting C again.
 * That last argument fails in two ways, which this file closes:
 *   1. the seen cache (dedup/) says "seen" for C, whose insert was lost:
 *      the fetch of P again would drop C. The cache is emptied before
 *      any admission on the new server (node__failover_check runs first
 *      in every results batch and admission).
 *   2. P's links went to the old server and P's completion to the new
 *      one (the server changed between the two calls): the completion
 *      survives, the admits may not. Such a completion is sent as
 *      FRONTIER_RETRY instead (P is fetched again; its output line is
 *      written twice, merge keeps one), and it is sent under
 *      frontier_epoch_guard, so that it cannot reach a newer server than
 *      the one checked.
 * Other state read from the old server is dropped too: partition
 * ownership lapses and is taken again, the used-partitions bitmap is read
 * again (frontier_failover_reset). The robots.txt rules cached here are
 * kept: they are the sites' answers, not the server's.
 * URLs admitted from sitemaps follow no lease's completion: the
 * sitemaps that may have been lost are read again (sitemaps_again, whose
 * comment says which).
 */
#include <stdint.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"

/* Completion attempts that meet yet another server change. */
#define NODE_FAILOVER_TRIES 8

int node__failover_check(struct node *n)
{
    uint64_t e = frontier_epoch(n->f);

    if (e == n->epoch)
        return 0;
    n->epoch = e;
    n->st->server_changes++;
    dedup_cache_free(&n->cache);
    n->cache = dedup_cache_new((size_t)n->c->dedup_cache_entries);
    frontier_failover_reset(n->f);
    n->orphans_due = 1;
    n->loop.timers[TIMER_TICK].due = 0;
    sitemaps_again(n);
    return 1;
}

/* Leases whose links went to an older server than now's go back. */
static void stale_to_retry(struct node *n, struct frontier_lease *l,
                           int *outcome, const uint64_t *epoch, size_t k)
{
    uint64_t now = frontier_epoch(n->f);

    for (size_t i = 0; i < k; i++)
        if (epoch[i] != NODE_ANY_EPOCH && epoch[i] != now &&
            outcome[i] != FRONTIER_RETRY) {
            outcome[i] = FRONTIER_RETRY;
            l[i].retry_ms = 0;
            n->st->failover_refetch++;
        }
}

int node__complete_epoch(struct node *n, struct frontier_lease *l,
                         int *outcome, int64_t *delay,
                         const uint64_t *epoch, size_t k)
{
    int rc = DC_EFAILOVER;

    for (int t = 0; t < NODE_FAILOVER_TRIES && rc == DC_EFAILOVER; t++) {
        stale_to_retry(n, l, outcome, epoch, k);
        frontier_epoch_guard(n->f, 1, frontier_epoch(n->f));
        rc = frontier_complete(n->f, l, outcome, delay, k, dc_now_ms());
        frontier_epoch_guard(n->f, 0, 0);
        node__failover_check(n);
    }
    return rc;
}
