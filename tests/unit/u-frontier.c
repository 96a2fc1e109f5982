/*
 * u-frontier.c: the frontier against a real redis-server (the one
 * tests/with-redis.sh starts; its URL is in DCRAWL_TEST_REDIS).
 *
 * Each case starts from an empty database (FLUSHDB) and drives the
 * frontier with clock values it chooses (no sleeping). Expected values
 * come from the test's own bookkeeping of what it admitted, popped and
 * completed, and from raw Redis queries of the documented key layout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"
#include "t.h"
#include "t-frontier.h"

static const char *redis_url;
static redisContext *raw;
/* The server has the dcrawl-seen module (DCRAWL_TEST_LAYOUT says which
 * layout the run expects: "mod" or "b256"), so the frontier picks mod-u64. */
static int have_module;

/* ---- helpers ---- */

static long long raw_int(const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(raw, fmt, arg);
    long long v = -1;

    if (r && r->type == REDIS_REPLY_INTEGER)
        v = r->integer;
    else if (r && r->type == REDIS_REPLY_STRING)
        v = atoll(r->str);
    else if (r && r->type == REDIS_REPLY_ARRAY)
        v = (long long)r->elements;
    else if (r && r->type == REDIS_REPLY_NIL)
        v = 0;
    if (r)
        freeReplyObject(r);
    return v;
}

/* Host state fields ("<act>[@<td>] <next>",
 * frontier/lua/lib/common.lua) with a URL in flight, over every partition. */
/* Hosts with URLs in flight (a host field not starting with "0 "), the
 * fields read from a HASH or the native layout's map (DCFRONT.SDUMP). */
static long long in_flight(void)
{
    return raw_int("EVAL %s 0",
                   "local n = 0 "
                   "for _, k in ipairs(redis.call('KEYS', 'dc:*:host')) do "
                   "local t = redis.call('TYPE', k)['ok'] "
                   "local all = t == 'hash' and redis.call('HGETALL', k) "
                   "or redis.call('DCFRONT.SDUMP', k) "
                   "for i = 2, #all, 2 do "
                   "if string.sub(all[i], 1, 2) ~= '0 ' then n = n + 1 end "
                   "end end return n");
}

static void flush(void)
{
    redisReply *r = redisCommand(raw, "FLUSHDB");
    if (r)
        freeReplyObject(r);
}

static void leases_expire(void)
{
    t_leases_expire(raw, "dc:*:lease");
}

static struct frontier *open_f(int parts, int conns, double lease_s,
                               const char *node)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    c.frontier_partitions = parts;
    c.politeness_host_connections = conns;
    c.frontier_lease = lease_s;
    rc = frontier_open(&f, redis_url, &c, node, err, sizeof(err));
    CHECK(rc == DC_OK && f, "frontier_open: %d %s", rc, err);
    conf_release(&c);
    return f;
}

/* Admit n URLs given as strings at one depth; returns how many were new. */
static int admit(struct frontier *f, const char **urls, size_t n, int depth,
                 int64_t now, unsigned char *isnew)
{
    struct frontier_url *u = calloc(n, sizeof(*u));
    unsigned char *mine = isnew ? isnew : calloc(n, 1);
    int count = 0, rc;

    for (size_t i = 0; i < n; i++)
        t_mkurl(&u[i], urls[i], depth);
    rc = frontier_admit(f, u, n, now, mine);
    CHECK(rc == DC_OK, "admit: %d %s", rc, frontier_errstr(f));
    for (size_t i = 0; i < n; i++)
        count += mine[i];
    if (!isnew)
        free(mine);
    free(u);
    return count;
}

static size_t pop(struct frontier *f, int depth, int64_t now, size_t max,
                  struct frontier_lease **l, int64_t *next)
{
    size_t n = 0;
    int64_t nx;
    int rc = frontier_pop(f, depth, now, max, l, &n, next ? next : &nx);

    CHECK(rc == DC_OK, "pop: %d %s", rc, frontier_errstr(f));
    return n;
}

static void complete(struct frontier *f, const struct frontier_lease *l,
                     size_t n, int outcome, int64_t delay, int64_t now)
{
    int *o = calloc(n ? n : 1, sizeof(*o));
    int64_t *d = calloc(n ? n : 1, sizeof(*d));
    int rc;

    for (size_t i = 0; i < n; i++) {
        o[i] = outcome;
        d[i] = delay;
    }
    rc = frontier_complete(f, l, o, d, n, now);
    CHECK(rc == DC_OK, "complete: %d %s", rc, frontier_errstr(f));
    free(o);
    free(d);
}

static int level(struct frontier *f, int maxd, int64_t *pending)
{
    int64_t tmp[8];
    int lv = -2;
    int rc = frontier_level(f, maxd, pending ? pending : tmp, &lv);

    CHECK(rc == DC_OK, "level: %d", rc);
    return lv;
}

static int count_host(const struct frontier_lease *l, size_t n,
                      const char *host)
{
    int c = 0;

    for (size_t i = 0; i < n; i++)
        c += strcmp(l[i].host, host) == 0;
    return c;
}

/* ---- cases ---- */

static void t_admit_once(void)
{
    struct frontier *f = open_f(8, 1, 60, "n1");
    const char *b1[] = { "http://a.test/1", "http://b.test/1",
                         "http://a.test/1" };
    const char *b2[] = { "http://a.test/1", "http://c.test/1" };
    unsigned char isnew[3];
    struct frontier_stats st;

    admit(f, b1, 3, 0, 1000, isnew);
    CHECK(isnew[0] == 1 && isnew[1] == 1 && isnew[2] == 0,
          "batch 1: %d %d %d", isnew[0], isnew[1], isnew[2]);
    admit(f, b2, 2, 0, 1000, isnew);
    CHECK(isnew[0] == 0 && isnew[1] == 1, "batch 2: %d %d", isnew[0],
          isnew[1]);
    /* the same URL at another depth is still the same URL */
    admit(f, b2, 1, 1, 1000, isnew);
    CHECK(isnew[0] == 0, "other depth: %d", isnew[0]);
    CHECK(frontier_stats(f, &st) == DC_OK, "stats");
    CHECK(st.admitted == 3 && st.seen == 3, "admitted %lld seen %lld",
          (long long)st.admitted, (long long)st.seen);
    CHECK(st.queued == 3 && st.leased == 0, "queued %lld",
          (long long)st.queued);
    frontier_close(&f);
    CHECK(f == NULL, "close sets NULL");
    frontier_close(&f);
}

