/*
 * host-blob.c: per-host values in a HASH of the host's partition,
 * <prefix>:{p}:<name>, host -> bytes. The robots.txt store
 * (robots-store.c, name "robots") and the noise filter's state
 * (noise-store.c, name "noise") keep their values this way, so the node a
 * host moves to finds what the previous owner stored. Reads and writes of
 * a batch of hosts are one pipelined round trip, one HGET or HSET per
 * host, routed by the partition's hash tag on a cluster.
 *
 * Thread rules: as struct frontier.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* Start call c: cmd <prefix>:{p}:<name> host, p being host's partition. */
static void blob_call(struct frontier *f, struct frontier_call *c,
                      const char *cmd, const char *name, const char *host)
{
    int p = frontier_partition(f, host, strlen(host));

    frontier__call_init(c, -1);
    frontier__strv_pushs(&c->args, cmd);
    frontier__strv_pushf(&c->args, "%s:{%d}:%s", f->prefix, p, name);
    frontier__strv_pushs(&c->args, host);
}

/* Build one call per host (HSET with vals[i], else HGET), run them in one
 * pipeline; *rep (caller frees) has one reply per host unless it fails. */
static int blob_run(struct frontier *f, const char *name,
                    const char *const *hosts, const char *const *vals,
                    const size_t *lens, size_t n, redisReply ***rep)
{
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    int rc;

    *rep = xcalloc(n, sizeof(**rep));
    for (size_t i = 0; i < n; i++) {
        blob_call(f, &calls[i], vals ? "HSET" : "HGET", name, hosts[i]);
        if (vals)
            frontier__strv_push(&calls[i].args, vals[i], lens[i]);
    }
    rc = frontier__run(f, calls, n, *rep); /* error replies: DC_EREDIS */
    frontier__calls_free(calls, n);
    return rc;
}

int frontier__host_blob_get(struct frontier *f, const char *name,
                            const char *const *hosts, size_t n,
                            frontier__blob_fn found, void *ud)
{
    redisReply **rep;
    int rc;

    if (n == 0)
        return DC_OK;
    rc = blob_run(f, name, hosts, NULL, NULL, n, &rep);
    for (size_t i = 0; !rc && i < n; i++)
        if (rep[i]->type == REDIS_REPLY_STRING)
            found(ud, i, rep[i]->str, rep[i]->len);
    if (!rc)
        frontier__replies_free(rep, n);
    free(rep);
    return rc;
}

int frontier__host_blob_put(struct frontier *f, const char *name,
                            const char *const *hosts, const char *const *vals,
                            const size_t *lens, size_t n)
{
    redisReply **rep;
    int rc;

    if (n == 0)
        return DC_OK;
    rc = blob_run(f, name, hosts, vals, lens, n, &rep);
    if (!rc)
        frontier__replies_free(rep, n);
    free(rep);
    return rc;
}
