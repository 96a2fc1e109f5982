/*
 * frontier-internal.h: what the frontier's files share.
 *
 * Code outside of the frontier module should use only the public functions
 * defined in "frontier.h", and should *not* include this file.
 *
 * Files: frontier.c (open, meta, grouping by partition), admit.c,
 * lease.c (pop, complete, the local ready index), sweep.c (reclaim,
 * level, stats), redis.c (connect, pipelined calls), redis-url.c (server
 * URLs, credentials, the URL as shown),
 * cluster-route.c (the same calls routed by slot over a Redis Cluster),
 * scripts.c (loading the Lua scripts of frontier/lua/), cluster.c and
 * held.c (membership, ownership, leases held here), partkey.c, digest.c,
 * robots-store.c, noise-store.c, status.c. The seen-set client in seen/
 * uses this file too (it shares the connection); seen-internal.h is what
 * admit shares with it.
 *
 * A call is either a plain command (script < 0: args is the whole argv) or
 * a script call (EVALSHA sha numkeys keys... args...). frontier__run sends a
 * batch of calls in one pipeline and collects one reply per call; a script
 * the server does not know (NOSCRIPT, after a restart or SCRIPT FLUSH) is
 * sent again with EVAL, which also caches it for the next EVALSHA.
 * Everything sent to Redis goes through frontier__run or frontier__pipe
 * (pre-formatted commands), so both work on one server and on a cluster.
 *
 * Thread rules: as struct frontier, one thread at a time.
 */
#ifndef DC_FRONTIER_INTERNAL_H
#define DC_FRONTIER_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

/* Score of a host that has host_connections transfers in flight: later
 * than any real clock, so "ready" range queries never return it. */
#define FRONTIER_BUSY 9000000000000000LL

/* the queue layouts (<prefix>:meta queue_layout, frontier.h) */
#define QUEUE_LAYOUT_ZSET "zset-list"
#define QUEUE_LAYOUT_NATIVE "native"

/* A full rescan of every partition's ready time happens at most this often
 * (ms), and when the local index knows of nothing ready at most every
 * FRONTIER_IDLE_SCAN_MS. */
#define FRONTIER_SCAN_MS 1000
#define FRONTIER_IDLE_SCAN_MS 100

/* Partition script calls sent in one pipelined round trip by pop. */
#define FRONTIER_POP_BATCH 64

/* Connect timeout and command timeout (ms); a cluster node lowers both to
 * a fraction of cluster.node_timeout (frontier_cluster_join), so a hung
 * Redis call never holds its loop for long (f->io_ms). */
#define FRONTIER_CONNECT_MS 2000
#define FRONTIER_COMMAND_MS 10000
/* The shortest I/O timeout a call is given near a partition's lapse. */
#define FRONTIER_IO_MIN_MS 20

enum frontier_script {
    FRONTIER_SCRIPT_ADMIT,
    FRONTIER_SCRIPT_POP,
    FRONTIER_SCRIPT_COMPLETE,
    FRONTIER_SCRIPT_RECLAIM,
    FRONTIER_SCRIPT_SEEN,
    FRONTIER_SCRIPT_ADMIT_MOD,   /* admit in the mod-u64 seen-set layout */
    FRONTIER_SCRIPT_OWN,         /* take or renew a partition (cluster.c) */
    FRONTIER_SCRIPT_RELEASE,
    FRONTIER_SCRIPT_ORPHANS,     /* leases of this node it does not hold */
    FRONTIER_SCRIPT_MEMBERS,     /* heartbeat and live nodes (cluster.c) */
    FRONTIER_SCRIPT_RENEW,       /* extend held leases (lease.c) */
    FRONTIER_NSCRIPTS
};

/* A growable vector of owned byte strings. */
struct frontier_strv {
    size_t n, cap;
    char **v;
    size_t *len;
};

struct frontier_call {
    int script;                  /* enum frontier_script, or -1 */
    struct frontier_strv keys;   /* script calls only */
    struct frontier_strv args;
};

enum frontier_part_by {
    FRONTIER_PART_HOST,
    FRONTIER_PART_DOMAIN,
    FRONTIER_PART_IP
};

struct frontier_ipcache;
struct frontier_cluster;
struct frontier_route;

