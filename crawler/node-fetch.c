/*
 * node-fetch.c: the fetch phase of the node loop (node.c). A leased URL is
 * dispatched: checked against its host's robots.txt (fetching robots.txt
 * first when the host's rules are unknown; the lease waits, parked on the
 * host's entry; a dead host's URLs are skipped at once and its robots.txt
 * is tried again only for URLs of a deeper level, see robots-cache.c),
 * then queued in the politeness queue (politeness.c) until the host has a
 * free connection (politeness.host_connections; the frontier leases some
 * URLs of a host ahead), its gap since its last transfer has passed and
 * its IP address has a free slot (politeness.ip_connections).
 * launch_ready starts the transfers whose time has come (robots.txt,
 * sitemaps and pages alike); transfer_ended gives a finished one's slots
 * back (and starts a page's back-off on a transient failure) so the next
 * can start; on_fetched then takes its result: robots.txt rules installed
 * (and stored for the host's next owner), a sitemap parsed (sitemaps.c), a
 * page handed to the workers.
 *
 * Ownership: an inflight is created when a transfer is queued, carried as
 * the fetcher's ud, and freed when it ends or is given up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"
#include "parser.h"

static void release_parked(struct node *n, struct robots_entry *e, int stop);

const char *node__inflight_host(const struct inflight *in)
{
    return in->kind == INFLIGHT_PAGE ? in->lease.host : in->robots->host;
}

void node__inflight_free(struct inflight *in)
{
    free(in->url);
    free(in);
}

void node__result_drop(struct fetch_result *r)
{
    struct inflight *in = r->ud;
    node__lease_clear(&in->lease);
    node__inflight_free(in);
    fetch_result_free(r);
}

/* A lease its host cannot use soon: when the node leases more than one
 * ahead (node__lease_ahead: no politeness.delay) the frontier leases a
 * host that many URLs ahead until the host has a politeness clock there,
 * and a robots.txt Crawl-delay is only known here. Such a host starts one
 * transfer per gap, so past host_connections + 2 transfers in flight or
 * queued (one more for a robots.txt or sitemap fetch) a lease would hold
 * a slot of the node's room for gaps on end. It goes back to its host
 * queue instead, its completion carrying the gap: the frontier gives the
 * host its clock, so while that lasts it leases host_connections + 1 at a
 * time. */
static int gap_surplus(struct node *n, const struct frontier_lease *l,
                       int64_t gap)
{
    return gap > 0 && node__lease_ahead(n->c) > 1 &&
           polite_host_load(n->polite, l->host) >=
               (size_t)n->c->politeness_host_connections + 2;
}

/* Transfers wait in the politeness queue (host gap, address slots) and
 * start from launch_ready. */
static void start_page(struct node *n, struct frontier_lease *l)
{
    struct inflight *in;
    struct robots_entry *e = NULL;
    int64_t gap;
    if (n->c->robots_obey)
        e = robots_cache_get(n->robots, l->url);
    gap = robots_entry_delay_ms(e, n->c);
    if (gap_surplus(n, l, gap)) {
        n->st->gap_returned++;
        node__complete(n, l, FRONTIER_RETRY, gap);
        return;
    }
    in = xcalloc(1, sizeof(*in));
    in->kind = INFLIGHT_PAGE;
    in->lease = *l;
    memset(l, 0, sizeof(*l));
    in->queued_ms = dc_now_ms();
    polite_queue(n->polite, in->lease.host, gap, in->lease.depth > n->level,
                 in);
}

static void start_robots(struct node *n, struct robots_entry *e, int depth)
{
    struct inflight *in = xcalloc(1, sizeof(*in));
    size_t len = strlen(e->origin) + sizeof("/robots.txt");
    in->url = xmalloc(len);
    snprintf(in->url, len, "%s/robots.txt", e->origin);
    in->kind = INFLIGHT_ROBOTS;
    in->robots = e;
    e->state = ROBOTS_FETCHING;
    e->try_depth = depth;
    if (e->sm_depth < 0 || depth + 1 < e->sm_depth)
        e->sm_depth = depth + 1;
    n->st->robots_fetches++;
    polite_queue(n->polite, e->host, robots_entry_delay_ms(NULL, n->c), 0, in);
}

