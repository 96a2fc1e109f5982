/*
 * partkey.c: which partition a host belongs to (cluster.partition_by).
 *
 *   host    the host key itself, "host[:port]": each host moves alone;
 *   domain  the host's registrable domain (libpsl's built-in list), so
 *           a.example.com and b.example.com share a partition and so a
 *           node; an IP literal, or a host that is a public suffix, is
 *           its own domain;
 *   ip      the host's first address from getaddrinfo (IPv4 first), so hosts on one
 *           server share a node and per-IP politeness stays local. The
 *           answer is cached per handle (FRONTIER_IP_CACHE hosts, then
 *           the cache starts over); a host that does not resolve is its
 *           own key.
 *
 * Lookups never hold the caller (a node's loop, whose heartbeat waits
 * behind it) for long: each runs on a detached thread of its own and the
 * caller waits for it only from a budget that refills at
 * FRONTIER_RESOLVE_SHARE of the time passing, up to FRONTIER_RESOLVE_WAIT_MS
 * (a tenth of the default cluster.node_timeout). A lookup not answered
 * within that (a stalled DNS server) makes the host its own key, cached
 * like an answer, so this handle keeps one key per host; the late answer
 * is dropped. At most FRONTIER_RESOLVE_THREADS lookups run at once in the
 * process; past that a host is its own key at once.
 *
 * The partition is the first 64 bits of MurmurHash3 x64 of the key, mod P.
 * The mode is recorded in <prefix>:meta partition_by by the first client;
 * later clients adopt it (frontier.c), so every node agrees.
 *
 * Thread rules: as struct frontier.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libpsl.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "ring.h"

#define FRONTIER_IP_CACHE 65536
#define FRONTIER_RESOLVE_WAIT_MS 500
#define FRONTIER_RESOLVE_SHARE 0.1
#define FRONTIER_RESOLVE_THREADS 32

struct frontier_ipcache {
    size_t n;
    char **host;          /* open addressing, FRONTIER_IP_CACHE * 2 slots */
    char **addr;
    double budget_ms;     /* how long the next lookup may be waited for */
    int64_t budget_us;    /* when the budget was last refilled */
};

/* One lookup, shared by its thread and the caller that waits for it;
 * freed by whichever lets go last. */
struct lookup {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, refs;
    char name[256];
    char addr[INET6_ADDRSTRLEN]; /* "" when the name did not resolve */
};

static atomic_int lookups_running;

int frontier__partkey_mode(const char *name)
{
    if (!strcmp(name, "host"))
        return FRONTIER_PART_HOST;
    if (!strcmp(name, "domain"))
        return FRONTIER_PART_DOMAIN;
    if (!strcmp(name, "ip"))
        return FRONTIER_PART_IP;
    return -1;
}

/* The host name of a host key: brackets and port removed. */
static size_t bare_host(const char *key, size_t len, char *out, size_t cap)
{
    const char *end = key + len;

    if (len && key[0] == '[') {
        const char *rb = memchr(key, ']', len);
        key++;
        end = rb ? rb : end;
    } else {
        const char *colon = memchr(key, ':', len);
        if (colon)
            end = colon;
    }
    len = (size_t)(end - key);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, key, len);
    out[len] = '\0';
    return len;
}

