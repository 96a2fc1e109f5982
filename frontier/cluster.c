/*
 * cluster.c: membership and partition ownership of a node.
 *
 * Membership. A node writes a heartbeat every cluster.heartbeat seconds:
 * its id in the ZSET <prefix>:nodes with score now + cluster.node_timeout,
 * now being Redis's clock (TIME in lua/members.lua), and its figures in
 * the HASH <prefix>:node:<id> (for `dcrawl status`; expires after 3 node
 * timeouts). Every FRONTIER_POLL_MS it reads the live ids (score > Redis's
 * now) and the bitmap <prefix>:used of partitions that ever had a URL.
 * No node's wall clock enters a decision another node relies on: heartbeat
 * deadlines and URL lease deadlines are Redis's clock, partition leases
 * are Redis key expiry, so node clocks may be off by any amount. The
 * times the scripts keep per host (ready times, politeness clocks), which
 * move with a partition from owner to owner, are on Redis's clock too, as
 * each node estimates it from members.lua's reply (f->skew_ms; off by at
 * most half a round trip): so a host handed from a node whose clock is
 * ahead to one behind neither waits out the difference nor loses its gap.
 * A process that never ticks (seed, crawl, status) uses its own clock. Polling, not
 * keyspace notifications: it works the same on one Redis and on a Redis
 * Cluster, needs no server configuration, and a missed message cannot
 * leave a node with a stale view for longer than one poll.
 *
 * Assignment. The used partitions, in partition order, are placed on the
 * ring of live ids (ring.c: cluster.virtual_nodes points per node, bounded
 * loads with cluster.load_factor). Each node computes the assignment
 * itself; equal views give equal answers.
 *
 * Ownership is a lease per partition: <prefix>:{p}:own holds the owner's
 * id and expires after cluster.partition_lease unless renewed (every third
 * of it). The script `own` takes a free partition, renews a held one, or
 * names the holder; on taking, it returns to their queues the URL leases
 * other nodes left in the partition (a dead or lapsed holder's in-flight
 * URLs). A partition the ring gives to another node is drained: no new
 * pops, the URLs already taken here finish (held[p] counts them), then
 * `release` deletes the lease; only then can the new owner take it. So at
 * any moment at most one node may pop and fetch a partition's hosts. The
 * politeness clocks, connection counts (the host hash) and queues live in
 * the partition's keys, so the new owner continues where the old one
 * stopped.
 *
 * Local validity, on this process's monotonic clock (never its wall
 * clock): a node counts a partition as its own until the moment it SENT
 * the last successful renewal plus the lease minus a margin
 * (FRONTIER_OWN_MARGIN_MS or a tenth of the lease). Redis's expiry starts
 * no earlier than that send, so the node stops believing before Redis lets
 * anyone else take over, whatever the wall clocks say, as long as the
 * node's monotonic clock runs no slower than Redis's clock by more than
 * margin / lease (5 % for the default 10 s lease; real clocks drift by
 * 0.01 %, NTP slews by at most 0.05 %). A node that cannot renew in time
 * (Redis unreachable, the process stalled) loses its partitions.
 * frontier_cluster_owns, which says whether a transfer may START, turns 0
 * a third of the lease earlier still (FRONTIER_OWN_START), so a transfer
 * started at the last moment has that third plus the margin to end
 * before another node may take the host; leases not started go back
 * (FRONTIER_RETRY). A transfer still running when the validity ends (a
 * slow response) is aborted by the caller: frontier_cluster_expire marks
 * the lapsed partitions lost without a Redis call, and frontier__run
 * gives no Redis attempt an I/O timeout past the earliest validity end
 * and runs the caller's wait hook between attempts (redis.c), so the
 * caller notices in time even while Redis is unreachable. Redis's key expiry uses Redis's own clock: a jump of
 * the Redis host's clock (not of a node's) can end a lease early.
 *
 * Thread rules: as struct frontier.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "ring.h"

#define FRONTIER_POLL_MS 250
#define FRONTIER_OWN_MARGIN_MS 500
/* Transfers start only while a lease has more than lease / this left. */
#define FRONTIER_OWN_START 3
/* Entries of <prefix>:nodes dead this long are deleted by any node. */
#define FRONTIER_FORGET_MS 3600000