/* Two handles admit overlapping, interleaved batches. */
static void t_admit_two_handles(void)
{
    enum { N = 300, B = 25 };
    struct frontier *f1 = open_f(16, 1, 60, "n1");
    struct frontier *f2 = open_f(16, 1, 60, "n2");
    static char buf[N][64];
    const char *urls[N];
    int newcount[N] = { 0 };
    unsigned char isnew[B];

    for (int i = 0; i < N; i++) {
        snprintf(buf[i], sizeof(buf[i]), "http://h%d.test/p%d", i % 37, i);
        urls[i] = buf[i];
    }
    /* f1 walks 0..N forward, f2 walks N-B..0 backward, alternating. */
    for (int k = 0; k < N / B; k++) {
        int a = k * B, b = N - (k + 1) * B;
        admit(f1, urls + a, B, 0, 1000, isnew);
        for (int i = 0; i < B; i++)
            newcount[a + i] += isnew[i];
        admit(f2, urls + b, B, 0, 1000, isnew);
        for (int i = 0; i < B; i++)
            newcount[b + i] += isnew[i];
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += newcount[i] != 1;
    CHECK(bad == 0, "%d URLs not new exactly once", bad);
    int64_t pend[1];
    level(f1, 1, pend);
    CHECK(pend[0] == N, "pending %lld", (long long)pend[0]);
    frontier_close(&f1);
    frontier_close(&f2);
}

static void t_host_conns_1(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *u[] = { "http://a.test/1", "http://a.test/2", "http://a.test/3",
                        "http://b.test/1", "http://b.test/2" };
    struct frontier_lease *l, *l2;
    int64_t next;
    size_t n, n2;

    admit(f, u, 5, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, &next);
    CHECK(n == 2, "one per host: %zu", n);
    CHECK(count_host(l, n, "a.test") == 1 && count_host(l, n, "b.test") == 1,
          "hosts");
    n2 = pop(f, 0, 1000, 10, &l2, &next);
    CHECK(n2 == 0, "both busy: %zu", n2);
    CHECK(next == INT64_MAX, "nothing known ready: %lld", (long long)next);
    frontier_leases_free(l2, n2);

    /* complete a's lease with a 500 ms politeness gap */
    size_t ia = strcmp(l[0].host, "a.test") == 0 ? 0 : 1;
    complete(f, &l[ia], 1, FRONTIER_DONE, 500, 1000);
    n2 = pop(f, 0, 1200, 10, &l2, &next);
    CHECK(n2 == 0, "a not before its delay: %zu", n2);
    CHECK(next == 1500, "next %lld", (long long)next);
    frontier_leases_free(l2, n2);
    n2 = pop(f, 0, 1499, 10, &l2, &next);
    CHECK(n2 == 0, "a not at 1499: %zu", n2);
    frontier_leases_free(l2, n2);
    n2 = pop(f, 0, 1500, 10, &l2, &next);
    CHECK(n2 == 1 && strcmp(l2[0].host, "a.test") == 0, "a at 1500: %zu", n2);
    CHECK(n2 == 1 && strcmp(l2[0].url, "http://a.test/2") == 0,
          "FIFO within host: %s", n2 ? l2[0].url : "-");
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

static void t_host_conns_3(void)
{
    struct frontier *f = open_f(4, 3, 60, "n1");
    const char *u[] = { "http://a.test/1", "http://a.test/2", "http://a.test/3",
                        "http://a.test/4", "http://a.test/5" };
    struct frontier_lease *l, *l2;
    size_t n, n2;

    admit(f, u, 5, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 3, "three at once: %zu", n);
    n2 = pop(f, 0, 1000, 10, &l2, NULL);
    CHECK(n2 == 0, "host full: %zu", n2);
    frontier_leases_free(l2, n2);
    complete(f, &l[0], 1, FRONTIER_DONE, 100, 1000);
    n2 = pop(f, 0, 1050, 10, &l2, NULL);
    CHECK(n2 == 0, "delay after completion: %zu", n2);
    frontier_leases_free(l2, n2);
    n2 = pop(f, 0, 1100, 10, &l2, NULL);
    CHECK(n2 == 1, "one slot freed: %zu", n2);
    frontier_leases_free(l2, n2);
    /* max is honoured even when the host has free slots */
    complete(f, &l[1], 2, FRONTIER_DONE, 0, 1200);
    n2 = pop(f, 0, 1200, 1, &l2, NULL);
    CHECK(n2 == 1, "max 1: %zu", n2);
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* How many URLs of depth 0 a pop leases at now (the leases dropped). */
/* How many URLs of depth a pop leases (the leases are not kept). */
static size_t pop_at(struct frontier *f, int depth, int64_t now, size_t max)
{
    struct frontier_lease *l;
    size_t n = pop(f, depth, now, max, &l, NULL);
    frontier_leases_free(l, n);
    return n;
}

static size_t pop_count(struct frontier *f, int64_t now, size_t max)
{
    return pop_at(f, 0, now, max);
}

static void t_lease_ahead(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *u[] = { "http://a.test/1", "http://a.test/2", "http://a.test/3",
                        "http://a.test/4", "http://a.test/5", "http://b.test/1" };
    struct frontier_lease *l, *l2, *l3;
    size_t n, n2, n3;

    frontier_set_lease_ahead(f, 2);
    admit(f, u, 6, 0, 1000, NULL);
    n = pop(f, 0, 1000, 2, &l, NULL);
    CHECK(n == 2 && count_host(l, n, "a.test") == 1 &&
          count_host(l, n, "b.test") == 1,
          "host_connections first, for every host: %zu", n);
    n2 = pop(f, 0, 1000, 10, &l2, NULL);
    CHECK(n2 == 2 && count_host(l2, n2, "a.test") == 2,
          "then 2 ahead of a: %zu", n2);
    CHECK(pop_count(f, 1000, 10) == 0, "a holds 1 + 2");
    /* a completion with no gap frees one place in the window */
    complete(f, &l[strcmp(l[0].host, "a.test") == 0 ? 0 : 1], 1,
             FRONTIER_DONE, 0, 1100);
    n3 = pop(f, 0, 1100, 10, &l3, NULL);
    CHECK(n3 == 1 && strcmp(l3[0].url, "http://a.test/4") == 0,
          "window refilled in order: %zu %s", n3, n3 ? l3[0].url : "-");
    frontier_leases_free(l3, n3);
    /* with a politeness gap, a is back to host_connections (1) */
    complete(f, &l2[0], 1, FRONTIER_DONE, 500, 1200);
    CHECK(pop_count(f, 1800, 10) == 0, "gap: no lease ahead while a holds 2");
    /* one of the two done with a gap: one URL ahead again once it passed */
    complete(f, &l2[1], 1, FRONTIER_DONE, 500, 1900);
    CHECK(pop_count(f, 2000, 10) == 0, "gap: nothing before the clock");
    CHECK(pop_count(f, 2400, 10) == 1, "gap: host_connections + 1");
    CHECK(pop_count(f, 2400, 10) == 0, "gap: never more than 1 ahead");
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* A retry's own back-off holds its host only when nothing else of the host
 * is queued. */
static void t_retry_backoff(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *u[] = { "http://r.test/1", "http://r.test/2" };
    struct frontier_lease *l, *l2, *l3;
    size_t n, n2, n3;

    admit(f, u, 2, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 1 && strcmp(l[0].url, u[0]) == 0, "first: %zu", n);
    l[0].retry_ms = 5000;
    complete(f, l, 1, FRONTIER_RETRY, 100, 1000);
    n2 = pop(f, 0, 1100, 10, &l2, NULL);
    CHECK(n2 == 1 && strcmp(l2[0].url, u[1]) == 0,
          "the host's other URL goes on after its gap: %zu", n2);
    complete(f, l2, 1, FRONTIER_DONE, 100, 1200);
    n3 = pop(f, 0, 1300, 10, &l3, NULL);
    CHECK(n3 == 1 && strcmp(l3[0].url, u[0]) == 0, "then the retried one");
    l3[0].retry_ms = 5000;
    complete(f, l3, 1, FRONTIER_RETRY, 100, 1300);
    CHECK(pop_count(f, 2000, 10) == 0, "alone in its queue: held");
    CHECK(pop_count(f, 6300, 10) == 1, "after its own back-off");
    frontier_leases_free(l3, n3);
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

static void t_depths(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *d0[] = { "http://a.test/0", "http://b.test/0" };
    const char *d1[] = { "http://a.test/1", "http://c.test/1" };
    struct frontier_lease *l;
    int64_t pend[3];
    size_t n;

    admit(f, d0, 2, 0, 1000, NULL);
    admit(f, d1, 2, 1, 1000, NULL);
    CHECK(level(f, 3, pend) == 0, "level 0 first");
    CHECK(pend[0] == 2 && pend[1] == 2 && pend[2] == 0, "pend %lld %lld %lld",
          (long long)pend[0], (long long)pend[1], (long long)pend[2]);

    n = pop(f, 1, 1000, 10, &l, NULL);
    CHECK(n == 2, "depth 1 pop: %zu", n);
    for (size_t i = 0; i < n; i++)
        CHECK(l[i].depth == 1 && strstr(l[i].url, "/1"), "depth-1 only: %s",
              l[i].url);
    complete(f, l, n, FRONTIER_DONE, 0, 1000);
    frontier_leases_free(l, n);
    CHECK(level(f, 3, pend) == 0 && pend[1] == 0, "level still 0");

    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 2, "depth 0 pop: %zu", n);
    for (size_t i = 0; i < n; i++)
        CHECK(l[i].depth == 0 && strstr(l[i].url, "/0"), "depth-0 only: %s",
              l[i].url);
    CHECK(level(f, 3, NULL) == 0, "in flight still counts");
    complete(f, l, n, FRONTIER_DONE, 0, 1000);
    frontier_leases_free(l, n);
    CHECK(level(f, 3, pend) == -1, "all drained");
    frontier_close(&f);
}

/* level goes 0 -> 1 -> -1 as levels drain */
static void t_levels(void)
{
    struct frontier *f = open_f(8, 1, 60, "n1");
    const char *d0[] = { "http://a.test/", "http://b.test/" };
    const char *d1[] = { "http://a.test/x" };
    struct frontier_lease *l;
    size_t n;

    CHECK(level(f, 3, NULL) == -1, "empty");
    admit(f, d0, 2, 0, 1000, NULL);
    CHECK(level(f, 3, NULL) == 0, "level 0");
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 2, "pop 2: %zu", n);
    admit(f, d1, 1, 1, 1000, NULL);   /* a link found while fetching */
    CHECK(level(f, 3, NULL) == 0, "still 0 while in flight");
    complete(f, l, n, FRONTIER_DONE, 50, 1000);
    frontier_leases_free(l, n);
    CHECK(level(f, 3, NULL) == 1, "level 1");
    /* a.test was busy when d1 was admitted; completion must free it */
    n = pop(f, 1, 1049, 10, &l, NULL);
    CHECK(n == 0, "politeness across depths: %zu", n);
    frontier_leases_free(l, n);
    n = pop(f, 1, 1050, 10, &l, NULL);
    CHECK(n == 1 && l[0].depth == 1, "depth 1 URL: %zu", n);
    complete(f, l, n, FRONTIER_FAILED, 0, 1100);
    frontier_leases_free(l, n);
    CHECK(level(f, 3, NULL) == -1, "drained");
    frontier_close(&f);
}

static void t_reclaim_deadline(void)
{
    struct frontier *f = open_f(4, 1, 1, "n1");   /* 1 s leases */
    const char *u[] = { "http://a.test/1", "http://a.test/2" };
    struct frontier_lease *l, *l2;
    struct frontier_stats st;
    int64_t pend[1];
    size_t n, n2, got = 9;

    admit(f, u, 2, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 1 && strcmp(l[0].url, u[0]) == 0, "first lease");
    CHECK(frontier_reclaim(f, 1999, 0, &got) == DC_OK && got == 0,
          "not expired: %zu", got);
    /* a reclaimer whose clock is a minute ahead does not expire it either:
     * the deadline is Redis's clock */
    CHECK(frontier_reclaim(f, dc_now_ms() + 60000, 0, &got) == DC_OK &&
          got == 0, "not expired for a clock ahead: %zu", got);
    leases_expire();
    CHECK(frontier_reclaim(f, 2000, 0, &got) == DC_OK && got == 1,
          "expired: %zu", got);
    /* the reclaimed URL is back at the front of its queue */
    n2 = pop(f, 0, 2000, 10, &l2, NULL);
    CHECK(n2 == 1 && strcmp(l2[0].url, u[0]) == 0, "requeued at front: %s",
          n2 ? l2[0].url : "-");
    complete(f, l2, n2, FRONTIER_DONE, 0, 2000);
    frontier_leases_free(l2, n2);
    /* the stale lease completes late: counted nowhere twice */
    complete(f, l, n, FRONTIER_DONE, 0, 2000);
    level(f, 1, pend);
    CHECK(pend[0] == 1, "pend after late completion: %lld", (long long)pend[0]);
    frontier_stats(f, &st);
    CHECK(st.done == 1, "done once: %lld", (long long)st.done);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* Renewing held leases moves their deadline to Redis's clock plus the
 * lease time: one set to the past no longer expires; a lease completed or
 * reclaimed is not added back. */
static void t_renew(void)
{
    struct frontier *f = open_f(4, 1, 1, "n1");   /* 1 s leases */
    const char *u[] = { "http://a.test/1", "http://b.test/1",
                        "http://c.test/1" };
    struct frontier_lease *l;
    size_t n, got = 9;

    admit(f, u, 3, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 3, "three leases: %zu", n);
    complete(f, l + 2, 1, FRONTIER_DONE, 0, 1000);
    leases_expire();              /* every deadline in the past */
    CHECK(frontier_renew(f, l, 3, &got) == DC_OK && got == 2,
          "renewed the two held: %zu", got);
    CHECK(frontier_reclaim(f, 2000, 0, &got) == DC_OK && got == 0,
          "renewed leases do not expire: %zu", got);
    CHECK(raw_int("EVAL %s 0", "local n = 0 for _, k in ipairs("
                  "redis.call('KEYS', 'dc:*:lease')) do "
                  "n = n + redis.call('ZCARD', k) end return n") == 2,
          "the completed lease is not back");
    leases_expire();
    CHECK(frontier_reclaim(f, 2000, 0, &got) == DC_OK && got == 2,
          "expired again: %zu", got);
    CHECK(frontier_renew(f, l, 2, &got) == DC_OK && got == 0,
          "reclaimed leases are not revived: %zu", got);
    CHECK(frontier_renew(f, l, 0, &got) == DC_OK && got == 0, "none");
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* Completing a lease that was reclaimed (but not yet re-popped) removes the
 * requeued copy, so the URL is not fetched twice. */
static void t_complete_reclaimed(void)
{
    struct frontier *f = open_f(4, 1, 1, "n1");
    const char *u[] = { "http://a.test/1", "http://a.test/2" };
    struct frontier_lease *l, *l2;
    struct frontier_stats st;
    int64_t pend[1];
    size_t n, n2, got = 0;

    admit(f, u, 2, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    leases_expire();
    CHECK(frontier_reclaim(f, 5000, 0, &got) == DC_OK && got == 1,
          "reclaimed %zu", got);
    complete(f, l, n, FRONTIER_DONE, 0, 5000);
    level(f, 1, pend);
    CHECK(pend[0] == 1, "pend %lld", (long long)pend[0]);
    n2 = pop(f, 0, 5000, 10, &l2, NULL);
    CHECK(n2 == 1 && strcmp(l2[0].url, u[1]) == 0, "the other URL: %s",
          n2 ? l2[0].url : "-");
    complete(f, l2, n2, FRONTIER_DONE, 0, 5000);
    frontier_leases_free(l2, n2);
    n2 = pop(f, 0, 5000, 10, &l2, NULL);
    CHECK(n2 == 0, "nothing fetched twice: %zu", n2);
    frontier_leases_free(l2, n2);
    CHECK(level(f, 1, pend) == -1 && pend[0] == 0, "drained");
    frontier_stats(f, &st);
    CHECK(st.done == 2 && st.leased == 0 && st.queued == 0,
          "done %lld leased %lld queued %lld", (long long)st.done,
          (long long)st.leased, (long long)st.queued);
    CHECK(in_flight() == 0 && raw_int("KEYS %s", "dc:*:host") == 0,
          "host fields cleaned");
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* One lease named twice in one complete call, and completed again later,
 * counts once: the script checks every entry against the lease ZSET once. */
static void t_complete_twice(void)
{
    struct frontier *f = open_f(4, 2, 60, "n1");
    const char *u[] = { "http://a.test/1", "http://a.test/2" };
    struct frontier_lease *l, dup[3];
    struct frontier_stats st;
    int64_t pend[1];
    size_t n;

    admit(f, u, 2, 0, 1000, NULL);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 2, "both leased (host_connections 2): %zu", n);
    if (n == 2) {
        dup[0] = l[0], dup[1] = l[0], dup[2] = l[1];
        complete(f, dup, 3, FRONTIER_DONE, 0, 1000);
        complete(f, l, n, FRONTIER_DONE, 0, 1000);
    }
    frontier_stats(f, &st);
    CHECK(st.done == 2 && st.leased == 0 && st.queued == 0,
          "done %lld leased %lld queued %lld", (long long)st.done,
          (long long)st.leased, (long long)st.queued);
    CHECK(level(f, 1, pend) == -1 && pend[0] == 0, "pend %lld",
          (long long)pend[0]);
    CHECK(in_flight() == 0 && raw_int("KEYS %s", "dc:*:host") == 0,
          "host field cleaned");
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* A queued URL is kept without its "scheme://host" (the queue key names the
 * host): \1 for http, \2 for https; pop, retry and reclaim give back the
 * whole URL, and a URL queued whole (before the encoding) still pops. */
/* 1 when the crawl's queue layout is native (frontier.h): a depth's ready
 * set and queues are one module value h:<d>, read with DCFRONT.QDUMP */
static int qnative(void)
{
    redisReply *r = redisCommand(raw, "HGET dc:meta queue_layout");
    int yes = r && r->type == REDIS_REPLY_STRING && !strcmp(r->str, "native");

    if (r)
        freeReplyObject(r);
    return yes;
}

/* Entry idx of host's queue at depth 0 of partition p, in either layout:
 * its text (malloc'd, *len) or NULL. */
static char *queued_at(int p, const char *host, long idx, size_t *len)
{
    redisReply *r;
    char *out = NULL;

    if (!qnative()) {
        r = redisCommand(raw, "LINDEX dc:{%d}:q:0:%s %ld", p, host, idx);
        if (r && r->type == REDIS_REPLY_STRING) {
            out = malloc(r->len + 1);
            memcpy(out, r->str, r->len + 1);
            *len = r->len;
        }
        if (r)
            freeReplyObject(r);
        return out;
    }
    r = redisCommand(raw, "DCFRONT.QDUMP dc:{%d}:h:0", p);
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements;
         i++) {
        const redisReply *h = r->element[i];
        if (h->type != REDIS_REPLY_ARRAY || h->elements < 3 ||
            strcmp(h->element[0]->str, host) || 3 + (size_t)idx >= h->elements)
            continue;
        *len = h->element[3 + idx]->len;
        out = malloc(*len + 1);
        memcpy(out, h->element[3 + idx]->str, *len + 1);
    }
    if (r)
        freeReplyObject(r);
    return out;
}

static int queued_is(int p, const char *host, long idx, const char *want,
                     size_t len)
{
    size_t n = 0;
    char *s = queued_at(p, host, idx, &n);
    int ok = s && n == len && memcmp(s, want, len) == 0;

    free(s);
    return ok;
}

/* The strings queued in every host queue of every depth. */
static long long queued_total(void)
{
    if (!qnative())
        return raw_int("EVAL %s 0", "local n = 0 "
            "for _, k in ipairs(redis.call('KEYS', 'dc:*:q:*')) do "
            "n = n + redis.call('LLEN', k) end return n");
    return raw_int("EVAL %s 0", "local n = 0 "
        "for _, k in ipairs(redis.call('KEYS', 'dc:*:h:*')) do "
        "for _, h in ipairs(redis.call('DCFRONT.QDUMP', k)) do "
        "n = n + #h - 3 end end return n");
}

/* The harness says which queue layout this run is for (a module without
 * the Q commands must not turn the native run into a zset-list one). */
static void t_queue_layout(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *want = getenv("DCRAWL_TEST_QLAYOUT");

    printf("u-frontier: queue layout %s\n", qnative() ? "native" : "zset-list");
    CHECK(!want || !strcmp(want, qnative() ? "native" : "zset-list"),
          "DCRAWL_TEST_QLAYOUT=%s but the layout is %s", want,
          qnative() ? "native" : "zset-list");
    frontier_close(&f);
}

static void t_queue_encoding(void)
{
    struct frontier *f = open_f(4, 3, 1, "n1");
    const char *u[] = { "http://a.test:8080/1", "https://a.test:8080/2?q" };
    struct frontier_lease *l;
    char key[64], pend[32];
    size_t n, got = 0;
    int p;

    admit(f, u, 2, 0, 1000, NULL);
    p = frontier_partition(f, "a.test:8080", 11);
    snprintf(key, sizeof(key), "%d", p);
    snprintf(pend, sizeof(pend), "dc:{%d}:pend", p);
    CHECK(queued_is(p, "a.test:8080", 0, "\1/1", 3) &&
              queued_is(p, "a.test:8080", 1, "\2/2?q", 5),
          "queued without scheme and host");
    if (qnative()) /* queued whole */
        raw_int("DCFRONT.QPUSH dc:{%s}:h:0 a.test:8080 tail "
                "http://a.test:8080/3", key);
    else
        raw_int("RPUSH dc:{%s}:q:0:a.test:8080 http://a.test:8080/3", key);
    raw_int("HINCRBY %s 0 1", pend);
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 3 && !strcmp(l[0].url, u[0]) && !strcmp(l[1].url, u[1]) &&
          !strcmp(l[2].url, "http://a.test:8080/3"), "popped whole: %zu", n);
    complete(f, l, 1, FRONTIER_RETRY, 0, 1000);
    CHECK(queued_is(p, "a.test:8080", 0, "\1/1", 3), "retry queued encoded");
    leases_expire();
    CHECK(frontier_reclaim(f, 5000, 0, &got) == DC_OK && got == 2,
          "reclaimed %zu", got);
    CHECK(queued_is(p, "a.test:8080", 0, "\1/3", 3) ||
              queued_is(p, "a.test:8080", 0, "\2/2?q", 5),
          "reclaimed queued encoded");
    frontier_leases_free(l, n);
    n = pop(f, 0, 5000, 10, &l, NULL);
    CHECK(n == 3, "all three again: %zu", n);
    for (size_t i = 0; i < n; i++)
        CHECK(!strncmp(l[i].url, "http", 4) && strstr(l[i].url, "a.test:8080/"),
              "whole URL: %s", l[i].url);
    complete(f, l, n, FRONTIER_DONE, 0, 5000);
    frontier_leases_free(l, n);
    CHECK(level(f, 1, NULL) == -1, "drained");
    frontier_close(&f);
}

static void t_reclaim_own(void)
{
    struct frontier *f1 = open_f(4, 1, 60, "n1");
    struct frontier *f2 = open_f(4, 1, 60, "n2");
    const char *u[] = { "http://a.test/1", "http://b.test/1" };
    struct frontier_lease *l1, *l2, *l3;
    struct frontier_stats st;
    size_t n1, n2, n3, got = 0;

    admit(f1, u, 2, 0, 1000, NULL);
    n1 = pop(f1, 0, 1000, 1, &l1, NULL);
    n2 = pop(f2, 0, 1000, 1, &l2, NULL);
    CHECK(n1 == 1 && n2 == 1, "one each: %zu %zu", n1, n2);
    CHECK(frontier_reclaim(f1, 1000, 0, &got) == DC_OK && got == 0,
          "nothing expired: %zu", got);
    CHECK(frontier_reclaim(f1, 1000, 1, &got) == DC_OK && got == 1,
          "own lease back: %zu", got);
    frontier_stats(f1, &st);
    CHECK(st.leased == 1 && st.queued == 1, "leased %lld queued %lld",
          (long long)st.leased, (long long)st.queued);
    n3 = pop(f1, 0, 1000, 10, &l3, NULL);
    CHECK(n3 == 1 && n1 == 1 && strcmp(l3[0].url, l1[0].url) == 0,
          "same URL again");
    CHECK(n2 == 1 && n3 == 1 && strcmp(l3[0].url, l2[0].url) != 0,
          "f2's lease untouched");
    frontier_leases_free(l1, n1);
    frontier_leases_free(l2, n2);
    frontier_leases_free(l3, n3);
    frontier_close(&f1);
    frontier_close(&f2);
}

/* A mixed run; pend, stats and the queue keys must agree with the test's
 * own count. */
static void t_pend_exact(void)
{
    struct frontier *f = open_f(8, 2, 1, "n1");
    static char buf[14][48];
    const char *d0[10], *d1[4];
    struct frontier_lease *l;
    struct frontier_stats st;
    int64_t pend[2];
    int left0 = 10, done = 0, failed = 0, skipped = 0;
    size_t n, got;

    for (int i = 0; i < 14; i++)
        snprintf(buf[i], sizeof(buf[i]), "http://h%d.test/%d", i % 3, i);
    for (int i = 0; i < 10; i++)
        d0[i] = buf[i];
    for (int i = 0; i < 4; i++)
        d1[i] = buf[10 + i];
    admit(f, d0, 10, 0, 1000, NULL);
    admit(f, d1, 4, 1, 1000, NULL);

    n = pop(f, 0, 1000, 6, &l, NULL);
    CHECK(n == 6, "pop 6 (3 hosts x 2): %zu", n);
    /* 0: done, 1: failed, 2: skipped, 3: retry, 4: reclaimed, 5: held */
    int oc[5] = { FRONTIER_DONE, FRONTIER_FAILED, FRONTIER_SKIPPED,
                  FRONTIER_RETRY, FRONTIER_DONE };
    int64_t dl[5] = { 0, 0, 0, 0, 0 };
    CHECK(frontier_complete(f, l, oc, dl, 4, 1000) == DC_OK, "complete 4");
    left0 -= 3;
    done++, failed++, skipped++;
    level(f, 2, pend);
    CHECK(pend[0] == left0 && pend[1] == 4, "pend %lld %lld",
          (long long)pend[0], (long long)pend[1]);
    /* 4 and 5 expire; 4 completes late (requeued copy removed) */
    leases_expire();
    CHECK(frontier_reclaim(f, 2000, 0, &got) == DC_OK && got == 2,
          "reclaim 2: %zu", got);
    complete(f, &l[4], 1, FRONTIER_DONE, 0, 2000);
    left0--, done++;
    level(f, 2, pend);
    CHECK(pend[0] == left0, "pend0 %lld want %d", (long long)pend[0], left0);
    frontier_stats(f, &st);
    CHECK(st.done == done && st.failed == failed && st.skipped == skipped,
          "stats %lld %lld %lld", (long long)st.done, (long long)st.failed,
          (long long)st.skipped);
    CHECK(st.leased == 0 && st.queued == left0 + 4, "leased %lld queued %lld",
          (long long)st.leased, (long long)st.queued);
    long long qlen = queued_total();
    CHECK(qlen == left0 + 4, "queued entries %lld", qlen);
    frontier_leases_free(l, n);

    /* drain everything */
    int64_t now = 3000;
    for (int round = 0; round < 50 && level(f, 2, NULL) >= 0; round++) {
        int d = level(f, 2, NULL);
        n = pop(f, d, now, 100, &l, NULL);
        complete(f, l, n, FRONTIER_DONE, 0, now);
        frontier_leases_free(l, n);
        now += 10;
    }
    CHECK(level(f, 2, pend) == -1 && pend[0] == 0 && pend[1] == 0, "drained");
    frontier_stats(f, &st);
    CHECK(st.done + st.failed + st.skipped == 14, "14 finished: %lld",
          (long long)(st.done + st.failed + st.skipped));
    frontier_close(&f);
}

static void t_partitions_adopted(void)
{
    struct frontier *f = open_f(7, 1, 60, "n1");
    CHECK(f && frontier_partitions(f) == 7, "first sets 7");
    frontier_close(&f);
    f = open_f(13, 1, 60, "n2");
    CHECK(f && frontier_partitions(f) == 7, "second adopts 7: %d",
          f ? frontier_partitions(f) : -1);
    CHECK(raw_int("HGET %s partitions", "dc:meta") == 7, "meta");
    int p = f ? frontier_partition(f, "a.test", 6) : -1;
    uint64_t h[2];
    dedup_murmur3_x64_128("a.test", 6, 0, h);
    CHECK(p == (int)(h[0] % 7), "partition of a.test: %d", p);
    frontier_close(&f);
}

static void t_meta(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    struct frontier *g = open_f(4, 1, 60, "n2");
    char buf[8] = "x";

    CHECK(frontier_meta_get(f, "max_depth", buf, sizeof(buf)) == DC_ENOTFOUND,
          "unset");
    CHECK(buf[0] == '\0', "empty on not found");
    CHECK(frontier_meta_set(f, "max_depth", "3") == DC_OK, "set");
    CHECK(frontier_meta_get(g, "max_depth", buf, sizeof(buf)) == DC_OK &&
          strcmp(buf, "3") == 0, "other handle sees it: %s", buf);
    CHECK(frontier_meta_set(f, "long", "0123456789abc") == DC_OK, "set long");
    CHECK(frontier_meta_get(f, "long", buf, sizeof(buf)) == DC_OK &&
          strcmp(buf, "0123456") == 0, "truncated: %s", buf);
    CHECK(frontier_meta_get(f, "partitions", buf, sizeof(buf)) == DC_OK &&
          strcmp(buf, "4") == 0, "partitions: %s", buf);
    CHECK(frontier_meta_set(f, "", "1") == DC_EINVAL, "empty field");
    frontier_close(&f);
    frontier_close(&g);
}

/* Script cache flushed under us: EVALSHA falls back to EVAL. */
static void t_noscript(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *u[] = { "http://a.test/1" };
    struct frontier_lease *l;
    size_t n;

    redisReply *r = redisCommand(raw, "SCRIPT FLUSH");
    if (r)
        freeReplyObject(r);
    CHECK(admit(f, u, 1, 0, 1000, NULL) == 1, "admit after flush");
    n = pop(f, 0, 1000, 10, &l, NULL);
    CHECK(n == 1, "pop after flush: %zu", n);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

static void t_many_hosts(void)
{
    enum { H = 500, U = 20, N = H * U };
    struct frontier *f = open_f(64, 1, 60, "n1");
    static char buf[N][48];
    static const char *urls[N];
    static int popped[N];
    struct frontier_lease *l;
    int64_t now = 100000, next;
    int twice = 0, total = 0, rounds = 0;
    size_t n;

    memset(popped, 0, sizeof(popped));
    for (int i = 0; i < N; i++) {
        snprintf(buf[i], sizeof(buf[i]), "http://h%d.test/%d", i % H, i);
        urls[i] = buf[i];
    }
    for (int i = 0; i < N; i += 1000)
        admit(f, urls + i, 1000, 0, now, NULL);
    for (rounds = 0; rounds < 200 && total < N; rounds++) {
        n = pop(f, 0, now, 2000, &l, &next);
        CHECK(n <= H, "at most one per host per round: %zu", n);
        for (size_t i = 0; i < n; i++) {
            int idx = atoi(strrchr(l[i].url, '/') + 1);
            if (idx >= 0 && idx < N && popped[idx]++)
                twice++;
        }
        total += (int)n;
        complete(f, l, n, FRONTIER_DONE, 1, now);
        frontier_leases_free(l, n);
        now += 1;
    }
    CHECK(total == N && twice == 0, "popped %d, twice %d in %d rounds", total,
          twice, rounds);
    CHECK(rounds <= 25, "took %d rounds", rounds);
    CHECK(level(f, 1, NULL) == -1, "drained");
    CHECK(raw_int("KEYS %s", "dc:*:q:*") == 0, "no queue keys left");
    CHECK(raw_int("KEYS %s", "dc:*:h:*") == 0, "no host zsets left");
    CHECK(in_flight() == 0, "no host left in flight");
    CHECK(raw_int("KEYS %s", "dc:*:lease") == 0, "no lease keys left");
    /* politeness clocks in the past are dropped by the reclaim sweep */
    size_t got = 1;
    CHECK(raw_int("KEYS %s", "dc:*:host") > 0, "clocks set");
    CHECK(frontier_reclaim(f, now + 10, 0, &got) == DC_OK && got == 0,
          "reclaim: %zu", got);
    CHECK(raw_int("KEYS %s", "dc:*:host") == 0, "clocks dropped");
    frontier_close(&f);
}

static int kill_clients(void)
{
    redisReply *r = redisCommand(raw, "CLIENT KILL TYPE normal SKIPME yes");
    int ok = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;

    if (r)
        freeReplyObject(r);
    return ok;
}

/* A dropped connection is reconnected within redis.retry, the call goes
 * on; with redis.retry = 0 it costs one DC_EREDIS and the next call
 * reconnects. */
static void t_reconnect(void)
{
    struct frontier *f = open_f(4, 1, 60, "n1");
    const char *u[] = { "http://a.test/1" };
    int64_t pend[1];
    int lv = 0, rc;
    struct conf c;
    char err[256] = "";

    CHECK(kill_clients(), "killed the frontier's connection");
    rc = frontier_level(f, 1, pend, &lv);
    CHECK(rc == DC_OK && frontier_reconnects(f) == 1,
          "call went on after a reconnect: %d, %llu reconnects", rc,
          (unsigned long long)frontier_reconnects(f));
    frontier_close(&f);

    conf_init(&c);
    c.frontier_partitions = 4;
    c.redis_retry = 0;
    rc = frontier_open(&f, redis_url, &c, "n1", err, sizeof(err));
    conf_release(&c);
    CHECK(rc == DC_OK && f, "open with redis.retry 0: %s", err);
    if (!f)
        return;
    CHECK(kill_clients(), "killed the frontier's connection");
    rc = frontier_level(f, 1, pend, &lv);
    CHECK(rc == DC_EREDIS && frontier_errstr(f)[0], "lost: %d", rc);
    CHECK(admit(f, u, 1, 0, 1000, NULL) == 1, "reconnected");
    frontier_close(&f);
}

/* unix:/path and ?db=N select the database. */
static void t_url_forms(void)
{
    struct frontier *f = NULL;
    struct conf c;
    char url[512], err[256] = "";
    const char *u[] = { "http://a.test/1" };
    int rc;

    conf_init(&c);
    snprintf(url, sizeof(url), "unix:%s?db=3", redis_url + 7);
    rc = frontier_open(&f, url, &c, "n1", err, sizeof(err));
    CHECK(rc == DC_OK, "%s: %d %s", url, rc, err);
    if (f)
        CHECK(admit(f, u, 1, 0, 1000, NULL) == 1, "admit in db 3");
    frontier_close(&f);
    CHECK(raw_int("DBSIZE%s", "") == 0, "db 0 untouched");
    redisReply *r = redisCommand(raw, "SELECT 3");
    if (r)
        freeReplyObject(r);
    CHECK(raw_int("HGET %s partitions", "dc:meta") == c.frontier_partitions,
          "meta in db 3");
    flush();
    r = redisCommand(raw, "SELECT 0");
    if (r)
        freeReplyObject(r);
    conf_release(&c);
}

static void t_unreachable(void)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int64_t t0 = dc_mono_us();
    int rc;

    conf_init(&c);
    rc = frontier_open(&f, "redis://127.0.0.1:1", &c, "n1", err, sizeof(err));
    CHECK(rc == DC_EREDIS && f == NULL, "rc %d", rc);
    CHECK(dc_mono_us() - t0 < 3000000, "took %lld us",
          (long long)(dc_mono_us() - t0));
    CHECK(strstr(err, "127.0.0.1:1") && !strchr(err, '\n'), "message: %s", err);
    if (getenv("U_FRONTIER_VERBOSE"))
        printf("unreachable: %s\n", err);

    static const char *bad[] = { "http://x", "redis://", "redis://h:0",
                                 "redis://h:99999", "unix:relative",
                                 "redis://h:6379/x", "unix:///p?db=x" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rc = frontier_open(&f, bad[i], &c, "n1", err, sizeof(err));
        CHECK(rc == DC_EINVAL && f == NULL, "%s: rc %d", bad[i], rc);
    }
    rc = frontier_open(&f, redis_url, &c, "bad\tnode", err, sizeof(err));
    CHECK(rc == DC_EINVAL, "tab in node id: %d", rc);
    conf_release(&c);
}

/* ---- the seen-set alone (seen_batch) ---- */

#define SEEN_UNIVERSE 4000
#define SEEN_PROCS 4

static void seen_url(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "http://h%d.example/page/%d", i % 53, i);
}

/* Child k: URLs [k * 800, k * 800 + 1600) of the universe (each overlaps
 * its neighbours), in batches of 37 with every 5th URL repeated in the
 * batch; child 3 uses frontier_admit, the others seen_batch. Writes one
 * byte per universe URL: how often this child was told "new". */
static int seen_child(int k, int fd)
{
    struct frontier *f = open_f(16, 1, 60, k == 3 ? "c3" : "cx");
    unsigned char got[SEEN_UNIVERSE] = {0}, isnew[64];
    static char urls[64][96];
    struct frontier_url u[64];
    int idx[64], n = 0, bad = 0;

    if (!f)
        return 1;
    for (int j = 0; j <= 1600; j++) {
        if (j < 1600) {
            int i = (k * 800 + j) % SEEN_UNIVERSE;
            for (int rep = 0; rep < (j % 5 == 0 ? 2 : 1); rep++) {
                seen_url(urls[n], sizeof(urls[n]), i);
                t_mkurl(&u[n], urls[n], 0);
                idx[n++] = i;
            }
        }
        if (n >= 37 || (j == 1600 && n)) {
            int rc = k == 3 ? frontier_admit(f, u, (size_t)n, 1000, isnew)
                            : seen_batch(f, u, (size_t)n, 0, isnew);
            if (rc)
                bad++;
            for (int q = 0; !rc && q < n; q++)
                got[idx[q]] += isnew[q];
            n = 0;
        }
    }
    frontier_close(&f);
    if (write(fd, got, sizeof(got)) != (ssize_t)sizeof(got))
        bad++;
    return bad ? 1 : 0;
}

static void t_seen_concurrent(void)
{
    int fds[SEEN_PROCS][2], status;
    pid_t pid[SEEN_PROCS];
    unsigned total[SEEN_UNIVERSE] = {0};
    unsigned char got[SEEN_UNIVERSE];
    int wrong = 0;
    long long new3 = 0;   /* "new" answers child 3 (admit) got */
    struct frontier *f;
    struct frontier_stats st;

    for (int k = 0; k < SEEN_PROCS; k++) {
        CHECK(pipe(fds[k]) == 0, "pipe");
        pid[k] = fork();
        if (pid[k] == 0) {
            close(fds[k][0]);
            redisFree(raw);
            _exit(seen_child(k, fds[k][1]));
        }
        close(fds[k][1]);
    }
    for (int k = 0; k < SEEN_PROCS; k++) {
        size_t have = 0;
        ssize_t r = 1;
        while (have < sizeof(got) && r > 0) {
            r = read(fds[k][0], got + have, sizeof(got) - have);
            if (r > 0)
                have += (size_t)r;
        }
        close(fds[k][0]);
        CHECK(waitpid(pid[k], &status, 0) == pid[k] && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0, "child %d failed", k);
        CHECK(have == sizeof(got), "child %d sent %zu bytes", k, have);
        for (int i = 0; i < SEEN_UNIVERSE; i++) {
            total[i] += got[i];
            new3 += k == 3 ? got[i] : 0;
        }
    }
    /* 4 children x 1600 from steps of 800 cover the universe twice over */
    for (int i = 0; i < SEEN_UNIVERSE; i++)
        if (total[i] != 1)
            wrong++;
    CHECK(wrong == 0, "%d URLs not reported new exactly once", wrong);
    /* the admit script counted child 3's answers: 1600 URLs, every 5th
     * twice in its batch, 320 repeats */
    f = open_f(16, 1, 60, "cy");
    CHECK(f && frontier_stats(f, &st) == DC_OK, "stats");
    CHECK(f && new3 > 0 && st.admitted == new3,
          "stat admitted %lld = child 3's new answers %lld",
          (long long)st.admitted, new3);
    CHECK(f && st.seen == 1600 + 320 - new3,
          "stat seen %lld = child 3's other answers %lld",
          (long long)st.seen, 1600 + 320 - new3);
    frontier_close(&f);
}

/* Marks made by seen_batch are "seen" to admit and the reverse;
 * check-only writes nothing; a batch repeat is new once. */
static void t_seen_vs_admit(void)
{
    struct frontier *f = open_f(8, 1, 60, "n1");
    struct frontier_url u[3];
    unsigned char isnew[3];
    const char *a[] = {"http://a.example/x"};
    struct seen_usage us;

    t_mkurl(&u[0], "http://a.example/x", 0);
    t_mkurl(&u[1], "http://b.example/y", 0);
    t_mkurl(&u[2], "http://b.example/y", 0);
    CHECK(admit(f, a, 1, 0, 1000, NULL) == 1, "admit a");
    CHECK(seen_batch(f, u, 3, 1, isnew) == DC_OK, "check-only: %s", frontier_errstr(f));
    CHECK(!isnew[0] && isnew[1], "check-only answers %d %d", isnew[0],
          isnew[1]);
    CHECK(seen_batch(f, u + 1, 1, 1, isnew) == DC_OK && isnew[0],
          "check-only wrote nothing");
    CHECK(seen_batch(f, u, 3, 0, isnew) == DC_OK, "seen");
    CHECK(!isnew[0] && isnew[1] && !isnew[2], "seen answers %d %d %d",
          isnew[0], isnew[1], isnew[2]);
    {
        const char *b[] = {"http://b.example/y"};
        CHECK(admit(f, b, 1, 0, 1000, NULL) == 0, "admit after seen: not new");
        CHECK(raw_int("EXISTS %s", "x") == 0, "sanity");
    }
    CHECK(seen_usage(f, 0, &us) == DC_OK, "usage");
    CHECK(us.members == 2 && us.keys >= 1 && us.not_compact == 0 &&
          us.bytes > 0, "usage members %llu keys %llu",
          (unsigned long long)us.members, (unsigned long long)us.keys);
    CHECK(frontier_roundtrips(f) > 0, "round trips counted");
    frontier_close(&f);
}

/* One host, so one partition: 3000 URLs in one batch fill some buckets
 * past SEEN_GROUP_MAX members only if fingerprints cluster, so
 * force it: 2500 URLs whose fingerprints share the top byte (one
 * bucket) plus 500 spread ones, every 7th repeated. Answers must match an
 * independent count; after SCRIPT FLUSH the script is sent again. */
#define BIG_N 3000
static void t_seen_big_batch(void)
{
    struct frontier *f = open_f(8, 1, 60, "n1");
    static struct frontier_url u[BIG_N + BIG_N / 7 + 1];
    static unsigned char isnew[BIG_N + BIG_N / 7 + 1];
    static char urls[BIG_N][64];
    struct seen_usage us;
    size_t n = 0, fresh = 0, wrong = 0;
    redisReply *r;

    for (int i = 0; i < BIG_N; i++) {
        snprintf(urls[i], sizeof(urls[i]), "http://one.example/p%d", i);
        t_mkurl(&u[n], urls[i], 0);
        if (i < 2500) /* bucket 0x5a; low bits keep them distinct */
            u[n].fp = 0x5a00000000000000ULL |
                      (((uint64_t)i * 0x9e3779b97f4bULL) & 0x00ffffffffffffffULL);
        n++;
        if (i % 7 == 0)
            u[n] = u[n - 1], n++;
    }
    CHECK(seen_batch(f, u, n, 0, isnew) == DC_OK, "big batch: %s",
          frontier_errstr(f));
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = u[j].fp != u[i].fp;
        wrong += isnew[i] != first;
        fresh += isnew[i];
    }
    CHECK(wrong == 0 && fresh == BIG_N, "big batch: %zu wrong, %zu new",
          wrong, fresh);
    r = redisCommand(raw, "SCRIPT FLUSH");
    if (r)
        freeReplyObject(r);
    CHECK(seen_batch(f, u, n, 1, isnew) == DC_OK, "after SCRIPT FLUSH: %s",
          frontier_errstr(f));
    for (size_t i = 0; i < n; i++)
        wrong += isnew[i];
    CHECK(wrong == 0, "after flush: %zu answered new", wrong);
    if (have_module) {
        char key[64];
        snprintf(key, sizeof(key), "dc:{%d}:S",
                 frontier_partition(f, "one.example", 11));
        CHECK(raw_int("DCSEEN.CARD %s", key) == BIG_N, "%s holds %lld", key,
              raw_int("DCSEEN.CARD %s", key));
        CHECK(raw_int("KEYS %s", "dc:*:s:*") == 0, "no bucket keys written");
    } else {
        char key[64];
        snprintf(key, sizeof(key), "dc:{%d}:s:90",
                 frontier_partition(f, "one.example", 11));
        long long card = raw_int("SCARD %s", key), want = 2500;
        for (int i = 2500; i < BIG_N; i++) /* spread ones that land there */
            want += dedup_fingerprint(urls[i], strlen(urls[i])) >> 56 == 0x5a;
        CHECK(card == want, "bucket 0x5a (%s) holds %lld, want %lld", key,
              card, want);
    }
    CHECK(seen_usage(f, 0, &us) == DC_OK && us.members == BIG_N &&
              us.not_compact == 0, "usage: %llu members",
          (unsigned long long)us.members);
    frontier_close(&f);
}

/* A crawl's queue layout is kept: a meta written by a build before queue
 * layouts (partitions recorded, no queue_layout) reads as zset-list, the
 * layout its queues are in, even with the module loaded; a recorded
 * native one is refused without the module. */
static void t_queue_layout_kept(void)
{
    struct frontier *f = NULL;
    char err[256] = "";
    struct conf c;
    redisReply *r;

    flush();
    r = redisCommand(raw, "HSET dc:meta partitions 1 created 1 fingerprint "
                     "murmur3 seen_layout %s",
                     have_module ? "mod-u64" : "b256-i64");
    if (r)
        freeReplyObject(r);
    conf_init(&c);
    c.frontier_partitions = 1;
    CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) == DC_OK,
          "open an older build's crawl: %s", err);
    r = redisCommand(raw, "HGET dc:meta queue_layout");
    CHECK(f && !strcmp(frontier_queue_layout(f), "zset-list") && r &&
              r->type == REDIS_REPLY_STRING && !strcmp(r->str, "zset-list"),
          "an older build's crawl stays zset-list, recorded");
    if (r)
        freeReplyObject(r);
    frontier_close(&f);
    flush();
    if (!have_module) {
        r = redisCommand(raw, "HSET dc:meta queue_layout native");
        if (r)
            freeReplyObject(r);
        CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) ==
                  DC_ECONFIG && !f && strstr(err, "queue_layout"),
              "native without the module refused: %s", err);
        flush();
    }
    conf_release(&c);
}

