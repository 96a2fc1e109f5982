/*
 * politeness.c: the node's local half of politeness. The frontier (Redis)
 * decides when a host may be leased again (politeness.delay after its last
 * completion, and a few leases more than host_connections so the next URL
 * is already here when a transfer ends, see frontier_set_lease_ahead);
 * this file decides when a leased transfer actually starts:
 *
 *   - the host's connections: at most politeness.host_connections
 *     transfers of one host in flight (robots.txt and sitemaps included);
 *   - the host's gap: not before delay ms after the END of the host's
 *     previous transfer on this node, robots.txt fetches included (the
 *     frontier's clock does not see those), measured when the transfer is
 *     about to start, so a transfer queued while the previous one runs
 *     waits from that one's end;
 *   - the IP limit: at most politeness.ip_connections transfers in flight
 *     to one IP address. The address of a host is the host itself when it
 *     is an IP literal, else the primary IP libcurl reported for the host's
 *     previous transfer (CURLINFO_PRIMARY_IP; its robots.txt fetch comes
 *     first). A named host whose address is not known yet is not counted.
 *     host:port origins on one address share its slots;
 *   - back-off: consecutive transient failures (timeouts, connection errors,
 *     5xx, 429) of a host give 1 s, 2 s, 4 s ... up to politeness.max_backoff;
 *     the host's queued transfers wait it out (polite_hold extends it, e.g.
 *     to a Retry-After); a success resets it. A 5xx other than 503 is
 *     first taken as the page's own error: the host is held from its second
 *     failure in a row, and the page is retried after its own back-off
 *     (polite_url_backoff, node-write.c), so one broken page does not stall
 *     a busy host.
 *
 * Transfers wait in a list scanned in order, so the first queued transfer
 * of an address is the first to get its free slot, except that a transfer
 * queued "later" (a page of the next level, leased while the current one
 * drains) lets the host's other queued transfers go first: the level waits
 * for those, and a slow host's pages of the next level would otherwise
 * lengthen every level; one round
 * (polite_rewind, then polite_next until NULL) passes over the list once,
 * which is exact because slots are only taken during a round. Nothing here spins: the
 * node sleeps until polite_wait_ms() or until a transfer ends, and only
 * until a transfer ends while fetch.concurrency holds every transfer it
 * may start (node__launch_wait_ms in node-fetch.c).
 *
 * Memory: one entry per host seen recently (gap, address, failures,
 * transfers queued and in flight) and one per address with transfers in
 * flight. Past POLITE_HOSTS_MAX host entries, those that a fresh entry
 * would stand for are dropped: nothing queued or in flight, no hold, the
 * end of the last transfer longer ago than any gap a transfer may ask for
 * (the larger of politeness.delay and robots.max_crawl_delay, plus a
 * second), and for a failing host its back-off over for longer than
 * politeness.max_backoff (its next failure backs off from 1 s again); a
 * dropped named host's address is learnt again from its next transfer. The scan runs again only after
 * POLITE_HOSTS_MAX / 4 more entries, so a table of hosts that are all
 * within their gap grows (by the hosts a node fetches in that window)
 * instead of being scanned for every new host.
 *
 * Thread rules: the node thread only.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node-internal.h"

#define POLITE_BUCKETS 16384
#define POLITE_HOSTS_MAX 65536

struct polite_host {
    char *host;
    int64_t last_end;   /* ms of the end of its last transfer, 0 never */
    int64_t hold_until; /* back-off: nothing starts before (ms) */
    unsigned fails;     /* consecutive transient failures */
    int active;         /* transfers in flight */
    size_t queued;      /* transfers waiting in the list */
    size_t queued_later; /* of them, those queued with later set */
    char ip[POLITE_IP_MAX];
    struct polite_host *next;
};

struct polite_ip {
    char ip[POLITE_IP_MAX];
    int active;
    struct polite_ip *next;
};

struct polite_wait {
    void *ud;
    struct polite_host *h; /* kept while queued (never pruned) */
    int64_t gap_ms;        /* after the end of h's last transfer */
    int64_t queued_ms;     /* when it was queued */
    int later;             /* yields to h's others (polite_queue) */
    struct polite_wait *next;
};

