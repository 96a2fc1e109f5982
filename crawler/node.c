/*
 * node.c: the node loop. One thread drives everything that waits on the
 * network (libcurl multi, Redis); worker threads do the CPU work of a page.
 * Each turn of the loop:
 *
 *   1. lease URLs of the current depth level from the frontier, as many as
 *      there are free transfer slots (fetch.concurrency);
 *   2. check each against its host's robots.txt (fetching robots.txt first
 *      when the host's rules are unknown; the lease waits, parked); then
 *      the transfer waits in the politeness queue (politeness.c) until the
 *      host's gap since its last transfer has passed and its IP address
 *      has a free slot (politeness.ip_connections);
 *   3. run libcurl until something finishes, a worker wakes us, or the
 *      next host becomes ready;
 *   4. hand finished pages to the workers;
 *   5. for the pages the workers finished, in batches: claim their payload
 *      digests (a page another URL already had is a content duplicate:
 *      archived as a revisit, its links not followed), run the noise
 *      filter's per-host stage, drop links the dedup cache has seen, admit
 *      the rest in one frontier call (insert-if-absent + enqueue), write
 *      WARC (response or revisit, request, metadata) + JSON line, complete
 *      the leases in one call. Links outside scope.* are dropped before
 *      admission (parser/scope.c). Transport errors, 5xx and 429 are
 *      retried fetch.retries times before they are written as failed; the
 *      host is pushed back by its back-off or Retry-After. A 3xx's target
 *      is admitted like a link but at the page's own depth, its hop count
 *      kept in struct redirects (redirects.c) until it is fetched.
 *
 * Noise state: when the block rule uses the per-host repetition state
 * (noise_state_used), the hosts of new leases that the noise filter holds
 * nothing for get the state a previous owner saved in the partition's
 * <prefix>:{p}:noise hash (one read per pop batch that has such hosts);
 * the states that changed are saved before each cluster poll (the tick
 * that may hand a partition over; every 250 ms at most) and at stop. A
 * failed read or write is counted and the host relearned, never fatal.
 *
 * Sleeping: when no host is ready the loop waits in libcurl until the
 * earliest ready time (frontier or politeness queue) or a transfer ends;
 * while transfers run it asks the frontier only every BUSY_POP_MS.
 *
 * Depth levels: the node serves one depth at a time and moves to the next
 * when frontier_level says no URL of a lower depth is queued or in flight
 * anywhere. Order of effects for a page: children admitted, then output
 * written, then the lease completed, so a crash at any point loses no URL
 * (an uncompleted lease is fetched again; its children are already seen).
 *
 * Stop (SIGINT/SIGTERM): no new leases; parked leases go back to their
 * queues; in-flight transfers and jobs finish and are written; exit.
 */
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dc-limits.h"
#include "dedup.h"
#include "frontier.h"
#include "warc.h"
#include "node-internal.h"
#include "noise.h"
#include "parser.h"

#define MAX_DEPTH DC_DEPTH_MAX
#define POP_BATCH 512
#define LEVEL_CHECK_MS 20
#define BUSY_POP_MS 500
#define RECLAIM_MS 5000

static volatile sig_atomic_t stop_requested;

