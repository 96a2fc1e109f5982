/*
 * t-frontier.h: what the frontier's unit tests share (u-frontier,
 * u-rcluster, u-status, u-cluster, u-frontmod): a frontier_url filled from
 * a string, and lease deadlines moved into the past.
 */
#ifndef DC_T_FRONTIER_H
#define DC_T_FRONTIER_H

#include <string.h>

#include <hiredis/hiredis.h>

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

/* Lease deadlines are Redis's clock (TIME in pop.lua): time passing is
 * simulated by moving every lease entry of the keys matching pattern
 * ("dc:*:lease") into the past. */
static inline void t_leases_expire(redisContext *raw, const char *pattern)
{
    redisReply *k = redisCommand(raw, "KEYS %s", pattern);

    for (size_t i = 0; k && k->type == REDIS_REPLY_ARRAY && i < k->elements;
         i++) {
        redisReply *m = redisCommand(raw, "ZRANGE %s 0 -1", k->element[i]->str);
        for (size_t j = 0; m && m->type == REDIS_REPLY_ARRAY && j < m->elements;
             j++) {
            redisReply *r = redisCommand(raw, "ZADD %s 1 %b",
                                         k->element[i]->str,
                                         m->element[j]->str,
                                         (size_t)m->element[j]->len);
            if (r)
                freeReplyObject(r);
        }
        if (m)
            freeReplyObject(m);
    }
    if (k)
        freeReplyObject(k);
}

#endif
