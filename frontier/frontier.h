/*
 * frontier.h: the crawl frontier, kept in Redis: which URLs are queued per
 * host and depth, which are leased to which node, when each host may be
 * fetched again, which depth is being crawled, and which node owns which
 * partition in a cluster. Also on the same handle: per-host stores that
 * move with a host's partition (robots.txt answers, noise-filter state),
 * content-digest claims, crawl-wide meta settings and the read-only
 * picture `dcrawl status` prints. Related modules: the seen-set API on
 * this handle is seen/seen.h; the consistent-hash ring that decides
 * partition ownership is ring/ring.h (no Redis). The Lua scripts are
 * frontier/lua/<name>.lua; frontier/frontier.c lists which file does what.
 *
 * Partitioning. A URL's host key ("host[:port]", see parser_url_host) hashes
 * (first 64 bits of MurmurHash3 x64, mod P) to one of P partitions
 * (frontier.partitions). Every key of a partition carries the hash tag
 * {p}, so a partition's keys live in one Redis Cluster slot and each script
 * call touches one partition only. Which node may pop a partition is
 * decided by the ring (ring/ring.h) and the partition's lease
 * (frontier/cluster.c).
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
 *                                      module's type; seen/seen.h)
 *   <prefix>:{p}:s:<b>           seen-set buckets, layout b256-i64 (dedup.h)
 *   <prefix>:{p}:q:<d>:<host>    LIST  queued URLs of host at depth d
 *                                      (a leading "http://<host>" or
 *                                      "https://<host>" kept as one byte,
 *                                      frontier/lua/lib/common.lua)
 *   <prefix>:{p}:h:<d>           ZSET  host -> ms when it may be fetched next
 *                                      (hosts with URLs queued at depth d)
 *   <prefix>:{p}:host            HASH  host -> "<act>[@<td>[:<tn>]]
 *                                      <next>[ <marks>]": its URLs leased
 *                                      (in flight), of them tn (act when
 *                                      left out) at its deepest leased
 *                                      depth td, its politeness clock in
 *                                      ms (0: none) and the depths whose
 *                                      h:<d> holds it at the busy score
 *                                      (common.lua); one field so a host
 *                                      is one lookup
 *   <prefix>:{p}:lease           ZSET  "<node>\t<d>\t<host>\t<url>" -> lease
 *                                      deadline (ms)
 *   <prefix>:{p}:pend            HASH  d -> URLs queued or in flight at d
 *   <prefix>:{p}:stat            HASH  counters: admitted, seen, done:<d>,
 *                                      failed:<d>, skipped:<d>, budget
 *   <prefix>:{p}:fail            ZSET  host -> URLs given up (FRONTIER_FAILED),
 *                                      at most 1000 hosts (complete.lua)
 *   <prefix>:{p}:budget          HASH  host -> URLs queued over the crawl
 *                                      (only when scope.host_budget > 0)
 *   <prefix>:{p}:own             STRING id of the node owning the partition,
 *                                      expiring (cluster.partition_lease)
 *   <prefix>:{p}:robots          HASH  host -> stored robots.txt answer
 *   <prefix>:{p}:noise           HASH  host -> the noise filter's repetition
 *                                      state (a versioned blob of at most a
 *                                      few KB, noise.h noise_state_*)
 * That is the queue layout "zset-list". In the queue layout "native" (the
 * default when the server has the dcrawl-seen module, DCFRONT.QPOP) there
 * are no q: keys: h:<d> is one module value (seen/module/level-type.h)
 * holding both the ready set and the host queues of depth d, with the same
 * contents and order, and host is a module value too (state-type.h: the
 * same fields as a map), so a host visit touches a few objects instead of
 * a list key, its quicklist, a skiplist and a listpack searched from its
 * start; the module's DCFRONT.QPOP, .QCOMPLETE and .QADMIT replace the
 * scripts, and the scripts that put leases back call DCFRONT.QPUSH,
 * .QZADD, .SGET, .SSET, .SDEL and .SRAND.
 * The global keys: <prefix>:meta (HASH: partitions, created, fingerprint,
 * seen_layout, queue_layout, partition_by) makes every client agree on P,
 * the fingerprint, the seen-set layout (mod-u64 when the first client
 * found the module loaded, else b256-i64; kept for good), the queue layout
 * (native or zset-list, chosen the same way; a meta without it was made by
 * a build before queue layouts: zset-list) and what maps to a partition;
 * <prefix>:nodes (ZSET id -> heartbeat deadline), <prefix>:node:<id>
 * (HASH, a node's figures) and <prefix>:used (bitmap of partitions that
 * ever had a URL), see frontier/cluster.c.
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

#include "dc-limits.h"

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
    int64_t retry_ms; /* FRONTIER_RETRY: this URL's own back-off; 0 by default */
};

