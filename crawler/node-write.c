/*
 * node-write.c: the write and complete phases of the node loop. A finished
 * page is written (WARC response or revisit, request, metadata records +
 * its JSON line, through one warc_writer per depth), or, when it failed
 * transiently (transport error, 5xx, 429), tried again fetch.retries
 * times first (retry.c) with its host pushed back by its back-off or
 * Retry-After. A URL given up without a request gets a "skipped" JSON
 * line. Either way its lease joins the completion batch, completed in one
 * frontier call per turn. Order of effects for a page: children admitted
 * (node-admit.c), then output written, then the lease completed, so a
 * crash at any point loses no URL.
 *
 * The writers are buffered: a batch's pages reach the kernel together
 * (two write(2) calls per depth file pair) right before the batch's
 * leases are completed (node__flush_completions), so a page is on disk
 * before its URL counts as done.
 *
 * The first output error (disk full, quota, I/O error) stops all writing:
 * the writer has cut its files back to its last flush, the leases of the
 * pages since are not completed, n->write_rc is set and the node stops at
 * the end of the batch (node.c hands its leases and partitions back).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "warc.h"
#include "node-internal.h"
#include "parser.h"

/* ---------------------------------------------------------- completion */

/* Free a lease's strings (it expires in Redis) and clear it. */
void node__lease_clear(struct frontier_lease *l)
{
    free(l->entry);
    free(l->url);
    free(l->host);
    memset(l, 0, sizeof(*l));
}

/* Queue l's completion (the lease is moved out of l); its host's gap of
 * delay_ms runs from from_ms, the end of its transfer. The frontier's
 * clock for the host is set from the end, not from the completion: the
 * page is parsed and written in between (tens to hundreds of ms when the
 * workers have a backlog), and a clock that started then would make the
 * host ready that much later than its gap asks, so its next URL would not
 * be at hand when the gap ends (politeness.c waits out the gap from the
 * end anyway). */
void node__complete_from(struct node *n, struct frontier_lease *l,
                         int outcome, int64_t delay_ms, int64_t from_ms)
{
    struct node_done *d;
    if (outcome != FRONTIER_RETRY && l->url && fpmap_count(n->hops))
        (void)fpmap_take(n->hops, dedup_fingerprint(l->url, strlen(l->url)),
                         0); /* fetched or given up: its distance is used */
    xgrow((void **)&n->done.v, &n->done.cap, n->done.n + 1,
          sizeof(*n->done.v));
    d = &n->done.v[n->done.n++];
    d->lease = *l;
    memset(l, 0, sizeof(*l));
    d->outcome = outcome;
    d->until = delay_ms > 0 ? from_ms + delay_ms : 0;
    d->epoch = n->batch_epoch;
}

/* Queue l's completion, its host's gap running from now. */
void node__complete(struct node *n, struct frontier_lease *l, int outcome,
                    int64_t delay_ms)
{
    node__complete_from(n, l, outcome, delay_ms, dc_now_ms());
}

/* The gap left of d's at now: at least 1 ms when it had one (a host with a
 * clock is leased only host_connections + 1 ahead, frontier.h). */
static int64_t gap_left(const struct node_done *d, int64_t now)
{
    if (!d->until)
        return 0;
    return d->until > now ? d->until - now : 1;
}

/* The first output error: its message (the file and the system's
 * reason, else rc's name) into n->errmsg; every later write is refused.
 * Returns DC_EOUTPUT. */
static int output_failed(struct node *n, const struct warc_writer *w, int rc)
{
    const char *why = warc_writer_errmsg(w);
    if (!n->write_rc) {
        n->write_rc = DC_EOUTPUT;
        snprintf(n->errmsg, sizeof(n->errmsg), "%s", *why ? why
                 : dc_strerror(rc));
    }
    return DC_EOUTPUT;
}

/* The pages appended since the last flush to the kernel (the writers are
 * buffered); on a failure none of them is on disk: the queued completions
 * are dropped (the node stops and hands every lease back). */
static int writers_flush(struct node *n)
{
    int rc;
    for (int d = 0; d <= NODE_MAX_DEPTH; d++)
        if (n->writers[d] && (rc = warc_writer_flush(n->writers[d])) != DC_OK) {
            for (size_t i = 0; i < n->done.n; i++)
                node__lease_clear(&n->done.v[i].lease);
            n->done.n = 0;
            return output_failed(n, n->writers[d], rc);
        }
    return DC_OK;
}

/* A completed lease of depth d off n->out: the last one of the current
 * level here has the level timer ask at once whether the level is over
 * (its pages' links are admitted before their completions). */
static void level_out(struct node *n, int d)
{
    if (d < 0 || d > NODE_MAX_DEPTH || !n->out[d])
        return;
    if (--n->out[d] == 0 && d == n->level) {
        n->loop.pop_empty = 1;
        n->loop.timers[TIMER_LEVEL].due = 0;
    }
}

/* Complete the queued leases in one frontier call, their pages written
 * first. */
