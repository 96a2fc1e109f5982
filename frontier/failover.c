/*
 * failover.c: finding the master through Redis Sentinel, and what a change
 * of server (epoch, redis.c) resets in a frontier handle.
 *
 * redis-sentinel://[user][:password]@host:port[,host:port...]/name[/db]:
 * at every connect (the first one and after any lost connection) the
 * sentinels are asked in turn `SENTINEL get-master-addr-by-name name`;
 * the first answer is connected to (credentials and db as for redis://),
 * and accepted only when `ROLE` says master: during a failover a sentinel
 * may still name the old master, or a replica not yet promoted, and a
 * write sent there would be refused or lost. A refused connect is one
 * DC_EREDIS; frontier__run's retries (redis.retry) keep asking until a
 * promoted replica answers. Sentinels are asked without credentials.
 *
 * What can be lost in a failover, and why no URL is: see README.md
 * "Redis failover"; the node side is crawler/node-failover.c.
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* Connect and command timeout of a sentinel (ms). */
#define FRONTIER_SENTINEL_MS 1000

/* The address sentinel i gives for the master (into a->host, a->port). */
static int ask_sentinel(struct frontier *f, const struct frontier_sentinels *sl,
                        int i, struct frontier_redis_addr *a)
{
    redisContext *c = redisConnectWithTimeout(sl->host[i], sl->port[i],
                                              frontier__tv(FRONTIER_SENTINEL_MS));
    redisReply *r = NULL;
    int rc = DC_EREDIS;

    if (!c || c->err) {
        frontier__seterr(f, DC_EREDIS, "cannot connect to sentinel %s:%d: %s",
                         sl->host[i], sl->port[i],
                         c ? c->errstr : "out of memory");
        goto out;
    }
    redisSetTimeout(c, frontier__tv(FRONTIER_SENTINEL_MS));
    r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", sl->name);
    if (!r)
        frontier__seterr(f, DC_EREDIS, "sentinel %s:%d: %s", sl->host[i],
                         sl->port[i], c->errstr);
    else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
             r->element[0]->type != REDIS_REPLY_STRING ||
             r->element[1]->type != REDIS_REPLY_STRING ||
             r->element[0]->len >= sizeof(a->host))
        frontier__seterr(f, DC_EREDIS, "sentinel %s:%d does not know a "
                         "master called %s%s%s", sl->host[i], sl->port[i],
                         sl->name, r->type == REDIS_REPLY_ERROR ? ": " : "",
                         r->type == REDIS_REPLY_ERROR ? r->str : "");
    else {
        a->port = atoi(r->element[1]->str);
        snprintf(a->host, sizeof(a->host), "%s", r->element[0]->str);
        rc = a->port > 0 && a->port <= 65535 ? DC_OK
             : frontier__seterr(f, DC_EREDIS, "sentinel %s:%d: bad port %s",
                                sl->host[i], sl->port[i], r->element[1]->str);
    }
out:
    if (r)
        freeReplyObject(r);
    if (c)
        redisFree(c);
    return rc;
}

/* f->rc must be a master: ROLE's first element. */
static int check_master(struct frontier *f, const char *name)
{
    redisReply *r = redisCommand(f->rc, "ROLE");
    int rc = DC_OK;

    if (!r)
        return frontier__seterr(f, DC_EREDIS, "redis %s: ROLE: %s", name,
                                f->rc->errstr);
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[0]->str, "master") != 0)
        rc = frontier__seterr(f, DC_EREDIS, "redis %s (named by the "
                              "sentinels) is a %s, not a master", name,
                              r->element[0]->str);
    freeReplyObject(r);
    return rc;
}

int frontier__sentinel_connect(struct frontier *f)
{
    struct frontier_sentinels *sl = xcalloc(1, sizeof(*sl));
    int rc = DC_EREDIS;

    if (frontier__sentinel_parse(sl, f->url)) {
        char shown[512];
        frontier_url_redact(f->url, shown, sizeof(shown));
        rc = frontier__seterr(f, DC_EINVAL, "malformed redis URL: %s (want "
                              "redis-sentinel://[user[:password]@]host:port"
                              "[,host:port...]/name[/db])", shown);
        goto out;
    }
    for (int i = 0; i < sl->n; i++) {
        char name[300];
        if (ask_sentinel(f, sl, i, &sl->master))
            continue;
        frontier__addr_name(&sl->master, name, sizeof(name));
        rc = frontier__connect_addr(f, &sl->master, name);
        if (!rc)
            rc = check_master(f, name);
        if (!rc || rc == DC_EAUTH || rc == DC_EINVAL)
            break;
        frontier__disconnect(f);
    }
out:
    memset(sl, 0, sizeof(*sl)); /* it holds the password */
    free(sl);
    return rc;
}

/* ---- epochs ---- */

uint64_t frontier_epoch(const struct frontier *f)
{
    return f->epoch;
}

const char *frontier_server(const struct frontier *f)
{
    return f->server_name;
}

void frontier_epoch_guard(struct frontier *f, int on, uint64_t epoch)
{
    f->guarded = on;
    f->guard_epoch = epoch;
}

void frontier_failover_reset(struct frontier *f)
{
    frontier__cluster_lapse(f);
    if (f->used)
        memset(f->used, 0, ((size_t)f->nparts + 7) / 8);
    f->used_dirty = 1; /* read <prefix>:used again at the next tick */
    f->ix.scanned = 0;    /* the next pop rescans every partition */
    f->alt.scanned = 0;
}

int frontier_replicated(struct frontier *f, int timeout_ms, int *replicas,
                        int *acked)
{
    redisReply *r = NULL;
    const char *p;
    char n[16], ms[16];
    int rc;

    *replicas = -1;
    *acked = 0;
    if (f->rt) /* a Redis Cluster: its shards replicate on their own */
        return DC_OK;
    rc = frontier__command(f, &r, "INFO", "replication", (char *)NULL);
    if (rc)
        return rc;
    p = r->type == REDIS_REPLY_STRING ? strstr(r->str, "connected_slaves:") : NULL;
    *replicas = p ? atoi(p + 17) : 0;
    frontier__replies_free(&r, 1);
    if (*replicas <= 0)
        return DC_OK;
    snprintf(n, sizeof(n), "%d", *replicas);
    snprintf(ms, sizeof(ms), "%d", timeout_ms);
    rc = frontier__command(f, &r, "WAIT", n, ms, (char *)NULL);
    if (rc)
        return rc;
    if (r->type == REDIS_REPLY_INTEGER)
        *acked = (int)r->integer;
    frontier__replies_free(&r, 1);
    return DC_OK;
}
