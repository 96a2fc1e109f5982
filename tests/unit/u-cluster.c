/*
 * u-cluster: membership and partition ownership (frontier/cluster.c)
 * against a real redis-server, with several frontier handles standing for
 * nodes: they split the used partitions between them and never both own
 * one; a node's pops come only from its own partitions; a node that stops
 * ticking (killed) loses its partitions once their leases expire and the
 * new owner gets its in-flight URLs back; a partition moving to a joining
 * node is drained first: the new node cannot take it while the old one
 * still holds a URL of it.
 *
 * Leases are short (0.5 s) and every wait is bounded (WAIT_MS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "t.h"
#include "t-frontier.h"

#define PARTS 64
#define HOSTS 40
#define WAIT_MS 6000

static const char *redis_url;
static redisContext *raw;

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static struct frontier *node_open_as(const char *id, int join)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    c.frontier_partitions = PARTS;
    c.cluster_partition_lease = 0.5;
    c.cluster_node_timeout = 0.3;
    c.cluster_heartbeat = 0.1;
    rc = frontier_open(&f, redis_url, &c, id, err, sizeof(err));
    CHECK(rc == DC_OK && f, "open %s: %s", id, err);
    if (f && join)
        CHECK(frontier_cluster_join(f, &c) == DC_OK, "join %s", id);
    conf_release(&c);
    return f;
}

static struct frontier *node_open(const char *id)
{
    return node_open_as(id, 1);
}

static void tick(struct frontier *f)
{
    struct frontier_node_info in = { 0, 0, 0, 0.0, 0, "idle" };
    int64_t next;
    int rc = frontier_cluster_tick(f, dc_now_ms(), &in, &next);

    CHECK(rc == DC_OK, "tick: %s", frontier_errstr(f));
}

/* Tick the n nodes until every used partition has exactly one owner among
 * them and each sees `live` nodes; returns the ms it took, -1 on timeout. */
static int64_t settle(struct frontier **fs, size_t n, size_t live)
{
    int64_t t0 = dc_now_ms();

    while (dc_now_ms() - t0 < WAIT_MS) {
        size_t owned = 0, ok = 1;
        struct frontier_cluster_view v;
        for (size_t i = 0; i < n; i++) {
            tick(fs[i]);
            frontier_cluster_view(fs[i], &v);
            owned += v.owned;
            ok &= v.nodes == live && v.draining == 0;
        }
        frontier_cluster_view(fs[0], &v);
        if (ok && owned == v.used && v.used > 0)
            return dc_now_ms() - t0;
        sleep_ms(20);
    }
    return -1;
}

static void admit_hosts(struct frontier *f)
{
    struct frontier_url u[HOSTS];
    unsigned char isnew[HOSTS];
    char url[HOSTS][64];

    for (int i = 0; i < HOSTS; i++) {
        snprintf(url[i], sizeof(url[i]), "http://h%d.test/", i);
        t_mkurl(&u[i], url[i], 0);
    }
    CHECK(frontier_admit(f, u, HOSTS, dc_now_ms(), isnew) == DC_OK, "admit");
}

/* Owners of partition p in Redis and among the handles. */
static int owners(struct frontier **fs, size_t n, int p)
{
    int k = 0;

    for (size_t i = 0; i < n; i++)
        k += frontier_cluster_owns(fs[i], p, dc_now_ms());
    return k;
}

static int pop_all(struct frontier *f, struct frontier_lease **l, size_t *nl)
{
    int64_t next;
    int rc = frontier_pop(f, 0, dc_now_ms(), HOSTS * 2, l, nl, &next);

    CHECK(rc == DC_OK, "pop: %s", frontier_errstr(f));
    return rc;
}