int node__flush_completions(struct node *n)
{
    size_t k = n->done.n, i;
    struct frontier_lease *l;
    int *outcome;
    int64_t *delay;
    uint64_t *epoch;
    int64_t now;
    int rc;
    if (!k)
        return DC_OK;
    if ((rc = writers_flush(n)) != DC_OK)
        return rc;
    n->loop.kick = 1;
    now = dc_now_ms();
    l = xmalloc(k * sizeof(*l));
    outcome = xmalloc(k * sizeof(*outcome));
    delay = xmalloc(k * sizeof(*delay));
    epoch = xmalloc(k * sizeof(*epoch));
    for (i = 0; i < k; i++) {
        l[i] = n->done.v[i].lease;
        outcome[i] = n->done.v[i].outcome;
        delay[i] = gap_left(&n->done.v[i], now);
        epoch[i] = n->done.v[i].epoch;
    }
    rc = node__complete_epoch(n, l, outcome, delay, epoch, k);
    for (i = 0; i < k && !rc; i++) {
        n->st->leases_completed += outcome[i] != FRONTIER_RETRY;
        level_out(n, l[i].depth);
    }
    frontier_leases_free(l, k);
    free(outcome);
    free(delay);
    free(epoch);
    n->done.n = 0;
    return rc;
}

void node__done_release(struct node *n)
{
    for (size_t i = 0; i < n->done.n; i++)
        node__lease_clear(&n->done.v[i].lease);
    free(n->done.v);
    memset(&n->done, 0, sizeof(n->done));
}

/* -------------------------------------------------------------- output */

static struct warc_writer *writer_for(struct node *n, int depth)
{
    struct warc_writer_opts wo;
    char settings[256];
    if (depth < 0 || depth > NODE_MAX_DEPTH || n->write_rc)
        return NULL;
    if (n->writers[depth])
        return n->writers[depth];
    snprintf(settings, sizeof(settings),
             "max_depth: %d\r\npoliteness.delay: %g\r\nuser-agent: %s",
             n->maxd, n->c->politeness_delay, n->c->crawl_user_agent);
    wo.software = "dcrawl/" DCRAWL_VERSION;
    wo.settings = settings;
    wo.max_bytes = n->c->output_warc_max_bytes;
    wo.gzip_level = n->c->output_gzip_level;
    wo.buffered = 1; /* flushed before the leases complete */
    if (warc_writer_open(&n->writers[depth], n->o->out_dir, depth, n->id,
                          &wo) != DC_OK) {
        snprintf(n->errmsg, sizeof(n->errmsg), "%s: %s", n->o->out_dir,
                 dc_strerror(DC_EINVAL));
        n->write_rc = DC_EOUTPUT;
        return NULL;
    }
    return n->writers[depth];
}

/*
 * A URL given up without a request gets a JSON line too (status 0, no
 * records): "skipped" says why and "error" holds the failure behind it
 * (robots.txt's libcurl error), if any. Then its lease is completed with
 * outcome; a line that cannot be written stops the node (write_rc), its
 * lease not completed, as for a page.
 */
void node__skip_url(struct node *n, struct frontier_lease *l, const char *why,
                    const char *error, int outcome)
{
    struct warc_page pg;
    int depth = node__distance(n, l);
    struct warc_writer *w = writer_for(n, depth);
    int rc;

    memset(&pg, 0, sizeof(pg));
    pg.url = l->url;
    pg.depth = depth;
    pg.fetched_ms = dc_now_ms();
    pg.skipped = why;
    pg.error = error && *error ? error : NULL;
    rc = w ? warc_writer_append(w, &pg, NULL, n->id) : DC_EOUTPUT;
    if (rc) {
        output_failed(n, w, rc);
        node__lease_clear(l); /* handed back when the node stops */
        return;
    }
    n->st->skipped++;
    if (depth == 0)
        failures_seed(n->st, l->url, l->host, why);
    node__complete(n, l, outcome, 0);
}

/* The page's figures into the node's stats. */
static void count_page(struct node *n, const struct work_job *j)
{
    const struct fetch_result *r = j->res;
    n->st->pages++;
    n->st->bytes += r->body_len;
    n->st->links_found += j->links_found;
    n->st->pages_parsed += j->parsed != 0;
    if (j->depth <= NODE_MAX_DEPTH)
        n->st->pages_per_depth[j->depth]++;
    if (r->status >= 100 && r->status < 600) {
        n->st->status[r->status / 100]++;
        if (r->error[0]) /* a 3xx past fetch.max_redirects */
            failures_count(n->st, "", r->error, j->lease.host);
    } else {
        n->st->status[0]++, n->st->errors++;
        n->st->err_kind[fetch_error_kind(r)]++;
        failures_count(n->st, "", r->error, j->lease.host);
        if (j->depth == 0)
            failures_seed(n->st, j->lease.url, j->lease.host,
                          r->error[0] ? r->error : "no response");
    }
}

/* The warc_page of a finished job; links (n + 1 entries) gets its
 * canonical links, for its metadata record and JSON line. */