/* A Redis keeps the layout recorded first: with the module loaded, a
 * recorded b256-i64 stays b256-i64 (bucket keys written, no module key);
 * without it, a recorded mod-u64 is refused with a clear error. */
static void t_layout_kept(void)
{
    struct frontier *f = NULL;
    struct frontier_url u;
    unsigned char isnew = 0;
    char err[256] = "", text[512];
    struct conf c;
    redisReply *r;

    flush();
    r = redisCommand(raw, "HSET dc:meta seen_layout %s",
                     have_module ? "b256-i64" : "mod-u64");
    if (r)
        freeReplyObject(r);
    conf_init(&c);
    c.frontier_partitions = 1;
    if (!have_module) {
        CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) ==
                  DC_ECONFIG && !f && strstr(err, "mod-u64") &&
                  strstr(err, "module"),
              "mod-u64 without the module refused: %s", err);
        conf_release(&c);
        flush();
        return;
    }
    CHECK(frontier_open(&f, redis_url, &c, "n1", err, sizeof(err)) == DC_OK,
          "open: %s", err);
    conf_release(&c);
    if (!f)
        return;
    seen_layout(f, text, sizeof(text));
    CHECK(strstr(text, "b256-i64") != NULL, "recorded layout kept: %s", text);
    t_mkurl(&u, "http://kept.example/", 0);
    CHECK(seen_batch(f, &u, 1, 0, &isnew) == DC_OK && isnew, "insert");
    CHECK(raw_int("EXISTS %s", "dc:{0}:S") == 0, "no module key written");
    CHECK(raw_int("KEYS %s", "dc:{0}:s:*") == 1, "one bucket key written");
    frontier_close(&f);
    flush();
}