void node_request_stop(void)
{
    stop_requested = 1;
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

enum { INFLIGHT_PAGE, INFLIGHT_ROBOTS, INFLIGHT_SITEMAP };

struct inflight {
    int kind;
    struct frontier_lease lease;  /* pages */
    struct robots_entry *robots;  /* robots.txt and sitemap fetches */
    int level;                    /* sitemaps: index nesting level */
    char *url;                    /* robots.txt / sitemap URL (pages: lease.url) */
    char ipkey[POLITE_IP_MAX];    /* address slot held while in flight */
    int64_t queued_ms;            /* when it entered the politeness queue */
};

struct node {
    struct frontier *f;
    const struct conf *c;
    const char *id;
    const struct node_opts *o;
    struct node_stats *st;
    struct fetcher *fetch;
    struct workers *workers;
    struct robots_cache *robots;
    struct dedup_cache *cache;
    struct noise *noise;
    struct redirects *redir; /* hops behind queued redirect targets */
    struct polite *polite;        /* when leased transfers may start */
    struct parser_scope *scope;   /* which links are followed */
    struct warc_writer *writers[MAX_DEPTH + 1];
    char agent[64];
    int level, maxd;
    int kick;      /* leases were completed: try to pop at once */
    size_t parked;
    /* cluster: heartbeat figures */
    uint64_t reconnects;           /* frontier_reconnects last seen */
    struct node_rate rate;         /* st->pages over time (pages/s) */
    int waiting_level;             /* no work at this level here */
    int64_t next_ready;            /* an owned host is ready then (pop) */
    /* completion batch */
    struct frontier_lease *done;
    int *outcome;
    int64_t *delay;
    size_t ndone, capdone;
    char errmsg[256]; /* why setup failed (a bad scope.* setting) */
    int write_rc;     /* a "skipped" line could not be written */
    /* URLs that failed transiently: fingerprint -> attempts so far */
    uint64_t *retry_fp;
    unsigned char *retry_n;
    size_t nretry, capretry;
    /* admission batch */
    struct frontier_url *adm;
    uint32_t *adm_job, *adm_link; /* job and link index of each URL */
    unsigned char *isnew;
    size_t nadm, capadm;
};

int node_max_depth(struct frontier *f, const struct conf *c)
{
    char buf[32];
    if (frontier_meta_get(f, "max_depth", buf, sizeof(buf)) == DC_OK) {
        int d = atoi(buf);
        if (d >= 0 && d <= MAX_DEPTH)
            return d;
    }
    return c->crawl_depth;
}

/* ---------------------------------------------------------- completion */

static void complete(struct node *n, struct frontier_lease *l, int outcome,
                     int64_t delay_ms)
{
    size_t need = n->ndone + 1;
    if (need > n->capdone) {
        size_t cap = n->capdone ? n->capdone * 2 : 256;
        n->done = xrealloc(n->done, cap * sizeof(*n->done));
        n->outcome = xrealloc(n->outcome, cap * sizeof(*n->outcome));
        n->delay = xrealloc(n->delay, cap * sizeof(*n->delay));
        n->capdone = cap;
    }
    n->done[n->ndone] = *l; /* moved */
    memset(l, 0, sizeof(*l));
    n->outcome[n->ndone] = outcome;
    n->delay[n->ndone] = delay_ms;
    n->ndone++;
}

static int flush_completions(struct node *n)
{
    int rc = DC_OK;
    if (!n->ndone)
        return DC_OK;
    n->kick = 1;
    rc = frontier_complete(n->f, n->done, n->outcome, n->delay, n->ndone,
                           dc_now_ms());
    frontier_leases_free(n->done, n->ndone);
    free(n->outcome);
    free(n->delay);
    n->done = NULL;
    n->outcome = NULL;
    n->delay = NULL;
    n->ndone = n->capdone = 0;
    return rc;
}

/* The gap between the end of one transfer of a host and the start of the
 * next: the larger of politeness.delay and the host's robots.txt
 * Crawl-delay (the hook for the robots cache's value and its cap). */
static int64_t host_delay_ms(struct node *n, const struct robots_entry *e)
{
    return robots_entry_delay_ms(e, n->c);
}

/* ------------------------------------------------------------ dispatch */

static const char *inflight_host(const struct inflight *in)
{
    return in->kind == INFLIGHT_PAGE ? in->lease.host : in->robots->host;
}

static void inflight_free(struct inflight *in)
{
    free(in->url);
    free(in);
}

/* Transfers wait in the politeness queue (host gap, address slots) and
 * start from launch_ready. */
static void start_page(struct node *n, struct frontier_lease *l)
{
    struct inflight *in = xcalloc(1, sizeof(*in));
    struct robots_entry *e = NULL;
    in->kind = INFLIGHT_PAGE;
    in->lease = *l;
    memset(l, 0, sizeof(*l));
    if (n->c->robots_obey)
        e = robots_cache_get(n->robots, in->lease.url);
    in->queued_ms = dc_now_ms();
    polite_queue(n->polite, in->lease.host, host_delay_ms(n, e), in);
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
    if (e->sm_depth < 0 || depth + 1 < e->sm_depth)
        e->sm_depth = depth + 1;
    n->st->robots_fetches++;
    polite_queue(n->polite, e->host, host_delay_ms(n, NULL), in);
}

static void release_parked(struct node *n, struct robots_entry *e, int stop);
static struct warc_writer *writer_for(struct node *n, int depth);

/*
 * A URL given up without a request gets a JSON line too (status 0, no
 * records): "skipped" says why and "error" holds the failure behind it
 * (robots.txt's libcurl error), if any. Then its lease is completed with
 * outcome; a line that cannot be written stops the node (write_rc) and
 * the lease is left to expire, as for a page.
 */
static void skip_url(struct node *n, struct frontier_lease *l, const char *why,
                     const char *error, int outcome)
{
    struct warc_page pg;
    struct warc_writer *w = writer_for(n, l->depth);
    int rc;

    memset(&pg, 0, sizeof(pg));
    pg.url = l->url;
    pg.depth = l->depth;
    pg.fetched_ms = dc_now_ms();
    pg.skipped = why;
    pg.error = error && *error ? error : NULL;
    rc = w ? warc_writer_append(w, &pg, NULL, n->id) : DC_EIO;
    if (rc) {
        if (!n->write_rc)
            n->write_rc = rc;
        free(l->entry); /* the lease expires in Redis */
        free(l->url);
        free(l->host);
        memset(l, 0, sizeof(*l));
        return;
    }
    n->st->skipped++;
    if (l->depth == 0)
        failures_seed(n->st, l->url, l->host, why);
    complete(n, l, outcome, 0);
}

/* A transfer that could not start (or is given up before it starts). */
static void not_started(struct node *n, struct inflight *in, int stop)
{
    if (in->kind == INFLIGHT_PAGE) {
        if (stop)
            complete(n, &in->lease, FRONTIER_RETRY, 0);
        else
            skip_url(n, &in->lease, "transfer could not start", NULL,
                     FRONTIER_FAILED);
    } else if (in->kind == INFLIGHT_SITEMAP) {
        in->robots->sm_busy = 0; /* this sitemap is skipped */
    } else if (stop) {
        in->robots->state = ROBOTS_UNKNOWN;
        release_parked(n, in->robots, 1);
    } else {
        struct fetch_result r = {0};
        snprintf(r.error, sizeof(r.error), "transfer could not start");
        robots_entry_set(in->robots, &r, n->agent, n->c, dc_now_ms()); /* disallow all */
        release_parked(n, in->robots, 0);
    }
    inflight_free(in);
}

/* This node may still fetch in's host: it owns the host's partition and
 * the ownership has not lapsed (always true outside a cluster). */
static int owns_host(struct node *n, const struct inflight *in, int64_t now)
{
    int p = in->kind == INFLIGHT_PAGE
                ? in->lease.partition
                : frontier_partition(n->f, in->robots->host,
                                     strlen(in->robots->host));
    return frontier_cluster_owns(n->f, p, now);
}

/* Start every queued transfer whose host gap has passed and whose address
 * has a free slot. */
static void launch_ready(struct node *n, int64_t now)
{
    struct inflight *in;
    char ipkey[POLITE_IP_MAX];
    polite_rewind(n->polite);
    while ((in = polite_next(n->polite, now, ipkey, sizeof(ipkey)))) {
        const char *url = in->kind == INFLIGHT_PAGE ? in->lease.url : in->url;
        size_t max = in->kind == INFLIGHT_PAGE      ? (size_t)n->c->fetch_max_bytes
                     : in->kind == INFLIGHT_SITEMAP ? (size_t)n->c->sitemap_max_bytes
                                                    : DC_ROBOTS_MAX_BYTES;
        int rc;
        memcpy(in->ipkey, ipkey, sizeof(ipkey));
        if (!owns_host(n, in, now)) {
            /* the partition moved or its lease lapsed: hand the URL back
             * (a no-op if the new owner already took it) */
            polite_release(n->polite, in->ipkey);
            n->st->handed_back++;
            not_started(n, in, 1);
            continue;
        }
        if (in->kind == INFLIGHT_PAGE &&
            now - in->queued_ms > (int64_t)(n->c->frontier_lease * 750)) {
            /* waited most of its lease for an address slot: give it back
             * rather than risk fetching a URL that was reclaimed */
            polite_release(n->polite, in->ipkey);
            complete(n, &in->lease, FRONTIER_RETRY, 0);
            inflight_free(in);
            continue;
        }
        /* pages never follow redirects (a 3xx's target is admitted as a
         * URL); robots.txt and sitemaps do */
        rc = in->kind == INFLIGHT_PAGE ? fetcher_add_page(n->fetch, url, max, in)
                                       : fetcher_add(n->fetch, url, max, in);
        if (rc != DC_OK) {
            polite_ended(n->polite, inflight_host(in), in->ipkey, NULL, now);
            not_started(n, in, 0);
        }
    }
}

/* Stop: queued transfers that have not started go back. */
static void drop_queued(struct node *n)
{
    struct inflight *in;
    while ((in = polite_take(n->polite)))
        not_started(n, in, 1);
}

static void dispatch(struct node *n, struct frontier_lease *l, int64_t now)
{
    struct robots_entry *e;
    if (!n->c->robots_obey) {
        start_page(n, l);
        return;
    }
    e = robots_cache_get(n->robots, l->url);
    if (!e) {
        skip_url(n, l, "no host in URL", NULL, FRONTIER_SKIPPED);
        return;
    }
    if (e->state == ROBOTS_READY && now > e->expires_ms)
        e->state = ROBOTS_UNKNOWN;
    if (e->state != ROBOTS_READY) {
        robots_entry_park(e, l);
        n->parked++;
        if (e->state == ROBOTS_UNKNOWN)
            start_robots(n, e, l->depth);
        return;
    }
    if (robots_entry_retrying(e)) { /* robots.txt failed: wait for a retry */
        complete(n, l, FRONTIER_RETRY, e->expires_ms - now + 1);
        return;
    }
    if (parser_robots_allowed(e->rules, parser_url_path(l->url))) {
        start_page(n, l);
    } else if (e->rule == ROBOTS_RULE_5XX || e->rule == ROBOTS_RULE_UNREACHABLE) {
        /* RFC 9309: unreachable robots.txt = disallow all; not a rule */
        char why[sizeof(e->error) + 32];
        snprintf(why, sizeof(why), "robots.txt unreachable: %s", e->error);
        n->st->robots_unreachable++;
        failures_count(n->st, "robots.txt unreachable: ", e->error, e->host);
        skip_url(n, l, why, e->error, FRONTIER_SKIPPED);
    } else {
        n->st->robots_skipped++;
        skip_url(n, l, "disallowed by robots.txt", NULL, FRONTIER_SKIPPED);
    }
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
            complete(n, &p[i], FRONTIER_RETRY, 0);
        else
            dispatch(n, &p[i], dc_now_ms());
    }
    free(p);
}

