/*
 * sitemaps.c: a node's sitemap fetches (robots.sitemaps). When a host's
 * robots.txt is parsed, its Sitemap URLs are queued on the host's robots
 * entry (robots-cache.c) and fetched one at a time through the politeness
 * queue like every other transfer of the host (node-fetch.c);
 * parser/sitemap.c parses them, and index entries are queued in turn,
 * bounded by ROBOTS_SITEMAP_FETCHES and ROBOTS_SITEMAP_NESTING. The page
 * URLs found are admitted like links through the dedup cache and
 * frontier_admit, at depth sm_depth: one below the URL whose lease made
 * the node fetch robots.txt (seeds: depth 1), and not at all beyond the
 * crawl's depth. Only URLs on the robots.txt's own host are taken (the
 * sitemaps protocol's rule for sitemaps submitted through robots.txt), at
 * most sitemap.max_urls per host.
 *
 * Nothing of a host's sitemaps may be lost with a Redis server (a failover
 * to a replica that missed the last writes), nor with the node:
 *   - the host's robots.txt answer goes to Redis (frontier_robots_put, for
 *     the host's next owner, who then reads no sitemap) only after every
 *     URL its sitemaps gave was admitted. A server that holds a prefix of
 *     the writes and holds the answer holds those URLs; a node that dies
 *     before leaves no answer, and the next owner reads robots.txt and
 *     the sitemaps again;
 *   - after a change of server (node__failover_check), the node reads
 *     again the sitemaps it read in the last ROBOTS_SITEMAP_RECHECK_MS
 *     (10 min) or is still reading, and the ones of answers it restored in
 *     that time. Admission is insert-if-absent, so what the new server
 *     has costs nothing but the sitemap fetches. Older writes are taken
 *     to be on the promoted replica: Sentinel does not promote a replica
 *     cut from its master for more than 10 x down-after-milliseconds (plus
 *     the time the master was down), 5 min at its default;
 *   - a sitemap fetch that does not run because the host's partition
 *     moved (or the node stops) forgets the host's sitemaps: no answer is
 *     stored, so the next owner reads them; here they start again with
 *     the host's next lease (eagerly started ones after a change of server
 *     too, as ownership lapses then).
 * Not covered: a host dropped from the robots cache (robots.cache_hosts)
 * after its sitemaps were read and before a change of server that lost
 * their URLs is not read again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"
#include "parser.h"

/* All read: the answer goes to Redis now, after their URLs. */
static void sitemaps_read(struct node *n, struct robots_entry *e)
{
    struct frontier_robots keep;
    char *body;
    e->sm_done_ms = dc_now_ms();
    if (robots_entry_keep_take(e, &keep, &body)) {
        /* a cache for the next owner: a failure costs it one fetch */
        (void)frontier_robots_put(n->f, &keep);
        free(body);
    }
}

static void sitemap_next(struct node *n, struct robots_entry *e)
{
    struct inflight *in;
    char *url;
    int level;
    if (e->sm_busy || node__stop_requested())
        return;
    if (!(url = robots_entry_sitemap_take(e, &level))) {
        sitemaps_read(n, e);
        return;
    }
    in = xcalloc(1, sizeof(*in));
    in->kind = INFLIGHT_SITEMAP;
    in->robots = e;
    in->level = level;
    in->url = url;
    in->queued_ms = dc_now_ms();
    e->sm_busy = 1;
    polite_queue(n->polite, e->host, robots_entry_delay_ms(e, n->c), 0, in);
}

/* Queue a sitemap URL found at base (canonicalised) at nesting level. */
static void sitemap_push(struct robots_entry *e, const char *base,
                         const char *url, int level)
{
    char canon[PARSER_URL_MAX];
    size_t cl;
    if (parser_url_canon(base, url, strlen(url), 0, PARSER_URL_MAX - 1, canon,
                         sizeof(canon), &cl) == DC_OK)
        robots_entry_sitemap_push(e, canon, level);
}

