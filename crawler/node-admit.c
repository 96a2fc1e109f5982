/*
 * node-admit.c: what the node does with the pages the workers finished,
 * before they are written (node-write.c), one batch at a time:
 *
 *   - content dedup: claim the payload digests of the batch in one round
 *     trip; a page another URL already had is a content duplicate,
 *     archived as a revisit. Its links are followed only when it sits in
 *     another directory than the first copy, and not below it: there its
 *     relative links lead to other pages (a mirror tree, the same stub in
 *     two folders), while in the same directory they lead where the first
 *     copy's did, and below it is how a catch-all route (a soft 404, a
 *     single-page app's index.html for every path) grows a trap;
 *   - the noise filter's per-host stage (noise_repeat, noise_filter),
 *     and with noise.log on, a line per dropped link (noise_log_page);
 *   - links outside scope.* dropped (parser/scope.c), links the dedup
 *     cache has seen dropped, the rest admitted in one frontier call
 *     (insert-if-absent + enqueue). A 3xx's target is admitted like a link
 *     but at the page's own depth, its hop count kept in n->redir
 *     (fpmap.c) until it is fetched.
 *
 * Link distance. A URL is queued at the depth level after its page's and
 * served level by level, but the noise filter hides the shortest paths
 * that run through menus: a site map linked from the home page's menu,
 * reached at depth 3 through content links, would lose its own links past
 * the crawl's depth although it is one hop from the seed. So a dropped
 * link still records its target's distance (page's + 1, when below
 * crawl.depth) in n->hops, and so does every kept link of a page whose
 * distance is below its level; when the URL is fetched its distance is
 * the smaller of that and its level (node-fetch.c). The distance is what
 * the output's depth says and what the depth limit counts, so a crawl
 * with the noise filter fetches only pages within crawl.depth hops over
 * all links, the pages a content link reaches; levels past crawl.depth
 * serve the URLs whose distance is within it. Per node in memory, at most
 * HOPS_MAX entries: a lost entry (restart, a host moved, an
 * other-host link admitted for another node) leaves a URL at its level.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"
#include "noise.h"
#include "parser.h"

#define CLAIM_MAX NODE_JOB_BATCH

static void admit_add(struct node *n, const struct work_job *j, size_t i,
                      uint32_t job)
{
    struct node_admit *a;
    const struct work_link *l = &j->links.link[i];
    xgrow((void **)&n->adm.v, &n->adm.cap, n->adm.n + 1, sizeof(*n->adm.v));
    a = &n->adm.v[n->adm.n++];
    a->url.url = j->links.blob + l->off;
    a->url.len = strlen(a->url.url);
    a->url.host = j->links.blob + l->hoff;
    a->url.hostlen = l->hlen;
    a->url.fp = l->fp;
    /* the level to queue at; the link distance may be less (n->hops) */
    a->url.depth = j->redirect ? j->lease.depth : j->lease.depth + 1;
    if (a->url.depth > NODE_MAX_DEPTH)
        a->url.depth = NODE_MAX_DEPTH;
    a->job = job;
    a->link = (uint32_t)i;
}

static const char *job_link_url(void *ud, size_t i)
{
    const struct work_links *wl = ud;
    return wl->blob + wl->link[i].off;
}

/* ------------------------------------------------------------ noise.log */

int node__noise_log_open(struct node *n)
{
    char path[PATH_MAX];
    if (!n->c->noise_log || !n->c->noise_enabled)
        return DC_OK;
    if (snprintf(path, sizeof(path), "%s/noise-%s.tsv", n->o->out_dir,
                 n->id) >= (int)sizeof(path)) {
        snprintf(n->errmsg, sizeof(n->errmsg), "noise.log: path too long");
        return DC_EOUTPUT;
    }
    n->noise_log = fopen(path, "w");
    if (!n->noise_log) {
        snprintf(n->errmsg, sizeof(n->errmsg), "noise.log: %.600s: %s", path,
                 strerror(errno));
        return DC_EOUTPUT;
    }
    fputs("# depth\tdropped_by\tsignals\tpage\tlink\n", n->noise_log);
    return DC_OK;
}

int node__noise_log_close(struct node *n)
{
    const char *why = NULL;
    if (!n->noise_log)
        return DC_OK;
    if (ferror(n->noise_log))
        why = "write error";
    if (fclose(n->noise_log) != 0 && !why)
        why = strerror(errno);
    n->noise_log = NULL;
    if (why)
        snprintf(n->errmsg, sizeof(n->errmsg), "noise.log: %s", why);
    return why ? DC_EOUTPUT : DC_OK;
}