/* ------------------------------------------------------------ sitemaps */

/*
 * Sitemaps (robots.sitemaps): when a host's robots.txt is parsed, its
 * Sitemap URLs are queued on the host's entry and fetched one at a time
 * (sitemaps.c parses them; index entries are queued in turn, bounded by
 * ROBOTS_SITEMAP_FETCHES and ROBOTS_SITEMAP_NESTING). The page URLs found
 * are admitted like links through the dedup cache and frontier_admit, at
 * depth sm_depth: one below the URL whose lease made the node fetch
 * robots.txt (seeds: depth 1), and not at all beyond the crawl's depth.
 * Only URLs on the robots.txt's own host are taken (the sitemaps
 * protocol's rule for sitemaps submitted through robots.txt), at most
 * sitemap.max_urls per host. Sitemap fetches wait in the politeness
 * queue like every other transfer of the host.
 */
static void sitemap_next(struct node *n, struct robots_entry *e)
{
    struct inflight *in;
    char *url;
    int level;
    if (e->sm_busy || stop_requested || !(url = robots_entry_sitemap_take(e, &level)))
        return;
    in = xcalloc(1, sizeof(*in));
    in->kind = INFLIGHT_SITEMAP;
    in->robots = e;
    in->level = level;
    in->url = url;
    in->queued_ms = dc_now_ms();
    e->sm_busy = 1;
    polite_queue(n->polite, e->host, host_delay_ms(n, e), in);
}

static void sitemaps_queue(struct node *n, struct robots_entry *e)
{
    const char *const *urls;
    size_t k, i;
    if (!n->c->robots_sitemaps || e->sm_started || e->rule != ROBOTS_RULE_PARSED ||
        e->sm_depth < 0 || e->sm_depth > n->maxd)
        return;
    e->sm_started = 1;
    k = parser_robots_sitemaps(e->rules, &urls);
    for (i = 0; i < k; i++) {
        char canon[PARSER_URL_MAX];
        size_t cl;
        if (parser_url_canon(e->origin, urls[i], strlen(urls[i]), 0,
                             PARSER_URL_MAX - 1, canon, sizeof(canon), &cl) == DC_OK)
            robots_entry_sitemap_push(e, canon, 0);
    }
    sitemap_next(n, e);
}

/* Admit the page URLs of one parsed sitemap (on e's host only). */
static void sitemap_admit(struct node *n, struct robots_entry *e,
                          const char *base, const struct parser_sitemap *sm)
{
    unsigned flags = n->c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    size_t maxlen = (size_t)n->c->url_max_length, i, m = 0, hl;
    struct frontier_url *u = xcalloc(sm->nurls + 1, sizeof(*u));
    unsigned char *isnew = xcalloc(sm->nurls + 1, 1);
    char canon[PARSER_URL_MAX], *c;
    const char *host;
    int why;
    for (i = 0; i < sm->nurls; i++) {
        size_t cl;
        if (e->sm_urls >= (uint64_t)n->c->sitemap_max_urls)
            break;
        if (parser_url_canon(base, sm->urls[i], strlen(sm->urls[i]), flags,
                             maxlen, canon, sizeof(canon), &cl) != DC_OK ||
            parser_url_host(canon, &host, &hl) != DC_OK ||
            hl != strlen(e->host) || memcmp(host, e->host, hl))
            continue;
        why = parser_scope_check(n->scope, base, canon);
        if (why != PARSER_SCOPE_IN) {
            n->st->scope_dropped[why]++;
            continue;
        }
        e->sm_urls++;
        c = xstrndup(canon, cl);
        host = c + (host - canon);
        u[m].url = c;
        u[m].len = cl;
        u[m].host = host;
        u[m].hostlen = hl;
        u[m].fp = dedup_fingerprint(c, cl);
        u[m].depth = e->sm_depth;
        if (dedup_cache_hit(n->cache, u[m].fp)) {
            n->st->links_cached++;
            free(c);
            continue;
        }
        m++;
    }
    if (m && frontier_admit(n->f, u, m, dc_now_ms(), isnew) == DC_OK) {
        for (i = 0; i < m; i++) {
            dedup_cache_put(n->cache, u[i].fp);
            n->st->links_new += isnew[i];
        }
        n->st->links_admitted += m;
        n->kick = 1;
    }
    for (i = 0; i < m; i++)
        free((char *)u[i].url);
    free(isnew);
    free(u);
}

