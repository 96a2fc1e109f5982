/*
 * u-status.c: frontier_status against a real redis-server (the one
 * tests/with-redis.sh starts; its URL is in DCRAWL_TEST_REDIS).
 *
 * The queues are driven through the frontier API (admit, pop, complete)
 * with clock values the test chooses; the cluster keys a node writes
 * (<prefix>:nodes, <prefix>:node:<id>, <prefix>:{p}:own, <prefix>:used)
 * are written raw in the documented layout. Expected figures come from
 * the test's own bookkeeping of what it admitted, popped and completed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "t.h"
#include "t-frontier.h"

#define NOW 1000000000LL /* the test's clock (ms) */

static const char *redis_url;
static redisContext *raw;

static unsigned long long batches(unsigned long long calls)
{
    return (calls + FRONTIER_STATUS_BATCH - 1) / FRONTIER_STATUS_BATCH;
}

/* The most round trips frontier_status may take for st's crawl: one per
 * batch of each pass (frontier/status.c), pass 2 with at most 6 calls per
 * partition plus one per node, pass 3 with 3 per (partition, depth). It
 * depends on the partitions and depths, never on how many URLs are queued
 * (for 16 partitions: 3). */
static unsigned long long rt_bound(const struct frontier_status *st)
{
    unsigned long long p = (unsigned long long)st->partitions;

    return 1 + batches(FRONTIER_STATUS_MAX_NODES + 6 * p) +
           batches(3 * p * (unsigned long long)st->ndepths);
}

static void rawcmd(const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    va_start(ap, fmt);
    r = redisvCommand(raw, fmt, ap);
    va_end(ap);
    CHECK(r && r->type != REDIS_REPLY_ERROR, "raw command %s: %s", fmt,
          r && r->str ? r->str : "no reply");
    if (r)
        freeReplyObject(r);
}

static long long raw_exists(const char *key)
{
    redisReply *r = redisCommand(raw, "EXISTS %s", key);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (r)
        freeReplyObject(r);
    return v;
}

static struct frontier *open_f(const char *prefix, int parts, int conns)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    c.frontier_partitions = parts;
    c.politeness_host_connections = conns;
    c.frontier_lease = 60;
    free(c.redis_prefix);
    c.redis_prefix = strdup(prefix);
    rc = frontier_open(&f, redis_url, &c, "n1", err, sizeof(err));
    CHECK(rc == DC_OK && f, "frontier_open: %d %s", rc, err);
    conf_release(&c);
    return f;
}

static struct frontier *open_status(const char *prefix)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    free(c.redis_prefix);
    c.redis_prefix = strdup(prefix);
    rc = frontier_status_open(&f, redis_url, &c, err, sizeof(err));
    CHECK(rc == DC_OK && f, "frontier_status_open: %d %s", rc, err);
    conf_release(&c);
    return f;
}

static struct frontier_status *status(struct frontier *s, int64_t now)
{
    struct frontier_status *st = NULL;
    int rc = frontier_status(s, now, &st);

    CHECK(rc == DC_OK && st, "frontier_status: %d %s", rc, frontier_errstr(s));
    return st;
}

static void admit1(struct frontier *f, const char *url, int depth)
{
    struct frontier_url u;
    unsigned char isnew = 0;

    t_mkurl(&u, url, depth);
    CHECK(frontier_admit(f, &u, 1, NOW, &isnew) == DC_OK && isnew,
          "admit %s", url);
}

static int part_of(struct frontier *f, const char *host)
{
    return frontier_partition(f, host, strlen(host));
}

static const struct frontier_status_node *
find_node(const struct frontier_status *st, const char *id)
{
    for (size_t i = 0; i < st->nnodes; i++)
        if (strcmp(st->nodes[i].id, id) == 0)
            return &st->nodes[i];
    return NULL;
}

/* ---- cases ---- */