/* One line per link of job j the noise filter dropped (verdicts set). */
static void noise_log_page(struct node *n, const struct work_job *j)
{
    const struct work_links *wl = &j->links;
    char sig[NOISE_SIG_LETTERS];
    for (size_t i = 0; i < wl->n; i++) {
        const char *by = noise_verdict_name(wl->verdict[i]);
        if (wl->verdict[i] == NOISE_KEEP || !by)
            continue;
        noise_sig_letters(wl->link[i].nav, sig);
        fprintf(n->noise_log, "%d\t%s\t%s\t%s\t%s\n", j->depth, by, sig,
                j->lease.url, job_link_url((void *)wl, i));
    }
}

/* Noise cluster stage for one page: verdicts, tickets and counts. */
static void noise_job(struct node *n, struct work_job *j)
{
    struct work_links *wl = &j->links;
    const char *host = j->lease.host;
    uint32_t *blk;
    unsigned char *nav;
    if (!wl->n)
        return;
    wl->verdict = xrealloc(wl->verdict, wl->n);
    wl->ticket = xrealloc(wl->ticket, wl->n * sizeof(*wl->ticket));
    if (j->redirect) { /* a redirect target is not a navigation link */
        memset(wl->verdict, NOISE_KEEP, wl->n);
        memset(wl->ticket, 0, wl->n * sizeof(*wl->ticket));
        return;
    }
    /* the noise API takes the blocks and signals as arrays */
    blk = xmalloc(wl->n * sizeof(*blk));
    nav = xmalloc(wl->n);
    for (size_t i = 0; i < wl->n; i++) {
        blk[i] = wl->link[i].blk;
        nav[i] = wl->link[i].nav;
    }
    noise_repeat(n->noise, host, strlen(host), j->lease.url, j->depth == 0,
                 job_link_url, wl, wl->n, blk, nav, wl->page_text, &j->noise);
    noise_filter(n->noise, host, strlen(host), job_link_url, wl, wl->n, nav,
                 wl->verdict, wl->ticket, &j->noise);
    if (n->noise_log)
        noise_log_page(n, j);
    free(blk);
    free(nav);
    n->st->noise_seen += j->noise.seen;
    n->st->noise_block += j->noise.dropped_block;
    n->st->noise_cluster += j->noise.dropped_cluster;
    n->st->noise_budget += j->noise.refused_budget;
}

/* Link distances (see the top comment): a link the noise filter dropped
 * still says how far its target is, when that is within the crawl's depth
 * and so could let the target's links be followed; a page whose distance
 * is below its level passes its own on to every link it keeps, whether
 * the frontier has its target already or not (it may still be queued). */
static void note_hops(struct node *n, const struct work_job *j, size_t i)
{
    int hops = j->redirect ? j->depth : j->depth + 1;
    if (j->links.verdict[i] != NOISE_KEEP) {
        if (hops < n->maxd)
            fpmap_lower(n->hops, j->links.link[i].fp, hops);
    } else if (j->depth < j->lease.depth) {
        fpmap_lower(n->hops, j->links.link[i].fp, hops);
    }
}

int node__distance(struct node *n, const struct frontier_lease *l)
{
    int d = l->depth;
    if (fpmap_count(n->hops)) {
        d = fpmap_get(n->hops, dedup_fingerprint(l->url, strlen(l->url)),
                      l->depth);
        d = d < l->depth ? d : l->depth;
    }
    /* past crawl.depth only through a page whose distance was below its
     * level: its links' distance is within crawl.depth even when this
     * node does not know it (another node admitted it, HOPS_MAX) */
    return d > n->maxd ? n->maxd : d;
}

/* The links of job k that pass noise, scope and the dedup cache go to the
 * admission batch. */
static void collect_links(struct node *n, struct work_job *j, uint32_t k)
{
    for (size_t i = 0; i < j->links.n; i++) {
        int why;
        note_hops(n, j, i);
        if (j->links.verdict[i] != NOISE_KEEP)
            continue;
        why = parser_scope_check(n->scope, j->lease.url,
                                 j->links.blob + j->links.link[i].off);
        if (why != PARSER_SCOPE_IN) {
            n->st->scope_dropped[why]++;
            continue;
        }
        if (dedup_cache_hit(n->cache, j->links.link[i].fp)) {
            n->st->links_cached++;
            continue;
        }
        admit_add(n, j, i, k);
    }
}