struct frontier {
    redisContext *rc;            /* NULL after a connection error, and on
                                    a cluster */
    struct frontier_route *rt;   /* redis-cluster:// URLs, else NULL */
    char *url;                   /* to reconnect */
    char *auth_user, *auth_pass; /* redis.user, the settings' password
                                  * (NULL: none); the URL's win */
    char *prefix;
    char *node;
    int nparts;
    int part_by;                 /* enum frontier_part_by (meta partition_by) */
    struct frontier_ipcache *ipcache;  /* partition_by ip: host -> address */
    struct frontier_cluster *cl; /* ownership state, NULL outside a node */
    int32_t *held;               /* leases popped here and not completed,
                                  * per partition (held.c) */
    struct frontier_held *held_set; /* ... and by entry */
    unsigned char *used;         /* bitmap of partitions known to have had
                                  * a URL (<prefix>:used, SETBIT order) */
    int used_dirty;              /* used grew here since the last tick */
    int conns;                   /* leases a host may have out: the
                                  * window, host_conns + lease ahead */
    int host_conns;              /* politeness.host_connections */
    int64_t host_budget;         /* scope.host_budget, 0 = none */
    uint64_t budget_refused;     /* admit answers "budget spent" so far */
    int64_t lease_ms;
    char sha[FRONTIER_NSCRIPTS][41];

    /* Local ready index for one depth (ix): part_next[p] is the ms from
     * which partition p may have a ready host (INT64_MAX: none known).
     * alt is the index of the depth popped before (a node pops its level
     * and the next one): swapped with ix when pop's depth changes back, so
     * alternating depths costs no rescans. Its part_next is only lowered
     * (admit, complete, sweep), never raised, between pops. */
    struct frontier_index {
        int depth;               /* -1: none (before any pop) */
        int64_t *part_next;
        int rr;                  /* round-robin position */
        int64_t last_scan;       /* now_ms of the last full rescan */
        int scanned;             /* a rescan happened since the reset */
    } ix, alt;

    uint64_t roundtrips;         /* pipelines sent (frontier_roundtrips) */
    int64_t retry_ms;            /* redis.retry: reconnect for this long */
    int64_t io_ms;               /* connect and command timeout; 0: defaults */
    /* frontier_set_wait_hook: called before each attempt of a call and
     * instead of the reconnect back-off's sleep */
    void (*wait_fn)(void *ud, int64_t ms);
    void *wait_ud;
    int (*reply_fn)(void *ud, int fd, int ms); /* frontier_set_reply_hook */
    void *reply_ud;
    int64_t skew_ms;             /* Redis's clock minus ours (cluster.c) */
    uint64_t reconnects;         /* reconnect attempts after a lost link */
    int64_t intset_entries;      /* Redis set-max-intset-entries, -1 unknown */
    int have_module;             /* the server has DCSEEN.ADD (dcrawl-seen.so) */
    int native;                  /* ... and DCFRONT.POP, .COMPLETE, .ADMIT:
                                    sent instead of pop.lua, complete.lua,
                                    admit-mod.lua (seen/module/
                                    front-module.h) */
    int seen_mod;                /* seen-set layout: 1 mod-u64, 0 b256-i64 */
    int have_qlayout;            /* the server has DCFRONT.QPOP, .QCOMPLETE,
                                    .QADMIT (the native queue layout) */
    int qnative;                 /* queue layout: 1 native (h:<d> is one
                                    module value holding the ready set and
                                    the queues; the Q commands are sent),
                                    0 zset-list (frontier.h) */

    /* Which server answers (redis.c): its run_id (or address when INFO
     * is refused) and name as of the last connect; epoch counts the
     * changes of server since frontier_open (a failover, a restart). */
    char server_id[64];
    char server_name[300];
    uint64_t epoch;
    int guarded;                 /* frontier_epoch_guard: fail with */
    uint64_t guard_epoch;        /* DC_EFAILOVER rather than send a call
                                  * to a server of another epoch */

    char err[256];
};

/* redis-url.c: a parsed redis:// or unix: URL (userinfo decoded). */
struct frontier_redis_addr {
    char host[256];
    int port;
    char path[PATH_MAX];   /* set for unix sockets */
    int db;
    char user[128];
    char pass[512];
    int has_user, has_pass;
};
/* redis-sentinel:// URLs: the sentinels, the master's name, and the
 * master's credentials and db (host and port found by asking). */
#define FRONTIER_SENTINEL_SCHEME "redis-sentinel://"
#define FRONTIER_SENTINELS_MAX 16
struct frontier_sentinels {
    struct frontier_redis_addr master;
    char name[128];
    int n;
    char host[FRONTIER_SENTINELS_MAX][256];
    int port[FRONTIER_SENTINELS_MAX];
};
int frontier__sentinel_parse(struct frontier_sentinels *sl, const char *url);
/* sentinel.c: ask the sentinels of f->url for the master's address,
 * connect f->rc to it (frontier__connect_addr) and check that it is a
 * master (ROLE). DC_EINVAL / DC_EREDIS / DC_EAUTH, message in f->err. */