/* A transfer that could not start (or is given up before it starts). */
static void not_started(struct node *n, struct inflight *in, int stop)
{
    if (in->kind == INFLIGHT_PAGE) {
        if (stop)
            node__complete(n, &in->lease, FRONTIER_RETRY, 0);
        else
            node__skip_url(n, &in->lease, "transfer could not start", NULL,
                           FRONTIER_FAILED);
    } else if (in->kind == INFLIGHT_SITEMAP) {
        sitemaps_not_read(n, in->robots, stop);
    } else if (stop) {
        in->robots->state = ROBOTS_UNKNOWN;
        release_parked(n, in->robots, 1);
    } else {
        struct fetch_result r = {0};
        snprintf(r.error, sizeof(r.error), "transfer could not start");
        robots_entry_set(in->robots, &r, n->agent, n->c, dc_now_ms()); /* disallow all */
        release_parked(n, in->robots, 0);
    }
    node__inflight_free(in);
}

/* This node may still fetch in's host: it owns the host's partition and
 * the ownership has not lapsed (always true outside a cluster). */
static int owns_host(struct node *n, const struct inflight *in, int64_t now)
{
    return frontier_cluster_owns(n->f, node__inflight_partition(n, in), now);
}

/* A page that waited most of its lease for an address slot: rather not
 * fetched than fetched after its lease may have been reclaimed. */
static int lease_old(const struct node *n, const struct inflight *in,
                     int64_t now)
{
    return in->kind == INFLIGHT_PAGE &&
           now - in->queued_ms > (int64_t)(n->c->frontier_lease * 750);
}

/* A queued transfer that should not start after all: its partition moved
 * (or its lease lapsed), or its lease is old. Gives it back and returns
 * 1, else 0. */
static int give_back(struct node *n, struct inflight *in, int64_t now)
{
    if (!owns_host(n, in, now)) {
        /* hand the URL back (a no-op if the new owner already took it) */
        polite_release(n->polite, node__inflight_host(in), in->ipkey);
        n->st->handed_back++;
        not_started(n, in, 1);
        return 1;
    }
    if (lease_old(n, in, now)) {
        polite_release(n->polite, node__inflight_host(in), in->ipkey);
        node__complete(n, &in->lease, FRONTIER_RETRY, 0);
        node__inflight_free(in);
        return 1;
    }
    return 0;
}

/* Hand in to libcurl. Pages never follow redirects (a 3xx's target is
 * admitted as a URL); robots.txt and sitemaps do. */
static int add_transfer(struct node *n, struct inflight *in)
{
    if (in->kind == INFLIGHT_PAGE)
        return fetcher_add_page(n->fetch, in->lease.url,
                                (size_t)n->c->fetch_max_bytes, in);
    return fetcher_add(n->fetch, in->url,
                       in->kind == INFLIGHT_SITEMAP ? (size_t)n->c->sitemap_max_bytes
                                                    : DC_ROBOTS_MAX_BYTES,
                       in);
}

/* Start in (its slots taken by polite_next), or give it back. */
static void start_one(struct node *n, struct inflight *in, int64_t now)
{
    if (give_back(n, in, now))
        return;
    if (add_transfer(n, in) != DC_OK) {
        polite_ended(n->polite, node__inflight_host(in), in->ipkey, NULL, now);
        not_started(n, in, 0);
    }
}

/* Transfers that hold one of fetch.concurrency's slots: running, or
 * deferred to start at the next launch. */
static size_t slots_taken(const struct node *n)
{
    return fetcher_active(n->fetch) + n->ndeferred;
}

/* Start every queued transfer whose host gap has passed and whose address
 * has a free slot. held: inside a Redis call, where a transfer cannot be
 * given back (that may write a line and complete a lease): one that would
 * be, or cannot start, keeps its slots and is deferred to the next launch
 * outside a call, which starts the deferred first. */
static void launch(struct node *n, int64_t now, int held)
{
    struct inflight *in;
    char ipkey[POLITE_IP_MAX];
    size_t cap = node__offline_cap(n, now, (size_t)n->c->fetch_concurrency);
    if (!held) {
        for (size_t i = 0; i < n->ndeferred; i++)
            start_one(n, n->deferred[i], now);
        n->ndeferred = 0;
    }
    polite_rewind(n->polite);
    /* fetch.concurrency holds here too: leases held ahead (node-pop.c) wait
     * for a transfer to end */
    while (slots_taken(n) < cap &&
           (in = polite_next(n->polite, now, ipkey, sizeof(ipkey)))) {
        memcpy(in->ipkey, ipkey, sizeof(ipkey));
        if (!held) {
            start_one(n, in, now);
        } else if (!owns_host(n, in, now) || lease_old(n, in, now) ||
                   add_transfer(n, in) != DC_OK) {
            xgrow((void **)&n->deferred, &n->capdeferred, n->ndeferred + 1,
                  sizeof(*n->deferred));
            n->deferred[n->ndeferred++] = in;
        }
    }
}

void node__launch_ready(struct node *n, int64_t now)
{
    launch(n, now, 0);
}