/* An empty Redis: no crawl, nothing shown, and nothing written. */
static void test_empty(void)
{
    struct frontier *s = open_status("e");
    struct frontier_status *st = s ? status(s, NOW) : NULL;

    if (st) {
        CHECK(!st->crawl && st->nnodes == 0 && st->ndepths == 0 &&
                  st->partitions == 0 && st->total.queued == 0,
              "empty: crawl %d nodes %zu depths %d", st->crawl, st->nnodes,
              st->ndepths);
        CHECK(st->parts_used == -1, "no used bitmap: %lld",
              (long long)st->parts_used);
    }
    CHECK(raw_exists("e:meta") == 0, "status wrote e:meta");
    frontier_status_free(&st);
    frontier_status_free(&st); /* NULL is fine */
    frontier_close(&s);
}

/* Queues through a crawl's life, plus the membership keys. */
static void test_queues(void)
{
    struct frontier *f = open_f("q", 16, 1);
    struct frontier *s = open_status("q");
    struct frontier_status *st;
    struct frontier_lease *l = NULL;
    size_t n = 0;
    int64_t next;

    if (!f || !s)
        return;
    admit1(f, "http://h1/a", 0);
    admit1(f, "http://h1/b", 0);
    admit1(f, "http://h1/c", 0);
    admit1(f, "http://h2/a", 0);
    admit1(f, "http://h3/a", 1);
    admit1(f, "http://h3/b", 1);
    st = status(s, NOW);
    if (st) {
        CHECK(st->crawl && st->partitions == 16 && st->ndepths == 2,
              "crawl %d P %d depths %d", st->crawl, st->partitions,
              st->ndepths);
        CHECK(st->depths[0].queued == 4 && st->depths[0].hosts == 2 &&
                  st->depths[0].hosts_ready == 2,
              "d0 queued %lld hosts %lld ready %lld",
              (long long)st->depths[0].queued, (long long)st->depths[0].hosts,
              (long long)st->depths[0].hosts_ready);
        CHECK(st->depths[1].queued == 2 && st->depths[1].hosts == 1,
              "d1 queued %lld hosts %lld", (long long)st->depths[1].queued,
              (long long)st->depths[1].hosts);
        CHECK(st->admitted == 6 && st->nnodes == 0 && st->parts_owned == 0,
              "admitted %lld nodes %zu", (long long)st->admitted, st->nnodes);
        int expect = 1 + (part_of(f, "h1") != part_of(f, "h2")) +
                     (part_of(f, "h3") != part_of(f, "h1") &&
                      part_of(f, "h3") != part_of(f, "h2"));
        CHECK(st->parts_unowned_pending == expect,
              "unowned with work %lld, expected %d",
              (long long)st->parts_unowned_pending, expect);
        CHECK(st->roundtrips >= 2 && st->roundtrips <= rt_bound(st),
              "round trips %llu, at most %llu",
              (unsigned long long)st->roundtrips, rt_bound(st));
    }
    frontier_status_free(&st);

    /* Membership as the cluster code writes it: n1 live, n2 dead with
     * its figures, n3 dead without (not listed); h1's partition owned by
     * n1, one more by an id that is not a node. */
    rawcmd("ZADD q:nodes %lld n1 %lld n2 %lld n3", NOW + 10000, NOW - 1,
           NOW - 5000);
    rawcmd("HSET q:node:n1 host box1 pid 41 started_ms %lld updated_ms %lld "
           "pages 7 pages_s 2.5 inflight 2 parts 1 level 0 state fetching",
           NOW - 60000, NOW - 300);
    rawcmd("HSET q:node:n2 host box2 state idle updated_ms %lld", NOW - 10000);
    rawcmd("SET q:{%d}:own n1", part_of(f, "h1"));
    rawcmd("SET q:{%d}:own ghost", (part_of(f, "h1") + 1) % 16);
    rawcmd("SETBIT q:used %d 1", part_of(f, "h1"));

    /* host_connections 1: one lease per host; h1 keeps URLs queued and is
     * at its limit (BUSY), h2's queue is empty. */
    CHECK(frontier_pop(f, 0, NOW, 10, &l, &n, &next) == DC_OK && n == 2,
          "pop: %zu", n);
    st = status(s, NOW);
    if (st) {
        const struct frontier_status_node *n1 = find_node(st, "n1");
        const struct frontier_status_node *n2 = find_node(st, "n2");
        CHECK(st->depths[0].inflight == 2 && st->depths[0].queued == 2 &&
                  st->depths[0].hosts == 1 && st->depths[0].hosts_busy == 1,
              "after pop: inflight %lld queued %lld hosts %lld busy %lld",
              (long long)st->depths[0].inflight,
              (long long)st->depths[0].queued, (long long)st->depths[0].hosts,
              (long long)st->depths[0].hosts_busy);
        CHECK(st->nnodes == 2 && st->nlive == 1 && !find_node(st, "n3"),
              "nodes %zu live %zu", st->nnodes, st->nlive);
        CHECK(st->nnodes == 2 && strcmp(st->nodes[0].id, "n1") == 0,
              "live nodes first");
        CHECK(n1 && n1->live && n1->parts == 1 && n1->leases == 2 &&
                  n1->pages == 7 && n1->pages_s == 2.5 && n1->pid == 41 &&
                  n1->inflight == 2 && n1->parts_reported == 1 &&
                  n1->level == 0 && n1->host && !strcmp(n1->host, "box1") &&
                  n1->state && !strcmp(n1->state, "fetching") &&
                  n1->updated_ms == NOW - 300,
              "n1 figures");
        CHECK(n2 && !n2->live && n2->has_info && n2->parts == 0 &&
                  n2->pages == -1 && n2->state && !strcmp(n2->state, "idle"),
              "n2 figures");
        /* admit marked the partitions of h1, h2 and h3 used (the SETBIT
         * above repeats h1's) */
        int used = 1 + (part_of(f, "h1") != part_of(f, "h2")) +
                   (part_of(f, "h3") != part_of(f, "h1") &&
                    part_of(f, "h3") != part_of(f, "h2"));
        CHECK(st->parts_owned == 2 && st->parts_owner_unknown == 1 &&
                  st->parts_used == used,
              "owned %lld unknown %lld used %lld",
              (long long)st->parts_owned, (long long)st->parts_owner_unknown,
              (long long)st->parts_used);
        CHECK(st->leases_other == 0 && st->leases_unread == 0,
              "lease bookkeeping %lld %lld", (long long)st->leases_other,
              (long long)st->leases_unread);
    }
    frontier_status_free(&st);

    /* h1 done with a 60 s politeness gap, h2 failed. */
    int out[2], h1 = strcmp(l[0].host, "h1") == 0 ? 0 : 1;
    int64_t delay[2] = { 60000, 60000 };
    out[h1] = FRONTIER_DONE;
    out[1 - h1] = FRONTIER_FAILED;
    CHECK(frontier_complete(f, l, out, delay, n, NOW) == DC_OK, "complete");
    frontier_leases_free(l, n);
    st = status(s, NOW + 1);
    if (st) {
        CHECK(st->depths[0].done == 1 && st->depths[0].failed == 1 &&
                  st->depths[0].inflight == 0 && st->depths[0].queued == 2,
              "after complete: done %lld failed %lld inflight %lld queued %lld",
              (long long)st->depths[0].done, (long long)st->depths[0].failed,
              (long long)st->depths[0].inflight,
              (long long)st->depths[0].queued);
        CHECK(st->depths[0].hosts == 1 && st->depths[0].hosts_polite == 1 &&
                  st->depths[0].hosts_ready == 0,
              "h1 waits on politeness: polite %lld ready %lld",
              (long long)st->depths[0].hosts_polite,
              (long long)st->depths[0].hosts_ready);
        CHECK(st->total.done == 1 && st->total.queued == 4 &&
                  st->total.hosts == 2,
              "totals: done %lld queued %lld hosts %lld",
              (long long)st->total.done, (long long)st->total.queued,
              (long long)st->total.hosts);        /* the failed URL counts for its host; the done one does not */
        CHECK(st->nfail == 1 && !strcmp(st->fail[0].host, "h2") &&
                  st->fail[0].failed == 1,
              "error hosts: %zu, first %s", st->nfail,
              st->nfail ? st->fail[0].host : "-");
    }
    frontier_status_free(&st);
    /* after the gap h1 is ready again; after n1's deadline it is dead */
    st = status(s, NOW + 60001);
    if (st) {
        CHECK(st->depths[0].hosts_ready == 1 && st->depths[0].hosts_polite == 0,
              "after the gap: ready %lld", (long long)st->depths[0].hosts_ready);
        CHECK(st->nlive == 0, "n1 past its deadline: live %zu", st->nlive);
    }
    frontier_status_free(&st);
    frontier_close(&s);
    frontier_close(&f);
}

