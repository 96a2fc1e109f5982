/*
 * frontier.h: the crawl frontier, kept in Redis.
 *
 * Partitioning. A URL's host key ("host[:port]", see parser_url_host) hashes
 * (first 64 bits of MurmurHash3 x64, mod P) to one of P partitions
 * (frontier.partitions). Every key of a partition carries the hash tag
 * {p}, so a partition's keys live in one Redis Cluster slot and each script
 * call touches one partition only. One node owns all partitions for now; the
 * cluster issue assigns partitions to nodes without renaming any key.
 *
 * Redis Cluster: with a "redis-cluster://host:port[,host:port...]" URL
 * every batch is routed by slot (CRC16 of the hash tag) to the masters of
 * the map read with CLUSTER SLOTS, pipelined per master; MOVED (map read
 * again), ASK, TRYAGAIN and CLUSTERDOWN are handled, at most 5 times per
 * call (frontier/cluster-route.c). Scripts are loaded on every master.
 * Global keys (<prefix>:meta, digests) are single-key commands, each in
 * its own slot. No /db in such a URL (a cluster has db 0 only).
 *
 * Keys of partition p (prefix = redis.prefix, default "dc"):
 *   <prefix>:{p}:S               seen-set, layout mod-u64 (the dcrawl-seen
 *                                      module's type; frontier/seen-mod.c)
 *   <prefix>:{p}:s:<b>           seen-set buckets, layout b256-i64 (dedup.h)
 *   <prefix>:{p}:q:<d>:<host>    LIST  queued URLs of host at depth d
 *   <prefix>:{p}:h:<d>           ZSET  host -> ms when it may be fetched next
 *                                      (hosts with URLs queued at depth d)
 *   <prefix>:{p}:next            HASH  host -> politeness clock (ms)
 *   <prefix>:{p}:act             HASH  host -> transfers in flight
 *   <prefix>:{p}:lease           ZSET  "<node>\t<d>\t<host>\t<url>" -> lease
 *                                      deadline (ms)
 *   <prefix>:{p}:pend            HASH  d -> URLs queued or in flight at d
 *   <prefix>:{p}:stat            HASH  counters: admitted, seen, done:<d>,
 *                                      failed:<d>, skipped:<d>, budget
 *   <prefix>:{p}:budget          HASH  host -> URLs queued over the crawl
 *                                      (only when scope.host_budget > 0)
 * and one global key <prefix>:meta (HASH: partitions, created,
 * fingerprint, seen_layout) that makes every client agree on P, the
 * fingerprint and the seen-set layout (mod-u64 when the first client found
 * the module loaded, else b256-i64; kept for good).
 *
 * Crawl order is level-synchronous: URLs of depth d are served only while
 * nothing of a lower depth is queued or in flight anywhere
 * (frontier_level), so a URL is always first reached at its smallest link
 * distance from the seeds, exactly as a breadth-first search.
 *
 * Admit = insert-if-absent into the seen-set and enqueue, in one script per
 * partition: a URL is "new" exactly once whoever asks, and it is never
 * marked seen without being queued. Pop = lease: a popped URL stays in the
 * lease set until frontier_complete; an expired lease (its node died) goes
 * back to the front of its host queue (frontier_reclaim).
 *
 * Politeness: at most politeness.host_connections leases per host, and a
 * host becomes ready again `delay` ms after a transfer of it completes.
 *
 * Host budget (scope.host_budget > 0): admit queues at most that many URLs
 * per host over the whole crawl, counted in the partition's budget hash,
 * so the limit holds whichever node admits; a URL refused for the budget
 * is not marked seen (isnew 0; frontier_budget_refused counts them).
 *
 * Thread rules: a struct frontier (one hiredis connection) is used by one
 * thread. Every call is a bounded number of pipelined round trips.
 */
#ifndef DC_FRONTIER_H
#define DC_FRONTIER_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct frontier;

/* A URL to admit. host/hostlen point into url (parser_url_host). */
struct frontier_url {
    const char *url;
    size_t len;
    const char *host;
    size_t hostlen;
    uint64_t fp;   /* dedup_fingerprint(url) */
    int depth;
};

/* A leased URL. Strings are owned by the lease array (frontier_leases_free). */
struct frontier_lease {
    char *entry;   /* the lease member, opaque */
    char *url;
    char *host;
    int depth;
    int partition;
};

enum frontier_outcome {
    FRONTIER_DONE = 0,     /* fetched (any HTTP status) */
    FRONTIER_FAILED = 1,   /* given up after retries */
    FRONTIER_SKIPPED = 2,  /* not fetched: robots.txt disallowed, out of scope */
    FRONTIER_RETRY = 3     /* put back at the end of its host queue */
};

/*
 * Connect to redis_url ("redis://host:port[/db]", "unix:///path[?db=N]",
 * "unix:/path", "redis-cluster://host:port[,host:port...]") and load the
 * scripts (on every master of a cluster). On the first use of an empty Redis the
 * partition count from c is recorded in <prefix>:meta; later clients adopt
 * the recorded count. node_id names this node in leases.
 * Errors: DC_EREDIS (unreachable, auth, script load; on a cluster also
 * not a cluster, a slot no master serves) with a one-line message in err;
 * DC_EINVAL for a malformed URL (or a /db in a redis-cluster URL).
 */
int frontier_open(struct frontier **f, const char *redis_url,
                  const struct conf *c, const char *node_id, char *err,
                  size_t errlen);
void frontier_close(struct frontier **f);

