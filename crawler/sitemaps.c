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
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "node-internal.h"
#include "parser.h"

static void sitemap_next(struct node *n, struct robots_entry *e)
{
    struct inflight *in;
    char *url;
    int level;
    if (e->sm_busy || node__stop_requested() ||
        !(url = robots_entry_sitemap_take(e, &level)))
        return;
    in = xcalloc(1, sizeof(*in));
    in->kind = INFLIGHT_SITEMAP;
    in->robots = e;
    in->level = level;
    in->url = url;
    in->queued_ms = dc_now_ms();
    e->sm_busy = 1;
    polite_queue(n->polite, e->host, robots_entry_delay_ms(e, n->c), in);
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

void sitemaps_queue(struct node *n, struct robots_entry *e)
{
    const char *const *urls;
    size_t k, i;
    if (!n->c->robots_sitemaps || e->sm_started || e->rule != ROBOTS_RULE_PARSED ||
        e->sm_depth < 0 || e->sm_depth > n->maxd)
        return;
    e->sm_started = 1;
    k = parser_robots_sitemaps(e->rules, &urls);
    for (i = 0; i < k; i++)
        sitemap_push(e, e->origin, urls[i], 0);
    sitemap_next(n, e);
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