enum { OWN_NONE = 0, OWN_HELD = 1, OWN_DRAIN = 2 };

struct frontier_cluster {
    int vnodes;
    double load_factor;
    int64_t lease_ms, timeout_ms, heartbeat_ms;

    unsigned char *state;        /* per partition: OWN_* */
    int64_t *until;              /* ours until (mono ms), state != NONE */
    int64_t *renew_at;           /* mono ms */
    unsigned char *want;         /* the ring gives p to this node */
    uint32_t *items;             /* used partitions, in order */
    uint64_t *hash;
    uint32_t *owner;

    char *members;               /* live ids as last seen, "\n"-joined */
    struct ring *ring;
    long self;                   /* this node's index in ring, -1 if absent */
    size_t nlive;

    int64_t last_hb, last_poll;
    int64_t next_lapse;          /* mono ms: the earliest until[] held */
    int joined;
    struct frontier_cluster_view view;
};

void frontier__cluster_free(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;

    if (!cl)
        return;
    free(cl->state);
    free(cl->until);
    free(cl->renew_at);
    free(cl->want);
    free(cl->items);
    free(cl->hash);
    free(cl->owner);
    free(cl->members);
    ring_free(&cl->ring);
    free(cl);
    f->cl = NULL;
}

int frontier_cluster_join(struct frontier *f, const struct conf *c)
{
    struct frontier_cluster *cl;
    size_t n = (size_t)f->nparts;

    if (f->cl)
        return DC_OK;
    cl = xcalloc(1, sizeof(*cl));
    cl->vnodes = c->cluster_virtual_nodes < 1 ? 1 : c->cluster_virtual_nodes;
    cl->load_factor = c->cluster_load_factor;
    cl->lease_ms = (int64_t)(c->cluster_partition_lease * 1000.0);
    cl->timeout_ms = (int64_t)(c->cluster_node_timeout * 1000.0);
    cl->heartbeat_ms = (int64_t)(c->cluster_heartbeat * 1000.0);
    if (cl->lease_ms < 100)
        cl->lease_ms = 100;
    if (cl->timeout_ms < 100)
        cl->timeout_ms = 100;
    if (cl->heartbeat_ms < 50)
        cl->heartbeat_ms = 50;
    cl->state = xcalloc(n, 1);
    cl->until = xcalloc(n, sizeof(*cl->until));
    cl->renew_at = xcalloc(n, sizeof(*cl->renew_at));
    cl->want = xcalloc(n, 1);
    cl->items = xcalloc(n, sizeof(*cl->items));
    cl->hash = xcalloc(n, sizeof(*cl->hash));
    cl->owner = xcalloc(n, sizeof(*cl->owner));
    cl->members = xstrdup("");
    cl->self = -1;
    cl->next_lapse = INT64_MAX;
    f->cl = cl;
    /* a hung call must not hold the loop past a fraction of the timeout */
    frontier__io_set(f, cl->timeout_ms / 4 < 250 ? 250 : cl->timeout_ms / 4);
    return DC_OK;
}

static int64_t mono_ms(void)
{
    return dc_mono_us() / 1000;
}

int64_t frontier__rnow(const struct frontier *f, int64_t now_ms)
{
    return now_ms + f->skew_ms;
}

int64_t frontier__rlocal(const struct frontier *f, int64_t t)
{
    return t == INT64_MAX || t <= 0 ? t : t - f->skew_ms;
}

/* Redis's clock minus ours, from members.lua's reply (Redis's now first)
 * to a call sent at local t0 and answered at t1: the midpoint, so off by
 * at most half the round trip. */
static void skew_update(struct frontier *f, const redisReply *r, int64_t t0,
                        int64_t t1)
{
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER)
        f->skew_ms = r->element[0]->integer - (t0 + (t1 - t0) / 2);
}

/* now_ms (the caller's wall clock) is not used: validity is monotonic. */
int frontier_cluster_owns(const struct frontier *f, int p, int64_t now_ms)
{
    const struct frontier_cluster *cl = f->cl;

    (void)now_ms;
    if (!cl)
        return 1;
    if (p < 0 || p >= f->nparts)
        return 0;
    return cl->state[p] != OWN_NONE &&
           mono_ms() < cl->until[p] - cl->lease_ms / FRONTIER_OWN_START;
}

