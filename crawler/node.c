/*
 * node.c: the node loop. One thread drives everything that waits on the
 * network (libcurl multi, Redis); worker threads do the CPU work of a page
 * (workers.c). node_run is a short loop of phases, as libuv's uv_run; the
 * phases live in their own files and share struct node (node-internal.h):
 *
 *   timers   run in a fixed order from one table, each when due:
 *     tick     save changed noise state; cluster heartbeat, membership and
 *              partition ownership (node-cluster.c)
 *     pop      lease URLs of the current depth level into the free
 *              transfer slots and dispatch them (node-pop.c)
 *     level    idle with nothing to pop: next depth level (node-pop.c)
 *     drain    stopping and nothing in flight: leave
 *     reclaim  expired leases of dead nodes back to their queues; on a
 *              server this run started (dcrawl crawl's own) first after
 *              RECLAIM_MS, as no lease can have expired before (node_run:
 *              one script call per partition saved at start)
 *   fetch    start the transfers the politeness queue releases, run libcurl
 *            until something finishes, a worker wakes us, or the next host
 *            becomes ready; robots.txt and sitemaps are handled, pages go
 *            to the workers (node-fetch.c, sitemaps.c). When transfers end
 *            (here and between the results phase's round trips, pump), the
 *            transfers their hosts already hold leases for start at once:
 *            the frontier leases URLs of a host ahead (NODE_LEASE_AHEAD),
 *            the politeness queue keeps host_connections and the gap
 *   results  for the pages the workers finished, in batches: claim their
 *            payload digests, run the noise filter's per-host stage, admit
 *            their links (node-admit.c), write WARC + JSON line or retry
 *            (node-write.c), complete the leases in one call
 *   complete complete the leases finished outside a page (skipped, handed
 *            back); a completion kicks the pop timer (hosts may be ready)
 *
 * Redis round trips of the results, complete and pop phases do not stop
 * the transfers: while such a call waits for its reply, the frontier's
 * reply hook (on_reply_wait) runs libcurl, and a host whose transfer ends
 * starts its next leased one at once (node__launch_held; one that would
 * have to be given back waits for the next launch, outside the call). On
 * one host with one connection this halved the gap between two requests
 * (bench/deadhosts.sh: median 200 -> 106 us).
 *
 * Partitions lost while in use (node-lapse.c, checked every turn and while
 * Redis calls wait): their running transfers are aborted, nothing of
 * them is written or completed. A node cut off from the web
 * (node-offline.c) puts its failures back uncounted and pauses.
 *
 * Order of effects for a page: children admitted, then output written,
 * then the lease completed, so a crash at any point loses no URL (an
 * uncompleted lease is fetched again; its children are already seen).
 *
 * Stop (SIGINT/SIGTERM): no new leases; parked leases go back to their
 * queues; in-flight transfers and jobs finish and are written; exit.
 *
 * Output error (disk full; node-write.c): the pages written before it in
 * the batch are completed, then the node leaves at once: every lease it
 * holds goes back to its queue and its partitions are released
 * (frontier_hand_back, frontier_cluster_leave), so other nodes, or this
 * one restarted once there is space, take them without waiting for the
 * leases to expire. node_run returns DC_EOUTPUT, the message naming the
 * file and the system's reason.
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "warc.h"
#include "node-internal.h"
#include "noise.h"
#include "parser.h"

#define RECLAIM_MS 5000
#define IDLE_WAIT_MS 100 /* the longest libcurl wait of a turn */

static volatile sig_atomic_t stop_requested;

void node_request_stop(void)
{
    stop_requested = 1;
}

int node__stop_requested(void)
{
    return stop_requested != 0;
}

static void on_signal(int sig)
{
    if (stop_requested) /* second signal: leave now */
        _exit(128 + sig);
    stop_requested = 1;
}

void node_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int node_max_depth(struct frontier *f, int fallback)
{
    char buf[32];
    if (frontier_meta_get(f, "max_depth", buf, sizeof(buf)) == DC_OK) {
        int d = atoi(buf);
        if (d >= 0 && d <= NODE_MAX_DEPTH)
            return d;
    }
    return fallback;
}