int64_t node__launch_wait_ms(struct node *n, int64_t now)
{
    int64_t pw = polite_wait_ms(n->polite, now), ow;

    if (pw == INT64_MAX || slots_taken(n) >= (size_t)n->c->fetch_concurrency)
        return INT64_MAX;
    ow = node__offline_wait_ms(n, now); /* launch's node__offline_cap */
    return ow > pw ? ow : pw;
}

void node__launch_held(struct node *n, int64_t now)
{
    launch(n, now, 1);
}

/* Stop: queued transfers that have not started go back. */
void node__drop_queued(struct node *n)
{
    struct inflight *in;
    while ((in = polite_take(n->polite)))
        not_started(n, in, 1);
}

/* A lease of a host whose robots.txt address was refused: skipped with
 * the reason, unless its range was seeded since (robots.txt again). */
static void dispatch_refused(struct node *n, struct robots_entry *e,
                             struct frontier_lease *l)
{
    if (node__ranges_refresh(n, e->refused_class)) {
        e->state = ROBOTS_UNKNOWN;
        node__dispatch(n, l, dc_now_ms());
        return;
    }
    n->st->private_skipped++;
    node__skip_url(n, l, e->error, NULL, FRONTIER_SKIPPED);
}

/* A lease of a host whose robots.txt rules are known and not failing. */
static void dispatch_ready(struct node *n, struct robots_entry *e,
                           struct frontier_lease *l)
{
    if (e->rule == ROBOTS_RULE_PRIVATE) {
        dispatch_refused(n, e, l);
    } else if (parser_robots_allowed(e->rules, parser_url_path(l->url))) {
        start_page(n, l);
    } else if (e->rule == ROBOTS_RULE_5XX || e->rule == ROBOTS_RULE_UNREACHABLE) {
        /* RFC 9309: unreachable robots.txt = disallow all; not a rule */
        char why[sizeof(e->error) + 32];
        snprintf(why, sizeof(why), "robots.txt unreachable: %s", e->error);
        n->st->robots_unreachable++;
        failures_count(n->st, "robots.txt unreachable: ", e->error, e->host);
        node__skip_url(n, l, why, e->error, FRONTIER_SKIPPED);
    } else {
        n->st->robots_skipped++;
        node__skip_url(n, l, "disallowed by robots.txt", NULL, FRONTIER_SKIPPED);
    }
}

void node__dispatch(struct node *n, struct frontier_lease *l, int64_t now)
{
    struct robots_entry *e;
    if (!n->c->robots_obey) {
        start_page(n, l);
        return;
    }
    e = robots_cache_get(n->robots, l->url);
    if (!e) {
        node__skip_url(n, l, "no host in URL", NULL, FRONTIER_SKIPPED);
        return;
    }
    if (e->state == ROBOTS_READY && now > e->expires_ms)
        e->state = ROBOTS_UNKNOWN;
    (void)robots_entry_revive(e, l->depth, now); /* dead, a new level */
    if (e->state != ROBOTS_READY && l->depth > n->level) {
        node__ahead_hold_lease(n, l); /* its sitemaps wait for the level */
        return;
    }
    if (e->state != ROBOTS_READY) {
        int depth = l->depth; /* the park clears l */
        robots_entry_park(e, l);
        n->parked++;
        if (e->state == ROBOTS_UNKNOWN)
            start_robots(n, e, depth);
        return;
    }
    if (robots_entry_retrying(e)) { /* robots.txt failed: wait for a retry */
        node__complete(n, l, FRONTIER_RETRY, e->expires_ms - now + 1);
        return;
    }
    if (!e->sm_started) /* read again, or interrupted (sitemaps.c) */
        sitemaps_queue(n, e, NULL);
    dispatch_ready(n, e, l);
}

static void release_parked(struct node *n, struct robots_entry *e, int stop)
{
    struct frontier_lease *p = e->parked;
    size_t np = e->nparked, i;
    e->parked = NULL;
    e->nparked = e->capparked = 0;
    n->parked -= np;
    for (i = 0; i < np; i++) {
        if (stop)
            node__complete(n, &p[i], FRONTIER_RETRY, 0);
        else
            node__dispatch(n, &p[i], dc_now_ms());
    }
    free(p);
}

