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
 *           own key. The lookup blocks the caller once per host.
 *
 * The partition is the first 64 bits of MurmurHash3 x64 of the key, mod P.
 * The mode is recorded in <prefix>:meta partition_by by the first client;
 * later clients adopt it (frontier.c), so every node agrees.
 *
 * Thread rules: as struct frontier.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libpsl.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "ring.h"

#define FRONTIER_IP_CACHE 65536

struct frontier_ipcache {
    size_t n;
    char **host;          /* open addressing, FRONTIER_IP_CACHE * 2 slots */
    char **addr;
};

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

/* The cached or resolved address of host h (NUL-terminated). */
static const char *resolve(struct frontier *f, const char *h)
{
    struct frontier_ipcache *c = f->ipcache;
    struct addrinfo hints, *res = NULL;
    char buf[INET6_ADDRSTRLEN] = "";
    size_t mask = 2 * FRONTIER_IP_CACHE - 1, i;

    if (!c) {
        c = f->ipcache = xcalloc(1, sizeof(*c));
        c->host = xcalloc(2 * FRONTIER_IP_CACHE, sizeof(*c->host));
        c->addr = xcalloc(2 * FRONTIER_IP_CACHE, sizeof(*c->addr));
    }
    i = (size_t)ring_hash(h, strlen(h)) & mask;
    for (; c->host[i]; i = (i + 1) & mask)
        if (!strcmp(c->host[i], h))
            return c->addr[i];
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(h, NULL, &hints, &res) == 0 && res) {
        const struct addrinfo *ai = res; /* the first IPv4 address, if any:
                                          * resolver order of v4/v6 varies */
        for (const struct addrinfo *x = res; x; x = x->ai_next)
            if (x->ai_family == AF_INET) {
                ai = x;
                break;
            }
        const void *a = ai->ai_family == AF_INET6
            ? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
            : (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
        if (!inet_ntop(ai->ai_family, a, buf, sizeof(buf)))
            buf[0] = '\0';
    }
    if (res)
        freeaddrinfo(res);
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