int node__ranges_refresh(struct node *n, int c)
{
    char text[1024];
    int64_t t = dc_mono_us();
    if (fetcher_private_mode(n->fetch) != NETCLASS_SEEDS)
        return 0;
    if (c >= 0 && netclass_allowed(NETCLASS_SEEDS, fetcher_ranges(n->fetch), c))
        return 1; /* read since the refusal */
    if (n->ranges_read_us > n->popped_us ||
        frontier_meta_get(n->f, NETCLASS_META, text, sizeof(text)) != DC_OK)
        return 0;
    n->ranges_read_us = t; /* asked after every lease held was popped */
    fetcher_set_ranges(n->fetch, netclass_mask_parse(text));
    return c >= 0 && netclass_allowed(NETCLASS_SEEDS, fetcher_ranges(n->fetch), c);
}

int node__local_idle(const struct node *n)
{
    return fetcher_active(n->fetch) == 0 && workers_pending(n->workers, NULL) == 0 &&
           n->parked == 0 && polite_waiting(n->polite) == 0 && n->nended == 0 &&
           n->net.n == 0;
}

/* ---------------------------------------------------------- set up */

static void wake_node(void *ud)
{
    fetcher_wakeup(ud);
}

/* The noise filter of c, or NULL when noise.blocks names an unknown tag
 * or noise.block_rule an unknown rule. */
static struct noise *noise_from_conf(const struct conf *c)
{
    struct noise_conf nc;
    struct parser *p = parser_new(0, 0);
    int rc = parser_set_blocks(p, c->noise_blocks);

    parser_free(&p);
    if (rc != DC_OK || noise_rule_parse(c->noise_block_rule, &nc.block_rule))
        return NULL;
    nc.enabled = c->noise_enabled;
    nc.link_ratio = c->noise_link_ratio;
    nc.similarity = c->noise_similarity;
    nc.max_clusters = (size_t)c->noise_max_clusters;
    nc.template_min = (size_t)c->noise_template_min;
    nc.cluster_budget = (uint64_t)c->noise_cluster_budget;
    return noise_new(&nc);
}

static int timer_drain(struct node *n, struct node_timer *t, int64_t now)
{
    (void)t, (void)now;
    if (n->loop.stopping && node__local_idle(n))
        n->loop.done = 1;
    return DC_OK;
}

static int timer_reclaim(struct node *n, struct node_timer *t, int64_t now)
{
    size_t reclaimed = 0;
    int rc;
    t->due = now + t->period_ms;
    rc = frontier_reclaim(n->f, now, 0, &reclaimed);
    n->st->leases_reclaimed += reclaimed; /* expired leases of any node */
    return rc;
}

/* All due at once; each sets its next due time when it runs (drain: due
 * every turn). */
static const struct node_timer timers_init[TIMER_COUNT] = {
    [TIMER_TICK] = {0, 0, node__timer_tick},
    [TIMER_POP] = {0, 0, node__timer_pop},
    [TIMER_LEVEL] = {0, NODE_LEVEL_CHECK_MS, node__timer_level},
    [TIMER_DRAIN] = {0, 0, timer_drain},
    [TIMER_RECLAIM] = {0, RECLAIM_MS, timer_reclaim},
};

/* The parts that need no Redis. */
static int node_parts(struct node *n, const struct conf *c)
{
    struct parser_scope_conf sc = {c->scope_mode, c->scope_include,
                                   c->scope_exclude, c->scope_skip_suffixes,
                                   c->scope_max_repeated_segments};
    int threads = c->parse_threads;
    n->fetch = fetcher_new(c);
    if (!n->fetch || fetcher_set_node(n->fetch, n->id))
        return DC_ECURL;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int)cpus : 1;
    }
    n->workers = workers_new(threads, c, wake_node, n->fetch);
    n->robots = robots_cache_new((size_t)c->robots_cache_hosts);
    n->cache = dedup_cache_new((size_t)c->dedup_cache_entries);
    n->redir = fpmap_new(REDIRECTS_MAX);
    n->hops = fpmap_new(HOPS_MAX);
    n->noise = noise_from_conf(c);
    if (!n->noise)
        return DC_ECONFIG;
    if (node__noise_log_open(n))
        return DC_EOUTPUT;
    n->polite = polite_new(c);
    return parser_scope_new(&n->scope, &sc, n->errmsg, sizeof(n->errmsg));
}