int frontier_cluster_holds(const struct frontier *f, int p)
{
    const struct frontier_cluster *cl = f->cl;

    if (!cl)
        return 1;
    if (p < 0 || p >= f->nparts)
        return 0;
    return cl->state[p] != OWN_NONE && mono_ms() < cl->until[p];
}

/* cl->next_lapse and the view's counts from the partitions held now. */
static void next_lapse_set(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;

    cl->next_lapse = INT64_MAX;
    cl->view.owned = cl->view.draining = 0;
    for (int p = 0; p < f->nparts; p++) {
        if (cl->state[p] != OWN_NONE && cl->until[p] < cl->next_lapse)
            cl->next_lapse = cl->until[p];
        cl->view.owned += cl->state[p] == OWN_HELD;
        cl->view.draining += cl->state[p] == OWN_DRAIN;
    }
}

uint64_t frontier_cluster_expire(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;
    int64_t now;

    if (!cl)
        return 0;
    now = mono_ms();
    if (now < cl->next_lapse)
        return cl->view.lost;
    for (int p = 0; p < f->nparts; p++)
        if (cl->state[p] != OWN_NONE && now >= cl->until[p]) {
            cl->state[p] = OWN_NONE; /* lapsed: not ours any more */
            cl->view.lost++;
        }
    next_lapse_set(f);
    return cl->view.lost;
}

int64_t frontier__cluster_left_ms(const struct frontier *f)
{
    const struct frontier_cluster *cl = f->cl;

    if (!cl || cl->next_lapse == INT64_MAX)
        return INT64_MAX;
    return cl->next_lapse - mono_ms();
}

int frontier__may_pop(const struct frontier *f, int p)
{
    const struct frontier_cluster *cl = f->cl;

    if (!cl)
        return 1;
    return cl->state[p] == OWN_HELD &&
           mono_ms() < cl->until[p] - cl->lease_ms / FRONTIER_OWN_START;
}

void frontier_cluster_view(const struct frontier *f,
                           struct frontier_cluster_view *v)
{
    if (!f->cl) {
        memset(v, 0, sizeof(*v));
        return;
    }
    *v = f->cl->view;
}

/* ---- one tick ---- */

static void heartbeat_calls(struct frontier *f, int64_t now,
                            const struct frontier_node_info *in,
                            struct frontier_call *c, size_t *n)
{
    struct frontier_cluster *cl = f->cl;
    struct frontier_strv *a;
    char host[256] = "";

    gethostname(host, sizeof(host) - 1);
    a = &c[*n].args;
    frontier__call_init(&c[(*n)++], -1);
    frontier__strv_pushs(a, "HSET");
    frontier__strv_pushf(a, "%s:node:%s", f->prefix, f->node);
    frontier__strv_pushs(a, "host");
    frontier__strv_pushs(a, host);
    frontier__strv_pushs(a, "pid");
    frontier__strv_pushf(a, "%ld", (long)getpid());
    frontier__strv_pushs(a, "started_ms");
    frontier__strv_pushf(a, "%lld", (long long)in->started_ms);
    frontier__strv_pushs(a, "updated_ms");
    frontier__strv_pushf(a, "%lld", (long long)now);
    frontier__strv_pushs(a, "pages");
    frontier__strv_pushf(a, "%lld", (long long)in->pages);
    frontier__strv_pushs(a, "pages_s");
    frontier__strv_pushf(a, "%.1f", in->pages_s);
    frontier__strv_pushs(a, "inflight");
    frontier__strv_pushf(a, "%lld", (long long)in->inflight);
    frontier__strv_pushs(a, "parts");
    frontier__strv_pushf(a, "%zu", cl->view.owned + cl->view.draining);
    frontier__strv_pushs(a, "level");
    frontier__strv_pushf(a, "%d", in->level);
    frontier__strv_pushs(a, "state");
    frontier__strv_pushs(a, in->state ? in->state : "idle");

    a = &c[*n].args;
    frontier__call_init(&c[(*n)++], -1);
    frontier__strv_pushs(a, "PEXPIRE");
    frontier__strv_pushf(a, "%s:node:%s", f->prefix, f->node);
    frontier__strv_pushf(a, "%lld", (long long)(3 * cl->timeout_ms));
}

