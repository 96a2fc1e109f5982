/*
 * node-ahead.c: fetching the next depth level while the current one
 * drains.
 *
 * A level ends when no URL of it is queued or in flight anywhere; its last
 * pages are still being fetched, parsed and admitted when this node has
 * none of its URLs left to start. Waiting for them idles every connection
 * for the length of that tail (at 50 ms of latency, about a third of a
 * small crawl). Depth semantics allow more: a URL queued at depth d + 1
 * already has its final depth as soon as every level below d is done (a
 * shorter path would have come from a page of those levels, all admitted),
 * so it may be fetched while level d drains. What must wait is the
 * admission of its own links, at depth d + 2: a page of level d still being
 * parsed may link to the same URLs at d + 1.
 *
 * So, once a pop finds nothing ready at the node's level (n->level, the
 * lowest one with work anywhere), node-pop.c pops level + 1 with the room
 * left, and:
 *  - a lease of a host whose robots.txt this node does not know is held
 *    here, not dispatched (its robots.txt fetch would queue the host's
 *    sitemaps one level below the lease's), until the level moves on;
 *  - a finished page of such a level whose links are to be admitted is
 *    held here (parsed, its WARC records built), and handed to the results
 *    phase once the level has moved past it; a page without links to
 *    admit (the crawl's last depth, failures, redirects: their target
 *    keeps the page's depth) is finished at once.
 * Held pages keep their leases, so nothing is lost if the node dies; they
 * are bounded by count and bytes (NODE_AHEAD_JOBS, NODE_AHEAD_BYTES). A
 * level may take longer than frontier.lease to end (a dead node's leases
 * wait for theirs to expire), so every lease held here is extended each
 * third of frontier.lease (frontier_renew) rather than given back: giving
 * back a fetched page means fetching it twice. A stop gives everything
 * held back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "node-internal.h"

static size_t job_bytes(const struct work_job *j)
{
    return (j->res && j->res->body ? j->res->body_len : 0) + j->built.len +
           j->links.blob_cap + j->links.cap * sizeof(*j->links.link) + 512;
}

static int64_t renew_period(const struct node *n)
{
    int64_t ms = (int64_t)(n->c->frontier_lease * 1000) / 3;
    return ms < 100 ? 100 : ms;
}

/* Something is held: its leases are extended within a period. A lease
 * just taken has its whole time left, an older one at least the fetch's. */
static void renew_schedule(struct node *n)
{
    if (!n->ahead.renew_ms)
        n->ahead.renew_ms = dc_now_ms() + renew_period(n);
}

/* A held page goes back to its queue, to be fetched again (the node
 * stops: its links cannot wait). */
static void give_back_job(struct node *n, struct work_job *j)
{
    n->st->ahead_given_back++;
    node__complete(n, &j->lease, FRONTIER_RETRY, 0);
    work_job_free(j);
}

int node__ahead_allowed(const struct node *n)
{
    return n->level >= 0 && n->level < n->maxd && !n->loop.stopping &&
           !n->write_rc && n->ahead.njobs < NODE_AHEAD_JOBS &&
           n->ahead.bytes < NODE_AHEAD_BYTES &&
           n->ahead.nlease < NODE_AHEAD_JOBS;
}

void node__ahead_hold_lease(struct node *n, struct frontier_lease *l)
{
    xgrow((void **)&n->ahead.lease, &n->ahead.caplease, n->ahead.nlease + 1,
          sizeof(*n->ahead.lease));
    n->ahead.lease[n->ahead.nlease++] = *l;
    memset(l, 0, sizeof(*l));
    renew_schedule(n);
}

/* A held page keeps its records and links; its body went when its records
 * were built (workers.c release_body). */
int node__ahead_hold_job(struct node *n, struct work_job *j)
{
    if (j->lease.depth <= n->level || j->links.n == 0 || j->redirect)
        return 0;
    if (n->loop.stopping) {
        give_back_job(n, j);
        return 1;
    }
    renew_schedule(n);
    j->next = NULL;
    if (n->ahead.tail)
        n->ahead.tail->next = j;
    else
        n->ahead.jobs = j;
    n->ahead.tail = j;
    n->ahead.njobs++;
    n->ahead.bytes += job_bytes(j);
    return 1;
}

/* Unlink the held jobs of depth <= level, in order, as a list. */
static struct work_job *unlink_jobs(struct node *n, int level)
{
    struct work_job *out = NULL, **o = &out, **p = &n->ahead.jobs;
    n->ahead.tail = NULL;
    while (*p) {
        struct work_job *j = *p;
        if (j->lease.depth <= level) {
            *p = j->next;
            j->next = NULL;
            *o = j;
            o = &j->next;
            n->ahead.njobs--;
            n->ahead.bytes -= job_bytes(j);
        } else {
            n->ahead.tail = j;
            p = &j->next;
        }
    }
    return out;
}

struct work_job *node__ahead_take_jobs(struct node *n)
{
    if (!n->ahead.jobs || n->ahead.jobs->lease.depth > n->level)
        return NULL; /* held in depth order: the first is the lowest */
    return unlink_jobs(n, n->level);
}

void node__ahead_release_leases(struct node *n, int64_t now)
{
    struct frontier_lease *v = n->ahead.lease;
    size_t k = n->ahead.nlease, i, sent = 0;
    n->ahead.release = 0;
    if (!k)
        return;
    n->ahead.lease = NULL;
    n->ahead.nlease = n->ahead.caplease = 0;
    for (i = 0; i < k; i++) {
        if (n->loop.stopping) {
            node__complete(n, &v[i], FRONTIER_RETRY, 0);
        } else if (v[i].depth <= n->level && sent < NODE_AHEAD_RELEASE) {
            node__dispatch(n, &v[i], now);
            sent++;
        } else {
            n->ahead.release |= v[i].depth <= n->level;
            node__ahead_hold_lease(n, &v[i]);
        }
    }
    free(v);
}

int node__ahead_renew(struct node *n, int64_t now)
{
    struct frontier_lease *v;
    struct work_job *j;
    size_t k = 0, renewed = 0;
    int rc;
    if (!n->ahead.renew_ms || now < n->ahead.renew_ms)
        return DC_OK;
    if (!n->ahead.njobs && !n->ahead.nlease) {
        n->ahead.renew_ms = 0;
        return DC_OK;
    }
    v = xmalloc((n->ahead.njobs + n->ahead.nlease) * sizeof(*v));
    for (j = n->ahead.jobs; j; j = j->next)
        v[k++] = j->lease; /* shallow: the strings stay the job's */
    for (size_t i = 0; i < n->ahead.nlease; i++)
        v[k++] = n->ahead.lease[i];
    rc = frontier_renew(n->f, v, k, &renewed);
    free(v);
    if (rc)
        return rc;
    n->st->ahead_renewed += renewed;
    n->ahead.renew_ms = now + renew_period(n);
    return DC_OK;
}

void node__ahead_give_back(struct node *n)
{
    struct work_job *j = unlink_jobs(n, NODE_MAX_DEPTH);
    while (j) {
        struct work_job *next = j->next;
        give_back_job(n, j);
        j = next;
    }
    node__ahead_release_leases(n, dc_now_ms());
}

void node__ahead_free(struct node *n)
{
    struct work_job *j = n->ahead.jobs;
    while (j) {
        struct work_job *next = j->next;
        work_job_free(j);
        j = next;
    }
    for (size_t i = 0; i < n->ahead.nlease; i++)
        node__lease_clear(&n->ahead.lease[i]);
    free(n->ahead.lease);
    memset(&n->ahead, 0, sizeof(n->ahead));
}