static void sitemap_done(struct node *n, struct robots_entry *e, int level,
                         struct fetch_result *r)
{
    struct parser_sitemap sm;
    size_t i;
    memset(&sm, 0, sizeof(sm));
    e->sm_busy = 0;
    if (r->status >= 200 && r->status < 300 && r->body &&
        parser_sitemap_parse(r->body, r->body_len,
                             (size_t)n->c->sitemap_max_bytes,
                             (size_t)n->c->sitemap_max_urls, &sm) == DC_OK) {
        const char *base = r->url; /* canonical: the URL requested */
        sitemap_admit(n, e, base, &sm);
        for (i = 0; i < sm.nsitemaps; i++) {
            char canon[PARSER_URL_MAX];
            size_t cl;
            if (parser_url_canon(base, sm.sitemaps[i], strlen(sm.sitemaps[i]),
                                 0, PARSER_URL_MAX - 1, canon, sizeof(canon),
                                 &cl) == DC_OK)
                robots_entry_sitemap_push(e, canon, level + 1);
        }
    }
    parser_sitemap_release(&sm);
    sitemap_next(n, e);
}

/* ------------------------------------------------------------- results */

static void on_fetched(struct node *n, struct fetch_result *r)
{
    struct inflight *in = r->ud;
    polite_ended(n->polite, inflight_host(in), in->ipkey, r->ip, dc_now_ms());
    if (in->kind == INFLIGHT_ROBOTS) {
        struct frontier_robots keep;
        int64_t now = dc_now_ms();
        robots_entry_set(in->robots, r, n->agent, n->c, now);
        if (robots_store_value(in->robots, r, now, &keep)) {
            /* for the host's next owner; only a cache, so a failure to
             * store costs that owner one robots.txt fetch, nothing more */
            keep.host = in->robots->host;
            (void)frontier_robots_put(n->f, &keep);
        }
        sitemaps_queue(n, in->robots);
        release_parked(n, in->robots, stop_requested);
        fetch_result_free(r);
    } else if (in->kind == INFLIGHT_SITEMAP) {
        sitemap_done(n, in->robots, in->level, r);
        fetch_result_free(r);
    } else {
        struct work_job *j = xcalloc(1, sizeof(*j));
        j->res = r;
        j->lease = in->lease;
        j->depth = in->lease.depth;
        j->follow = j->depth < n->maxd;
        if (redirects_count(n->redir))
            j->redirects = redirects_take(
                n->redir, dedup_fingerprint(j->lease.url, strlen(j->lease.url)));
        workers_submit(n->workers, j);
    }
    inflight_free(in);
}

static void admit_add(struct node *n, const struct work_job *j, size_t i,
                      uint32_t job)
{
    struct frontier_url *u;
    if (n->nadm == n->capadm) {
        n->capadm = n->capadm ? n->capadm * 2 : 1024;
        n->adm = xrealloc(n->adm, n->capadm * sizeof(*n->adm));
        n->adm_job = xrealloc(n->adm_job, n->capadm * sizeof(*n->adm_job));
        n->adm_link = xrealloc(n->adm_link, n->capadm * sizeof(*n->adm_link));
        n->isnew = xrealloc(n->isnew, n->capadm);
    }
    u = &n->adm[n->nadm];
    u->url = j->links.blob + j->links.off[i];
    u->len = strlen(u->url);
    u->host = j->links.blob + j->links.hoff[i];
    u->hostlen = j->links.hlen[i];
    u->fp = j->links.fp[i];
    u->depth = j->redirect ? j->depth : j->depth + 1; /* a hop, not a level */
    n->adm_job[n->nadm] = job;
    n->adm_link[n->nadm] = (uint32_t)i;
    n->nadm++;
}

static const char *job_link_url(void *ud, size_t i)
{
    const struct work_links *wl = ud;
    return wl->blob + wl->off[i];
}

/* Noise cluster stage for one page: verdicts, tickets and counts. */
static void noise_job(struct node *n, struct work_job *j)
{
    struct work_links *wl = &j->links;
    const char *host = j->lease.host;
    if (!wl->n)
        return;
    wl->verdict = xrealloc(wl->verdict, wl->n);
    wl->ticket = xrealloc(wl->ticket, wl->n * sizeof(*wl->ticket));
    if (j->redirect) { /* a redirect target is not a navigation link */
        memset(wl->verdict, NOISE_KEEP, wl->n);
        memset(wl->ticket, 0, wl->n * sizeof(*wl->ticket));
        return;
    }
    noise_repeat(n->noise, host, strlen(host), job_link_url, wl, wl->n,
                 wl->blk, wl->nav, wl->page_text, &j->noise);
    noise_filter(n->noise, host, strlen(host), job_link_url, wl, wl->n,
                 wl->nav, wl->verdict, wl->ticket, &j->noise);
    n->st->noise_seen += j->noise.seen;
    n->st->noise_block += j->noise.dropped_block;
    n->st->noise_cluster += j->noise.dropped_cluster;
    n->st->noise_budget += j->noise.refused_budget;
}

/* Admit the new links of all jobs in one frontier call; links_new per job.
 * The noise filter runs first; every URL that is new to the frontier is
 * charged to its noise cluster's template budget. */
