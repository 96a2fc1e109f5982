/*
 * noise.h: decides which extracted links are navigation noise and never
 * enter the frontier.
 *
 * The design (noise issue): the DOM is cut into blocks; a block whose
 * link-text / text ratio is above 1/4 is navigation and its links are
 * dropped; the remaining URLs of a host are clustered by LCS similarity and
 * clusters resembling the dropped ones are dropped too.
 *
 * Today this module is a pass-through: noise_filter keeps every link and
 * only counts them. noise.enabled is accepted and has no effect yet.
 *
 * Thread rules: a struct noise is owned by one thread.
 */
#ifndef DC_NOISE_H
#define DC_NOISE_H

#include <stddef.h>

struct noise;

struct noise_stats {
    size_t seen, dropped_block, dropped_cluster, refused_budget;
};

struct noise *noise_new(int enabled);
/* Mark which of n links to keep (keep[i] = 1) for a page of `host`. */
void noise_filter(struct noise *nz, const char *host, size_t n,
                  unsigned char *keep, struct noise_stats *st);
void noise_free(struct noise **nz);

#endif