/* Layout text, intset setting, fingerprint recorded and adopted, a
 * foreign layout refused. */
static void t_seen_layout(void)
{
    struct frontier *f = open_f(8, 1, 60, "n1"), *g = NULL;
    char text[512], err[256];
    struct conf c;
    redisReply *r;

    CHECK(seen_layout(f, text, sizeof(text)) == 0,
          "with-redis.sh runs 8192 intset entries: %s", text);
    CHECK(strstr(text, have_module ? "mod-u64" : "b256-i64") &&
              strstr(text, "murmur3"), "text: %s", text);
    frontier_close(&f);

    conf_init(&c);
    free(c.dedup_fingerprint);
    c.dedup_fingerprint = strdup("md5");
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) == DC_OK,
          "open md5: %s", err);
    CHECK(dedup_fingerprint_algo() == DEDUP_FP_MURMUR3,
          "recorded murmur3 adopted");
    frontier_close(&g);
    flush();
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) == DC_OK,
          "open md5 fresh: %s", err);
    CHECK(dedup_fingerprint_algo() == DEDUP_FP_MD5, "md5 recorded and used");
    frontier_close(&g);
    dedup_fingerprint_use(DEDUP_FP_MURMUR3);
    r = redisCommand(raw, "HSET dc:meta seen_layout other");
    if (r)
        freeReplyObject(r);
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) ==
              DC_ECONFIG && !g, "foreign layout refused: %s", err);
    r = redisCommand(raw, "HSET dc:meta seen_layout b16-i64");
    if (r)
        freeReplyObject(r);
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) ==
              DC_ECONFIG && !g && strstr(err, "b16-i64"),
          "old 16-bucket layout refused: %s", err);
    dedup_fingerprint_use(DEDUP_FP_MURMUR3);
    free(c.dedup_fingerprint);
    c.dedup_fingerprint = strdup("sha1");
    CHECK(frontier_open(&g, redis_url, &c, "n2", err, sizeof(err)) ==
              DC_EINVAL, "bad fingerprint name");
    conf_release(&c);
}

