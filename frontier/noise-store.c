/*
 * noise-store.c: the noise filter's repetition state per host kept in
 * Redis, so that the node a host moves to knows which links recur on the
 * host's pages instead of learning it again (noise.h, noise_state_*).
 *
 * One HASH per partition, <prefix>:{p}:noise, host -> blob (at most
 * NOISE_STATE_MAX_BYTES; the frontier treats it as opaque bytes). Reads
 * and writes are one pipelined round trip for a batch of hosts, one HGET
 * or HSET per host, routed by the partition's hash tag on a cluster.
 *
 * Thread rules: as struct frontier.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* Start call c: cmd <prefix>:{p}:noise host, p being host's partition. */
static void noise_call(struct frontier *f, struct frontier_call *c,
                       const char *cmd, const char *host)
{
    int p = frontier_partition(f, host, strlen(host));

    frontier__call_init(c, -1);
    frontier__strv_pushs(&c->args, cmd);
    frontier__strv_pushf(&c->args, "%s:{%d}:noise", f->prefix, p);
    frontier__strv_pushs(&c->args, host);
}

int frontier_noise_get(struct frontier *f, const char *const *hosts, size_t n,
                       void (*found)(void *ud, size_t i, const void *blob,
                                     size_t len),
                       void *ud)
{
    struct frontier_call *calls;
    redisReply **rep;
    int rc;

    if (n == 0)
        return DC_OK;
    calls = xcalloc(n, sizeof(*calls));
    rep = xcalloc(n, sizeof(*rep));
    for (size_t i = 0; i < n; i++)
        noise_call(f, &calls[i], "HGET", hosts[i]);
    rc = frontier__run(f, calls, n, rep);
    frontier__calls_free(calls, n);
    for (size_t i = 0; !rc && i < n; i++)
        if (rep[i]->type == REDIS_REPLY_STRING)
            found(ud, i, rep[i]->str, rep[i]->len);
    if (!rc)
        frontier__replies_free(rep, n);
    free(rep);
    return rc;
}

int frontier_noise_put(struct frontier *f, const char *const *hosts,
                       const unsigned char *const *blobs, const size_t *lens,
                       size_t n)
{
    struct frontier_call *calls;
    redisReply **rep;
    int rc;

    if (n == 0)
        return DC_OK;
    calls = xcalloc(n, sizeof(*calls));
    rep = xcalloc(n, sizeof(*rep));
    for (size_t i = 0; i < n; i++) {
        noise_call(f, &calls[i], "HSET", hosts[i]);
        frontier__strv_push(&calls[i].args, (const char *)blobs[i], lens[i]);
    }
    rc = frontier__run(f, calls, n, rep); /* error replies: DC_EREDIS */
    frontier__calls_free(calls, n);
    if (!rc)
        frontier__replies_free(rep, n);
    free(rep);
    return rc;
}