int frontier__sentinel_connect(struct frontier *f);
/* redis.c: connect f->rc to a (TCP or unix socket; name for messages),
 * log in, SELECT, PING; on success note which server it is (run_id) and
 * move f->epoch on when it is not the one of the last connect. */
int frontier__connect_addr(struct frontier *f,
                           const struct frontier_redis_addr *a,
                           const char *name);
/* DC_EINVAL for a malformed URL. */
int frontier__url_parse(struct frontier_redis_addr *a, const char *url);
/* Decode "user[:password]" (percent escapes) into a->user / a->pass. */
int frontier__userinfo(struct frontier_redis_addr *a, const char *s,
                       size_t len);
/* "host:port", "[v6]:port" or the socket path, for messages. */
void frontier__addr_name(const struct frontier_redis_addr *a, char *out,
                         size_t cap);
/* f->auth_user / f->auth_pass from redis.user, redis.password and
 * redis.password_file (c may be NULL); DC_ECONFIG, message in f->err. */
int frontier__auth_conf(struct frontier *f, const struct conf *c);
void frontier__auth_free(struct frontier *f);
/* The user and password to log in with: a's when the URL has them, else
 * the settings'. DC_EINVAL when there is a user but no password. */
int frontier__creds(const struct frontier *f,
                    const struct frontier_redis_addr *a, const char **user,
                    const char **pass);
/* AUTH [user] pass on c (nothing without a password). DC_EAUTH when
 * refused, DC_EREDIS on I/O; the message names `where`, not the password. */
int frontier__auth(struct frontier *f, redisContext *c, const char *user,
                   const char *pass, const char *where);

/* redis.c */
int frontier__connect(struct frontier *f, char *err, size_t errlen);
void frontier__disconnect(struct frontier *f);
/* A failed read/write on the connection: record hiredis's error, drop
 * the connection (the next call reconnects); DC_EREDIS. */
int frontier__io_error(struct frontier *f);
/* Connect (cmd 0) or command (cmd 1) timeout in ms for f's connections;
 * frontier__io_set changes it, on the open connection too. */
int frontier__io_ms(const struct frontier *f, int cmd);
/* ms as a struct timeval (hiredis' timeouts). */
struct timeval frontier__tv(int64_t ms);
void frontier__io_set(struct frontier *f, int64_t ms);
/* ms until the earliest local validity of a held partition ends
 * (INT64_MAX: none held, or not a cluster node), cluster.c */
int64_t frontier__cluster_left_ms(const struct frontier *f);
void frontier__route_timeouts(struct frontier *f);
/* Times the scripts store (ready times, politeness clocks) are on Redis's
 * clock, as this process estimates it: frontier__rnow turns the caller's
 * now into it, frontier__rlocal a stored time back (cluster.c). */
int64_t frontier__rnow(const struct frontier *f, int64_t now_ms);
int64_t frontier__rlocal(const struct frontier *f, int64_t t);
int frontier__run(struct frontier *f, struct frontier_call *calls, size_t n,
                  redisReply **replies);
void frontier__replies_free(redisReply **replies, size_t n);
/* One plain command through frontier__run: its words, NULL-terminated;
 * the reply (error replies included) in *rep, freed by the caller. */
int frontier__command(struct frontier *f, redisReply **rep, ...)
    __attribute__((sentinel));

/* A RESP-formatted command and the slot it is routed by (a key's
 * frontier__key_slot, or FRONTIER_SLOT_ANY / FRONTIER_SLOT_ALL). */
#define FRONTIER_SLOT_ANY (-1)   /* keyless: any one master */
#define FRONTIER_SLOT_ALL (-2)   /* every master (SCRIPT LOAD, FLUSHDB) */
struct frontier_raw {
    const char *cmd;
    size_t len;
    int slot;
};
/* Send n formatted commands as one batch (one pipeline; per master on a
 * cluster). rep[i] answers c[i], error replies included (caller frees with
 * frontier__replies_free). I/O error: DC_EREDIS, every reply freed. */
int frontier__pipe(struct frontier *f, const struct frontier_raw *c, size_t n,
                   redisReply **rep);