enum frontier_outcome {
    FRONTIER_DONE = 0,     /* fetched (any HTTP status) */
    FRONTIER_FAILED = 1,   /* given up after retries */
    FRONTIER_SKIPPED = 2,  /* not fetched: robots.txt disallowed, out of scope */
    FRONTIER_RETRY = 3     /* put back at the end of its host queue; with
                            * retry_ms > 0 the host waits that long only
                            * when nothing else of it is queued (one page's
                            * failure does not hold its host's other URLs) */
};

/*
 * Connect to redis_url ("redis://[user][:password]@host:port[/db]",
 * "unix://[user][:password]@/path[?db=N]", "unix:/path",
 * "redis-cluster://[user][:password]@host:port[,host:port...]",
 * "redis-sentinel://[user][:password]@host:port[,host:port...]/name[/db]":
 * the master named name as the sentinels at host:port report it; userinfo
 * percent-decoded; the password may instead come from c's redis.password
 * or redis.password_file, the user from redis.user) and load the
 * scripts (on every master of a cluster). On the first use of an empty Redis the
 * partition count from c is recorded in <prefix>:meta; later clients adopt
 * the recorded count. node_id names this node in leases.
 * Errors: DC_EREDIS (unreachable, script load; on a cluster also
 * not a cluster, a slot no master serves) with a one-line message in err;
 * DC_EAUTH when the server refuses the credentials or wants some (NOAUTH);
 * DC_ECONFIG for an unreadable redis.password_file; DC_EINVAL for a
 * malformed URL (or a /db in a redis-cluster URL, or a user without a
 * password). No message holds the password.
 */
int frontier_open(struct frontier **f, const char *redis_url,
                  const struct conf *c, const char *node_id, char *err,
                  size_t errlen);
/*
 * The Redis URL as it may be shown (messages, status, config): a password
 * in its userinfo ("scheme://[user]:password@...") becomes "***"; the
 * rest is unchanged. out is always NUL-terminated (cap > 0).
 */
void frontier_url_redact(const char *url, char *out, size_t cap);
void frontier_close(struct frontier **f);

/* Partition of a host key, per cluster.partition_by as recorded in
 * <prefix>:meta (frontier/partkey.c; ip mode may resolve the host). */
int frontier_partition(struct frontier *f, const char *host, size_t hostlen);
int frontier_partitions(const struct frontier *f);
/* The crawl's queue layout: "native" or "zset-list" (above). */
const char *frontier_queue_layout(const struct frontier *f);

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
/*
 * Let pop lease up to `extra` URLs of a host beyond
 * politeness.host_connections (default 0), for a caller that keeps the
 * host's transfers to host_connections itself and wants the next URL at
 * hand when a transfer ends. A host whose last completion set a politeness
 * gap (delay, back-off) gets one URL ahead at most (host_connections + 1),
 * so its next transfer can start the moment its gap ends; a host without
 * one gets all `extra`. Each pop first gives every ready
 * host its host_connections, then the extra leases with what room is
 * left. A host counts as busy for every script of this handle once it
 * holds host_connections + extra leases.
 */
void frontier_set_lease_ahead(struct frontier *f, int extra);
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
 * Extend n leases this handle holds to frontier.lease from now, by Redis's
 * clock as pop sets them: for a caller that keeps a fetched page until its
 * depth level may admit the page's links. A lease no longer there (its
 * deadline passed and it was reclaimed, or it was completed) is not added
 * back. *renewed (may be NULL) counts the leases extended. One pipelined
 * round trip (one script call per partition).
 */
int frontier_renew(struct frontier *f, const struct frontier_lease *l,
                   size_t n, size_t *renewed);

/*
 * Return expired leases to the front of their host queues. With
 * own_node != 0 every lease held by this node's id is returned at once
 * (a restarted node reclaiming what it held). *reclaimed counts them.
 */
int frontier_reclaim(struct frontier *f, int64_t now_ms, int own_node,
                     size_t *reclaimed);