/* Many partitions: calls go in batches, the figures stay exact and the
 * round trips stay few: within rt_bound and the same for 10 times as
 * many queued URLs and hosts. */
static void test_batches(void)
{
    const int parts = 4096;
    struct frontier *f = open_f("b", parts, 1);
    struct frontier *s = open_status("b");
    struct frontier_status *st;
    unsigned long long rt_small = 0;
    char url[64];

    if (!f || !s)
        return;
    for (int i = 0; i < 50; i++) {
        snprintf(url, sizeof(url), "http://host%d/", i);
        admit1(f, url, 0);
    }
    st = status(s, NOW);
    if (st) {
        CHECK(st->depths[0].queued == 50 && st->depths[0].hosts == 50 &&
                  st->parts_unowned_pending > 0,
              "queued %lld hosts %lld", (long long)st->depths[0].queued,
              (long long)st->depths[0].hosts);
        /* pass 2 alone (6 calls per partition) is split into batches */
        CHECK(st->roundtrips >= 1 + batches(6ULL * parts) &&
                  st->roundtrips <= rt_bound(st),
              "round trips %llu, from %llu to %llu",
              (unsigned long long)st->roundtrips,
              1 + batches(6ULL * parts), rt_bound(st));
        rt_small = st->roundtrips;
    }
    frontier_status_free(&st);
    for (int i = 0; i < 500; i++) { /* 10 times the URLs and hosts */
        snprintf(url, sizeof(url), "http://host%d/p%d", i, i);
        admit1(f, url, 0);
    }
    st = status(s, NOW);
    if (st) {
        CHECK(st->depths[0].queued == 550 && st->depths[0].hosts == 500,
              "queued %lld hosts %lld", (long long)st->depths[0].queued,
              (long long)st->depths[0].hosts);
        CHECK(st->roundtrips == rt_small,
              "round trips %llu with 550 URLs, %llu with 50",
              (unsigned long long)st->roundtrips, rt_small);
    }
    frontier_status_free(&st);
    frontier_close(&s);
    frontier_close(&f);
}