/* scope.host_budget: at most B URLs queued per host, across handles (two
 * nodes); a refused URL is not marked seen and is counted. */
static void t_host_budget(void)
{
    struct frontier *f1, *f2;
    struct conf c;
    char err[256] = "";
    const char *a[] = { "http://a.test/1", "http://a.test/2", "http://b.test/1" };
    const char *b[] = { "http://a.test/1", "http://a.test/3", "http://a.test/4",
                        "http://b.test/2" };
    unsigned char isnew[4];
    struct frontier_stats st;

    conf_init(&c);
    c.frontier_partitions = 4;
    c.scope_host_budget = 3;
    CHECK(frontier_open(&f1, redis_url, &c, "n1", err, sizeof(err)) == DC_OK,
          "open 1: %s", err);
    CHECK(frontier_open(&f2, redis_url, &c, "n2", err, sizeof(err)) == DC_OK,
          "open 2: %s", err);
    CHECK(admit(f1, a, 3, 0, 1000, isnew) == 3, "first batch all new");
    admit(f2, b, 4, 0, 1000, isnew);
    CHECK(isnew[0] == 0 && isnew[1] == 1 && isnew[2] == 0 && isnew[3] == 1,
          "second batch: %d %d %d %d", isnew[0], isnew[1], isnew[2], isnew[3]);
    CHECK(frontier_budget_refused(f2) == 1 && frontier_budget_refused(f1) == 0,
          "refused %llu", (unsigned long long)frontier_budget_refused(f2));
    CHECK(frontier_stats(f1, &st) == DC_OK && st.budget == 1 &&
              st.admitted == 5,
          "stats budget %lld admitted %lld", (long long)st.budget,
          (long long)st.admitted);
    /* the refused URL was not marked seen: still refused, never "seen" */
    admit(f1, b + 2, 1, 0, 1000, isnew);
    CHECK(isnew[0] == 0 && frontier_budget_refused(f1) == 1, "again refused");
    frontier_close(&f1);
    frontier_close(&f2);
    conf_release(&c);
}