void sitemaps_queue(struct node *n, struct robots_entry *e,
                    const struct frontier_robots *keep)
{
    const char *const *urls;
    size_t k, i;
    if (!n->c->robots_sitemaps || e->sm_started || e->rule != ROBOTS_RULE_PARSED ||
        e->sm_depth < 0 || e->sm_depth > n->maxd) {
        if (keep)
            (void)frontier_robots_put(n->f, keep);
        return;
    }
    e->sm_started = 1;
    if (keep)
        robots_entry_keep(e, keep);
    k = parser_robots_sitemaps(e->rules, &urls);
    for (i = 0; i < k; i++)
        sitemap_push(e, e->origin, urls[i], 0);
    sitemap_next(n, e); /* with none queued, stores keep now */
}

void sitemaps_not_read(struct node *n, struct robots_entry *e, int moved)
{
    e->sm_busy = 0;
    if (!moved) {
        sitemap_next(n, e); /* this one is skipped */
        return;
    }
    /* its partition moved (or the node stops): the answer is not stored,
     * so the host's next owner reads robots.txt and the sitemaps; should
     * the host come back here, its next lease starts them again */
    (void)robots_entry_sitemaps_again(e, dc_now_ms());
    robots_entry_keep_drop(e);
}

static void again(void *ud, struct robots_entry *e)
{
    struct node *n = ud;
    const char *const *urls;
    if (e->rule != ROBOTS_RULE_PARSED || !parser_robots_sitemaps(e->rules, &urls))
        return; /* none to read */
    if (robots_entry_sitemaps_again(e, dc_now_ms())) {
        n->st->sitemaps_again++;
        sitemaps_queue(n, e, NULL);
    }
}

void sitemaps_again(struct node *n)
{
    robots_cache_each(n->robots, again, n);
}

/* The sitemap URL raw (found at base) as a frontier URL on e's host, in
 * scope and not in the dedup cache, into u (url allocated); else 0. */
static int sitemap_url(struct node *n, struct robots_entry *e,
                       const char *base, const char *raw,
                       struct frontier_url *u)
{
    unsigned flags = n->c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    char canon[PARSER_URL_MAX], *c;
    const char *host;
    size_t cl, hl;
    int why;
    if (parser_url_canon(base, raw, strlen(raw), flags,
                         (size_t)n->c->url_max_length, canon, sizeof(canon),
                         &cl) != DC_OK ||
        parser_url_host(canon, &host, &hl) != DC_OK ||
        hl != strlen(e->host) || memcmp(host, e->host, hl))
        return 0;
    why = parser_scope_check(n->scope, base, canon);
    if (why != PARSER_SCOPE_IN) {
        n->st->scope_dropped[why]++;
        return 0;
    }
    e->sm_urls++;
    u->fp = dedup_fingerprint(canon, cl);
    if (dedup_cache_hit(n->cache, u->fp)) {
        n->st->links_cached++;
        return 0;
    }
    c = xstrndup(canon, cl);
    u->url = c;
    u->len = cl;
    u->host = c + (host - canon);
    u->hostlen = hl;
    u->depth = e->sm_depth;
    return 1;
}

/* Admit the page URLs of one parsed sitemap (on e's host only). */
static void sitemap_admit(struct node *n, struct robots_entry *e,
                          const char *base, const struct parser_sitemap *sm)
{
    struct frontier_url *u = xcalloc(sm->nurls + 1, sizeof(*u));
    unsigned char *isnew = xcalloc(sm->nurls + 1, 1);
    size_t i, m = 0;
    node__failover_check(n); /* no stale cache on a new server */
    for (i = 0; i < sm->nurls; i++) {
        if (e->sm_urls >= (uint64_t)n->c->sitemap_max_urls)
            break;
        m += sitemap_url(n, e, base, sm->urls[i], &u[m]);
    }
    if (m && frontier_admit(n->f, u, m, dc_now_ms(), isnew) == DC_OK) {
        for (i = 0; i < m; i++) {
            dedup_cache_put(n->cache, u[i].fp);
            n->st->links_new += isnew[i];
        }
        n->st->links_admitted += m;
        n->loop.kick = 1;
    }
    for (i = 0; i < m; i++)
        free((char *)u[i].url);
    free(isnew);
    free(u);
}

void sitemaps_done(struct node *n, struct robots_entry *e, int level,
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
        for (i = 0; i < sm.nsitemaps; i++)
            sitemap_push(e, base, sm.sitemaps[i], level + 1);
    }
    parser_sitemap_release(&sm);
    sitemap_next(n, e);
}