/*
 * A node that must stop before finishing its leases (it cannot write its
 * output): every lease of this node's id goes back to the front of its
 * host queue at once (as frontier_reclaim with own_node) and is forgotten
 * by this handle, so a following frontier_cluster_leave releases every
 * partition and other nodes (or this node restarted) take them without
 * waiting for frontier.lease. Nothing popped before may be completed
 * afterwards. *returned counts the leases put back.
 */
int frontier_hand_back(struct frontier *f, int64_t now_ms, size_t *returned);

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
 * A picture of the whole crawl for `dcrawl status` (frontier/status.c),
 * read with plain commands only, nothing written:
 *   - nodes: <prefix>:nodes (ZSET id -> heartbeat deadline ms; live while
 *     the deadline is after now) and each node's <prefix>:node:<id> HASH
 *     of figures; a node past its deadline is listed (live 0) only while
 *     that hash still exists;
 *   - partitions: <prefix>:{p}:own (owner id) counted per owner, and the
 *     partitions with pending work that nobody owns;
 *   - per depth d: hosts of h:<d> split by score into ready (<= now),
 *     waiting on politeness (< BUSY) and at their connection limit
 *     (== BUSY); URLs in flight (lease entries "<node>\t<d>\t...", at most
 *     FRONTIER_STATUS_LEASES_PER_PART read per partition, the rest counted
 *     in leases_unread), queued (pend[d] - in flight), done / failed /
 *     skipped (stat);
 *   - the hosts with the most URLs given up: the top
 *     FRONTIER_STATUS_FAIL_HOSTS of every partition's fail ZSET, merged.
 * Depths are 0 .. FRONTIER_STATUS_DEPTHS-1 (crawl.depth is at most
 * DC_DEPTH_MAX, dc-limits.h).
 * Pipelined in batches of FRONTIER_STATUS_BATCH calls: a handful of round
 * trips for 1024 partitions.
 */
#define FRONTIER_STATUS_DEPTHS DC_DEPTHS
#define FRONTIER_STATUS_BATCH 8192
#define FRONTIER_STATUS_LEASES_PER_PART 1024
#define FRONTIER_STATUS_MAX_NODES 4096
#define FRONTIER_STATUS_FAIL_HOSTS 10

struct frontier_status_node {
    char *id;
    int live;                 /* heartbeat deadline after now */
    int has_info;             /* its <prefix>:node:<id> hash exists */
    int64_t deadline_ms;      /* score in <prefix>:nodes */
    /* from <prefix>:node:<id>; -1 (strings NULL) when absent */
    char *host, *state;
    int64_t pid, started_ms, updated_ms, pages, inflight, parts_reported, level;
    double pages_s;
    /* counted from the partitions */
    int64_t parts;            /* partitions whose own key names this node */
    int64_t leases;           /* lease entries held by this node */
};

struct frontier_status_depth {
    int64_t hosts, hosts_ready, hosts_polite, hosts_busy;
    int64_t queued, inflight, done, failed, skipped;
};

struct frontier_status_fail {
    char *host;
    int64_t failed;           /* URLs of the host given up */
};

struct frontier_status {
    int64_t now_ms;
    int crawl;                /* <prefix>:meta exists (a crawl was set up) */
    int partitions;           /* P (meta partitions) */
    int max_depth;            /* meta max_depth, -1 when unset */
    char partition_by[16];    /* meta partition_by, "" when unset */
    int64_t parts_used;       /* BITCOUNT <prefix>:used, -1 when no bitmap */
    int64_t parts_owned;      /* own key set */
    int64_t parts_owner_unknown; /* owned by an id not in <prefix>:nodes */
    int64_t parts_unowned_pending; /* pending work, no owner */
    size_t nnodes, nlive;
    struct frontier_status_node *nodes; /* live first, then by id */
    int ndepths;              /* depths[0 .. ndepths) shown */
    struct frontier_status_depth depths[FRONTIER_STATUS_DEPTHS];
    struct frontier_status_depth total;
    int64_t admitted, seen, budget;
    int64_t leases_unread;    /* leases past the per-partition read cap */
    int64_t leases_other;     /* lease entries that name no listed node */
    size_t nfail;             /* fail[0 .. nfail), most URLs given up first */
    struct frontier_status_fail fail[FRONTIER_STATUS_FAIL_HOSTS];
    uint64_t roundtrips;      /* pipelines this call sent */
};

/*
 * Open f for reading the status only: connect and read <prefix>:meta, but
 * unlike frontier_open never write it (status on an empty Redis must not
 * fix a crawl's partition count) and load no scripts. Close with
 * frontier_close. Errors as frontier_open.
 */