/* After the frontier call: cache every admitted URL; count the new ones
 * per job, charge them to their noise cluster's template budget (or
 * record a redirect target's hops). */
static void admitted(struct node *n, struct work_job **jobs,
                     const unsigned char *isnew)
{
    n->st->scope_budget = frontier_budget_refused(n->f);
    n->st->links_admitted += n->adm.n;
    for (size_t i = 0; i < n->adm.n; i++) {
        const struct node_admit *a = &n->adm.v[i];
        dedup_cache_put(n->cache, a->url.fp);
        if (isnew[i]) {
            struct work_job *j = jobs[a->job];
            if (j->redirect)
                fpmap_put(n->redir, a->url.fp, j->redirects + 1);
            else
                noise_admitted(n->noise, j->links.ticket[a->link]);
            j->links_new_count++;
            n->st->links_new++;
        }
    }
}

/* Admit the new links of all jobs in one frontier call; links_new per job.
 * The noise filter runs first; every URL that is new to the frontier is
 * charged to its noise cluster's template budget. */
int node__admit_links(struct node *n, struct work_job **jobs, size_t njobs)
{
    struct frontier_url *urls;
    unsigned char *isnew;
    size_t k;
    int rc;
    n->adm.n = 0;
    node__failover_check(n); /* no "seen" from an older server's cache */
    for (k = 0; k < njobs; k++) {
        noise_job(n, jobs[k]);
        collect_links(n, jobs[k], (uint32_t)k);
    }
    if (!n->adm.n)
        return DC_OK;
    urls = xmalloc(n->adm.n * sizeof(*urls));
    isnew = xmalloc(n->adm.n);
    for (k = 0; k < n->adm.n; k++)
        urls[k] = n->adm.v[k].url;
    rc = frontier_admit(n->f, urls, n->adm.n, dc_now_ms(), isnew);
    if (!rc)
        admitted(n, jobs, isnew);
    free(urls);
    free(isnew);
    return rc;
}

/* Do the links of dup, a byte-identical copy of first, lead elsewhere:
 * is dup's directory (the URL up to the last '/' of its path) another
 * than first's and not below it? (The same directory resolves relative
 * references alike, up to a reference of only a query or a fragment,
 * which pages that differ only in their name rarely hold.) */
static int dup_links_elsewhere(const char *dup, const char *first)
{
    size_t ld = strcspn(dup, "?#"), lf = strcspn(first, "?#");

    while (ld > 0 && dup[ld - 1] != '/')
        ld--;
    while (lf > 0 && first[lf - 1] != '/')
        lf--;
    return !(ld >= lf && memcmp(dup, first, lf) == 0);
}

/* Content dedup: claim the payload digest of every complete 2xx page of
 * the batch in one round trip; a page whose digest another URL claimed
 * first is a duplicate, archived as a revisit of the first; its links are
 * admitted only when dup_links_elsewhere says they lead elsewhere. */
int node__claim_digests(struct node *n, struct work_job **jobs, size_t nj)
{
    const char *dig[CLAIM_MAX], *uri[CLAIM_MAX];
    int64_t ms[CLAIM_MAX], oms[CLAIM_MAX];
    char *ouri[CLAIM_MAX];
    unsigned char dup[CLAIM_MAX];
    size_t idx[CLAIM_MAX], m = 0, i;
    int rc;
    for (i = 0; i < nj && i < CLAIM_MAX; i++) {
        const struct work_job *j = jobs[i];
        if (j->res->status < 200 || j->res->status > 299 || !j->built.len ||
            !j->built.digest[0] || j->res->truncated)
            continue;
        dig[m] = j->built.digest;
        uri[m] = j->lease.url;
        ms[m] = j->res->started_ms;
        idx[m++] = i;
    }
    if (!m)
        return DC_OK;
    rc = frontier_digest_claim(n->f, dig, uri, ms, m, dup, ouri, oms);
    for (i = 0; !rc && i < m; i++) {
        struct work_job *j = jobs[idx[i]];
        if (dup[i] && ouri[i]) {
            j->dup_of_uri = ouri[i];
            j->dup_of_ms = oms[i];
            if (!dup_links_elsewhere(j->lease.url, ouri[i]))
                j->links.n = 0; /* as the first copy's, or a trap's */
            else
                n->st->content_dups_followed++;
        } else {
            free(ouri[i]);
        }
    }
    return rc;
}