/* The hosts with the most URLs given up: every partition's fail ZSET
 * (written raw) merged, the top FRONTIER_STATUS_FAIL_HOSTS kept, most
 * first. Then complete.lua's bound: a partition's ZSET keeps 1000 hosts,
 * dropping the one with the fewest. */
static void test_fail_hosts(void)
{
    static const struct { const char *host; int failed; } rows[] = {
        {"a.test", 3}, {"b.test", 40}, {"c.test", 7}, {"d.test", 1},
        {"e.test", 12}, {"f.test", 25}, {"g.test", 2}, {"h.test", 90},
        {"i.test", 5}, {"j.test", 60}, {"k.test", 8}, {"l.test", 31},
        {"m.test", 4}, {"n.test", 17},
    };
    /* the top 10 of rows, most first */
    static const char *const top[] = {"h.test", "j.test", "b.test", "l.test",
                                      "f.test", "n.test", "e.test", "k.test",
                                      "c.test", "i.test"};
    struct frontier *f = open_f("x", 8, 1);
    struct frontier *s = open_status("x");
    struct frontier_status *st;
    struct frontier_lease *l = NULL;
    size_t n = 0;
    int64_t next;
    int out = FRONTIER_FAILED, p;

    if (!f || !s)
        return;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        rawcmd("ZADD x:{%d}:fail %d %s", part_of(f, rows[i].host),
               rows[i].failed, rows[i].host);
    st = status(s, NOW);
    if (st) {
        CHECK(st->nfail == FRONTIER_STATUS_FAIL_HOSTS, "error hosts: %zu",
              st->nfail);
        for (size_t i = 0; i < st->nfail && i < 10; i++)
            CHECK(!strcmp(st->fail[i].host, top[i]), "error host %zu: %s, "
                  "expected %s", i, st->fail[i].host, top[i]);
    }
    frontier_status_free(&st);
    /* 1000 hosts with 5 each in z.test's partition: its first failure is
     * the fewest, dropped at once; the ZSET stays at 1000 */
    p = part_of(f, "z.test");
    rawcmd("DEL x:{%d}:fail", p);
    for (int i = 0; i < 1000; i++)
        rawcmd("ZADD x:{%d}:fail 5 host%d.test", p, i);
    admit1(f, "http://z.test/", 0);
    CHECK(frontier_pop(f, 0, NOW, 10, &l, &n, &next) == DC_OK && n == 1,
          "pop z.test: %zu", n);
    if (n == 1)
        CHECK(frontier_complete(f, l, &out, NULL, 1, NOW) == DC_OK,
              "complete z.test failed");
    frontier_leases_free(l, n);
    redisReply *r = redisCommand(raw, "ZCARD x:{%d}:fail", p);
    CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1000,
          "fail ZSET bounded: %lld", r ? r->integer : -1);
    if (r)
        freeReplyObject(r);
    frontier_close(&s);
    frontier_close(&f);
}