int frontier_status_open(struct frontier **f, const char *redis_url,
                         const struct conf *c, char *err, size_t errlen);
/* Read the status at now_ms into *out (free with frontier_status_free).
 * DC_OK, or DC_EREDIS (message: frontier_errstr) with *out NULL. */
int frontier_status(struct frontier *f, int64_t now_ms,
                    struct frontier_status **out);
void frontier_status_free(struct frontier_status **st);

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

/* Admits this handle saw refused by scope.host_budget. */
uint64_t frontier_budget_refused(const struct frontier *f);

/* Round trips (pipelines) sent to Redis on f so far. */
uint64_t frontier_roundtrips(const struct frontier *f);

/* Last Redis error text (for messages), never NULL. */
const char *frontier_errstr(const struct frontier *f);

/*
 * robots.txt answers in Redis (frontier/robots-store.c): the node a host
 * moves to reads the rules its previous owner fetched. put: one answer,
 * one round trip. get: one round trip for n hosts; found(ud, i, r) is
 * called for each host with a stored answer (r->body valid only during
 * the call). Hosts are host keys ("host[:port]").
 */
struct frontier_robots {
    const char *host;
    int64_t fetched_ms;
    int status;
    unsigned flags;          /* FRONTIER_ROBOTS_* */
    const char *body;
    size_t body_len;
};
#define FRONTIER_ROBOTS_TRUNCATED 1u
#define FRONTIER_ROBOTS_CODED 2u   /* body is gzip/deflate coded */
int frontier_robots_put(struct frontier *f, const struct frontier_robots *r);
int frontier_robots_get(struct frontier *f, const char *const *hosts,
                        size_t n, void (*found)(void *ud, size_t i,
                                                const struct frontier_robots *r),
                        void *ud);

/*
 * The noise filter's repetition state per host in Redis
 * (frontier/noise-store.c): the node a host moves to continues with what
 * its previous owner learned. Blobs are opaque here. get: one round trip
 * for n hosts; found(ud, i, blob, len) is called for each host with a
 * stored blob (valid only during the call). put: n hosts' blobs, one
 * pipelined round trip. Hosts are host keys ("host[:port]").
 */
int frontier_noise_get(struct frontier *f, const char *const *hosts, size_t n,
                       void (*found)(void *ud, size_t i, const void *blob,
                                     size_t len),
                       void *ud);
int frontier_noise_put(struct frontier *f, const char *const *hosts,
                       const unsigned char *const *blobs, const size_t *lens,
                       size_t n);

/* ---- the cluster: membership, partition ownership ---- */

/*
 * Membership and ownership (frontier/cluster.c). frontier_cluster_join
 * makes this handle a cluster node: from then on frontier_pop serves only
 * partitions this node owns. frontier_cluster_tick, called often (it does
 * nothing until the next poll is due, *next_ms), sends the heartbeat with
 * info, reads the live nodes and used partitions, recomputes the ring and
 * takes, renews, drains and releases partitions (1-2 round trips).
 * frontier_cluster_owns says whether a lease of partition p may still be
 * started (the partition is owned or draining and more than a third of its
 * lease is left, on the monotonic clock from the renewal's send; now_ms is
 * not used); a lease that may not must be completed with FRONTIER_RETRY.
 * Joining also lowers f's Redis connect and command timeouts to a quarter
 * of cluster.node_timeout (at least 250 ms). Times passed in (now_ms) are
 * this host's wall clock; the frontier turns them into Redis's clock, as
 * estimated at each tick, before they reach Redis (ready times and
 * politeness clocks move between nodes with their partitions).
 * frontier_cluster_leave releases every partition with no lease held here
 * and removes the node from the member list (graceful stop).
 */
struct frontier_node_info {
    int64_t started_ms, pages, inflight;
    double pages_s;
    int level;
    const char *state;   /* fetching | politeness | idle | level-wait | draining | offline */
};
struct frontier_cluster_view {
    size_t nodes, owned, draining, used;
    uint64_t acquired, released, lost, reclaimed, ring_changes;
};
int frontier_cluster_join(struct frontier *f, const struct conf *c);
int frontier_cluster_tick(struct frontier *f, int64_t now_ms,
                          const struct frontier_node_info *info,
                          int64_t *next_ms);