static void robots_fetched(struct node *n, struct robots_entry *e,
                           struct fetch_result *r)
{
    struct frontier_robots keep;
    int64_t now = dc_now_ms();
    int has_keep;
    if (r->private_refused && node__ranges_refresh(n, r->refused_class)) {
        /* seeded after this node last read the ranges: fetch again */
        e->state = ROBOTS_UNKNOWN;
        release_parked(n, e, node__stop_requested());
        return;
    }
    if (r->status >= 200 && r->status < 300)
        n->st->robots_ok++;
    else if (r->status >= 400 && r->status < 500)
        n->st->robots_missing++;
    else
        n->st->robots_failed++;
    robots_entry_set(e, r, n->agent, n->c, now);
    /* for the host's next owner, stored once its sitemaps are read
     * (sitemaps.c); only a cache, so a failure to store costs that owner
     * one robots.txt fetch, nothing more */
    has_keep = robots_store_value(e, r, now, &keep);
    keep.host = e->host;
    sitemaps_queue(n, e, has_keep ? &keep : NULL);
    release_parked(n, e, node__stop_requested());
}

/* The host's back-off starts when a page's transient failure (transport
 * error, 5xx, 429) ends, before a transfer already leased for the host may
 * start; a success resets it. A 5xx other than 503 holds the host only
 * from its second failure in a row (politeness.c). Returns the back-off
 * (0: success or no hold). */
static int64_t page_outcome(struct node *n, const char *host,
                            const struct fetch_result *r, int64_t now)
{
    if (r->status == 0 || r->status == 503 || r->status == 429)
        return polite_failure(n->polite, host, now, 0);
    if (r->status >= 500)
        return polite_failure(n->polite, host, now, 1);
    polite_success(n->polite, host);
    return 0;
}

void node__transfer_ended(struct node *n, struct fetch_result *r,
                          int64_t now)
{
    struct inflight *in = r->ud;
    int64_t ms = now - r->started_ms;
    int b = 0;
    while (b < NODE_DUR_BINS - 1 && ms > node_dur_le_ms[b])
        b++;
    n->st->dur_bins[b]++;
    n->st->dur_ms += ms > 0 ? (uint64_t)ms : 0;
    r->ended_ms = now;
    polite_ended(n->polite, node__inflight_host(in), in->ipkey, r->ip, now);
    if (in->kind == INFLIGHT_PAGE && !r->private_refused)
        in->backoff_ms = page_outcome(n, in->lease.host, r, now);
}

/* A page whose address scope.private_addresses refused: skipped with the
 * reason (not retried, its host not backed off), unless the ranges were
 * seeded since the node last read them. */
static void page_refused(struct node *n, struct frontier_lease *l,
                         const struct fetch_result *r)
{
    if (node__ranges_refresh(n, r->refused_class)) {
        node__complete(n, l, FRONTIER_RETRY, 0);
        return;
    }
    n->st->private_skipped++;
    node__skip_url(n, l, r->error, NULL, FRONTIER_SKIPPED);
}

/* A transport failure while the node is cut off (node-offline.c): the
 * URL back to its queue with no retry spent, nothing written; a
 * robots.txt fetch as if never made (its parked leases go back). */
void node__fetch_requeue(struct node *n, struct fetch_result *r)
{
    struct inflight *in = r->ud;
    int64_t delay = in->backoff_ms > NODE_OFFLINE_PROBE_MS ? in->backoff_ms
                                                           : NODE_OFFLINE_PROBE_MS;
    n->st->offline_requeued++;
    if (in->kind == INFLIGHT_PAGE) {
        if (!node__lease_lapsed(n, &in->lease))
            node__complete(n, &in->lease, FRONTIER_RETRY, delay);
    } else {
        in->robots->state = ROBOTS_UNKNOWN;
        n->st->robots_fetches -= n->st->robots_fetches > 0;
        release_parked(n, in->robots, 1);
    }
    node__inflight_free(in);
    fetch_result_free(r);
}

void node__on_fetched(struct node *n, struct fetch_result *r)
{
    if (!node__offline_hold(n, r))
        node__fetched(n, r);
}

void node__fetched(struct node *n, struct fetch_result *r)
{
    struct inflight *in = r->ud;
    if (in->kind == INFLIGHT_ROBOTS) {
        robots_fetched(n, in->robots, r);
        fetch_result_free(r);
    } else if (in->kind == INFLIGHT_SITEMAP) {
        sitemaps_done(n, in->robots, in->level, r);
        fetch_result_free(r);
    } else if (r->private_refused) {
        page_refused(n, &in->lease, r);
        fetch_result_free(r);
    } else {
        struct work_job *j = xcalloc(1, sizeof(*j));
        j->res = r;
        j->backoff_ms = in->backoff_ms;
        j->lease = in->lease;
        j->depth = node__distance(n, &j->lease);
        j->follow = j->depth < n->maxd;
        if (fpmap_count(n->redir))
            j->redirects = fpmap_take(
                n->redir, dedup_fingerprint(j->lease.url, strlen(j->lease.url)),
                0);
        workers_submit(n->workers, j);
    }
    node__inflight_free(in);
}
