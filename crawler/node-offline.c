/*
 * node-offline.c: a node cut off from the web (its uplink, its resolver,
 * its route gone) is told apart from hosts that are dead, so that a cut
 * spends no retry, writes no failure and marks no host dead, while a dead
 * host on a web that answers is still skipped at once (robots-cache.c).
 *
 * Evidence is an answer: any HTTP response, of any status, or a
 * connection refused (the host's RST came back). A failure of the way
 * (no route, a timeout, a reset, a name lookup that hung; see
 * transport_failure) of a page or robots.txt fetch is judged at once, as
 * usual, when an answer came since its transfer started (net.last_ok_ms:
 * when the last one came). A refused connection and a name that does not
 * exist are never held: a dead host is skipped at once, as before.
 * Otherwise the failure is held, at most NODE_OFFLINE_VERDICT_MS:
 *
 *   - an answer comes: the node can reach the web, the failure is judged
 *     as usual (retried, or given up; a dead host's robots.txt marks it
 *     dead) - on a live web, within about one round trip of another host;
 *   - none comes and the held failures span one host: once no other
 *     transfer runs, or after the other transfers' own time limits
 *     (fetch.low_speed_time + fetch.connect_timeout) have passed without
 *     an answer or a failure of theirs, a control probe asks another
 *     host, one of the last two origins that answered (GET
 *     <origin>/robots.txt, outside politeness: one small request): its
 *     answer means the web is there and the failures are judged as usual;
 *     its failure means the node is cut off (below). With no such origin
 *     (a crawl of one host that died) they are judged as usual, two
 *     seconds later. Without the probe a node cut off while it fetched
 *     one host could not tell that from the host dying, and gave its
 *     URLs up;
 *   - none comes and they span two or more hosts: the node counts itself
 *     cut off. The held failures, and every failure while cut off, go
 *     back to their queues uncounted (node__fetch_requeue: the URL is
 *     completed FRONTIER_RETRY with its host's back-off and no retry
 *     counted; a robots.txt fetch is forgotten, its parked leases go
 *     back). No transfer starts but one probe (the next queued transfer)
 *     every NODE_OFFLINE_PROBE_MS; an answer of a transfer started while
 *     cut off ends it. In a cluster the node keeps renewing its partitions
 *     (its way to Redis is another matter, node-lapse.c), so its hosts
 *     wait for it rather than move.
 *
 * Bound: cut off for fetch.offline_wait seconds, the node stops waiting:
 * failures count as usual (gave_up) until the next answer, so a crawl
 * whose hosts all went away ends. fetch.offline_wait = 0 turns all of
 * this off. Sitemap fetches are not held (a failed one is skipped as
 * before).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "crawler.h"
#include "node-internal.h"
#include "parser.h"

/* A connection the host refused: its RST is an answer (the way is there). */
static int refused(const struct fetch_result *r)
{
    return r->status == 0 && r->curl_code == CURLE_COULDNT_CONNECT &&
           r->os_errno == ECONNREFUSED;
}

/* Evidence the way is there: any HTTP response, or a refused connection. */
static int is_answer(const struct fetch_result *r)
{
    return r->status > 0 || refused(r);
}

/* A failure of the way to the host, not an answer of the host: no route,
 * a timeout, a reset, and a name lookup that took NODE_OFFLINE_DNS_MS or
 * more (a resolver that does not answer; a name that does not exist is
 * answered at once, and counts as usual). */
static int transport_failure(const struct fetch_result *r, int64_t now)
{
    if (r->status != 0 || r->private_refused || r->flooded ||
        r->head_too_big || r->truncated || refused(r))
        return 0;
    switch (r->curl_code) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return now - r->started_ms >= NODE_OFFLINE_DNS_MS;
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PARTIAL_FILE:
        return 1;
    default:
        return 0;
    }
}