int frontier_cluster_owns(const struct frontier *f, int p, int64_t now_ms);
/* 1 while this node still counts partition p as its own (owned or
 * draining, its local validity not ended: nothing of p may be fetched,
 * written or completed by this node once it is 0); 1 outside a cluster. */
int frontier_cluster_holds(const struct frontier *f, int p);
/* Mark lost, with no Redis call, the partitions whose local validity has
 * ended (a node cut off from Redis cannot renew them); returns the number
 * of partitions lost so far (frontier_cluster_view's lost): a change
 * tells the caller to stop what it runs in partitions it no longer holds.
 * Cheap when nothing is due (one clock read). */
uint64_t frontier_cluster_expire(struct frontier *f);
/* Forget lease l here without completing it (its partition was lost: the
 * URL stays leased in Redis until the partition's next owner, or this
 * node's orphan reclaim or the lease's expiry, puts it back). */
void frontier_lease_drop(struct frontier *f, const struct frontier_lease *l);
/* fn(ud, 0) runs before each attempt of a Redis call, and fn(ud, ms)
 * instead of each sleep of the reconnect back-off (it must return after
 * about ms): the caller keeps its own work going (transfers, and
 * stopping those of partitions whose validity ended) while Redis is
 * unreachable. fn must not call the frontier. While a partition is held,
 * no Redis attempt waits past the end of its local validity (the I/O
 * timeout is shortened to it), so fn runs in time. */
void frontier_set_wait_hook(struct frontier *f,
                            void (*fn)(void *ud, int64_t ms), void *ud);
/* fn(ud, fd, ms) runs while a call waits for its reply (nothing of it
 * has arrived yet; a cluster frontier never calls it): it may run the
 * caller's own I/O meanwhile, and returns 1 as soon as fd (the Redis
 * socket) is readable, or 0 after about ms. So the transfers of a node
 * start and finish during its Redis round trips instead of after them.
 * fn must not call the frontier. */
void frontier_set_reply_hook(struct frontier *f,
                             int (*fn)(void *ud, int fd, int ms), void *ud);
/* 1 when URLs admitted here went to partitions nobody had used before:
 * frontier_cluster_tick would take them at once (not at its next poll), so
 * their URLs need not wait a poll period to be popped. */
int frontier_cluster_tick_due(const struct frontier *f);
int frontier_cluster_leave(struct frontier *f);
void frontier_cluster_view(const struct frontier *f,
                           struct frontier_cluster_view *v);
/* After a reconnect: put back every lease of this node's id that it does
 * not hold (popped by a call whose reply was lost with the connection).
 * One round trip; *reclaimed counts them. */
int frontier_reclaim_orphans(struct frontier *f, int64_t now_ms,
                             size_t *reclaimed);
/* Reconnects to Redis after a lost connection, so far. */
uint64_t frontier_reconnects(const struct frontier *f);

/* ---- failover: a new Redis server behind the same URL ---- */

/*
 * The server's epoch: 0 at frontier_open, one more each time a connect
 * finds another server than the last one (its run_id: a restarted Redis,
 * a replica promoted by Sentinel). Replication and the AOF's fsync are
 * asynchronous, so the new server holds a prefix of the old one's writes:
 * any write acknowledged before the change may be missing on it. What a
 * caller cached from Redis answers (URLs seen, ownership) is valid only
 * within the epoch it was read in.
 */
uint64_t frontier_epoch(const struct frontier *f);
/* The server connected to now ("host:port" or socket path), for messages. */
const char *frontier_server(const struct frontier *f);
/* on: until called again with 0, a call that would reach a server of
 * another epoch than `epoch` is not sent and fails with DC_EFAILOVER. */
void frontier_epoch_guard(struct frontier *f, int on, uint64_t epoch);
/* After an epoch change: forget what this handle cached from the old
 * server: partition ownership lapses (taken again at the next tick), the
 * used-partitions bitmap is read again (and set again by the next
 * admits), the ready index is rebuilt. Leases held here stay counted
 * (their transfers go on; frontier_reclaim_orphans puts back the ones
 * the new server gave nobody). */
void frontier_failover_reset(struct frontier *f);
/* Wait (WAIT, up to timeout_ms) until the replicas the server has now
 * acknowledged every write sent on f so far: *replicas is their number
 * (-1 on a Redis Cluster, where nothing is waited for), *acked how many
 * did. Writes that a replica acknowledged survive its promotion. */
int frontier_replicated(struct frontier *f, int timeout_ms, int *replicas,
                        int *acked);


#endif