/* The heartbeat itself (beat: node's deadline moves on) and the live ids,
 * both on Redis's clock (lua/members.lua). */
static void members_call(struct frontier *f, struct frontier_call *c,
                         int beat)
{
    frontier__call_init(c, FRONTIER_SCRIPT_MEMBERS);
    frontier__strv_pushf(&c->keys, "%s:nodes", f->prefix);
    frontier__strv_pushs(&c->args, beat ? f->node : "");
    frontier__strv_pushf(&c->args, "%lld", (long long)f->cl->timeout_ms);
    frontier__strv_pushf(&c->args, "%lld", (long long)FRONTIER_FORGET_MS);
}

/* Rebuild the ring when the live set changed. r: members.lua's reply,
 * { Redis's now, id... }. */
static int update_members(struct frontier *f, const redisReply *r)
{
    struct frontier_cluster *cl = f->cl;
    const char **ids;
    size_t n = 0, len = 1;
    char *joined;
    int self_seen = 0, rc;

    if (r->type != REDIS_REPLY_ARRAY)
        return frontier__seterr(f, DC_EREDIS, "cluster: bad nodes reply");
    ids = xcalloc(r->elements + 1, sizeof(*ids));
    for (size_t i = 1; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_STRING)
            continue;
        ids[n++] = e->str;
        len += e->len + 1;
        if (!strcmp(e->str, f->node))
            self_seen = 1;
    }
    if (!self_seen && cl->joined) { /* our own heartbeat may lag a poll */
        ids[n++] = f->node;
        len += strlen(f->node) + 1;
    }
    joined = xmalloc(len);
    joined[0] = '\0';
    {
        size_t off = 0;
        for (size_t i = 0; i < n; i++)
            off += (size_t)snprintf(joined + off, len - off, "%s\n", ids[i]);
    }
    if (cl->ring && !strcmp(joined, cl->members)) {
        free(joined);
        free(ids);
        return DC_OK;
    }
    ring_free(&cl->ring);
    rc = ring_new(&cl->ring, ids, n, cl->vnodes);
    free(ids);
    free(cl->members);
    cl->members = joined;
    if (rc)
        return frontier__seterr(f, rc, "cluster: cannot build the ring");
    cl->self = ring_find(cl->ring, f->node);
    cl->nlive = ring_nodes(cl->ring);
    cl->view.ring_changes++;
    return DC_OK;
}

int frontier__used_merge(struct frontier *f, const redisReply *r)
{
    size_t nbytes = ((size_t)f->nparts + 7) / 8;
    int grew = 0;

    if (r->type != REDIS_REPLY_STRING)
        return 0;
    for (size_t i = 0; i < nbytes && i < r->len; i++) {
        unsigned char b = (unsigned char)r->str[i];
        grew |= (b & ~f->used[i]) != 0;
        f->used[i] |= b;
    }
    return grew;
}

int frontier__is_used(const struct frontier *f, int p)
{
    return (f->used[p >> 3] >> (7 - (p & 7))) & 1; /* SETBIT's bit order */
}

static void assign(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;
    size_t m = 0;

    memset(cl->want, 0, (size_t)f->nparts);
    for (int p = 0; p < f->nparts; p++)
        if (frontier__is_used(f, p)) {
            cl->items[m] = (uint32_t)p;
            cl->hash[m++] = ring_item((uint64_t)p);
        }
    cl->view.used = m;
    if (!cl->ring || cl->self < 0)
        return;
    ring_assign(cl->ring, cl->hash, m, cl->load_factor, cl->owner);
    for (size_t i = 0; i < m; i++)
        if (cl->owner[i] == (uint32_t)cl->self)
            cl->want[cl->items[i]] = 1;
}