/* Every held failure: judged as usual (offline 0) or put back. */
static void judge(struct node *n, int offline)
{
    struct fetch_result **v = n->net.v;
    size_t k = n->net.n;
    n->net.v = NULL; /* taken whole: a judgement holds nothing new */
    n->net.n = n->net.cap = 0;
    for (size_t i = 0; i < k; i++) {
        if (offline)
            node__fetch_requeue(n, v[i]);
        else
            node__fetched(n, v[i]);
    }
    free(v);
}

/* The origin ("scheme://host[:port]", as robots-cache.c keeps it) of a
 * URL into out; 0 when it has none or does not fit. */
static int origin_of(const char *url, char *out, size_t cap)
{
    const char *host;
    size_t hostlen, len;
    if (!url || parser_url_host(url, &host, &hostlen) != DC_OK)
        return 0;
    len = (size_t)(host - url) + hostlen;
    if (len + 1 > cap)
        return 0;
    memcpy(out, url, len);
    out[len] = '\0';
    return 1;
}

/* The last two distinct origins that answered, newest first. */
static void remember_origin(struct node *n, const char *url)
{
    char o[NODE_ORIGIN_MAX];
    if (!origin_of(url, o, sizeof(o)) || !strcmp(o, n->net.ok_origin[0]))
        return;
    memcpy(n->net.ok_origin[1], n->net.ok_origin[0], sizeof(o));
    memcpy(n->net.ok_origin[0], o, sizeof(o));
}

/* r is an answer (a response, or a refused connection) that came now. */
static void answered(struct node *n, const struct fetch_result *r, int64_t now)
{
    n->net.last_ok_ms = now;
    remember_origin(n, r->url);
    n->net.gave_up = 0;
    if (n->net.offline_since && r->started_ms >= n->net.offline_since) {
        fprintf(stderr, "dcrawl node %s: hosts answer again after %.1f s "
                "cut off\n", n->id, (now - n->net.offline_since) / 1e3);
        n->net.offline_since = 0;
    }
    if (n->net.n)
        judge(n, 0);
}

int node__offline_hold(struct node *n, struct fetch_result *r)
{
    const struct inflight *in = r->ud;
    int64_t now = dc_now_ms();
    if (n->c->fetch_offline_wait <= 0 || in->kind == INFLIGHT_SITEMAP)
        return 0;
    if (is_answer(r)) {
        answered(n, r, now);
        return 0;
    }
    if (!transport_failure(r, now) || n->net.gave_up ||
        n->net.last_ok_ms >= r->started_ms) /* an answer since it started */
        return 0;
    if (n->net.offline_since) {
        node__fetch_requeue(n, r);
        return 1;
    }
    if (!n->net.n)
        n->net.held_since = now;
    xgrow((void **)&n->net.v, &n->net.cap, n->net.n + 1, sizeof(*n->net.v));
    n->net.v[n->net.n++] = r;
    return 1;
}

/* Start the control probe: robots.txt of an origin that answered, not
 * the held failures' own. 0 when there is none (or it cannot start). */
static int probe_start(struct node *n)
{
    char held[NODE_ORIGIN_MAX];
    const char *o = NULL;
    struct inflight *in;
    size_t len;
    if (!origin_of(n->net.v[0]->url, held, sizeof(held)))
        held[0] = '\0';
    for (int i = 0; i < 2 && !o; i++)
        if (n->net.ok_origin[i][0] && strcmp(n->net.ok_origin[i], held))
            o = n->net.ok_origin[i];
    if (!o)
        return 0;
    in = xcalloc(1, sizeof(*in));
    in->kind = INFLIGHT_PROBE;
    len = strlen(o) + sizeof("/robots.txt");
    in->url = xmalloc(len);
    snprintf(in->url, len, "%s/robots.txt", o);
    if (fetcher_add(n->fetch, in->url, DC_ROBOTS_MAX_BYTES, in) != DC_OK) {
        node__inflight_free(in);
        return 0;
    }
    n->net.probing = 1;
    n->st->offline_probes++;
    return 1;
}