static void job_page(const struct work_job *j, const char **links,
                     struct warc_page *pg)
{
    size_t i;
    work_job_page(j, pg);
    for (i = 0; i < j->links.n; i++)
        links[i] = j->links.blob + j->links.link[i].off;
    pg->outlinks = links;
    pg->noutlinks = j->links.n;
    pg->decoded_len = j->decoded_len;
    pg->links_found = j->links_found;
    pg->links_new = j->links_new_count;
    pg->noise_seen = j->noise.seen;
    pg->noise_block = j->noise.dropped_block;
    pg->noise_cluster = j->noise.dropped_cluster;
    pg->noise_budget = j->noise.refused_budget;
    if (j->dup_of_uri) {
        pg->dup_of_uri = j->dup_of_uri;
        pg->dup_of_ms = j->dup_of_ms;
    }
}

static int write_job(struct node *n, struct work_job *j)
{
    struct warc_page pg;
    struct warc_writer *w = writer_for(n, j->depth);
    char digest[sizeof(j->built.digest)];
    const char **links;
    int rc;
    if (!w)
        return DC_EOUTPUT;
    links = xmalloc((j->links.n + 1) * sizeof(*links));
    job_page(j, links, &pg);
    if (j->dup_of_uri) { /* archive as a revisit of the first copy */
        memcpy(digest, j->built.digest, sizeof(digest));
        pg.payload_digest = digest[0] ? digest : NULL;
        warc_built_release(&j->built);
        rc = warc_record_build(&pg, n->c->output_gzip_level, &j->built);
        if (rc) {
            free(links);
            return output_failed(n, w, rc);
        }
        n->st->content_dups++;
    }
    rc = warc_writer_append(w, &pg, &j->built, n->id);
    free(links);
    if (rc)
        return output_failed(n, w, rc);
    count_page(n, j);
    return DC_OK;
}

/* How long a transient failure pushes its host back: the host's back-off
 * (counted when the transfer ended, node-fetch.c), or a 429/503's
 * Retry-After when longer (capped by politeness.max_retry_after; the
 * host's transfers already leased wait for it too). */
static int64_t failure_delay(struct node *n, const struct work_job *j)
{
    const struct fetch_result *r = j->res;
    int64_t back = j->backoff_ms;
    int64_t ra, cap = (int64_t)(n->c->politeness_max_retry_after * 1000);
    if ((r->status == 429 || r->status == 503) && r->resp_head &&
        parser_retry_after(r->resp_head, r->resp_len, dc_now_ms(), &ra) ==
            DC_OK) {
        n->st->retry_after++;
        if (ra > cap)
            ra = cap;
        if (ra > back) {
            back = ra;
            polite_hold(n->polite, j->lease.host, dc_now_ms() + ra);
        }
    }
    return back;
}

/* The gap before the host's next transfer after j: its politeness gap, or
 * for a transient failure its back-off when longer. */
static int64_t job_delay(struct node *n, const struct work_job *j,
                         int transient)
{
    struct robots_entry *e = NULL;
    int64_t delay;
    if (n->c->robots_obey) /* dropped since the fetch (robots-cache.c):
                              politeness.delay alone */
        e = robots_cache_find(n->robots, j->lease.url);
    delay = robots_entry_delay_ms(e, n->c);
    if (transient) {
        int64_t back = failure_delay(n, j);
        if (back > delay)
            delay = back;
    }
    return delay;
}

/* Record a finished page and queue its lease's completion. A transport
 * error, 5xx or 429 is retried (fetch.retries times, the host pushed back
 * by its back-off or Retry-After; the page itself waits 1 s, 2 s ... or its
 * turn behind the host's other URLs) before it is written as failed. */
int node__finish_job(struct node *n, struct work_job *j)
{
    int status = j->res->status, rc;
    int transient = status == 0 || status >= 500 || status == 429;
    uint64_t fp = 0; /* the retry table's key, only needed when it is used */
    unsigned attempt = 0;
    int64_t delay, end = j->res->ended_ms ? j->res->ended_ms : dc_now_ms();
    if (node__job_lapsed(n, j)) /* lost during this batch's round trips */
        return DC_OK;
    delay = job_delay(n, j, transient);
    if (transient || n->retry.n)
        fp = dedup_fingerprint(j->lease.url, strlen(j->lease.url));
    if (transient && retry_again(&n->retry, fp, n->c->fetch_retries, &attempt)) {
        n->st->retries++;
        j->lease.retry_ms = polite_url_backoff(n->polite, attempt);
        node__complete_from(n, &j->lease, FRONTIER_RETRY, delay, end);
        return DC_OK;
    }
    if (n->retry.n)
        retry_forget(&n->retry, fp);
    rc = write_job(n, j);
    if (transient && !rc)
        n->st->failed++;
    if (!rc) /* not written: the lease goes back as the node stops */
        node__complete_from(n, &j->lease,
                            transient || j->res->error[0] ? FRONTIER_FAILED
                                                          : FRONTIER_DONE,
                            delay, end);
    return rc;
}
