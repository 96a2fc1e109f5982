/*
 * robots-cache.c: robots.txt rules per host, as this node knows them.
 *
 * A host's entry goes UNKNOWN -> FETCHING (the node started a fetch of
 * <origin>/robots.txt) -> READY (rules installed). Leases popped for a host
 * whose rules are not READY are parked on its entry and released by the
 * node when the rules arrive. Rules expire after robots.expiry (24 h by
 * default) and are fetched again.
 *
 * Fetch outcomes follow RFC 9309 §2.3.1 (robots_rules_from): redirects are
 * followed by the fetcher (fetch.max_redirects, 5 by default, the RFC's
 * minimum); 2xx -> parse; 4xx -> allow all; more redirects than that ->
 * allow all ("unavailable"); 5xx or unreachable -> disallow all, and the
 * fetch is tried again after 1 s, 2 s, 4 s (ROBOTS_FAIL_TRIES tries in all)
 * while the host's leases wait; after the last try the host stays
 * "disallow all" (its URLs are skipped) until robots.expiry, when one more
 * round of tries starts. The RFC's "after 30 days treat as allow all" is
 * not implemented: a host whose robots.txt keeps failing is never crawled.
 *
 * Dead hosts: an error that a retry seconds later will not fix (libcurl's
 * "Could not resolve host", "Couldn't connect to server" = refused or no
 * route, a TLS certificate that does not verify; robots_error_final) is
 * not retried: the host is "dead" at once (disallow all, its URLs skipped
 * with the same "robots.txt unreachable: <error>" lines) so that it does
 * not hold its level for the 1 + 2 + 4 s of retries. Its robots.txt is
 * tried again only when a URL of the host arrives at a deeper level than
 * the fetch that found it dead (dead_depth; once per level at most) and
 * ROBOTS_REVIVE_MS after it (a name that did not resolve or a port that
 * refused a second ago has not come back; on a small site whose levels
 * take a second, every level retried a hundred dead hosts), or after
 * robots.expiry. Timeouts, 5xx and other errors keep the retries.
 *
 * A robots.txt whose address scope.private_addresses refuses (every
 * address of the host, or a redirect's) is ROBOTS_RULE_PRIVATE: disallow
 * all, no retries (dead, as above); the host's URLs are skipped with the
 * refusal's reason.
 *
 * Crawl-delay is honoured up to robots.max_crawl_delay; the node asks
 * robots_entry_delay_ms for the gap it passes to the frontier. Sitemap
 * URLs wait in a small queue per entry; the node fetches them one at a
 * time (sitemap fetches are bounded per host, see node-internal.h).
 *
 * Hosts live in a chained hash table keyed by "host[:port]", on a list in
 * order of last use. Memory is bounded (robots_cache_new): past max_hosts
 * entries, or past ROBOTS_CACHE_BYTES of estimated entry size (the entry,
 * its strings and the robots.txt bytes its rules were parsed from), the
 * least recently used entries that nothing refers to are dropped: READY,
 * not retrying, no lease parked, no sitemap in flight or waiting (an
 * entry held by a transfer is never one of them). A dropped host loses
 * nothing a later URL needs: its answer worth keeping (2xx, 4xx, too many
 * redirects) is in Redis (frontier_robots_put) and comes back with the
 * host's next lease (node__robots_from_store); a dead or failing host's
 * robots.txt is tried once more. Nor is an entry used in the current round
 * (robots_cache_round: the node starts one per pop batch) dropped, so the
 * hosts of one batch, read back from Redis together, stay until the batch
 * is dispatched even when the batch is larger than the cap. Each new entry looks at most
 * ROBOTS_EVICT_SCAN entries from the old end (those that cannot go move to
 * the new end), so a cache full of busy hosts grows past the bound by the
 * busy ones instead of scanning; those are bounded by the leases a node
 * holds.
 *
 * Thread rules: node thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "conf.h"
#include "dc-limits.h"
#include "dedup.h"
#include "node-internal.h"
#include "parser.h"

/* Entries looked at from the old end of the list per new entry. */
#define ROBOTS_EVICT_SCAN 8

struct robots_node {
    struct robots_entry e;
    struct robots_node *next;              /* hash chain */
    struct robots_node *newer, *older;     /* use order */
    uint64_t round;                        /* last used in this round */
};

struct robots_cache {
    struct robots_node **slots;
    size_t nslots, n, max;
    size_t bytes;                          /* sum of the entries' cost */
    struct robots_node *newest, *oldest;
    uint64_t evicted;
    uint64_t round;                        /* robots_cache_round */
};

