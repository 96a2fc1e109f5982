/*
 * robots-store.c: robots.txt answers kept in Redis, so that the node a
 * host moves to continues with the rules the previous owner fetched
 * instead of fetching robots.txt again.
 *
 * One HASH per partition, <prefix>:{p}:robots, host -> value. The value
 * is a header line and the body as received (content-coded bytes, at most
 * what the fetcher kept):
 *
 *     "r1 <fetched_ms> <status> <flags>\n" <body>
 *
 * flags: bit 0 the body was truncated, bit 1 it is gzip/deflate coded.
 * The node decides what is worth storing (answers that settle the rules,
 * not 5xx or transport errors, which the new owner should retry) and when
 * a stored answer has expired (robots.expiry after fetched_ms).
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* Start call c: cmd <prefix>:{p}:robots host, p being host's partition. */
static void robots_call(struct frontier *f, struct frontier_call *c,
                        const char *cmd, const char *host)
{
    int p = frontier_partition(f, host, strlen(host));

    frontier__call_init(c, -1);
    frontier__strv_pushs(&c->args, cmd);
    frontier__strv_pushf(&c->args, "%s:{%d}:robots", f->prefix, p);
    frontier__strv_pushs(&c->args, host);
}

int frontier_robots_put(struct frontier *f, const struct frontier_robots *r)
{
    struct frontier_call c;
    redisReply *rep = NULL;
    char head[96];
    int hl = snprintf(head, sizeof(head), "r1 %lld %d %u\n",
                      (long long)r->fetched_ms, r->status, (unsigned)r->flags);
    size_t len = (size_t)hl + r->body_len;
    char *v = xmalloc(len);
    int rc;

    memcpy(v, head, (size_t)hl);
    if (r->body_len)
        memcpy(v + hl, r->body, r->body_len);
    robots_call(f, &c, "HSET", r->host);
    frontier__strv_push(&c.args, v, len);
    free(v);
    rc = frontier__run(f, &c, 1, &rep);
    frontier__replies_free(&rep, 1);
    frontier__call_release(&c);
    return rc;
}

/* Parse a stored value into r (body points into s). 0 or -1. */
static int parse_value(const char *s, size_t len, struct frontier_robots *r)
{
    const char *nl = memchr(s, '\n', len);
    long long ms;
    int status;
    unsigned flags;
    char head[96];

    if (!nl || (size_t)(nl - s) >= sizeof(head))
        return -1;
    memcpy(head, s, (size_t)(nl - s));
    head[nl - s] = '\0';
    if (sscanf(head, "r1 %lld %d %u", &ms, &status, &flags) != 3)
        return -1;
    r->fetched_ms = ms;
    r->status = status;
    r->flags = flags;
    r->body = nl + 1;
    r->body_len = len - (size_t)(nl + 1 - s);
    return 0;
}

int frontier_robots_get(struct frontier *f, const char *const *hosts,
                        size_t n, void (*found)(void *ud, size_t i,
                                                const struct frontier_robots *r),
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
        robots_call(f, &calls[i], "HGET", hosts[i]);
    rc = frontier__run(f, calls, n, rep);
    frontier__calls_free(calls, n);
    for (size_t i = 0; !rc && i < n; i++) {
        struct frontier_robots r;
        if (rep[i]->type != REDIS_REPLY_STRING ||
            parse_value(rep[i]->str, rep[i]->len, &r))
            continue; /* absent, or not ours to read: fetch it again */
        r.host = hosts[i];
        found(ud, i, &r);
    }
    if (!rc)
        frontier__replies_free(rep, n);
    free(rep);
    return rc;
}