int frontier__seterr(struct frontier *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void frontier__strv_push(struct frontier_strv *s, const char *p, size_t len);
void frontier__strv_pushs(struct frontier_strv *s, const char *p);
void frontier__strv_pushf(struct frontier_strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void frontier__strv_release(struct frontier_strv *s);

void frontier__call_init(struct frontier_call *c, int script);
void frontier__call_release(struct frontier_call *c);
void frontier__calls_free(struct frontier_call *c, size_t n);

/* cluster-route.c */
#define FRONTIER_CLUSTER_SCHEME "redis-cluster://"
/* Redirections (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) of one call at most. */
#define FRONTIER_CLUSTER_REDIRECTS 5
/* CRC16 (XMODEM) of the key's hash tag mod 16384, as Redis Cluster. */
int frontier__key_slot(const char *key, size_t len);
/* Slot a call is routed by: a script's first key, a plain command's key
 * (args[1], or args[2] for MEMORY / OBJECT), else ANY or ALL. */
int frontier__call_slot(const struct frontier_call *c);
/* Parse f->url, read the slot map; DC_EINVAL / DC_EREDIS, message in
 * f->err. */
int frontier__route_connect(struct frontier *f);
int frontier__route_pipe(struct frontier *f, const struct frontier_raw *c,
                           size_t n, redisReply **rep);
void frontier__route_free(struct frontier_route **rt);

/* seen/: the layout strings, probes and helpers admit shares with the
 * seen client are in seen-internal.h. */

/* host-blob.c: per-host values in <prefix>:{p}:<name> (a HASH of the
 * host's partition). get: found(ud, i, blob, len) for each of the n hosts
 * with a stored value (blob valid during the call only); put: vals[i] of
 * lens[i] bytes for hosts[i]. One pipelined round trip each. */
typedef void (*frontier__blob_fn)(void *ud, size_t i, const void *blob,
                                  size_t len);
int frontier__host_blob_get(struct frontier *f, const char *name,
                            const char *const *hosts, size_t n,
                            frontier__blob_fn found, void *ud);
int frontier__host_blob_put(struct frontier *f, const char *name,
                            const char *const *hosts, const char *const *vals,
                            const size_t *lens, size_t n);

/* partkey.c */
int frontier__partkey_mode(const char *name);   /* -1 when unknown */
void frontier__ipcache_free(struct frontier *f);

/* cluster.c */
void frontier__cluster_free(struct frontier *f);
/* Partition p may be popped from now (always 1 outside a cluster node). */
int frontier__may_pop(const struct frontier *f, int p);
/* held.c: bookkeeping of the leases held here. */
struct frontier_held;
void frontier__held_add(struct frontier *f, int p, const char *entry);
void frontier__held_del(struct frontier *f, int p, const char *entry);
void frontier__held_free(struct frontier *f);
/* Partition p got its first URL: remember, and mark it in <prefix>:used
 * (appends one call to *calls when p was not known yet). */
void frontier__mark_used(struct frontier *f, int p, struct frontier_call *c,
                         size_t *n);
void frontier__used_set(struct frontier *f, int p);
int frontier__is_used(const struct frontier *f, int p);
/* OR a GET <prefix>:used reply into f->used; 1 when it added a bit. */
int frontier__used_merge(struct frontier *f, const redisReply *r);
/* The pop script found partition p held by another node. */
void frontier__cluster_lost(struct frontier *f, int p);
/* A new server (failover.c): every partition's ownership lapses here; the
 * next tick takes back what the ring gives this node. */
void frontier__cluster_lapse(struct frontier *f);
/* lease.c: partition p became ours; the next pop looks at it. */
void frontier__index_wake(struct frontier *f, int p);

/* frontier.c: grouping a batch by partition. A URL or lease of a batch:
 * its partition and its index in the batch. */
struct frontier_slot {
    int part;
    size_t idx;
};
/* Sort s by partition (then index); returns the number of partitions. */
size_t frontier__slots_sort(struct frontier_slot *s, size_t n);
/* lease.c: partition p may have a ready host from t on (lowers the
 * ready index). */
void frontier__index_lower(struct frontier *f, int p, int64_t t);
/* The same for the index of `depth` only (admit: a URL queued there). */
void frontier__index_lower_at(struct frontier *f, int depth, int p, int64_t t);
/* Start c as a call of script on partition p with the keys every lease
 * script starts with: lease, act, next (complete, reclaim, own, orphans). */
void frontier__lease_call(struct frontier *f, struct frontier_call *c,
                          int script, int p);
/* An integer or numeric string reply as an integer, else def. */
int64_t frontier__reply_int(const redisReply *r, int64_t def);

/* scripts.c: the text of a script (frontier/lua/<file>, embedded at build
 * time) and its file name ("" for an unknown script). */
const char *frontier__script_body(int script);
const char *frontier__script_file(int script);
int frontier__scripts_load(struct frontier *f);

#endif