/* A key of the wrong type is a Redis error, not a crash or a guess. */
static void test_errors(void)
{
    struct frontier *s = open_status("w");
    struct frontier_status *st = (void *)1;
    struct frontier *bad = NULL;
    struct conf c;
    char err[256] = "";

    if (!s)
        return;
    rawcmd("HSET w:meta partitions 4");
    rawcmd("SET w:nodes x");
    CHECK(frontier_status(s, NOW, &st) == DC_EREDIS && st == NULL,
          "wrong type nodes: DC_EREDIS");
    CHECK(strstr(frontier_errstr(s), "WRONGTYPE") != NULL, "message: %s",
          frontier_errstr(s));
    rawcmd("DEL w:nodes");
    rawcmd("SET w:{2}:pend x");
    CHECK(frontier_status(s, NOW, &st) == DC_EREDIS && st == NULL,
          "wrong type pend: DC_EREDIS");
    frontier_close(&s);

    conf_init(&c);
    CHECK(frontier_status_open(&bad, "nosuch://x", &c, err, sizeof(err)) ==
              DC_EINVAL && !bad,
          "malformed URL: %s", err);
    CHECK(frontier_status_open(&bad, "unix:///nonexistent/dir/r.sock", &c, err,
                               sizeof(err)) == DC_EREDIS && !bad,
          "unreachable: %s", err);
    conf_release(&c);
}

int main(void)
{
    redis_url = getenv("DCRAWL_TEST_REDIS");
    if (!redis_url || strncmp(redis_url, "unix://", 7) != 0) {
        fprintf(stderr, "u-status: run under tests/with-redis.sh\n");
        return 1;
    }
    raw = redisConnectUnix(redis_url + 7);
    if (!raw || raw->err) {
        fprintf(stderr, "u-status: cannot connect to %s\n", redis_url);
        return 1;
    }
    test_empty();
    test_queues();
    test_batches();
    test_fail_hosts();
    test_errors();
    redisFree(raw);
    return t_done("u-status");
}
