/*
 * fetch-cache.c: how long libcurl keeps a host's resolved addresses and an
 * idle connection to it, for a node that meets new hosts fast.
 *
 * libcurl 7.88 walks its whole address cache on every transfer (to prune
 * it) and looks names up in a hash of few chains, so the cache's size is a
 * cost per transfer: with its default minute of hosts in it, or even 10 s,
 * a node meeting a thousand new hosts a second spent most of its CPU
 * there and stalled its loop for seconds (partition leases lapsed).
 *
 * libcurl 7.88 also keeps a table of the hosts it has connections to,
 * walked whole each time a host's last connection closes; a connection it
 * closes because CURLMOPT_MAXCONNECTS (2 x fetch.concurrency + 16) is
 * reached leaves its host in that table for good (one closed for its age
 * does not), so the table grew by every host the node had kept an idle
 * connection to, and each close got slower.
 *
 * So both times shrink as transfers start faster (last second's rate):
 *   addresses   FETCH_DNS_CACHE_S, or the time FETCH_DNS_CACHE_ENTRIES
 *               transfers take to start if shorter: the cache stays near
 *               that many entries. 10 s covers a host's robots.txt and
 *               the pages that follow at politeness.delay; a shorter time
 *               only means a name looked up again.
 *   idle conns  FETCH_CONN_IDLE_S (libcurl's default), or the time half of
 *               MAXCONNECTS (fetch.concurrency + 8) transfers take to
 *               start: idle connections close for their age before the cap.
 * Never under 1 s (libcurl counts whole seconds).
 */
#include <stdint.h>

#include "node-internal.h"

static long clamp_s(long s, long hi)
{
    return s < 1 ? 1 : s > hi ? hi : s;
}

void fetch_cache_times(struct fetch_cache_times *t, int64_t now_ms,
                       int concurrency)
{
    int64_t span = now_ms - t->since_ms;

    if (t->dns_s == 0 || span < 0 || span >= 1000) {
        long per_s = span > 0 && span < 2000 ? (long)(t->n * 1000 / span) : 0;
        long conns = (long)concurrency + 8;

        t->dns_s = clamp_s(per_s > 0 ? FETCH_DNS_CACHE_ENTRIES / per_s
                                     : FETCH_DNS_CACHE_S, FETCH_DNS_CACHE_S);
        t->idle_s = clamp_s(per_s > 0 ? conns / per_s : FETCH_CONN_IDLE_S,
                            FETCH_CONN_IDLE_S);
        t->since_ms = now_ms;
        t->n = 0;
    }
    t->n++;
}