struct robots_cache *robots_cache_new(size_t max_hosts)
{
    struct robots_cache *rc = xcalloc(1, sizeof(*rc));
    rc->nslots = 1024;
    rc->slots = xcalloc(rc->nslots, sizeof(*rc->slots));
    rc->max = max_hosts ? max_hosts : 1;
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

static void lru_unlink(struct robots_cache *rc, struct robots_node *n)
{
    if (n->newer)
        n->newer->older = n->older;
    else
        rc->newest = n->older;
    if (n->older)
        n->older->newer = n->newer;
    else
        rc->oldest = n->newer;
    n->newer = n->older = NULL;
}

static void lru_push(struct robots_cache *rc, struct robots_node *n)
{
    n->older = rc->newest;
    n->newer = NULL;
    if (rc->newest)
        rc->newest->newer = n;
    rc->newest = n;
    if (!rc->oldest)
        rc->oldest = n;
}

/* The entry's estimated memory: struct, strings, robots.txt bytes. */
static void entry_charge(struct robots_entry *e, size_t rules_bytes)
{
    size_t cost = sizeof(struct robots_node) + 2 * strlen(e->host) + 32 +
                  rules_bytes;
    if (e->cache)
        e->cache->bytes += cost - e->cost;
    e->cost = cost;
}

/* Nothing refers to the entry and a later URL can do without it: rules
 * installed (or none asked for yet), not retrying, no lease parked, no
 * sitemap in flight or waiting. */
static int evictable(const struct robots_entry *e)
{
    return e->state != ROBOTS_FETCHING && e->fails == 0 && e->nparked == 0 &&
           !e->sm_busy && e->sm_fetched >= e->sm_n;
}

static void entry_release(struct robots_entry *e);

static void node_drop(struct robots_cache *rc, struct robots_node *n)
{
    size_t h = dedup_fingerprint(n->e.host, strlen(n->e.host)) % rc->nslots;
    struct robots_node **p = &rc->slots[h];
    while (*p != n)
        p = &(*p)->next;
    *p = n->next;
    lru_unlink(rc, n);
    rc->bytes -= n->e.cost;
    rc->n--;
    entry_release(&n->e);
    free(n);
}

/* Make room: drop old entries nothing refers to (ROBOTS_EVICT_SCAN
 * looked at, at most; busy ones move to the new end). */
static void make_room(struct robots_cache *rc)
{
    int k;
    for (k = 0; k < ROBOTS_EVICT_SCAN && rc->oldest &&
                (rc->n >= rc->max || rc->bytes > ROBOTS_CACHE_BYTES);
         k++) {
        struct robots_node *o = rc->oldest;
        if (o->round != rc->round && evictable(&o->e)) {
            node_drop(rc, o);
            rc->evicted++;
        } else {
            lru_unlink(rc, o);
            lru_push(rc, o);
        }
    }
}

/* url's host's entry (now the most recently used), or NULL. */
static struct robots_entry *find(struct robots_cache *rc, const char *host,
                                 size_t hostlen)
{
    size_t h = dedup_fingerprint(host, hostlen) % rc->nslots;
    struct robots_node *n;
    for (n = rc->slots[h]; n; n = n->next)
        if (strlen(n->e.host) == hostlen && !memcmp(n->e.host, host, hostlen)) {
            lru_unlink(rc, n);
            lru_push(rc, n);
            n->round = rc->round;
            return &n->e;
        }
    return NULL;
}

void robots_cache_round(struct robots_cache *rc)
{
    rc->round++;
}

struct robots_entry *robots_cache_find(struct robots_cache *rc, const char *url)
{
    const char *host;
    size_t hostlen;
    if (parser_url_host(url, &host, &hostlen) != DC_OK)
        return NULL;
    return find(rc, host, hostlen);
}

struct robots_entry *robots_cache_get(struct robots_cache *rc, const char *url)
{
    const char *host;
    size_t hostlen, h;
    struct robots_node *n;
    struct robots_entry *e;
    if (parser_url_host(url, &host, &hostlen) != DC_OK)
        return NULL;
    if ((e = find(rc, host, hostlen)))
        return e;
    make_room(rc);
    if (rc->n >= rc->nslots)
        rehash(rc);
    h = dedup_fingerprint(host, hostlen) % rc->nslots;
    n = xcalloc(1, sizeof(*n));
    n->e.host = xstrndup(host, hostlen);
    n->e.origin = xstrndup(url, (size_t)(host - url) + hostlen);
    n->e.state = ROBOTS_UNKNOWN;
    n->e.crawl_delay = -1;
    n->e.sm_depth = -1;
    n->e.dead_depth = -1;
    n->e.cache = rc;
    n->round = rc->round;
    entry_charge(&n->e, 0);
    n->next = rc->slots[h];
    rc->slots[h] = n;
    lru_push(rc, n);
    rc->n++;
    return &n->e;
}

size_t robots_cache_count(const struct robots_cache *rc, size_t *bytes,
                          uint64_t *evicted)
{
    if (bytes)
        *bytes = rc->bytes;
    if (evicted)
        *evicted = rc->evicted;
    return rc->n;
}

void robots_entry_park(struct robots_entry *e, struct frontier_lease *l)
{
    xgrow((void **)&e->parked, &e->capparked, e->nparked + 1,
          sizeof(*e->parked));
    e->parked[e->nparked++] = *l;
    memset(l, 0, sizeof(*l));
}

/* The value of header `name` (lower-case, with ':') in the response head. */
static int head_has(const char *head, size_t len, const char *name,
                    const char *word)
{
    size_t nl = strlen(name), i;
    for (i = 0; head && i + nl < len; i++) {
        if ((i == 0 || head[i - 1] == '\n') && !strncasecmp(head + i, name, nl)) {
            const char *v = head + i + nl, *e = memchr(v, '\n', len - i - nl);
            size_t vl = e ? (size_t)(e - v) : len - i - nl, k;
            for (k = 0; k + strlen(word) <= vl; k++)
                if (!strncasecmp(v + k, word, strlen(word)))
                    return 1;
        }
    }
    return 0;
}

/* robots_rules_from; *used gets the robots.txt bytes parsed (decoded). */
static struct parser_robots *rules_from(const struct fetch_result *r,
                                        const char *agent, unsigned flags,
                                        int *rule, char *desc, size_t cap,
                                        size_t *used)
{
    struct parser_robots *rules;
    char *dec = NULL;
    const char *body = r->body ? r->body : "";
    size_t len = r->body_len, dlen = 0;

    if (r->private_refused) {
        *rule = ROBOTS_RULE_PRIVATE;
        snprintf(desc, cap, "refused (%.100s) -> disallow all", r->error);
        return parser_robots_all(0);
    }
    if (r->status >= 200 && r->status < 300) {
        if ((head_has(r->resp_head, r->resp_len, "content-encoding:", "gzip") ||
             head_has(r->resp_head, r->resp_len, "content-encoding:", "deflate")) &&
            parser_inflate(body, len, 0, DC_ROBOTS_MAX_BYTES, &dec, &dlen, NULL) == DC_OK) {
            body = dec;
            len = dlen;
        }
        rules = parser_robots_parse(body, len, agent, flags);
        *used = len > DC_ROBOTS_MAX_BYTES ? DC_ROBOTS_MAX_BYTES : len;
        free(dec);
        *rule = ROBOTS_RULE_PARSED;
        snprintf(desc, cap, "%d -> rules parsed (%zu bytes%s)", r->status,
                 len > DC_ROBOTS_MAX_BYTES ? (size_t)DC_ROBOTS_MAX_BYTES : len,
                 len > DC_ROBOTS_MAX_BYTES || r->truncated ? ", cut at 500 KiB" : "");
        return rules;
    }
    if (r->status >= 400 && r->status < 500) {
        *rule = ROBOTS_RULE_4XX;
        snprintf(desc, cap, "%d -> allow all", r->status);
        return parser_robots_all(1);
    }
    if ((r->status >= 300 && r->status < 400) ||
        (r->status == 0 && r->curl_code == CURLE_TOO_MANY_REDIRECTS)) {
        *rule = ROBOTS_RULE_REDIRECTS;
        snprintf(desc, cap, "too many redirects -> allow all");
        return parser_robots_all(1);
    }
    if (r->status >= 500 && r->status < 600) {
        *rule = ROBOTS_RULE_5XX;
        snprintf(desc, cap, "%d -> disallow all", r->status);
    } else {
        *rule = ROBOTS_RULE_UNREACHABLE;
        snprintf(desc, cap, "unreachable (%.80s) -> disallow all",
                 r->error[0] ? r->error : r->status ? "unexpected status"
                                                    : "no response");
    }
    return parser_robots_all(0);
}

struct parser_robots *robots_rules_from(const struct fetch_result *r,
                                        const char *agent, unsigned flags,
                                        int *rule, char *desc, size_t cap)
{
    size_t used = 0;
    return rules_from(r, agent, flags, rule, desc, cap, &used);
}

int robots_error_final(const struct fetch_result *r)
{
    if (r->status != 0)
        return 0;
    switch (r->curl_code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return 1;
    default:
        return 0;
    }
}

void robots_entry_set(struct robots_entry *e, const struct fetch_result *r,
                      const char *agent_token, const struct conf *c,
                      int64_t now_ms)
{
    char desc[128];
    size_t used = 0;
    double d;

    e->dead_depth = -1;
    parser_robots_free(&e->rules);
    e->rules = rules_from(r, agent_token, PARSER_ROBOTS_CANON, &e->rule, desc,
                          sizeof desc, &used);
    entry_charge(e, used);
    d = parser_robots_crawl_delay(e->rules);
    e->crawl_delay = d > c->robots_max_crawl_delay ? c->robots_max_crawl_delay : d;
    e->state = ROBOTS_READY;
    if (e->rule == ROBOTS_RULE_5XX || e->rule == ROBOTS_RULE_UNREACHABLE ||
        e->rule == ROBOTS_RULE_PRIVATE) {
        if (r->error[0])
            snprintf(e->error, sizeof(e->error), "%s", r->error);
        else if (r->status)
            snprintf(e->error, sizeof(e->error), "HTTP %d", r->status);
        else
            snprintf(e->error, sizeof(e->error), "no response");
        e->refused_class = r->refused_class;
        if ((e->rule == ROBOTS_RULE_UNREACHABLE && robots_error_final(r)) ||
            e->rule == ROBOTS_RULE_PRIVATE) {
            e->fails = 0; /* dead: no retries (see the top comment) */
            e->dead_depth = e->try_depth;
            e->dead_ms = now_ms;
            e->expires_ms = now_ms + (int64_t)(c->robots_expiry * 1000);
            return;
        }
        e->fails++;
        if (e->fails < ROBOTS_FAIL_TRIES) {
            e->expires_ms = now_ms + ((int64_t)ROBOTS_FAIL_WAIT_MS << (e->fails - 1));
            return;
        }
    } else {
        e->fails = 0;
        e->error[0] = '\0';
    }
    e->expires_ms = now_ms + (int64_t)(c->robots_expiry * 1000);
    if (e->fails >= ROBOTS_FAIL_TRIES)
        e->fails = 0; /* a new round of tries after the expiry */
}

int robots_store_value(const struct robots_entry *e,
                       const struct fetch_result *r, int64_t now_ms,
                       struct frontier_robots *out)
{
    if (e->rule != ROBOTS_RULE_PARSED && e->rule != ROBOTS_RULE_4XX &&
        e->rule != ROBOTS_RULE_REDIRECTS)
        return 0;
    memset(out, 0, sizeof(*out));
    out->fetched_ms = now_ms;
    out->status = r->status;
    if (e->rule == ROBOTS_RULE_REDIRECTS && (r->status < 300 || r->status > 399))
        out->status = 300; /* libcurl gave up on the chain: kept as a 3xx */
    out->flags = r->truncated ? FRONTIER_ROBOTS_TRUNCATED : 0;
    if (head_has(r->resp_head, r->resp_len, "content-encoding:", "gzip") ||
        head_has(r->resp_head, r->resp_len, "content-encoding:", "deflate"))
        out->flags |= FRONTIER_ROBOTS_CODED;
    if (e->rule == ROBOTS_RULE_PARSED) { /* the others need no body */
        out->body = r->body;
        out->body_len = r->body_len;
    }
    return 1;
}

int robots_entry_restore(struct robots_entry *e,
                         const struct frontier_robots *s,
                         const char *agent_token, const struct conf *c,
                         int64_t now_ms)
{
    struct fetch_result r;
    char head[] = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n";

    if (s->fetched_ms + (int64_t)(c->robots_expiry * 1000) <= now_ms ||
        s->fetched_ms > now_ms + 60000)
        return 0;
    memset(&r, 0, sizeof(r));
    r.status = s->status;
    r.body = (char *)s->body;
    r.body_len = s->body_len;
    r.truncated = (s->flags & FRONTIER_ROBOTS_TRUNCATED) != 0;
    if (s->flags & FRONTIER_ROBOTS_CODED) {
        r.resp_head = head;
        r.resp_len = sizeof(head) - 1;
    }
    robots_entry_set(e, &r, agent_token, c, s->fetched_ms);
    e->sm_started = 1;
    e->sm_done_ms = now_ms;
    return 1;
}

int robots_entry_retrying(const struct robots_entry *e)
{
    return e->fails > 0;
}

int robots_entry_revive(struct robots_entry *e, int depth, int64_t now_ms)
{
    if (e->state != ROBOTS_READY || e->dead_depth < 0 ||
        depth <= e->dead_depth || now_ms - e->dead_ms < ROBOTS_REVIVE_MS)
        return 0;
    e->state = ROBOTS_UNKNOWN;
    return 1;
}

int64_t robots_entry_delay_ms(const struct robots_entry *e,
                              const struct conf *c)
{
    double d = c->politeness_delay;
    if (e && e->crawl_delay > d)
        d = e->crawl_delay;
    return (int64_t)(d * 1000);
}

/* sm_queue keeps every sitemap URL the entry ever queued: the first
 * sm_fetched were taken, the rest wait. Keeping the taken ones is the
 * visited set: a sitemap index that lists itself, or two that list each
 * other, costs one fetch per URL (at most ROBOTS_SITEMAP_FETCHES in all). */
int robots_entry_sitemap_push(struct robots_entry *e, const char *url,
                              int level)
{
    size_t i;
    if (level > ROBOTS_SITEMAP_NESTING || e->sm_n >= ROBOTS_SITEMAP_FETCHES)
        return 0;
    for (i = 0; i < e->sm_n; i++)
        if (!strcmp(e->sm_queue[i].url, url))
            return 0; /* queued or fetched already */
    xgrow((void **)&e->sm_queue, &e->sm_cap, e->sm_n + 1,
          sizeof(*e->sm_queue));
    e->sm_queue[e->sm_n].url = xstrdup(url);
    e->sm_queue[e->sm_n++].level = level;
    return 1;
}

char *robots_entry_sitemap_take(struct robots_entry *e, int *level)
{
    if (e->sm_fetched >= e->sm_n)
        return NULL;
    *level = e->sm_queue[e->sm_fetched].level;
    return xstrdup(e->sm_queue[e->sm_fetched++].url);
}

void robots_entry_keep_drop(struct robots_entry *e)
{
    free(e->sm_keep_body);
    memset(&e->sm_keep, 0, sizeof(e->sm_keep));
    e->sm_keep_body = NULL;
}

void robots_entry_keep(struct robots_entry *e, const struct frontier_robots *s)
{
    robots_entry_keep_drop(e);
    e->sm_keep = *s;
    e->sm_keep_body = s->body_len ? xmalloc(s->body_len) : NULL;
    if (s->body_len)
        memcpy(e->sm_keep_body, s->body, s->body_len);
    e->sm_keep.body = e->sm_keep_body;
}

int robots_entry_keep_take(struct robots_entry *e, struct frontier_robots *out,
                           char **body)
{
    if (!e->sm_keep.host)
        return 0;
    *out = e->sm_keep;
    *body = e->sm_keep_body;
    memset(&e->sm_keep, 0, sizeof(e->sm_keep));
    e->sm_keep_body = NULL;
    return 1;
}

static void sitemaps_forget(struct robots_entry *e)
{
    size_t i;
    for (i = 0; i < e->sm_n; i++)
        free(e->sm_queue[i].url);
    free(e->sm_queue);
    e->sm_queue = NULL;
    e->sm_n = e->sm_cap = e->sm_fetched = 0;
}

int robots_entry_sitemaps_again(struct robots_entry *e, int64_t now_ms)
{
    if (!e->sm_started ||
        (e->sm_done_ms && now_ms - e->sm_done_ms >= ROBOTS_SITEMAP_RECHECK_MS))
        return 0;
    sitemaps_forget(e);
    e->sm_started = 0;
    e->sm_urls = 0;
    e->sm_done_ms = 0;
    return 1;
}

void robots_cache_each(struct robots_cache *rc,
                       void (*fn)(void *ud, struct robots_entry *e), void *ud)
{
    struct robots_node *n;
    for (n = rc->newest; n; n = n->older)
        fn(ud, &n->e);
}

static void entry_release(struct robots_entry *e)
{
    frontier_leases_free(e->parked, e->nparked);
    sitemaps_forget(e);
    robots_entry_keep_drop(e);
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