static void t_split_and_failover(void)
{
    struct frontier *fs[2] = { node_open("n1"), node_open("n2") };
    struct frontier_lease *l1 = NULL, *l2 = NULL;
    struct frontier_cluster_view v1, v2;
    size_t n1 = 0, n2 = 0, exclusive = 1, both_own = 0;
    int64_t took;

    if (!fs[0] || !fs[1])
        return;
    admit_hosts(fs[0]);
    took = settle(fs, 2, 2);
    CHECK(took >= 0, "two nodes settle on an ownership split");
    frontier_cluster_view(fs[0], &v1);
    frontier_cluster_view(fs[1], &v2);
    printf("u-cluster: %zu used partitions split %zu / %zu in %lld ms\n",
           v1.used, v1.owned, v2.owned, (long long)took);
    CHECK(v1.owned > 0 && v2.owned > 0, "both nodes own partitions");
    CHECK(v1.owned <= (size_t)(1.05 * (double)v1.used / 2 + 1) &&
              v2.owned <= (size_t)(1.05 * (double)v1.used / 2 + 1),
          "bounded loads: %zu / %zu of %zu", v1.owned, v2.owned, v1.used);
    for (int p = 0; p < PARTS; p++) {
        char key[64];
        redisReply *r;
        int k = owners(fs, 2, p);
        if (k > 1)
            both_own++;
        snprintf(key, sizeof(key), "dc:{%d}:own", p);
        r = redisCommand(raw, "GET %s", key);
        if (r && k == 1) {
            const char *who = frontier_cluster_owns(fs[0], p, dc_now_ms())
                                  ? "n1" : "n2";
            exclusive &= r->type == REDIS_REPLY_STRING && !strcmp(r->str, who);
        }
        if (r)
            freeReplyObject(r);
    }
    CHECK(both_own == 0, "no partition owned by both (%zu)", both_own);
    CHECK(exclusive, "each owner is the one named in <prefix>:{p}:own");

    pop_all(fs[0], &l1, &n1);
    pop_all(fs[1], &l2, &n2);
    CHECK(n1 + n2 == HOSTS && n1 > 0 && n2 > 0, "pops: %zu + %zu", n1, n2);
    {
        int foreign = 0;
        for (size_t i = 0; i < n1; i++)
            foreign += !frontier_cluster_owns(fs[0], l1[i].partition,
                                              dc_now_ms());
        for (size_t i = 0; i < n2; i++)
            foreign += !frontier_cluster_owns(fs[1], l2[i].partition,
                                              dc_now_ms());
        CHECK(foreign == 0, "every lease is from the popper's partitions");
    }

    /* n2 dies holding its leases: it never ticks again. */
    {
        int64_t t0 = dc_now_ms();
        struct frontier_lease *again = NULL;
        size_t nagain = 0;
        took = settle(fs, 1, 1);
        frontier_cluster_view(fs[0], &v1);
        CHECK(took >= 0 && v1.owned == v1.used,
              "n1 took every partition after n2 died (%lld ms)",
              (long long)(dc_now_ms() - t0));
        CHECK(dc_now_ms() - t0 >= 300,
              "not before n2's heartbeat and leases expired (%lld ms)",
              (long long)(dc_now_ms() - t0));
        CHECK(v1.reclaimed == n2, "n2's %zu in-flight URLs went back (%llu)",
              n2, (unsigned long long)v1.reclaimed);
        pop_all(fs[0], &again, &nagain);
        CHECK(nagain == n2, "n1 pops n2's URLs again: %zu", nagain);
        frontier_leases_free(again, nagain);
    }
    frontier_leases_free(l1, n1);
    frontier_leases_free(l2, n2);
    frontier_close(&fs[0]);
    frontier_close(&fs[1]);
}

/*
 * n3 (fs[1]) joins while n1 (fs[0]) holds the nl leases l. Ticks both for
 * at least 1 s, and until the join has really happened (n1 sees n3 live
 * and n3 owns a partition n1 drained), at most WAIT_MS: partitions go to
 * n3 only once n1 completes their URLs. Completes the first half of l
 * after 300 ms and returns how many it completed; *moved_early counts
 * leases still held by n1 in partitions n3 owned meanwhile.
 */