static int admit_links(struct node *n, struct work_job **jobs, size_t njobs)
{
    size_t k, i;
    int rc;
    n->nadm = 0;
    for (k = 0; k < njobs; k++) {
        struct work_job *j = jobs[k];
        noise_job(n, j);
        for (i = 0; i < j->links.n; i++) {
            int why;
            if (j->links.verdict[i] != NOISE_KEEP)
                continue;
            why = parser_scope_check(n->scope, j->lease.url,
                                     j->links.blob + j->links.off[i]);
            if (why != PARSER_SCOPE_IN) {
                n->st->scope_dropped[why]++;
                continue;
            }
            if (dedup_cache_hit(n->cache, j->links.fp[i])) {
                n->st->links_cached++;
                continue;
            }
            admit_add(n, j, i, (uint32_t)k);
        }
    }
    if (!n->nadm)
        return DC_OK;
    rc = frontier_admit(n->f, n->adm, n->nadm, dc_now_ms(), n->isnew);
    if (rc)
        return rc;
    n->st->scope_budget = frontier_budget_refused(n->f);
    n->st->links_admitted += n->nadm;
    for (i = 0; i < n->nadm; i++) {
        dedup_cache_put(n->cache, n->adm[i].fp);
        if (n->isnew[i]) {
            struct work_job *j = jobs[n->adm_job[i]];
            if (j->redirect)
                redirects_put(n->redir, n->adm[i].fp, j->redirects + 1);
            else
                noise_admitted(n->noise, j->links.ticket[n->adm_link[i]]);
            j->links_new_count++;
            n->st->links_new++;
        }
    }
    return DC_OK;
}

static struct warc_writer *writer_for(struct node *n, int depth)
{
    struct warc_writer_opts wo;
    char settings[256];
    if (depth < 0 || depth > MAX_DEPTH)
        return NULL;
    if (n->writers[depth])
        return n->writers[depth];
    snprintf(settings, sizeof(settings),
             "max_depth: %d\r\npoliteness.delay: %g\r\nuser-agent: %s",
             n->maxd, n->c->politeness_delay, n->c->crawl_user_agent);
    wo.software = "dcrawl/0.1";
    wo.settings = settings;
    wo.max_bytes = n->c->output_warc_max_bytes;
    wo.gzip_level = n->c->output_gzip_level;
    if (warc_writer_open(&n->writers[depth], n->o->out_dir, depth, n->id,
                          &wo) != DC_OK)
        return NULL;
    return n->writers[depth];
}

static int write_job(struct node *n, struct work_job *j)
{
    struct warc_page pg;
    struct warc_writer *w = writer_for(n, j->depth);
    struct fetch_result *r = j->res;
    const char **links;
    size_t i;
    int rc;
    if (!w)
        return DC_EIO;
    work_job_page(j, &pg);
    /* the page's canonical links, for its metadata record and JSON line */
    links = xmalloc((j->links.n + 1) * sizeof(*links));
    for (i = 0; i < j->links.n; i++)
        links[i] = j->links.blob + j->links.off[i];
    pg.outlinks = links;
    pg.noutlinks = j->links.n;
    pg.decoded_len = j->decoded_len;
    pg.links_found = j->links_found;
    pg.links_new = j->links_new_count;
    pg.noise_seen = j->noise.seen;
    pg.noise_block = j->noise.dropped_block;
    pg.noise_cluster = j->noise.dropped_cluster;
    pg.noise_budget = j->noise.refused_budget;
    if (j->dup_of_uri) { /* archive as a revisit of the first copy */
        pg.dup_of_uri = j->dup_of_uri;
        pg.dup_of_ms = j->dup_of_ms;
        warc_built_release(&j->built);
        rc = warc_record_build(&pg, n->c->output_gzip_level, &j->built);
        if (rc) {
            free(links);
            return rc;
        }
        n->st->content_dups++;
    }
    rc = warc_writer_append(w, &pg, &j->built, n->id);
    free(links);
    n->st->pages++;
    n->st->bytes += r->body_len;
    n->st->links_found += j->links_found;
    if (j->depth <= MAX_DEPTH)
        n->st->pages_per_depth[j->depth]++;
    if (r->status >= 100 && r->status < 600) {
        n->st->status[r->status / 100]++;
        if (r->error[0]) /* a 3xx past fetch.max_redirects */
            failures_count(n->st, "", r->error, j->lease.host);
    } else {
        n->st->status[0]++, n->st->errors++;
        failures_count(n->st, "", r->error, j->lease.host);
        if (j->depth == 0)
            failures_seed(n->st, j->lease.url, j->lease.host,
                          r->error[0] ? r->error : "no response");
    }
    return rc;
}

/* Retry bookkeeping: only URLs that failed at least once are kept, until
 * their final outcome, so a linear scan is cheap; past RETRY_MAX entries a
 * failure is final. */
#define RETRY_MAX 65536

static size_t retry_find(const struct node *n, uint64_t fp)
{
    size_t i;
    for (i = 0; i < n->nretry; i++)
        if (n->retry_fp[i] == fp)
            return i;
    return SIZE_MAX;
}

/* Should this transient failure be retried? Counts the attempt if so. */
static int retry_again(struct node *n, uint64_t fp, unsigned *attempt)
{
    size_t i = retry_find(n, fp);
    if (i == SIZE_MAX) {
        if (n->nretry == RETRY_MAX || n->c->fetch_retries == 0)
            return 0;
        xgrow((void **)&n->retry_fp, &n->capretry, n->nretry + 1,
              sizeof(*n->retry_fp));
        n->retry_n = xrealloc(n->retry_n, n->capretry);
        i = n->nretry++;
        n->retry_fp[i] = fp;
        n->retry_n[i] = 0;
    }
    if (n->retry_n[i] >= n->c->fetch_retries) {
        n->retry_fp[i] = n->retry_fp[--n->nretry]; /* final: forget */
        n->retry_n[i] = n->retry_n[n->nretry];
        return 0;
    }
    *attempt = ++n->retry_n[i];
    return 1;
}

