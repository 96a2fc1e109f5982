/*
 * noise-store.c: the noise filter's repetition state per host kept in
 * Redis, so that the node a host moves to knows which links recur on the
 * host's pages instead of learning it again (noise.h, noise_state_*).
 *
 * One HASH per partition, <prefix>:{p}:noise, host -> blob (at most
 * NOISE_STATE_MAX_BYTES; the frontier treats it as opaque bytes), read and
 * written through host-blob.c: one pipelined round trip for a batch of
 * hosts.
 *
 * Thread rules: as struct frontier.
 */
#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

int frontier_noise_get(struct frontier *f, const char *const *hosts, size_t n,
                       void (*found)(void *ud, size_t i, const void *blob,
                                     size_t len),
                       void *ud)
{
    return frontier__host_blob_get(f, "noise", hosts, n, found, ud);
}

int frontier_noise_put(struct frontier *f, const char *const *hosts,
                       const unsigned char *const *blobs, const size_t *lens,
                       size_t n)
{
    return frontier__host_blob_put(f, "noise", hosts,
                                   (const char *const *)blobs, lens, n);
}