static size_t join_ticks(struct frontier **fs, struct frontier_lease *l,
                         size_t nl, size_t *moved_early)
{
    struct frontier_cluster_view v1 = { 0 }, v3 = { 0 };
    size_t held = 0;
    int joined = 0;
    int64_t t0 = dc_now_ms();

    while (dc_now_ms() - t0 < WAIT_MS) {
        tick(fs[0]);
        tick(fs[1]);
        for (int p = 0; p < PARTS; p++)
            if (frontier_cluster_owns(fs[1], p, dc_now_ms())) {
                for (size_t i = held; i < nl; i++)
                    *moved_early += l[i].partition == p;
            }
        if (held == 0 && dc_now_ms() - t0 > 300) {
            int out[HOSTS] = { 0 };
            held = nl / 2;
            CHECK(frontier_complete(fs[0], l, out, NULL, held,
                                    dc_now_ms()) == DC_OK, "complete half");
        }
        frontier_cluster_view(fs[0], &v1);
        frontier_cluster_view(fs[1], &v3);
        joined = held > 0 && v1.nodes == 2 && v3.owned > 0;
        if (joined && dc_now_ms() - t0 >= 1000)
            break;
        sleep_ms(20);
    }
    CHECK(joined, "n3 joined and took a drained partition within %d ms "
          "(n1 sees %zu nodes, n3 owns %zu)", WAIT_MS, v1.nodes, v3.owned);
    return held;
}

/* A joining node gets a partition only after the old owner drained it. */
static void t_drain_on_join(void)
{
    struct frontier *fs[2] = { node_open("n1"), NULL };
    struct frontier_lease *l = NULL;
    size_t nl = 0, held = 0, moved_early = 0;

    if (!fs[0])
        return;
    admit_hosts(fs[0]);
    CHECK(settle(fs, 1, 1) >= 0, "one node owns everything");
    pop_all(fs[0], &l, &nl);
    CHECK(nl == HOSTS, "n1 holds one URL of every host: %zu", nl);
    fs[1] = node_open("n3");
    if (!fs[1])
        return;
    held = join_ticks(fs, l, nl, &moved_early);
    CHECK(moved_early == 0,
          "no partition with a URL still held by n1 went to n3 (%zu)",
          moved_early);
    {
        int out[HOSTS] = { 0 };
        struct frontier_cluster_view v3;
        CHECK(frontier_complete(fs[0], l + held, out, NULL, nl - held,
                                dc_now_ms()) == DC_OK, "complete the rest");
        CHECK(settle(fs, 2, 2) >= 0, "split settles after the drain");
        frontier_cluster_view(fs[1], &v3);
        CHECK(v3.owned > 0 && v3.reclaimed == 0,
              "n3 owns %zu partitions, took no lease from n1 (%llu)",
              v3.owned, (unsigned long long)v3.reclaimed);
    }
    CHECK(frontier_cluster_leave(fs[1]) == DC_OK, "n3 leaves");
    {
        redisReply *r = redisCommand(raw, "ZSCORE dc:nodes n3");
        CHECK(r && r->type == REDIS_REPLY_NIL, "n3 gone from dc:nodes");
        if (r)
            freeReplyObject(r);
    }
    CHECK(settle(fs, 1, 1) >= 0, "n1 takes the partitions back at once");
    frontier_leases_free(l, nl);
    frontier_close(&fs[0]);
    frontier_close(&fs[1]);
}

static void flush(void);

/* A node's level read covers a partition another client started using
 * after the node's last poll. */
static void t_level_used(void)
{
    struct frontier *f = node_open("n1"), *g = node_open_as("seeder", 0);
    int64_t pend[4];
    int lvl = 0;

    if (!f || !g)
        return;
    tick(f); /* f's view: no partition used */
    CHECK(frontier_level(f, 4, pend, &lvl) == DC_OK && lvl == -1,
          "nothing pending: %d", lvl);
    admit_hosts(g);
    CHECK(frontier_level(f, 4, pend, &lvl) == DC_OK && lvl == 0 &&
              pend[0] == HOSTS, "level 0 with %lld pending, level %d",
          (long long)pend[0], lvl);
    frontier_close(&f);
    frontier_close(&g);
}