/* A host at its connection limit with leases of one depth, and URLs of
 * it queued at a deeper depth meanwhile (links of the pages in flight, a
 * sitemap read again): that depth's ready set gives the host the busy
 * score. Completing the leases (or their expiry) must free the host there
 * too, not only at the leases' depth and the next; else its URLs wait
 * forever (seen in the compose cluster after a failover: 64 URLs of 2
 * hosts stuck "busy"). */
static void t_busy_other_depth(void)
{
    struct frontier *f = open_f(1, 2, 60, "n1");
    const char *low[] = { "http://a.test/d1-1", "http://a.test/d1-2",
                          "http://a.test/d1-3" };
    const char *deep[] = { "http://a.test/d3-1", "http://a.test/d3-2" };
    const char *deep2[] = { "http://a.test/d3-3" };
    struct frontier_lease *l, *l2;
    size_t n, n2, back = 0;

    admit(f, low, 3, 1, 1000, NULL);
    n = pop(f, 1, 1000, 10, &l, NULL);
    CHECK(n == 2, "2 leases at depth 1 (host_connections 2): %zu", n);
    admit(f, deep, 2, 3, 1000, NULL); /* queued busy at depth 3 */
    n2 = pop(f, 3, 1000, 10, &l2, NULL);
    CHECK(n2 == 0, "depth 3 waits while the host is at its limit: %zu", n2);
    frontier_leases_free(l2, n2);
    complete(f, l, n, FRONTIER_DONE, 0, 1000);
    frontier_leases_free(l, n);
    n2 = pop(f, 3, 1001, 10, &l2, NULL);
    CHECK(n2 == 2, "depth 3 served once the depth-1 leases completed: %zu",
          n2);
    frontier_leases_free(l2, n2);

    /* the same freed by lease expiry (requeue) instead of a completion */
    flush();
    admit(f, low, 3, 1, 3000, NULL);
    n = pop(f, 1, 3000, 10, &l, NULL);
    CHECK(n == 2, "2 leases at depth 1 again: %zu", n);
    admit(f, deep2, 1, 3, 3000, NULL);
    CHECK(pop_at(f, 1, 3000, 10) == 0 && pop_at(f, 3, 3000, 10) == 0,
          "busy at depths 1 and 3");
    leases_expire();
    CHECK(frontier_reclaim(f, 3001, 0, &back) == DC_OK && back == 2,
          "reclaim: %zu", back);
    n2 = pop(f, 3, 3002, 10, &l2, NULL);
    CHECK(n2 == 1, "depth 3 served once the depth-1 leases expired: %zu", n2);
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

/* Leases of a deeper depth never hold back a lower one. A node leases
 * depth d + 1 while level d drains and holds those pages until level d
 * ends (crawler/node-ahead.c); a URL of d that comes back meanwhile (a
 * retry, an expired lease) must still be leased, or level d waits for the
 * held leases to expire and they are renewed while held: a crawl stalled
 * at a level barrier (politeness bench, 1 run in 13). */
static void t_deep_leases_apart(void)
{
    struct frontier *f = open_f(1, 1, 60, "n1");
    const char *d1[] = { "http://a.test/1" };
    const char *d2[] = { "http://a.test/2a", "http://a.test/2b",
                         "http://a.test/2c", "http://a.test/2d" };
    const char *d1b[] = { "http://a.test/1b" };
    struct frontier_lease *l, *l2, *l3;
    size_t n, n2, n3, back = 0;

    frontier_set_lease_ahead(f, 4);
    admit(f, d1, 1, 1, 1000, NULL);
    admit(f, d2, 4, 2, 1000, NULL);
    n = pop(f, 1, 1000, 10, &l, NULL);
    CHECK(n == 1, "the depth-1 URL: %zu", n);
    n2 = pop(f, 2, 1000, 10, &l2, NULL);
    CHECK(n2 == 4, "depth 2 ahead, up to the window: %zu", n2);
    /* the depth-1 URL comes back as a retry, no gap */
    complete(f, l, n, FRONTIER_RETRY, 0, 1000);
    frontier_leases_free(l, n);
    n = pop(f, 1, 1001, 10, &l, NULL);
    CHECK(n == 1 && l[0].depth == 1,
          "the retry is leased with 4 depth-2 leases out: %zu", n);
    /* with a politeness clock, the same */
    complete(f, l, n, FRONTIER_RETRY, 100, 1001);
    frontier_leases_free(l, n);
    CHECK(pop_at(f, 1, 1050, 10) == 0, "clock holds depth 1");
    n = pop(f, 1, 1101, 10, &l, NULL);
    CHECK(n == 1 && l[0].depth == 1, "depth 1 after the clock: %zu", n);
    /* a depth-1 URL admitted with the depth-2 leases out is not busy */
    admit(f, d1b, 1, 1, 1101, NULL);
    complete(f, l, n, FRONTIER_DONE, 0, 1102);
    frontier_leases_free(l, n);
    n = pop(f, 1, 1102, 10, &l, NULL);
    CHECK(n == 1 && strcmp(l[0].url, d1b[0]) == 0, "admitted depth 1: %zu",
          n);
    /* and a reclaimed depth-1 lease comes back the same way */
    leases_expire();
    CHECK(frontier_reclaim(f, 1103, 0, &back) == DC_OK && back == 5,
          "reclaim: %zu", back);
    n3 = pop(f, 1, 1104, 10, &l3, NULL);
    CHECK(n3 == 1, "reclaimed depth 1 leased again: %zu", n3);
    CHECK(in_flight() == 1, "host state: %lld", in_flight());
    frontier_leases_free(l3, n3);
    frontier_leases_free(l2, n2);
    frontier_leases_free(l, n);
    frontier_close(&f);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    { "queue layout", t_queue_layout },
    { "queue layout kept", t_queue_layout_kept },
    { "host budget", t_host_budget },
    { "admit once", t_admit_once },
    { "admit two handles", t_admit_two_handles },
    { "host connections 1", t_host_conns_1 },
    { "host connections 3", t_host_conns_3 },
    { "busy at another depth", t_busy_other_depth },
    { "deeper leases do not hold a depth", t_deep_leases_apart },
    { "lease ahead", t_lease_ahead },
    { "retry back-off", t_retry_backoff },
    { "depth separation", t_depths },
    { "levels", t_levels },
    { "reclaim by deadline", t_reclaim_deadline },
    { "renew held leases", t_renew },
    { "queue encoding", t_queue_encoding },
    { "complete reclaimed", t_complete_reclaimed },
    { "complete twice", t_complete_twice },
    { "reclaim own node", t_reclaim_own },
    { "pend exact", t_pend_exact },
    { "partitions adopted", t_partitions_adopted },
    { "meta settings", t_meta },
    { "noscript fallback", t_noscript },
    { "many hosts", t_many_hosts },
    { "reconnect", t_reconnect },
    { "url forms", t_url_forms },
    { "unreachable", t_unreachable },
    { "seen: 4 processes, new exactly once", t_seen_concurrent },
    { "seen vs admit", t_seen_vs_admit },
    { "seen layout and fingerprint", t_seen_layout },
    { "seen layout kept", t_layout_kept },
    { "seen: big batch, big buckets, script reload", t_seen_big_batch },
};

int main(void)
{
    redis_url = getenv("DCRAWL_TEST_REDIS");
    if (!redis_url || strncmp(redis_url, "unix://", 7) != 0) {
        fprintf(stderr, "u-frontier: DCRAWL_TEST_REDIS not set (run via "
                        "tests/with-redis.sh)\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);   /* as the node does: writes to a dropped
                                   connection must fail, not kill */
    raw = redisConnectUnix(redis_url + 7);
    if (!raw || raw->err) {
        fprintf(stderr, "u-frontier: cannot connect to %s\n", redis_url);
        return 1;
    }
    {
        redisReply *r = redisCommand(raw, "COMMAND INFO dcseen.add");
        const char *want = getenv("DCRAWL_TEST_LAYOUT");
        have_module = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
                      r->element[0]->type == REDIS_REPLY_ARRAY;
        if (r)
            freeReplyObject(r);
        /* the harness says which layout this run is for: a module that
         * failed to load must not turn the mod run into a b256 one */
        CHECK(!want || !strcmp(want, have_module ? "mod" : "b256"),
              "DCRAWL_TEST_LAYOUT=%s but the module is %s", want,
              have_module ? "loaded" : "absent");
        printf("u-frontier: seen-set layout %s\n",
               have_module ? "mod-u64" : "b256-i64");
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int before = t_fail;
        flush();
        cases[i].fn();
        if (t_fail != before)
            fprintf(stderr, "case \"%s\" failed\n", cases[i].name);
    }
    redisFree(raw);
    return t_done("u-frontier");
}
