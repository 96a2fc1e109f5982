/*
 * node-store.c: per-host state the node shares through Redis with the
 * host's next owner (a partition handed over in a cluster, or a restart).
 * Neither is more than a cache: a failed read or write is counted and the
 * host relearned or refetched, never fatal.
 *
 *   robots.txt answers: the hosts of new leases whose robots.txt this node
 *   has not fetched take the answer a previous owner stored (one read per
 *   pop batch); node-fetch.c stores each answer worth keeping.
 *
 *   noise state: when the block rule uses the per-host repetition state
 *   (noise_state_used), the hosts of new leases that the noise filter
 *   holds nothing for get the state a previous owner saved in the
 *   partition's <prefix>:{p}:noise hash (one read per pop batch that has
 *   such hosts); the states that changed are saved before each cluster
 *   poll (the tick that may hand a partition over) and at stop.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"
#include "node-internal.h"
#include "noise.h"

struct restore_ctx {
    struct node *n;
    struct robots_entry **e;
    int64_t now;
};

static void restore_one(void *ud, size_t i, const struct frontier_robots *r)
{
    struct restore_ctx *x = ud;
    if (robots_entry_restore(x->e[i], r, x->n->agent, x->n->c, x->now))
        x->n->st->robots_restored++;
}

/* Hosts of the leases whose robots.txt this node has not fetched: take the
 * answer a previous owner stored in Redis, if any (one round trip). */
int node__robots_from_store(struct node *n, struct frontier_lease *l,
                            size_t nl, int64_t now)
{
    struct robots_entry **e = xcalloc(nl, sizeof(*e));
    const char **hosts = xcalloc(nl, sizeof(*hosts));
    struct restore_ctx ctx = { n, e, now };
    size_t k = 0;
    int rc;
    for (size_t i = 0; i < nl; i++) {
        struct robots_entry *x = robots_cache_get(n->robots, l[i].url);
        if (!x || x->state != ROBOTS_UNKNOWN || x->fails > 0)
            continue;
        x->state = ROBOTS_FETCHING; /* each host once; undone below */
        e[k] = x;
        hosts[k++] = x->host;
    }
    rc = frontier_robots_get(n->f, hosts, k, restore_one, &ctx);
    for (size_t i = 0; i < k; i++)
        if (e[i]->state == ROBOTS_FETCHING) /* not stored: fetch it */
            e[i]->state = ROBOTS_UNKNOWN;
    free(e);
    free(hosts);
    return rc;
}

struct noise_restore_ctx {
    struct node *n;
    const char **hosts;
};

static void noise_restore_one(void *ud, size_t i, const void *blob,
                              size_t len)
{
    struct noise_restore_ctx *x = ud;
    struct node *n = x->n;
    const char *host = x->hosts[i];
    if (noise_state_import(n->noise, host, strlen(host), blob, len) == DC_OK)
        n->st->noise_restored++;
    else
        n->st->noise_store_failed++; /* not ours to read: learn it again */
}

/* Hosts of the leases the noise filter holds no state for: take the
 * repetition state a previous owner stored in Redis, if any (one round
 * trip), before their first page is judged. A host is held from now on
 * whatever the answer; a failed read counts and leaves it empty. */
void node__noise_from_store(struct node *n, const struct frontier_lease *l,
                            size_t nl)
{
    struct noise_restore_ctx x = { n, xcalloc(nl, sizeof(*x.hosts)) };
    size_t k = 0;
    for (size_t i = 0; i < nl; i++) {
        const char *h = l[i].host;
        if (noise_state_has(n->noise, h, strlen(h)))
            continue;
        (void)noise_state_import(n->noise, h, strlen(h), NULL, 0);
        x.hosts[k++] = h;
    }
    if (k) {
        n->st->noise_roundtrips++;
        if (frontier_noise_get(n->f, x.hosts, k, noise_restore_one, &x))
            n->st->noise_store_failed += k;
    }
    free(x.hosts);
}

/* Save the repetition state of the hosts whose state changed (one
 * pipelined round trip). Only a cache for the hosts' next owner: a
 * failure costs that owner relearning, so it is counted, not fatal. */
void node__noise_flush(struct node *n)
{
    struct noise_state *s;
    size_t k = noise_state_take_dirty(n->noise, &s);
    const char **hosts;
    const unsigned char **blobs;
    size_t *lens;
    if (!k)
        return;
    n->st->noise_roundtrips++;
    hosts = xcalloc(k, sizeof(*hosts));
    blobs = xcalloc(k, sizeof(*blobs));
    lens = xcalloc(k, sizeof(*lens));
    for (size_t i = 0; i < k; i++) {
        hosts[i] = s[i].host;
        blobs[i] = s[i].blob;
        lens[i] = s[i].len;
    }
    if (frontier_noise_put(n->f, hosts, blobs, lens, k) == DC_OK)
        n->st->noise_saved += k;
    else
        n->st->noise_store_failed += k;
    free(hosts);
    free(blobs);
    free(lens);
    noise_state_free(s, k);
}