/* A pop whose reply was lost (played here by a second handle with the
 * same node id) leaves leases this node does not hold: reclaimed. */
static void t_orphans(void)
{
    struct frontier *f = node_open("n1"), *g = node_open_as("n1", 0);
    struct frontier *fs[1];
    struct frontier_lease *l = NULL, *lost = NULL, *again = NULL;
    size_t nl = 0, nlost = 0, nagain = 0, back = 99;
    int64_t next;

    if (!f || !g)
        return;
    fs[0] = f;
    admit_hosts(f);
    CHECK(settle(fs, 1, 1) >= 0, "n1 owns everything");
    CHECK(frontier_pop(f, 0, dc_now_ms(), HOSTS / 2, &l, &nl, &next) == DC_OK &&
              nl == HOSTS / 2, "n1 holds %zu", nl);
    CHECK(frontier_reclaim_orphans(f, dc_now_ms(), &back) == DC_OK && back == 0,
          "nothing orphaned while every lease is held (%zu)", back);
    /* g pops without ownership checks (not joined): the "lost" leases */
    CHECK(frontier_pop(g, 0, dc_now_ms(), HOSTS, &lost, &nlost, &next) == DC_OK &&
              nlost == HOSTS - nl, "lost pop took %zu", nlost);
    CHECK(frontier_reclaim_orphans(f, dc_now_ms(), &back) == DC_OK &&
              back == nlost, "orphans reclaimed: %zu of %zu", back, nlost);
    CHECK(frontier_pop(f, 0, dc_now_ms(), HOSTS, &again, &nagain, &next) == DC_OK &&
              nagain == nlost, "and popped again: %zu", nagain);
    frontier_leases_free(l, nl);
    frontier_leases_free(lost, nlost);
    frontier_leases_free(again, nagain);
    frontier_close(&f);
    frontier_close(&g);
}

static int hook_calls;
static void count_hook(void *ud, int64_t ms)
{
    (void)ud, (void)ms;
    hook_calls++;
}

/* A node that stops renewing (cut off from Redis) stops holding its
 * partitions on its own clock, with no Redis call: frontier_cluster_expire
 * counts them lost; leases dropped uncompleted go back through the orphan
 * reclaim; the wait hook runs before Redis calls. */
static void t_lapse(void)
{
    struct frontier *f = node_open("n1");
    struct frontier *fs[1];
    struct frontier_lease *l = NULL;
    struct frontier_cluster_view v;
    size_t nl = 0, back = 99, held = 0;
    uint64_t lost0, lost1;
    int64_t next;

    if (!f)
        return;
    fs[0] = f;
    admit_hosts(f);
    CHECK(settle(fs, 1, 1) >= 0, "n1 owns everything");
    CHECK(frontier_pop(f, 0, dc_now_ms(), HOSTS / 2, &l, &nl, &next) == DC_OK &&
              nl > 0, "n1 holds %zu", nl);
    frontier_cluster_view(f, &v);
    lost0 = frontier_cluster_expire(f);
    for (int p = 0; p < PARTS; p++)
        held += frontier_cluster_holds(f, p);
    CHECK(held == v.owned && lost0 == v.lost, "within its validity: %zu held "
          "of %zu owned, lost %llu", held, v.owned, (unsigned long long)lost0);
    sleep_ms(600); /* past cluster.partition_lease (0.5 s), no renewal */
    held = 0;
    for (int p = 0; p < PARTS; p++)
        held += frontier_cluster_holds(f, p);
    lost1 = frontier_cluster_expire(f);
    frontier_cluster_view(f, &v);
    CHECK(held == 0 && v.owned == 0 && lost1 == lost0 + v.used,
          "after it: %zu held, %zu owned, %llu lost (+%zu)", held, v.owned,
          (unsigned long long)(lost1 - lost0), v.used);
    CHECK(frontier_cluster_expire(f) == lost1, "nothing lost twice");
    for (size_t i = 0; i < nl; i++)
        frontier_lease_drop(f, &l[i]);
    frontier_set_wait_hook(f, count_hook, NULL);
    CHECK(frontier_reclaim_orphans(f, dc_now_ms(), &back) == DC_OK && back == nl,
          "dropped leases back to their queues: %zu of %zu", back, nl);
    CHECK(hook_calls > 0, "the wait hook ran before the call (%d)", hook_calls);
    frontier_set_wait_hook(f, NULL, NULL);
    frontier_leases_free(l, nl);
    frontier_close(&f);
}