struct polite {
    int ip_limit, host_limit;
    int64_t max_backoff_ms;
    struct polite_host *hosts[POLITE_BUCKETS];
    struct polite_ip *ips[POLITE_BUCKETS];
    size_t nhosts, nwaiting;
    size_t prune_at;       /* entries when the next prune_hosts runs */
    int64_t idle_ms;       /* an entry idle this long is a fresh one */
    size_t hosts_waiting;  /* hosts with a queued transfer */
    uint64_t waits, wait_ms; /* transfers that started later than queued */
    struct polite_wait *head, **tail;
    /* where polite_next goes on (NULL: from the head) */
    struct polite_wait **cursor, *cursor_prev;
};

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h % POLITE_BUCKETS;
}

struct polite *polite_new(const struct conf *c)
{
    struct polite *p = xcalloc(1, sizeof(*p));
    p->ip_limit = c->politeness_ip_connections;
    p->host_limit = c->politeness_host_connections < 1
                        ? 1 : c->politeness_host_connections;
    p->max_backoff_ms = (int64_t)(c->politeness_max_backoff * 1000);
    p->tail = &p->head;
    p->prune_at = POLITE_HOSTS_MAX;
    p->idle_ms = (int64_t)((c->politeness_delay > c->robots_max_crawl_delay
                                ? c->politeness_delay
                                : c->robots_max_crawl_delay) * 1000) + 1000;
    return p;
}

void polite_free(struct polite **pp)
{
    struct polite *p = pp ? *pp : NULL;
    if (!p)
        return;
    for (size_t b = 0; b < POLITE_BUCKETS; b++) {
        while (p->hosts[b]) {
            struct polite_host *h = p->hosts[b];
            p->hosts[b] = h->next;
            free(h->host);
            free(h);
        }
        while (p->ips[b]) {
            struct polite_ip *ip = p->ips[b];
            p->ips[b] = ip->next;
            free(ip);
        }
    }
    while (p->head) {
        struct polite_wait *w = p->head;
        p->head = w->next;
        free(w);
    }
    free(p);
    *pp = NULL;
}

/* Drop the host entries a fresh one would stand for (past the cap). */
static void prune_hosts(struct polite *p, int64_t now)
{
    for (size_t b = 0; b < POLITE_BUCKETS; b++) {
        struct polite_host **hp = &p->hosts[b];
        while (*hp) {
            struct polite_host *h = *hp;
            if (!h->active && !h->queued && h->last_end + p->idle_ms < now &&
                (h->fails ? h->hold_until + p->max_backoff_ms < now
                          : h->hold_until <= now)) {
                *hp = h->next;
                free(h->host);
                free(h);
                p->nhosts--;
            } else {
                hp = &h->next;
            }
        }
    }
}

static struct polite_host *host_get(struct polite *p, const char *host,
                                    int create, int64_t now)
{
    uint32_t b = hash(host);
    struct polite_host *h;
    for (h = p->hosts[b]; h; h = h->next)
        if (!strcmp(h->host, host))
            return h;
    if (!create)
        return NULL;
    if (p->nhosts >= p->prune_at) {
        prune_hosts(p, now);
        p->prune_at = p->nhosts + POLITE_HOSTS_MAX / 4 > POLITE_HOSTS_MAX
                          ? p->nhosts + POLITE_HOSTS_MAX / 4
                          : POLITE_HOSTS_MAX;
    }
    h = xcalloc(1, sizeof(*h));
    h->host = xstrdup(host);
    h->next = p->hosts[b];
    p->hosts[b] = h;
    p->nhosts++;
    return h;
}

static struct polite_ip *ip_get(struct polite *p, const char *ip, int create)
{
    uint32_t b = hash(ip);
    struct polite_ip *e;
    for (e = p->ips[b]; e; e = e->next)
        if (!strcmp(e->ip, ip))
            return e;
    if (!create)
        return NULL;
    e = xcalloc(1, sizeof(*e));
    snprintf(e->ip, sizeof(e->ip), "%s", ip);
    e->next = p->ips[b];
    p->ips[b] = e;
    return e;
}