static void own_call(struct frontier *f, struct frontier_call *c, int p,
                     int64_t now)
{
    frontier__lease_call(f, c, FRONTIER_SCRIPT_OWN, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:own", f->prefix, p);
    frontier__strv_pushf(&c->args, "%lld", (long long)now);
    frontier__strv_pushs(&c->args, f->node);
    frontier__strv_pushf(&c->args, "%lld", (long long)f->cl->lease_ms);
    frontier__strv_pushf(&c->args, "%d", f->conns);
    frontier__strv_pushs(&c->args, f->qnative ? "1" : "0");
}

static void release_call(struct frontier *f, struct frontier_call *c, int p)
{
    frontier__call_init(c, FRONTIER_SCRIPT_RELEASE);
    frontier__strv_pushf(&c->keys, "%s:{%d}:own", f->prefix, p);
    frontier__strv_pushs(&c->args, f->node);
}

static int64_t margin(const struct frontier_cluster *cl)
{
    int64_t m = cl->lease_ms / 10;
    return m > FRONTIER_OWN_MARGIN_MS ? FRONTIER_OWN_MARGIN_MS : m;
}

/* Apply the reply of own/release call for partition p sent at `sent`. */
static void own_reply(struct frontier *f, int p, int release,
                      const redisReply *r, int64_t sent)
{
    struct frontier_cluster *cl = f->cl;
    int64_t code = -1;

    if (release) {
        cl->state[p] = OWN_NONE;
        cl->view.released++;
        return;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER)
        code = r->element[0]->integer;
    if (code == 1 || code == 2) {
        if (cl->state[p] == OWN_NONE) {
            cl->state[p] = cl->want[p] ? OWN_HELD : OWN_DRAIN;
            cl->view.acquired++;
            frontier__index_wake(f, p);
        }
        cl->until[p] = sent + cl->lease_ms - margin(cl);
        cl->renew_at[p] = sent + cl->lease_ms / 3;
        if (code == 2 && r->elements >= 2 &&
            r->element[1]->type == REDIS_REPLY_INTEGER)
            cl->view.reclaimed += (uint64_t)r->element[1]->integer;
        return;
    }
    if (cl->state[p] != OWN_NONE)
        cl->view.lost++;
    cl->state[p] = OWN_NONE;
}

/* Take, renew, drain and release partitions to match cl->want. Every
 * time here is the monotonic clock. */
static int sync_ownership(struct frontier *f, int64_t wall)
{
    int64_t now = mono_ms(), sent;
    struct frontier_cluster *cl = f->cl;
    size_t n = (size_t)f->nparts, k = 0;
    struct frontier_call *calls = xcalloc(n, sizeof(*calls));
    redisReply **rep = xcalloc(n, sizeof(*rep));
    int *part = xcalloc(n, sizeof(*part));
    unsigned char *rel = xcalloc(n, 1);
    int rc = DC_OK;

    for (int p = 0; p < f->nparts; p++) {
        if (cl->state[p] != OWN_NONE && now >= cl->until[p]) {
            cl->state[p] = OWN_NONE; /* lapsed: not ours any more */
            cl->view.lost++;
        }
        if (cl->state[p] == OWN_HELD && !cl->want[p])
            cl->state[p] = OWN_DRAIN;
        else if (cl->state[p] == OWN_DRAIN && cl->want[p])
            cl->state[p] = OWN_HELD;
        if (cl->state[p] == OWN_DRAIN && f->held[p] == 0) {
            release_call(f, &calls[k], p);
            rel[k] = 1;
        } else if ((cl->state[p] == OWN_NONE && cl->want[p]) ||
                   (cl->state[p] != OWN_NONE && now >= cl->renew_at[p])) {
            own_call(f, &calls[k], p, frontier__rnow(f, wall));
        } else {
            continue;
        }
        part[k++] = p;
    }
    sent = mono_ms(); /* Redis's expiry starts later than this */
    if (k)
        rc = frontier__run(f, calls, k, rep);
    for (size_t i = 0; !rc && i < k; i++)
        own_reply(f, part[i], rel[i], rep[i], sent);
    if (k)
        frontier__replies_free(rep, k);
    frontier__calls_free(calls, k);
    free(rep);
    free(part);
    free(rel);
    next_lapse_set(f);
    return rc;
}

int frontier_cluster_tick(struct frontier *f, int64_t now,
                          const struct frontier_node_info *info,
                          int64_t *next_ms)
{
    struct frontier_cluster *cl = f->cl;
    struct frontier_call calls[4];
    redisReply *rep[4];
    size_t n = 0, first;
    int rc, beat = 0;
    int64_t t0, t1;

    if (!cl)
        return frontier__seterr(f, DC_EINVAL, "cluster: not joined");
    if (now < cl->last_poll + FRONTIER_POLL_MS && !f->used_dirty &&
        now >= cl->last_poll) {
        *next_ms = cl->last_poll + FRONTIER_POLL_MS;
        return DC_OK;
    }
    if (!cl->joined || now >= cl->last_hb + cl->heartbeat_ms ||
        now < cl->last_hb) {
        heartbeat_calls(f, now, info, calls, &n);
        cl->last_hb = now;
        cl->joined = 1;
        beat = 1;
    }
    first = n;
    members_call(f, &calls[n++], beat);
    frontier__call_init(&calls[n], -1);
    frontier__strv_pushs(&calls[n].args, "GET");
    frontier__strv_pushf(&calls[n++].args, "%s:used", f->prefix);
    t0 = dc_now_ms();
    rc = frontier__run(f, calls, n, rep);
    t1 = dc_now_ms();
    if (!rc) {
        skew_update(f, rep[first], t0, t1);
        rc = update_members(f, rep[first]);
        (void)frontier__used_merge(f, rep[first + 1]);
        frontier__replies_free(rep, n);
    }
    for (size_t i = 0; i < n; i++)
        frontier__call_release(&calls[i]);
    if (rc)
        return rc;
    f->used_dirty = 0;
    cl->last_poll = now;
    assign(f);
    rc = sync_ownership(f, now);
    cl->view.nodes = cl->nlive;
    *next_ms = now + FRONTIER_POLL_MS;
    return rc;
}

int frontier_cluster_leave(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;
    size_t n = (size_t)f->nparts + 2, k = 0;
    struct frontier_call *calls;
    redisReply **rep;
    int rc;

    if (!cl)
        return DC_OK;
    calls = xcalloc(n, sizeof(*calls));
    rep = xcalloc(n, sizeof(*rep));
    for (int p = 0; p < f->nparts; p++)
        if (cl->state[p] != OWN_NONE && f->held[p] == 0) {
            release_call(f, &calls[k++], p);
            cl->state[p] = OWN_NONE;
        }
    frontier__call_init(&calls[k], -1);
    frontier__strv_pushs(&calls[k].args, "ZREM");
    frontier__strv_pushf(&calls[k].args, "%s:nodes", f->prefix);
    frontier__strv_pushs(&calls[k++].args, f->node);
    frontier__call_init(&calls[k], -1);
    frontier__strv_pushs(&calls[k].args, "DEL");
    frontier__strv_pushf(&calls[k++].args, "%s:node:%s", f->prefix, f->node);
    rc = frontier__run(f, calls, k, rep);
    if (!rc)
        frontier__replies_free(rep, k);
    frontier__calls_free(calls, k);
    free(rep);
    return rc;
}

int frontier_cluster_tick_due(const struct frontier *f)
{
    return f->cl && f->used_dirty;
}

void frontier__used_set(struct frontier *f, int p)
{
    if (frontier__is_used(f, p))
        return;
    f->used[p >> 3] |= (unsigned char)(0x80 >> (p & 7));
    f->used_dirty = 1;
}

void frontier__cluster_lost(struct frontier *f, int p)
{
    struct frontier_cluster *cl = f->cl;

    if (!cl || cl->state[p] == OWN_NONE)
        return;
    cl->state[p] = OWN_NONE;
    cl->view.lost++;
    next_lapse_set(f);
}

uint64_t frontier_reconnects(const struct frontier *f)
{
    return f->reconnects;
}

void frontier__mark_used(struct frontier *f, int p, struct frontier_call *c,
                         size_t *n)
{
    if (frontier__is_used(f, p))
        return;
    frontier__call_init(&c[*n], -1);
    frontier__strv_pushs(&c[*n].args, "SETBIT");
    frontier__strv_pushf(&c[*n].args, "%s:used", f->prefix);
    frontier__strv_pushf(&c[*n].args, "%d", p);
    frontier__strv_pushs(&c[(*n)++].args, "1");
}

void frontier__cluster_lapse(struct frontier *f)
{
    struct frontier_cluster *cl = f->cl;

    if (!cl)
        return;
    for (int p = 0; p < f->nparts; p++)
        if (cl->state[p] != OWN_NONE) {
            cl->state[p] = OWN_NONE;
            cl->view.lost++;
        }
    cl->last_poll = 0; /* poll, then own again, at the next tick */
    next_lapse_set(f);
}