/* cluster.partition_by: the first client records it, later ones adopt. */
static void t_partition_by(void)
{
    struct frontier *f = NULL, *g = NULL;
    struct conf c;
    char err[256] = "", by[32] = "";

    conf_init(&c);
    c.frontier_partitions = 4096;
    free(c.cluster_partition_by);
    c.cluster_partition_by = strdup("domain");
    CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) == DC_OK,
          "open (domain): %s", err);
    free(c.cluster_partition_by);
    c.cluster_partition_by = strdup("host");
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) == DC_OK,
          "open (host): %s", err);
    conf_release(&c);
    if (!f || !g)
        goto out;
    CHECK(frontier_meta_get(f, "partition_by", by, sizeof(by)) == DC_OK &&
              !strcmp(by, "domain"), "meta partition_by '%s'", by);
    /* g asked for host but adopted domain: both agree */
    CHECK(frontier_partition(g, "a.example.co.uk", 15) ==
              frontier_partition(g, "b.example.co.uk:8080", 20) &&
          frontier_partition(f, "www.example.co.uk", 17) ==
              frontier_partition(g, "a.example.co.uk", 15),
          "hosts of one registrable domain share a partition");
    {
        int same = 0;
        char h[64];
        for (int i = 0; i < 32; i++) { /* other domains spread */
            snprintf(h, sizeof(h), "www.site%d.co.uk", i);
            same += frontier_partition(g, h, strlen(h)) ==
                    frontier_partition(g, "a.example.co.uk", 15);
        }
        CHECK(same <= 2, "other domains elsewhere (%d of 32 collide)", same);
    }
    CHECK(frontier_partition(f, "[::1]:80", 8) != -1 &&
              frontier_partition(f, "10.0.0.1", 8) ==
                  frontier_partition(f, "10.0.0.1:8080", 13),
          "an IP literal is its own domain, port ignored");
out:
    frontier_close(&f);
    frontier_close(&g);
    flush();
    conf_init(&c);
    c.frontier_partitions = 4096;
    free(c.cluster_partition_by);
    c.cluster_partition_by = strdup("ip");
    CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) == DC_OK,
          "open (ip): %s", err);
    conf_release(&c);
    if (!f)
        return;
    CHECK(frontier_partition(f, "localhost:8080", 14) ==
              frontier_partition(f, "127.0.0.1", 9),
          "ip: localhost shares 127.0.0.1's partition");
    CHECK(frontier_partition(f, "no-such-host.invalid", 20) ==
              frontier_partition(f, "no-such-host.invalid:81", 23),
          "ip: an unresolvable host is its own key");
    frontier_close(&f);
}

static void flush(void)
{
    redisReply *r = redisCommand(raw, "FLUSHDB");
    if (r)
        freeReplyObject(r);
}

int main(void)
{
    redis_url = getenv("DCRAWL_TEST_REDIS");
    if (!redis_url || strncmp(redis_url, "unix://", 7) != 0) {
        fprintf(stderr, "u-cluster: DCRAWL_TEST_REDIS=unix://... not set\n");
        return 1;
    }
    raw = redisConnectUnix(redis_url + 7);
    if (!raw || raw->err) {
        fprintf(stderr, "u-cluster: cannot connect to %s\n", redis_url);
        return 1;
    }
    flush();
    t_split_and_failover();
    flush();
    t_drain_on_join();
    flush();
    t_partition_by();
    flush();
    t_orphans();
    flush();
    t_lapse();
    flush();
    t_level_used();
    redisFree(raw);
    return t_done("u-cluster");
}