static int is_ip(const char *h)
{
    unsigned char buf[16];

    return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

static void ipcache_clear(struct frontier_ipcache *c)
{
    for (size_t i = 0; i < 2 * FRONTIER_IP_CACHE; i++) {
        free(c->host[i]);
        free(c->addr[i]);
        c->host[i] = c->addr[i] = NULL;
    }
    c->n = 0;
}

void frontier__ipcache_free(struct frontier *f)
{
    struct frontier_ipcache *c = f->ipcache;

    if (!c)
        return;
    ipcache_clear(c);
    free(c->host);
    free(c->addr);
    free(c);
    f->ipcache = NULL;
}

/* The first address of h, IPv4 first (resolver order of v4/v6 varies),
 * as text into buf; "" when h does not resolve. Blocks. */
static void first_address(const char *h, char *buf, size_t cap)
{
    struct addrinfo hints, *res = NULL;

    buf[0] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(h, NULL, &hints, &res) == 0 && res) {
        const struct addrinfo *ai = res;
        for (const struct addrinfo *x = res; x; x = x->ai_next)
            if (x->ai_family == AF_INET) {
                ai = x;
                break;
            }
        const void *a = ai->ai_family == AF_INET6
            ? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
            : (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
        if (!inet_ntop(ai->ai_family, a, buf, (socklen_t)cap))
            buf[0] = '\0';
    }
    if (res)
        freeaddrinfo(res);
}

static void lookup_unref(struct lookup *l)
{
    int last;

    pthread_mutex_lock(&l->mu);
    last = --l->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (!last)
        return;
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

static void *lookup_main(void *arg)
{
    struct lookup *l = arg;
    char buf[INET6_ADDRSTRLEN];

    first_address(l->name, buf, sizeof(buf));
    pthread_mutex_lock(&l->mu);
    memcpy(l->addr, buf, sizeof(buf));
    l->done = 1;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    lookup_unref(l);
    atomic_fetch_sub(&lookups_running, 1);
    return NULL;
}

/* A lookup of h on its own thread, or NULL (too many running, no thread). */
static struct lookup *lookup_start(const char *h)
{
    pthread_condattr_t ca;
    pthread_attr_t ta;
    pthread_t t;
    struct lookup *l;
    int rc;

    if (strlen(h) >= sizeof(l->name) ||
        atomic_fetch_add(&lookups_running, 1) >= FRONTIER_RESOLVE_THREADS) {
        atomic_fetch_sub(&lookups_running, 1);
        return NULL;
    }
    l = xcalloc(1, sizeof(*l));
    strcpy(l->name, h);
    l->refs = 2;
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &ta, lookup_main, l);
    pthread_attr_destroy(&ta);
    if (rc) {
        atomic_fetch_sub(&lookups_running, 1);
        l->refs = 1;
        lookup_unref(l);
        return NULL;
    }
    return l;
}

/* The address of h into buf ("" when it does not resolve or was not
 * answered within the wait budget of c). */
static void resolve_bounded(struct frontier_ipcache *c, const char *h,
                            char *buf, size_t cap)
{
    int64_t now = dc_mono_us(), end;
    struct timespec ts;
    struct lookup *l;

    c->budget_ms += (double)(now - c->budget_us) / 1000.0 * FRONTIER_RESOLVE_SHARE;
    if (c->budget_ms > FRONTIER_RESOLVE_WAIT_MS)
        c->budget_ms = FRONTIER_RESOLVE_WAIT_MS;
    c->budget_us = now;
    buf[0] = '\0';
    if (c->budget_ms < 1 || !(l = lookup_start(h)))
        return;
    end = now + (int64_t)(c->budget_ms * 1000.0);
    ts.tv_sec = (time_t)(end / 1000000);
    ts.tv_nsec = (long)(end % 1000000) * 1000L;
    pthread_mutex_lock(&l->mu);
    while (!l->done && pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT)
        ;
    if (l->done)
        snprintf(buf, cap, "%s", l->addr);
    pthread_mutex_unlock(&l->mu);
    lookup_unref(l);
    now = dc_mono_us();
    c->budget_ms -= (double)(now - c->budget_us) / 1000.0;
    c->budget_us = now;
}

/* The cached or resolved address of host h (NUL-terminated). */
static const char *resolve(struct frontier *f, const char *h)
{
    struct frontier_ipcache *c = f->ipcache;
    char buf[INET6_ADDRSTRLEN];
    size_t mask = 2 * FRONTIER_IP_CACHE - 1, i;

    if (!c) {
        c = f->ipcache = xcalloc(1, sizeof(*c));
        c->host = xcalloc(2 * FRONTIER_IP_CACHE, sizeof(*c->host));
        c->addr = xcalloc(2 * FRONTIER_IP_CACHE, sizeof(*c->addr));
        c->budget_ms = FRONTIER_RESOLVE_WAIT_MS;
        c->budget_us = dc_mono_us();
    }
    i = (size_t)ring_hash(h, strlen(h)) & mask;
    for (; c->host[i]; i = (i + 1) & mask)
        if (!strcmp(c->host[i], h))
            return c->addr[i];
    resolve_bounded(c, h, buf, sizeof(buf));
    if (c->n >= FRONTIER_IP_CACHE) {
        ipcache_clear(c);
        i = (size_t)ring_hash(h, strlen(h)) & mask;
    }
    c->host[i] = xstrdup(h);
    c->addr[i] = xstrdup(buf[0] ? buf : h);
    c->n++;
    return c->addr[i];
}

int frontier_partition(struct frontier *f, const char *host, size_t hostlen)
{
    uint64_t h[2];
    char name[512];
    const char *key = host;
    size_t len = hostlen;

    if (f->part_by != FRONTIER_PART_HOST) {
        bare_host(host, hostlen, name, sizeof(name));
        key = name;
        if (f->part_by == FRONTIER_PART_DOMAIN && !is_ip(name)) {
            const char *d = psl_registrable_domain(psl_builtin(), name);
            if (d)
                key = d;
        } else if (f->part_by == FRONTIER_PART_IP && !is_ip(name)) {
            key = resolve(f, name);
        }
        len = strlen(key);
    }
    dedup_murmur3_x64_128(key, len, 0, h);
    return (int)(h[0] % (uint64_t)f->nparts);
}