/* Cut off: the held failures go back uncounted; probes from now on. */
static void cut_off(struct node *n, int64_t now, const char *why)
{
    fprintf(stderr, "dcrawl node %s: no host answered for %.1f s (%zu "
            "failures%s): cut off, pausing; failures go back uncounted\n",
            n->id, (now - n->net.held_since) / 1e3, n->net.n, why);
    n->net.offline_since = now;
    n->net.probe_at = now + NODE_OFFLINE_PROBE_MS;
    n->st->offline_times++;
    judge(n, 1);
}

int node__offline_probe_ended(struct node *n, struct fetch_result *r)
{
    struct inflight *in = r->ud;
    int64_t now = dc_now_ms();
    if (in->kind != INFLIGHT_PROBE)
        return 0;
    n->net.probing = 0;
    if (is_answer(r))
        answered(n, r, now); /* the web is there: judged as usual */
    else if (n->net.n && !n->net.offline_since)
        cut_off(n, now, ", and a host that answered before fails too");
    node__inflight_free(in);
    fetch_result_free(r);
    return 1;
}

/* The held failures span two hosts or more. */
static int held_hosts_many(const struct node *n)
{
    const char *h0 = n->net.n ? node__inflight_host(n->net.v[0]->ud) : NULL;
    for (size_t i = 1; i < n->net.n; i++)
        if (strcmp(node__inflight_host(n->net.v[i]->ud), h0) != 0)
            return 1;
    return 0;
}

/* How long failures of one host wait while other transfers run without
 * an answer: until those have either answered or failed themselves (a
 * stalled one ends after fetch.low_speed_time, a new one's connection
 * after fetch.connect_timeout). */
static int64_t single_wait_ms(const struct node *n)
{
    return (int64_t)((n->c->fetch_low_speed_time + n->c->fetch_connect_timeout) *
                     1000) + NODE_OFFLINE_VERDICT_MS;
}

void node__offline_tick(struct node *n, int64_t now)
{
    int64_t wait = (int64_t)(n->c->fetch_offline_wait * 1000);
    if (n->net.offline_since && now - n->net.offline_since >= wait) {
        fprintf(stderr, "dcrawl node %s: no host answered for %.1f s "
                "(fetch.offline_wait): failures count again\n", n->id,
                (now - n->net.offline_since) / 1e3);
        n->net.offline_since = 0;
        n->net.gave_up = 1;
    }
    if (!n->net.n || n->net.probing ||
        now - n->net.held_since < NODE_OFFLINE_VERDICT_MS)
        return; /* nothing held, the probe's answer awaited, too soon */
    if (n->net.gave_up) {
        judge(n, 0);
        return;
    }
    if (held_hosts_many(n)) {
        cut_off(n, now, " on several hosts");
        return;
    }
    if (fetcher_active(n->fetch) > 0 &&
        now - n->net.held_since < single_wait_ms(n))
        return; /* one host so far: wait for the transfers still running */
    if (!probe_start(n)) /* one host: ask another one */
        judge(n, 0);
}

size_t node__offline_cap(struct node *n, int64_t now, size_t cap)
{
    size_t active = fetcher_active(n->fetch);
    if (!n->net.offline_since)
        return cap;
    if (now < n->net.probe_at || active >= cap)
        return 0;
    n->net.probe_at = now + NODE_OFFLINE_PROBE_MS;
    return active + 1; /* one probe */
}

int64_t node__offline_wait_ms(const struct node *n, int64_t now)
{
    if (!n->net.offline_since || n->net.probe_at <= now)
        return 0;
    return n->net.probe_at - now;
}

void node__offline_release(struct node *n)
{
    for (size_t i = 0; i < n->net.n; i++)
        node__result_drop(n->net.v[i]);
    free(n->net.v);
    n->net.v = NULL;
    n->net.n = n->net.cap = 0;
}