int node__lease_ahead(const struct conf *c)
{
    return c->politeness_delay > 0 ? 1 : NODE_LEASE_AHEAD;
}

static int node_setup(struct node *n, struct frontier *f, const struct conf *c,
                      const char *id, const struct node_opts *o,
                      struct node_stats *st)
{
    int rc;
    memset(n, 0, sizeof(*n));
    n->f = f;
    n->c = c;
    n->id = id;
    n->o = o;
    n->st = st;
    n->epoch = frontier_epoch(f);
    n->batch_epoch = NODE_ANY_EPOCH;
    memcpy(n->loop.timers, timers_init, sizeof(timers_init));
    rc = node_parts(n, c);
    if (rc)
        return rc;
    parser_agent_token(c->crawl_user_agent, n->agent, sizeof(n->agent));
    frontier_set_lease_ahead(f, node__lease_ahead(c));
    n->maxd = node_max_depth(f, c->crawl_depth);
    st->max_depth = n->maxd;
    (void)node__ranges_refresh(n, NETCLASS_PUBLIC); /* none: refuse */
    n->level = 0;
    n->next_ready = INT64_MAX;
    node__lapse_init(n);
    rc = monitor_start(&n->mon, c, o, id, n->errmsg, sizeof(n->errmsg));
    if (rc)
        return rc;
    return DC_OK;
}

/* Left queued by an exit on error: nothing to hand back any more, their
 * leases expire in Redis. */
static void drop_polite(struct node *n)
{
    struct inflight *in;
    if (!n->polite)
        return;
    while ((in = polite_take(n->polite))) {
        node__lease_clear(&in->lease);
        node__inflight_free(in);
    }
    polite_free(&n->polite);
}

/* Close the writers; the first error (a file that could not be closed)
 * is returned as DC_EOUTPUT with its message in n->errmsg. */
static int writers_close(struct node *n)
{
    int rc = DC_OK;
    for (int i = 0; i <= NODE_MAX_DEPTH; i++) {
        if (warc_writer_end(n->writers[i]) && !rc) {
            rc = DC_EOUTPUT;
            snprintf(n->errmsg, sizeof(n->errmsg), "%s",
                     warc_writer_errmsg(n->writers[i]));
        }
        warc_writer_close(&n->writers[i]);
    }
    return rc;
}

static int node_teardown(struct node *n)
{
    int rc = writers_close(n);
    if (node__noise_log_close(n) && !rc)
        rc = DC_EOUTPUT;
    workers_free(&n->workers);
    node__lapse_release(n);
    node__offline_release(n);
    fetcher_free(&n->fetch);
    if (n->robots)
        (void)robots_cache_count(n->robots, NULL, &n->st->robots_evicted);
    robots_cache_free(&n->robots);
    if (n->cache) {
        struct dedup_cache_stats cs;
        dedup_cache_stats(n->cache, &cs);
        n->st->cache_hits = cs.hits;
        n->st->cache_misses = cs.misses;
        n->st->cache_evictions = cs.evictions;
    }
    dedup_cache_free(&n->cache);
    noise_free(&n->noise);
    fpmap_free(&n->redir);
    fpmap_free(&n->hops);
    drop_polite(n);
    for (size_t k = 0; k < n->nended; k++) /* exit on error */
        node__result_drop(n->ended[k]);
    free(n->ended);
    free(n->deferred); /* empty: every turn ends with none */
    node__ahead_free(n);
    node__done_release(n);
    parser_scope_free(&n->scope);
    retry_release(&n->retry);
    free(n->adm.v);
    return rc;
}

/* --------------------------------------------------------------- loop */

/* The longest a step of the loop should take (stall_check, batch_cap). */
static int64_t stall_limit_us(const struct node *n)
{
    return (int64_t)(n->c->cluster_node_timeout * 1e6 / NODE_STALL_PART);
}