static void retry_forget(struct node *n, uint64_t fp)
{
    size_t i = retry_find(n, fp);
    if (i != SIZE_MAX) {
        n->retry_fp[i] = n->retry_fp[--n->nretry];
        n->retry_n[i] = n->retry_n[n->nretry];
    }
}

/* How long a transient failure pushes its host back: the host's back-off
 * (politeness.c), or a 429/503's Retry-After when longer (capped by
 * politeness.max_retry_after). */
static int64_t failure_delay(struct node *n, const struct work_job *j)
{
    const struct fetch_result *r = j->res;
    int64_t back = polite_failure(n->polite, j->lease.host, dc_now_ms());
    int64_t ra, cap = (int64_t)(n->c->politeness_max_retry_after * 1000);
    if ((r->status == 429 || r->status == 503) && r->resp_head &&
        parser_retry_after(r->resp_head, r->resp_len, dc_now_ms(), &ra) ==
            DC_OK) {
        n->st->retry_after++;
        if (ra > cap)
            ra = cap;
        if (ra > back)
            back = ra;
    }
    return back;
}

/* Record a finished page and queue its lease's completion. A transport
 * error, 5xx or 429 is retried (fetch.retries times, the host pushed back
 * by its back-off or Retry-After) before it is written as failed. */
static int finish_job(struct node *n, struct work_job *j)
{
    struct robots_entry *e = NULL;
    int status = j->res->status, rc;
    int transient = status == 0 || status >= 500 || status == 429;
    uint64_t fp = 0; /* the retry map's key, only needed when it is used */
    unsigned attempt = 0;
    int64_t delay;
    if (n->c->robots_obey)
        e = robots_cache_get(n->robots, j->lease.url);
    delay = host_delay_ms(n, e);
    if (transient) {
        int64_t back = failure_delay(n, j);
        if (back > delay)
            delay = back;
    } else {
        polite_success(n->polite, j->lease.host);
    }
    if (transient || n->nretry)
        fp = dedup_fingerprint(j->lease.url, strlen(j->lease.url));
    if (transient && retry_again(n, fp, &attempt)) {
        n->st->retries++;
        complete(n, &j->lease, FRONTIER_RETRY, delay);
        return DC_OK;
    }
    if (n->nretry)
        retry_forget(n, fp);
    rc = write_job(n, j);
    if (transient)
        n->st->failed++;
    if (!rc) /* not written: the lease expires and the URL is fetched again */
        complete(n, &j->lease,
                 transient || j->res->error[0] ? FRONTIER_FAILED : FRONTIER_DONE,
                 delay);
    return rc;
}

/* Content dedup: claim the payload digest of every complete 2xx page of
 * the batch in one round trip; a page whose digest another URL claimed
 * first is a duplicate: its links are not admitted and it is archived as a
 * revisit of the first. */
static int claim_digests(struct node *n, struct work_job **jobs, size_t nj)
{
    const char *dig[1024], *uri[1024];
    int64_t ms[1024], oms[1024];
    char *ouri[1024];
    unsigned char dup[1024];
    size_t idx[1024], m = 0, i;
    int rc;
    for (i = 0; i < nj; i++) {
        const struct work_job *j = jobs[i];
        if (j->res->status < 200 || j->res->status > 299 || !j->built.len ||
            !j->built.digest[0] || j->res->truncated)
            continue;
        dig[m] = j->built.digest;
        uri[m] = j->lease.url;
        ms[m] = j->res->started_ms;
        idx[m++] = i;
    }
    rc = frontier_digest_claim(n->f, dig, uri, ms, m, dup, ouri, oms);
    for (i = 0; !rc && i < m; i++) {
        struct work_job *j = jobs[idx[i]];
        if (dup[i] && ouri[i]) {
            j->dup_of_uri = ouri[i];
            j->dup_of_ms = oms[i];
            j->links.n = 0; /* the original's links were followed */
        } else {
            free(ouri[i]);
        }
    }
    return rc;
}

static int on_jobs(struct node *n, struct work_job *list)
{
    struct work_job *jobs[1024];
    size_t nj = 0, k;
    int rc = DC_OK;
    while (list) {
        for (nj = 0; list && nj < 1024; list = list->next)
            jobs[nj++] = list;
        rc = claim_digests(n, jobs, nj);
        if (!rc)
            rc = admit_links(n, jobs, nj);
        for (k = 0; k < nj && !rc; k++)
            rc = finish_job(n, jobs[k]);
        if (!rc)
            rc = flush_completions(n);
        for (k = 0; k < nj; k++)
            work_job_free(jobs[k]);
        if (rc)
            break;
    }
    while (list) {
        struct work_job *next = list->next;
        work_job_free(list);
        list = next;
    }
    return rc;
}

/* --------------------------------------------------------------- loop */

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

static int node_setup(struct node *n, struct frontier *f, const struct conf *c,
                      const char *id, const struct node_opts *o,
                      struct node_stats *st)
{
    int threads = c->parse_threads;
    memset(n, 0, sizeof(*n));
    n->f = f;
    n->c = c;
    n->id = id;
    n->o = o;
    n->st = st;
    n->fetch = fetcher_new(c);
    if (!n->fetch || fetcher_set_node(n->fetch, id))
        return DC_ECURL;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int)cpus : 1;
    }
    n->workers = workers_new(threads, c, wake_node, n->fetch);
    n->robots = robots_cache_new();
    n->cache = dedup_cache_new((size_t)c->dedup_cache_entries);
    n->redir = redirects_new();
    n->noise = noise_from_conf(c);
    if (!n->noise)
        return DC_ECONFIG;
    n->polite = polite_new(c);
    {
        struct parser_scope_conf sc = {c->scope_mode, c->scope_include,
                                       c->scope_exclude, c->scope_skip_suffixes,
                                       c->scope_max_repeated_segments};
        int rc = parser_scope_new(&n->scope, &sc, n->errmsg,
                                  sizeof(n->errmsg));
        if (rc)
            return rc;
    }
    parser_agent_token(c->crawl_user_agent, n->agent, sizeof(n->agent));
    n->maxd = node_max_depth(f, c);
    st->max_depth = n->maxd;
    n->level = 0;
    n->next_ready = INT64_MAX;
    return DC_OK;
}

