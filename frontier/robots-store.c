/*
 * robots-store.c: robots.txt answers kept in Redis, so that the node a
 * host moves to continues with the rules the previous owner fetched
 * instead of fetching robots.txt again.
 *
 * One HASH per partition, <prefix>:{p}:robots, host -> value (read and
 * written through host-blob.c: one round trip for a batch). The value
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

int frontier_robots_put(struct frontier *f, const struct frontier_robots *r)
{
    char head[96];
    int hl = snprintf(head, sizeof(head), "r1 %lld %d %u\n",
                      (long long)r->fetched_ms, r->status, (unsigned)r->flags);
    size_t len = (size_t)hl + r->body_len;
    char *v = xmalloc(len);
    const char *vals[1] = { v };
    int rc;

    memcpy(v, head, (size_t)hl);
    if (r->body_len)
        memcpy(v + hl, r->body, r->body_len);
    rc = frontier__host_blob_put(f, "robots", &r->host, vals, &len, 1);
    free(v);
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

struct robots_get {
    const char *const *hosts;
    void (*found)(void *ud, size_t i, const struct frontier_robots *r);
    void *ud;
};

static void robots_found(void *ud, size_t i, const void *blob, size_t len)
{
    struct robots_get *g = ud;
    struct frontier_robots r;

    if (parse_value(blob, len, &r))
        return; /* not ours to read: fetch it again */
    r.host = g->hosts[i];
    g->found(g->ud, i, &r);
}

int frontier_robots_get(struct frontier *f, const char *const *hosts,
                        size_t n, void (*found)(void *ud, size_t i,
                                                const struct frontier_robots *r),
                        void *ud)
{
    struct robots_get g = { hosts, found, ud };

    return frontier__host_blob_get(f, "robots", hosts, n, robots_found, &g);
}