static void ip_put(struct polite *p, const char *ip)
{
    uint32_t b = hash(ip);
    struct polite_ip **ep;
    for (ep = &p->ips[b]; *ep; ep = &(*ep)->next) {
        struct polite_ip *e = *ep;
        if (strcmp(e->ip, ip))
            continue;
        if (--e->active <= 0) {
            *ep = e->next;
            free(e);
        }
        return;
    }
}

void polite_host_ip(const char *host, char *out, size_t cap)
{
    const char *end;
    char tmp[POLITE_IP_MAX];
    unsigned char bin[16];
    size_t len;
    out[0] = '\0';
    if (*host == '[') { /* [v6]:port */
        host++;
        end = strchr(host, ']');
        if (!end)
            return;
    } else {
        end = strchr(host, ':');
    }
    len = end ? (size_t)(end - host) : strlen(host);
    if (len >= sizeof(tmp))
        return;
    memcpy(tmp, host, len);
    tmp[len] = '\0';
    if (inet_pton(AF_INET, tmp, bin) == 1 || inet_pton(AF_INET6, tmp, bin) == 1)
        snprintf(out, cap, "%s", tmp);
}

/* The address key of host: the literal, else the learnt one, else "". */
static void address_of(struct polite *p, const char *host, char *out,
                        size_t cap)
{
    struct polite_host *h;
    polite_host_ip(host, out, cap);
    if (out[0])
        return;
    h = host_get(p, host, 0, 0);
    if (h && h->ip[0])
        snprintf(out, cap, "%s", h->ip);
}

void polite_queue(struct polite *p, const char *host, int64_t gap_ms,
                  int later, void *ud)
{
    struct polite_wait *w = xcalloc(1, sizeof(*w));
    w->ud = ud;
    w->queued_ms = dc_now_ms();
    w->h = host_get(p, host, 1, w->queued_ms);
    w->later = later != 0;
    w->h->queued_later += (size_t)w->later;
    if (w->h->queued++ == 0)
        p->hosts_waiting++;
    w->gap_ms = gap_ms;
    *p->tail = w;
    p->tail = &w->next;
    p->nwaiting++;
}

/* When w may start as far as its host goes (its gap since the host's last
 * end, the host's back-off); INT64_MAX while the host's connections are
 * all in use (a transfer's end wakes the node). */
static int64_t not_before(const struct polite *p, const struct polite_wait *w)
{
    const struct polite_host *h = w->h;
    int64_t t = h->last_end ? h->last_end + w->gap_ms : 0;
    if (h->active >= p->host_limit)
        return INT64_MAX;
    return h->hold_until > t ? h->hold_until : t;
}

void polite_rewind(struct polite *p)
{
    p->cursor = &p->head;
    p->cursor_prev = NULL;
}

void *polite_next(struct polite *p, int64_t now, char *ipkey, size_t cap)
{
    struct polite_wait **wp, *prev;
    if (!p->cursor)
        polite_rewind(p);
    wp = p->cursor;
    prev = p->cursor_prev;
    for (; *wp; prev = *wp, wp = &(*wp)->next) {
        struct polite_wait *w = *wp;
        struct polite_ip *e;
        void *ud;
        if (not_before(p, w) > now)
            continue;
        if (w->later && w->h->queued > w->h->queued_later)
            continue; /* one of the host's others is in this round */
        address_of(p, w->h->host, ipkey, cap);
        e = ipkey[0] ? ip_get(p, ipkey, 1) : NULL;
        if (e && e->active >= p->ip_limit)
            continue;
        if (e)
            e->active++;
        w->h->active++;
        w->h->queued_later -= (size_t)w->later;
        if (--w->h->queued == 0)
            p->hosts_waiting--;
        if (now > w->queued_ms) {
            p->waits++;
            p->wait_ms += (uint64_t)(now - w->queued_ms);
        }
        *wp = w->next;
        if (p->tail == &w->next)
            p->tail = prev ? &prev->next : &p->head;
        ud = w->ud;
        free(w);
        p->nwaiting--;
        p->cursor = wp; /* now the item after the one taken */
        p->cursor_prev = prev;
        return ud;
    }
    p->cursor = wp;
    p->cursor_prev = prev;
    ipkey[0] = '\0';
    return NULL;
}