static int node_teardown(struct node *n)
{
    int rc = DC_OK, i;
    for (i = 0; i <= MAX_DEPTH; i++) {
        int r = warc_writer_close(&n->writers[i]);
        if (r && !rc)
            rc = r;
    }
    workers_free(&n->workers);
    fetcher_free(&n->fetch);
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
    redirects_free(&n->redir);
    if (n->polite) { /* left queued by an exit on error: nothing to hand
                      * back any more, their leases expire in Redis */
        struct inflight *in;
        while ((in = polite_take(n->polite))) {
            free(in->lease.entry);
            free(in->lease.url);
            free(in->lease.host);
            inflight_free(in);
        }
    }
    polite_free(&n->polite);
    frontier_leases_free(n->done, n->ndone);
    free(n->outcome);
    free(n->delay);
    parser_scope_free(&n->scope);
    free(n->retry_fp);
    free(n->retry_n);
    free(n->adm);
    free(n->adm_job);
    free(n->adm_link);
    free(n->isnew);
    return rc;
}

struct restore_ctx {
    struct node *n;
    struct robots_entry **e;
    int64_t now;
};

static void restore_one(void *ud, size_t i, const struct frontier_robots *r)
{
    struct restore_ctx *x = ud;
    if (robots_entry_restore(x->e[i], r, x->n->agent, x->n->c, x->now))
        x->n->st->robots_restored++;
}

/* Hosts of the leases whose robots.txt this node has not fetched: take the
 * answer a previous owner stored in Redis, if any (one round trip). */
static int robots_from_store(struct node *n, struct frontier_lease *l,
                             size_t nl, int64_t now)
{
    struct robots_entry **e = xcalloc(nl, sizeof(*e));
    const char **hosts = xcalloc(nl, sizeof(*hosts));
    size_t k = 0;
    int rc;
    for (size_t i = 0; i < nl; i++) {
        struct robots_entry *x = robots_cache_get(n->robots, l[i].url);
        if (!x || x->state != ROBOTS_UNKNOWN || x->fails > 0)
            continue;
        x->state = ROBOTS_FETCHING; /* each host once; undone below */
        e[k] = x;
        hosts[k++] = x->host;
    }
    {
        struct restore_ctx ctx = { n, e, now };
        rc = frontier_robots_get(n->f, hosts, k, restore_one, &ctx);
    }
    for (size_t i = 0; i < k; i++)
        if (e[i]->state == ROBOTS_FETCHING) /* not stored: fetch it */
            e[i]->state = ROBOTS_UNKNOWN;
    free(e);
    free(hosts);
    return rc;
}

struct noise_restore_ctx {
    struct node *n;
    const char **hosts;
};

static void noise_restore_one(void *ud, size_t i, const void *blob,
                              size_t len)
{
    struct noise_restore_ctx *x = ud;
    struct node *n = x->n;
    const char *host = x->hosts[i];
    if (noise_state_import(n->noise, host, strlen(host), blob, len) == DC_OK)
        n->st->noise_restored++;
    else
        n->st->noise_store_failed++; /* not ours to read: learn it again */
}

/* Hosts of the leases the noise filter holds no state for: take the
 * repetition state a previous owner stored in Redis, if any (one round
 * trip), before their first page is judged. A host is held from now on
 * whatever the answer; a failed read counts and leaves it empty. */
static void noise_from_store(struct node *n, const struct frontier_lease *l,
                             size_t nl)
{
    struct noise_restore_ctx x = { n, xcalloc(nl, sizeof(*x.hosts)) };
    size_t k = 0;
    for (size_t i = 0; i < nl; i++) {
        const char *h = l[i].host;
        if (noise_state_has(n->noise, h, strlen(h)))
            continue;
        (void)noise_state_import(n->noise, h, strlen(h), NULL, 0);
        x.hosts[k++] = h;
    }
    if (k) {
        n->st->noise_roundtrips++;
        if (frontier_noise_get(n->f, x.hosts, k, noise_restore_one, &x))
            n->st->noise_store_failed += k;
    }
    free(x.hosts);
}

/* Save the repetition state of the hosts whose state changed (one
 * pipelined round trip). Only a cache for the hosts' next owner: a
 * failure costs that owner relearning, so it is counted, not fatal. */
static void noise_flush(struct node *n)
{
    struct noise_state *s;
    size_t k = noise_state_take_dirty(n->noise, &s);
    if (!k)
        return;
    n->st->noise_roundtrips++;
    {
        const char **hosts = xcalloc(k, sizeof(*hosts));
        const unsigned char **blobs = xcalloc(k, sizeof(*blobs));
        size_t *lens = xcalloc(k, sizeof(*lens));
        for (size_t i = 0; i < k; i++) {
            hosts[i] = s[i].host;
            blobs[i] = s[i].blob;
            lens[i] = s[i].len;
        }
        if (frontier_noise_put(n->f, hosts, blobs, lens, k) == DC_OK)
            n->st->noise_saved += k;
        else
            n->st->noise_store_failed += k;
        free(hosts);
        free(blobs);
        free(lens);
    }
    noise_state_free(s, k);
}

/* Lease as many URLs as there are free slots and dispatch them. Returns
 * the number leased; *next_ms is when to try again. */
static int fill_slots(struct node *n, int64_t now, int64_t *next_ms, int *rc)
{
    struct frontier_lease *l = NULL;
    size_t busy = fetcher_active(n->fetch) + workers_pending(n->workers) +
                  n->parked + polite_waiting(n->polite);
    size_t room, nl = 0, i;
    *next_ms = INT64_MAX;
    if (busy >= (size_t)n->c->fetch_concurrency)
        return 0;
    room = (size_t)n->c->fetch_concurrency - busy;
    if (room > POP_BATCH)
        room = POP_BATCH;
    *rc = frontier_pop(n->f, n->level, now, room, &l, &nl, next_ms);
    if (*rc)
        return 0;
    if (n->c->robots_obey && nl > 0) /* a miss only costs a fetch */
        (void)robots_from_store(n, l, nl, now);
    if (noise_state_used(n->noise) && nl > 0)
        noise_from_store(n, l, nl);
    for (i = 0; i < nl; i++)
        dispatch(n, &l[i], now);
    free(l); /* every lease was moved out */
    return (int)nl;
}