/* A step of the turn that took longer than NODE_STALL_PART of
 * cluster.node_timeout delays the heartbeat behind it: one warning line
 * (at most one per NODE_STALL_WARN_MS), and the longest such step is kept
 * in the node's figures (st->stall_max_us, st->stall_step). */
static void stall_check(struct node *n, const char *step, int64_t t0_us)
{
    int64_t d = dc_mono_us() - t0_us;
    if (d < stall_limit_us(n))
        return;
    if (d > n->st->stall_max_us) {
        n->st->stall_max_us = d;
        n->st->stall_step = step;
    }
    n->st->stalls++;
    if (t0_us < n->stall_quiet_us)
        return;
    n->stall_quiet_us = t0_us + NODE_STALL_WARN_MS * 1000;
    fprintf(stderr, "dcrawl node %s: warning: the node loop was blocked "
            "%.1f s in %s (cluster.node_timeout %.1f s)\n", n->id, d / 1e6,
            step, n->c->cluster_node_timeout);
}

static const char *const timer_names[TIMER_COUNT] = {
    [TIMER_TICK] = "tick", [TIMER_POP] = "pop", [TIMER_LEVEL] = "level",
    [TIMER_DRAIN] = "drain", [TIMER_RECLAIM] = "reclaim",
};

/* Run the due timers in table order, until one fails, ends the loop or
 * restarts the turn. */
static int timers_run(struct node *n, int64_t now)
{
    int rc = DC_OK;
    n->loop.restart = 0;
    for (int i = 0; i < TIMER_COUNT; i++) {
        struct node_timer *t = &n->loop.timers[i];
        if (now >= t->due) {
            int64_t t0 = dc_mono_us();
            rc = t->fn(n, t, now);
            stall_check(n, timer_names[i], t0);
        }
        if (rc || n->loop.done || n->loop.restart)
            break;
    }
    return rc;
}

/* How long libcurl may wait this turn: until the pop or tick timer is due
 * (not at all when pop is due now), or the level timer when a pop left it
 * something to check, at most IDLE_WAIT_MS. Not at all while transfers
 * that ended during the last turn's round trips (the reply hook took
 * them) are unhandled: phase_fetch handles them after the wait, and a
 * robots.txt among them holds its host's URLs until then; nor while
 * finished pages wait that the last results phase put back, or held
 * leases whose level has come (node-ahead.c releases a few per turn). */
static int64_t wait_ms(const struct node *n, int64_t now)
{
    int64_t pop = n->loop.timers[TIMER_POP].due;
    int64_t tick = n->loop.timers[TIMER_TICK].due;
    int64_t level = n->loop.timers[TIMER_LEVEL].due;
    int64_t w = IDLE_WAIT_MS;
    if (n->nended || n->results_due || n->ahead.release)
        return 0;
    if (pop > now && pop - now < w)
        w = pop - now;
    if (tick > now && tick - now < w)
        w = tick - now;
    if (n->loop.pop_empty && level > now && level - now < w)
        w = level - now;
    if (pop <= now && !n->loop.stopping)
        w = 0;
    return w;
}

/* The transfers libcurl finished, their slots given back; added to
 * n->ended until the fetch phase takes their results (returns how many). */
static size_t take_ended(struct node *n)
{
    struct fetch_result *r;
    int64_t now = dc_now_ms();
    size_t k = 0;
    while ((r = fetcher_next_done(n->fetch))) {
        if (node__offline_probe_ended(n, r))
            continue; /* no host slot, nothing to record */
        node__transfer_ended(n, r, now);
        xgrow((void **)&n->ended, &n->capended, n->nended + 1,
              sizeof(*n->ended));
        n->ended[n->nended++] = r;
        k++;
    }
    return k;
}

/* Run libcurl (waiting up to wait_ms for something to happen); whenever
 * transfers end, start the transfers their hosts already have leased at
 * once. Called between the Redis round trips of a turn too, so a host's
 * connection does not idle while the node handles pages. */
