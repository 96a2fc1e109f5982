/*
 * t-frontier.h: what the frontier's unit tests share (u-frontier,
 * u-rcluster, u-status, u-cluster): a frontier_url filled from a string.
 */
#ifndef DC_T_FRONTIER_H
#define DC_T_FRONTIER_H

#include <string.h>

#include "dedup.h"
#include "frontier.h"

/* Fill u from a URL string "http://host/path" (u points into url). */
static inline void t_mkurl(struct frontier_url *u, const char *url, int depth)
{
    const char *h = strstr(url, "://") + 3;

    u->url = url;
    u->len = strlen(url);
    u->host = h;
    u->hostlen = strcspn(h, "/");
    u->fp = dedup_fingerprint(url, u->len);
    u->depth = depth;
}

#endif