/* Partition of a host key. */
int frontier_partition(const struct frontier *f, const char *host,
                       size_t hostlen);
int frontier_partitions(const struct frontier *f);

/*
 * Admit n URLs: each is added to the seen-set if absent and, if it was
 * absent, queued at its depth. isnew[i] is set to 1 or 0. One pipelined
 * round trip (one script call per partition touched).
 */
int frontier_admit(struct frontier *f, const struct frontier_url *urls,
                   size_t n, int64_t now_ms, unsigned char *isnew);

/*
 * Lease up to max URLs at depth `depth` whose host is ready at now_ms, from
 * partitions this node owns. *out is an array of *nout leases (free with
 * frontier_leases_free). *next_ms is set to the earliest time another pop
 * may find work at this depth (INT64_MAX when none is known). Partitions
 * are visited round-robin so no host is starved.
 */
int frontier_pop(struct frontier *f, int depth, int64_t now_ms, size_t max,
                 struct frontier_lease **out, size_t *nout, int64_t *next_ms);
void frontier_leases_free(struct frontier_lease *l, size_t n);

/*
 * Complete n leases with their outcomes; delay_ms[i] is the politeness gap
 * before the host's next transfer (NULL: 0 for all). Batched, one round
 * trip. A lease that was already reclaimed is removed from its queue again,
 * so it is not fetched twice.
 */
int frontier_complete(struct frontier *f, const struct frontier_lease *l,
                      const int *outcome, const int64_t *delay_ms, size_t n,
                      int64_t now_ms);

/*
 * Return expired leases to the front of their host queues. With
 * own_node != 0 every lease held by this node's id is returned at once
 * (a restarted node reclaiming what it held). *reclaimed counts them.
 */
int frontier_reclaim(struct frontier *f, int64_t now_ms, int own_node,
                     size_t *reclaimed);

/*
 * Pending URLs (queued or in flight) per depth, summed over all partitions:
 * pending[d] for d < maxd. *level is the lowest depth with pending work, or
 * -1 when nothing is pending at any depth < maxd.
 */
int frontier_level(struct frontier *f, int maxd, int64_t *pending, int *level);

/* Totals over all partitions (for summaries and tests). */
struct frontier_stats {
    int64_t admitted, seen;      /* admit answers: new / already seen */
    int64_t queued, leased;
    int64_t done, failed, skipped;
    int64_t budget;              /* admits refused by scope.host_budget */
};
int frontier_stats(struct frontier *f, struct frontier_stats *st);

/*
 * Content dedup: claim each payload digest ("sha1:...") for (uri[i],
 * ms[i]) unless already claimed. isdup[i] = 1 when another URL claimed it
 * first; orig_uri[i] (caller frees, NULL on an unexpected reply) and
 * orig_ms[i] name the first claimant. One pipelined round trip.
 */
int frontier_digest_claim(struct frontier *f, const char *const *digest,
                          const char *const *uri, const int64_t *ms, size_t n,
                          unsigned char *isdup, char **orig_uri,
                          int64_t *orig_ms);

/* Crawl-wide settings in <prefix>:meta (e.g. "max_depth"). get: DC_OK,
 * DC_ENOTFOUND when unset, DC_EREDIS; the value is truncated to cap-1. */
int frontier_meta_set(struct frontier *f, const char *field, const char *value);
int frontier_meta_get(struct frontier *f, const char *field, char *out,
                      size_t cap);

/*
 * The seen-set alone (batch dedup: `dcrawl dedup`). Same keys and members as
 * frontier_admit, so a URL marked here is "seen" to admit and vice versa.
 * Only url->host, hostlen and fp are read. check_only == 0: insert if
 * absent, isnew[i] = 1 exactly when this call inserted it (a URL twice in
 * one batch is new once). check_only != 0: isnew[i] = 1 when absent,
 * nothing written. Nothing is queued. One pipelined round trip.
 */
int frontier_seen(struct frontier *f, const struct frontier_url *urls,
                  size_t n, int check_only, unsigned char *isnew);

/*
 * Seen-set layout in use, as one line of text in out. Returns 1 when the
 * layout is b256-i64 and this Redis's set-max-intset-entries is below what
 * it is sized for, or cannot be read (a caller logs the line then), else 0.
 */
int frontier_seen_layout(const struct frontier *f, char *out, size_t cap);
/* The layout's name as recorded in <prefix>:meta seen_layout: "mod-u64"
 * (the dcrawl-seen module) or "b256-i64" (Lua over intset buckets).
 * Static storage. */
const char *frontier_seen_layout_name(const struct frontier *f);

/* Size of the seen-set, from SCARD, MEMORY USAGE and OBJECT ENCODING of
 * the bucket keys (pipelined, 8192 keys per round trip): every key when
 * sample is 0, else about `sample` evenly spread keys, the figures then
 * extrapolated to all `total` keys (sampled < total). */
struct frontier_seen_usage {
    uint64_t members, bytes, keys, not_compact;
    uint64_t sampled, total;
};
int frontier_seen_usage(struct frontier *f, size_t sample,
                        struct frontier_seen_usage *u);

/* Admits this handle saw refused by scope.host_budget. */
uint64_t frontier_budget_refused(const struct frontier *f);

/* Round trips (pipelines) sent to Redis on f so far. */
uint64_t frontier_roundtrips(const struct frontier *f);

/* Last Redis error text (for messages), never NULL. */
const char *frontier_errstr(const struct frontier *f);

#endif