static int pump(struct node *n, int wait_ms)
{
    int rc = fetcher_run(n->fetch, wait_ms);
    while (!rc && take_ended(n) > 0) {
        node__launch_ready(n, dc_now_ms());
        rc = fetcher_run(n->fetch, 0);
    }
    return rc;
}

/* The longest curl wait of one slice of the reply hook: how often it
 * checks for lost partitions while a reply is slow (as node-lapse.c). */
#define REPLY_SLICE_MS 50

static int fd_readable(int fd, int ms)
{
    struct pollfd p = { fd, POLLIN, 0 };
    return poll(&p, 1, ms) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

/* The frontier's reply hook: while a Redis call of the results or the
 * pop waits for its reply, libcurl runs, and the hosts of the transfers
 * that end start their next leased transfer at once (node__launch_held),
 * so a host's connection does not idle for the node's round trips. Inside
 * any other call (cluster bookkeeping, failover), or re-entered, it only
 * waits. */
static int on_reply_wait(void *ud, int fd, int ms)
{
    struct node *n = ud;
    int64_t end = dc_mono_us() / 1000 + ms, left = ms;
    int ready = 0;
    if (!n->pump_ok || n->pumping)
        return fd_readable(fd, ms);
    n->pumping = 1;
    while (!ready && left > 0) {
        ready = fetcher_wait_fd(n->fetch, fd, (int)(left < REPLY_SLICE_MS ? left
                                                        : REPLY_SLICE_MS));
        node__lapse_check(n);
        if (fetcher_run(n->fetch, 0) == DC_OK && take_ended(n) > 0)
            node__launch_held(n, dc_now_ms());
        left = end - dc_mono_us() / 1000;
    }
    n->pumping = 0;
    return ready;
}

/* Fetch: start what politeness allows, run libcurl, take the results of
 * what finished (this turn and during the last one's round trips). */
static int phase_fetch(struct node *n, int64_t now)
{
    int64_t w = wait_ms(n, now), pw;
    int rc;
    node__lapse_flush(n);
    node__offline_tick(n, now);
    if (n->ahead.release) /* the rest of a level's held leases */
        node__ahead_release_leases(n, now);
    node__launch_ready(n, now);
    pw = node__launch_wait_ms(n, now);
    if (pw < w)
        w = pw;
    rc = pump(n, (int)w);
    for (size_t i = 0; i < n->nended; i++)
        node__on_fetched(n, n->ended[i]);
    n->nended = 0;
    return rc;
}

/* Results of one batch of finished pages: content duplicates, link
 * admission, output (or retry), lease completion. */
static int results_batch(struct node *n, struct work_job **jobs, size_t nj)
{
    uint64_t e0;
    int rc;
    node__failover_check(n);
    e0 = frontier_epoch(n->f); /* the server the links go to */
    rc = node__claim_digests(n, jobs, nj);
    if (!rc)
        rc = pump(n, 0);
    if (!rc)
        rc = node__admit_links(n, jobs, nj);
    if (!rc)
        rc = pump(n, 0);
    for (size_t k = 0; k < nj && !rc; k++) {
        n->batch_epoch = jobs[k]->links.n ? e0 : NODE_ANY_EPOCH;
        rc = node__finish_job(n, jobs[k]);
    }
    n->batch_epoch = NODE_ANY_EPOCH;
    if (!rc)
        rc = pump(n, 0);
    if (!rc)
        rc = node__flush_completions(n);
    else if (rc == DC_EOUTPUT) /* the pages written before it */
        (void)node__flush_completions(n);
    return rc;
}

/* Pages per results batch: NODE_JOB_BATCH, or fewer when pages cost so
 * much (a slow or loaded machine: under the sanitizers in CI, 1,024 pages
 * took 1.6 s) that a batch would outlast half the stall limit, so the
 * loop reaches a due tick in time (the heartbeat and the partition
 * renewals; a node whose renewals lapse loses its partitions and its
 * pages in flight are fetched again elsewhere). */
static size_t batch_cap(const struct node *n)
{
    int64_t cap = n->job_us > 0 ? stall_limit_us(n) / 2 / n->job_us
                                : NODE_JOB_BATCH;
    if (cap < NODE_JOB_BATCH_MIN)
        return NODE_JOB_BATCH_MIN;
    return cap > NODE_JOB_BATCH ? NODE_JOB_BATCH : (size_t)cap;
}

/* Results: the pages the workers finished and the held pages whose level
 * has come, batch_cap at a time; a page of the next level whose links
 * must wait for this one's end is held (node-ahead.c). When the tick is
 * due between two batches, the pages left go back to the workers' done
 * list and the turn ends (the next one runs the tick first, without
 * waiting in libcurl). */
static int phase_results(struct node *n)
{
    struct work_job *list = workers_take_done(n->workers), *j;
    struct work_job *held = node__ahead_take_jobs(n);
    struct work_job *jobs[NODE_JOB_BATCH];
    size_t nj, k, cap = batch_cap(n);
    int64_t t0, per_job;
    int rc = DC_OK;
    n->results_due = 0;
    if (held) { /* the older pages first */
        for (j = held; j->next; j = j->next)
            ;
        j->next = list;
        list = held;
    }
    while (list && !rc) {
        for (nj = 0; list && nj < cap; list = j) {
            j = list->next;
            if (node__job_lapsed(n, list)) /* nothing written for it */
                work_job_free(list);
            else if (!node__ahead_hold_job(n, list))
                jobs[nj++] = list;
        }
        if (!nj)
            continue;
        t0 = dc_mono_us();
        rc = results_batch(n, jobs, nj);
        per_job = (dc_mono_us() - t0) / (int64_t)nj;
        n->job_us = n->job_us ? (3 * n->job_us + per_job) / 4 : per_job;
        for (k = 0; k < nj; k++)
            work_job_free(jobs[k]);
        cap = batch_cap(n);
        if (list && !rc && dc_now_ms() >= n->loop.timers[TIMER_TICK].due) {
            workers_put_back(n->workers, list);
            n->results_due = 1;
            list = NULL;
        }
    }
    while (list) {
        struct work_job *next = list->next;
        work_job_free(list);
        list = next;
    }
    return rc;
}

/* Complete: the leases finished outside a page; a failed "skipped" line
 * stops the node; completed hosts may be ready again. */
static int phase_complete(struct node *n)
{
    int rc = node__flush_completions(n);
    if (!rc && n->write_rc)
        rc = n->write_rc;
    if (n->loop.kick) {
        n->loop.timers[TIMER_POP].due = 0;
        n->loop.kick = 0;
    }
    if (frontier_cluster_tick_due(n->f)) /* new partitions: own them now */
        n->loop.timers[TIMER_TICK].due = 0;
    return rc;
}

/* The node's figures for the monitor (progress lines, metrics). */
static void publish(struct node *n, int64_t now)
{
    struct node_snapshot *s = &n->snap;
    struct frontier_cluster_view v;
    frontier_cluster_view(n->f, &v);
    s->st = *n->st;
    s->st.warc_bytes = 0;
    for (int d = 0; d <= NODE_MAX_DEPTH; d++)
        s->st.warc_bytes += warc_writer_bytes(n->writers[d]);
    s->st.leases_reclaimed += v.reclaimed;
    s->ms = now;
    s->level = n->level;
    s->in_flight = n->fetch ? fetcher_active(n->fetch) : 0;
    s->parts_owned = v.owned;
    if (n->polite)
        polite_counts(n->polite, &s->polite);
    s->roundtrips = frontier_roundtrips(n->f);
    s->reconnects = frontier_reconnects(n->f);
    monitor_publish(n->mon, s);
    n->mon_next = now + NODE_PUBLISH_MS;
}

/* One turn of the loop. */
static int node_turn(struct node *n)
{
    int64_t now = dc_now_ms(), t0;
    int rc;
    if (n->mon && now >= n->mon_next)
        publish(n, now);
    node__lapse_check(n); /* before anything else uses a lost partition */
    if (node__stop_requested() && !n->loop.stopping) {
        n->loop.stopping = 1; /* parked leases go back as their robots end */
        node__drop_queued(n);
        node__ahead_give_back(n);
    }
    rc = timers_run(n, now);
    if (n->ndeferred) /* the pop's: outside any call, started or given back */
        node__launch_ready(n, dc_now_ms());
    if (rc || n->loop.done || n->loop.restart)
        return rc;
    t0 = dc_mono_us();
    rc = phase_fetch(n, now);
    stall_check(n, "fetch", t0);
    t0 = dc_mono_us();
    n->pump_ok = 1;
    if (!rc)
        rc = phase_results(n);
    stall_check(n, "results", t0);
    t0 = dc_mono_us();
    if (!rc)
        rc = phase_complete(n);
    n->pump_ok = 0;
    stall_check(n, "complete", t0);
    if (n->ndeferred)
        node__launch_ready(n, dc_now_ms());
    return rc;
}

/* The output cannot be written: the transfers are aborted (no host is
 * fetched here once another node may own it), every lease this node holds
 * goes back to its queue, its partitions are released; how it went is
 * added to the message. */
static void hand_back(struct node *n)
{
    size_t k = 0, len = strlen(n->errmsg);
    struct fetch_result *r;
    int rc;
    while ((r = fetcher_cancel(n->fetch)))
        node__result_drop(r);
    rc = frontier_hand_back(n->f, dc_now_ms(), &k);
    if (!rc)
        rc = frontier_cluster_leave(n->f);
    if (rc)
        snprintf(n->errmsg + len, sizeof(n->errmsg) - len,
                 "; handing the URLs back failed (%s), they come back when "
                 "their leases expire", frontier_errstr(n->f));
    else
        snprintf(n->errmsg + len, sizeof(n->errmsg) - len,
                 "; %zu leased URLs and the partitions handed back", k);
}

/* Leave the cluster (the noise state saved first: the partitions' next
 * owners continue with it), collect its figures, tear down. */
static int node_finish(struct node *n, int rc, char *err, size_t errlen)
{
    struct frontier_cluster_view v;
    int trc;
    if ((!rc || rc == DC_EOUTPUT) && noise_state_used(n->noise))
        node__noise_flush(n);
    if (!rc)
        rc = frontier_cluster_leave(n->f);
    else if (rc == DC_EOUTPUT)
        hand_back(n);
    frontier_cluster_view(n->f, &v);
    n->st->parts_acquired = v.acquired;
    n->st->parts_released = v.released;
    n->st->parts_lost = v.lost;
    n->st->leases_reclaimed += v.reclaimed;
    n->st->reconnects = frontier_reconnects(n->f);
    if (rc)
        snprintf(err, errlen, "%s: %s", dc_strerror(rc),
                 rc == DC_EREDIS ? frontier_errstr(n->f)
                 : n->errmsg[0]  ? n->errmsg
                                 : "node stopped");
    if (n->mon) { /* the last figures, then the line is erased */
        publish(n, dc_now_ms());
        monitor_stop(&n->mon);
    }
    trc = node_teardown(n);
    if (!rc && trc) {
        rc = trc;
        snprintf(err, errlen, "%s: %s", dc_strerror(rc), n->errmsg);
    }
    return rc;
}

int node_run(struct frontier *f, const struct conf *c, const char *node_id,
             const struct node_opts *o, struct node_stats *st, char *err,
             size_t errlen)
{
    struct node n;
    size_t reclaimed = 0;
    int rc;

    memset(st, 0, sizeof(*st));
    st->started_us = dc_mono_us();
    rc = node_setup(&n, f, c, node_id, o, st);
    frontier_set_reply_hook(f, on_reply_wait, &n);
    if (!rc && o->fresh_redis) /* a server this run started: no lease yet */
        n.loop.timers[TIMER_RECLAIM].due = dc_now_ms() + RECLAIM_MS;
    else if (!rc) /* what a previous run of this node held */
        rc = frontier_reclaim(f, dc_now_ms(), 1, &reclaimed);
    if (!rc)
        rc = frontier_cluster_join(f, c);
    while (!rc && !n.loop.done)
        rc = node_turn(&n);
    frontier_set_reply_hook(f, NULL, NULL);
    rc = node_finish(&n, rc, err, errlen);
    st->finished_us = dc_mono_us();
    if (!o->quiet)
        node_dedup_stats(f, st);
    return rc;
}