int64_t polite_wait_ms(struct polite *p, int64_t now)
{
    int64_t best = INT64_MAX;
    for (struct polite_wait *w = p->head; w; w = w->next) {
        char ip[POLITE_IP_MAX];
        struct polite_ip *e;
        int64_t t = not_before(p, w);
        if (t <= now) { /* ready: blocked only by its address */
            address_of(p, w->h->host, ip, sizeof(ip));
            e = ip[0] ? ip_get(p, ip, 0) : NULL;
            if (!e || e->active < p->ip_limit)
                return 0;
        } else if (t != INT64_MAX && t - now < best) {
            best = t - now;
        }
    }
    return best;
}

/* The slots taken by polite_next, given back without a transfer. */
void polite_release(struct polite *p, const char *host, const char *ipkey)
{
    struct polite_host *h = host_get(p, host, 0, 0);
    if (ipkey && ipkey[0])
        ip_put(p, ipkey);
    if (h && h->active > 0)
        h->active--;
}

void polite_ended(struct polite *p, const char *host, const char *ipkey,
                  const char *ip, int64_t now)
{
    struct polite_host *h = host_get(p, host, 1, now);
    if (ipkey && ipkey[0])
        ip_put(p, ipkey);
    if (h->active > 0)
        h->active--;
    h->last_end = now;
    if (ip && ip[0] && strlen(ip) < sizeof(h->ip))
        snprintf(h->ip, sizeof(h->ip), "%s", ip);
}

/* The back-off after failure number k (1, 2, ...) in a row: 1 s, doubling
 * each time (the shift capped at 2^20 s), at most politeness.max_backoff.
 * Used for a host's failures (h->fails, capped at 64 so it cannot wrap)
 * and for one URL's attempts alike. */
static int64_t backoff(const struct polite *p, unsigned k)
{
    unsigned shift = k < 1 ? 0 : k - 1 > 20 ? 20 : k - 1;
    int64_t ms = 1000LL << shift;
    return ms > p->max_backoff_ms ? p->max_backoff_ms : ms;
}

static void hold(struct polite_host *h, int64_t until)
{
    if (until > h->hold_until)
        h->hold_until = until;
}

int64_t polite_failure(struct polite *p, const char *host, int64_t now,
                       int page_only)
{
    struct polite_host *h = host_get(p, host, 1, now);
    int64_t ms;
    if (h->fails < 64)
        h->fails++;
    if (page_only && h->fails < 2)
        return 0; /* one page's error between successes: no hold */
    ms = backoff(p, h->fails);
    hold(h, now + ms);
    return ms;
}

int64_t polite_url_backoff(const struct polite *p, unsigned attempt)
{
    return backoff(p, attempt);
}

void polite_hold(struct polite *p, const char *host, int64_t until)
{
    hold(host_get(p, host, 1, dc_now_ms()), until);
}

/* A success resets the host's failure count and back-off (no entry is
 * created). */
void polite_success(struct polite *p, const char *host)
{
    struct polite_host *h = host_get(p, host, 0, 0);
    if (h) {
        h->fails = 0;
        h->hold_until = 0;
    }
}

size_t polite_waiting(const struct polite *p)
{
    return p->nwaiting;
}

size_t polite_host_load(struct polite *p, const char *host)
{
    const struct polite_host *h = host_get(p, host, 0, 0);
    return h ? (size_t)h->active + h->queued : 0;
}

void polite_counts(const struct polite *p, struct polite_counts *out)
{
    out->hosts_waiting = p->hosts_waiting;
    out->waits = p->waits;
    out->wait_ms = p->wait_ms;
}

void *polite_take(struct polite *p)
{
    struct polite_wait *w = p->head;
    void *ud;
    p->cursor = NULL;
    if (!w)
        return NULL;
    p->head = w->next;
    if (!p->head)
        p->tail = &p->head;
    w->h->queued_later -= (size_t)w->later;
    if (--w->h->queued == 0)
        p->hosts_waiting--;
    ud = w->ud;
    free(w);
    p->nwaiting--;
    return ud;
}