static int local_idle(struct node *n)
{
    return fetcher_active(n->fetch) == 0 && workers_pending(n->workers) == 0 &&
           n->parked == 0 && polite_waiting(n->polite) == 0;
}

/* Pages/s over the last NODE_RATE_WINDOW_S s, or since the node started
 * (0 pages then) while it has run for less (summary.c). */
static double pages_rate(struct node *n, int64_t now)
{
    if (n->rate.n == 0)
        node_rate_add(&n->rate,
                      now - (dc_mono_us() - n->st->started_us) / 1000, 0);
    return node_rate_add(&n->rate, now, n->st->pages);
}

static const char *node_state(struct node *n, int stopping)
{
    if (stopping)
        return "draining";
    if (fetcher_active(n->fetch) > 0 || workers_pending(n->workers) > 0)
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
    if (!rc && frontier_reconnects(n->f) != n->reconnects) {
        size_t orphans = 0;
        n->reconnects = frontier_reconnects(n->f);
        dedup_cache_free(&n->cache);
        n->cache = dedup_cache_new((size_t)n->c->dedup_cache_entries);
        rc = frontier_reclaim_orphans(n->f, now, &orphans);
        n->st->leases_reclaimed += orphans;
    }
    return rc;
}

int node_run(struct frontier *f, const struct conf *c, const char *node_id,
             const struct node_opts *o, struct node_stats *st, char *err,
             size_t errlen)
{
    struct node n;
    int rc, stopping = 0;
    int64_t next_pop = 0, next_level = 0, next_reclaim = 0, next_tick = 0;
    size_t reclaimed = 0;

    memset(st, 0, sizeof(*st));
    st->started_us = dc_mono_us();
    rc = node_setup(&n, f, c, node_id, o, st);
    if (!rc)
        rc = frontier_reclaim(f, dc_now_ms(), 1, &reclaimed);
    if (!rc)
        rc = frontier_cluster_join(f, c);
    while (!rc) {
        int64_t now = dc_now_ms(), wait_ms = 100;
        struct fetch_result *r;
        if (stop_requested && !stopping) {
            stopping = 1; /* parked leases go back as their robots end */
            drop_queued(&n);
        }
        if (now >= next_tick) {
            if (noise_state_used(n.noise)) /* saved before a tick may hand
                                            * a partition over */
                noise_flush(&n);
            rc = cluster_tick(&n, now, stopping, &next_tick);
            if (rc)
                break;
        }
        if (!stopping && n.level >= 0 && now >= next_pop) {
            int64_t next = INT64_MAX;
            int got = fill_slots(&n, now, &next, &rc);
            if (rc)
                break;
            n.next_ready = next;
            if (got)
                next_pop = now;
            else if (next == INT64_MAX) /* nothing ready anywhere: while
                 * our own transfers run, their completions kick us, so only
                 * poll slowly for work other nodes admit (no spinning) */
                next_pop = now + (local_idle(&n) ? LEVEL_CHECK_MS : BUSY_POP_MS);
            else /* a host becomes ready then (never spin on "now") */
                next_pop = next > now ? next : now + 2;
            if (!got && next == INT64_MAX && local_idle(&n) &&
                now >= next_level) {
                int64_t pend[MAX_DEPTH + 1];
                int lvl;
                rc = frontier_level(f, n.maxd + 1, pend, &lvl);
                if (rc)
                    break;
                next_level = now + LEVEL_CHECK_MS;
                n.waiting_level = lvl >= 0 && lvl == n.level;
                if (lvl != n.level && lvl >= 0) {
                    n.level = lvl;
                    next_pop = now;
                    continue;
                }
                if (lvl < 0 && o->exit_when_idle)
                    break;
                if (lvl < 0) /* daemon: wait for seeds */
                    next_pop = next_level = now + 500;
            }
        }
        if (stopping && local_idle(&n))
            break;
        if (now >= next_reclaim) {
            rc = frontier_reclaim(f, now, 0, &reclaimed);
            next_reclaim = now + RECLAIM_MS;
        }
        if (next_pop > now && next_pop - now < wait_ms)
            wait_ms = next_pop - now;
        if (next_tick > now && next_tick - now < wait_ms)
            wait_ms = next_tick - now;
        if (next_pop <= now && !stopping)
            wait_ms = 0;
        launch_ready(&n, now);
        {
            int64_t w = polite_wait_ms(n.polite, now);
            if (w < wait_ms)
                wait_ms = w;
        }
        if (!rc)
            rc = fetcher_run(n.fetch, (int)wait_ms);
        while ((r = fetcher_next_done(n.fetch)))
            on_fetched(&n, r);
        if (!rc)
            rc = on_jobs(&n, workers_take_done(n.workers));
        if (!rc)
            rc = flush_completions(&n);
        if (!rc && n.write_rc) {
            rc = n.write_rc;
            snprintf(n.errmsg, sizeof(n.errmsg), "writing a skipped URL's line");
        }
        if (n.kick) { /* completed hosts may be ready again */
            next_pop = 0;
            n.kick = 0;
        }
    }
    if (!rc && noise_state_used(n.noise))
        noise_flush(&n); /* the partitions' next owners continue with it */
    if (!rc)
        rc = frontier_cluster_leave(f);
    {
        struct frontier_cluster_view v;
        frontier_cluster_view(f, &v);
        st->parts_acquired = v.acquired;
        st->parts_released = v.released;
        st->parts_lost = v.lost;
        st->leases_reclaimed += v.reclaimed;
        st->reconnects = frontier_reconnects(f);
    }
    if (rc)
        snprintf(err, errlen, "%s: %s", dc_strerror(rc),
                 rc == DC_EREDIS ? frontier_errstr(f)
                 : n.errmsg[0]   ? n.errmsg
                                 : "node stopped");
    {
        int trc = node_teardown(&n);
        if (!rc && trc) {
            rc = trc;
            snprintf(err, errlen, "writing output: %s", dc_strerror(rc));
        }
    }
    st->finished_us = dc_mono_us();
    if (!o->quiet)
        node_dedup_stats(f, st);
    return rc;
}

