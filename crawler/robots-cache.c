/*
 * robots-cache.c: robots.txt rules per host, as this node knows them.
 *
 * A host's entry goes UNKNOWN -> FETCHING (the node started a fetch of
 * <origin>/robots.txt) -> READY (rules installed). Leases popped for a host
 * whose rules are not READY are parked on its entry and released by the
 * node when the rules arrive. Rules expire after 24 hours and are fetched
 * again. Fetch outcomes follow RFC 9309 §2.3.1.3-4: 2xx -> parse; 4xx ->
 * no rules (allow all); 5xx or unreachable -> disallow all (this crawl
 * skips that host's URLs; a later issue adds the retry-later policy).
 *
 * Hosts live in a chained hash table keyed by "host[:port]". Thread rules:
 * node thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "node-internal.h"
#include "parser.h"

#define ROBOTS_TTL_MS (24LL * 3600 * 1000)

struct robots_node {
    struct robots_entry e;
    struct robots_node *next;
};

struct robots_cache {
    struct robots_node **slots;
    size_t nslots, n;
};

struct robots_cache *robots_cache_new(void)
{
    struct robots_cache *rc = xcalloc(1, sizeof(*rc));
    rc->nslots = 1024;
    rc->slots = xcalloc(rc->nslots, sizeof(*rc->slots));
    return rc;
}

static void rehash(struct robots_cache *rc)
{
    size_t ns = rc->nslots * 2, i;
    struct robots_node **s = xcalloc(ns, sizeof(*s));
    for (i = 0; i < rc->nslots; i++) {
        struct robots_node *n = rc->slots[i], *next;
        for (; n; n = next) {
            size_t h = dedup_fingerprint(n->e.host, strlen(n->e.host)) % ns;
            next = n->next;
            n->next = s[h];
            s[h] = n;
        }
    }
    free(rc->slots);
    rc->slots = s;
    rc->nslots = ns;
}

struct robots_entry *robots_cache_get(struct robots_cache *rc, const char *url)
{
    const char *host;
    size_t hostlen, h;
    struct robots_node *n;
    if (parser_url_host(url, &host, &hostlen) != DC_OK)
        return NULL;
    h = dedup_fingerprint(host, hostlen) % rc->nslots;
    for (n = rc->slots[h]; n; n = n->next)
        if (strlen(n->e.host) == hostlen && !memcmp(n->e.host, host, hostlen))
            return &n->e;
    if (rc->n >= rc->nslots) {
        rehash(rc);
        h = dedup_fingerprint(host, hostlen) % rc->nslots;
    }
    n = xcalloc(1, sizeof(*n));
    n->e.host = xstrndup(host, hostlen);
    n->e.origin = xstrndup(url, (size_t)(host - url) + hostlen);
    n->e.state = ROBOTS_UNKNOWN;
    n->e.crawl_delay = -1;
    n->next = rc->slots[h];
    rc->slots[h] = n;
    rc->n++;
    return &n->e;
}

void robots_entry_park(struct robots_entry *e, struct frontier_lease *l)
{
    xgrow((void **)&e->parked, &e->capparked, e->nparked + 1,
          sizeof(*e->parked));
    e->parked[e->nparked++] = *l;
    memset(l, 0, sizeof(*l));
}

void robots_entry_set(struct robots_entry *e, const struct fetch_result *r,
                      const char *agent_token, int64_t now_ms)
{
    parser_robots_free(&e->rules);
    if (r->status >= 200 && r->status < 300)
        e->rules = parser_robots_parse(r->body ? r->body : "", r->body_len,
                                       agent_token);
    else if (r->status >= 400 && r->status < 500)
        e->rules = parser_robots_all(1);
    else
        e->rules = parser_robots_all(0);
    e->crawl_delay = parser_robots_crawl_delay(e->rules);
    e->state = ROBOTS_READY;
    e->expires_ms = now_ms + ROBOTS_TTL_MS;
}

static void entry_release(struct robots_entry *e)
{
    frontier_leases_free(e->parked, e->nparked);
    parser_robots_free(&e->rules);
    free(e->host);
    free(e->origin);
}

void robots_cache_free(struct robots_cache **rcp)
{
    struct robots_cache *rc;
    size_t i;
    if (!rcp || !*rcp)
        return;
    rc = *rcp;
    for (i = 0; i < rc->nslots; i++) {
        struct robots_node *n = rc->slots[i], *next;
        for (; n; n = next) {
            next = n->next;
            entry_release(&n->e);
            free(n);
        }
    }
    free(rc->slots);
    free(rc);
    *rcp = NULL;
}
