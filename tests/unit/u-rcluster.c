/*
 * u-rcluster.c: the frontier on a real 3-master Redis Cluster (started by
 * tests/e2e/rcluster.sh with rcluster-lib.sh). Environment:
 *   DCRAWL_TEST_RCLUSTER        redis-cluster://127.0.0.1:p1,...
 *   DCRAWL_TEST_RCLUSTER_PORTS  "p1 p2 p3"
 *   DCRAWL_TEST_RCLUSTER_SEEDS  URLs `dcrawl seed` put in (prefix "dc")
 *   DCRAWL_TEST_RCLUSTER_KILL   pid of the master on p3 (killed last)
 *
 * Expected values come from the test's own bookkeeping and from raw
 * queries of each master (hiredis, one plain connection per port): slots
 * against CLUSTER KEYSLOT, keys per master with DBSIZE, where a key lives
 * after a slot migration (MOVED) or during one (ASK).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"
#include "frontier-internal.h"
#include "t.h"
#include "t-frontier.h"

#define NM 3
#define PARTS 64

/* Seed of the random keys whose slots are compared with CLUSTER KEYSLOT. */
#define KEY_SEED 7

static const char *url;
static int port[NM];
static redisContext *raw[NM];
static char id[NM][64];

/* ---- raw access to the masters ---- */

static redisReply *cmd(int m, const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    va_start(ap, fmt);
    r = redisvCommand(raw[m], fmt, ap);
    va_end(ap);
    if (!r) {
        fprintf(stderr, "raw connection to %d: %s\n", port[m], raw[m]->errstr);
        exit(1);
    }
    return r;
}

static long long cmd_int(int m, const char *fmt, const char *arg)
{
    redisReply *r = cmd(m, fmt, arg);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    freeReplyObject(r);
    return v;
}

static int script_on(int m, const char *sha)
{
    redisReply *r = cmd(m, "SCRIPT EXISTS %s", sha);
    int yes = r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
              r->element[0]->integer == 1;

    freeReplyObject(r);
    return yes;
}

/* Index of the master serving slot s, from CLUSTER SLOTS of master 0. */
static int owner(int s)
{
    redisReply *r = cmd(0, "CLUSTER SLOTS");
    int m = -1;

    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->element[0]->integer <= s && s <= e->element[1]->integer)
            for (int k = 0; k < NM; k++)
                if (port[k] == e->element[2]->element[1]->integer)
                    m = k;
    }
    freeReplyObject(r);
    return m;
}

static struct frontier *open_f(const char *prefix, int parts, char *err,
                               size_t errlen, int *rc)
{
    struct frontier *f = NULL;
    struct conf c;

    conf_init(&c);
    free(c.redis_prefix);
    c.redis_prefix = xstrdup(prefix);
    c.frontier_partitions = parts;
    c.frontier_lease = 60;
    *rc = frontier_open(&f, url, &c, "n1", err, errlen);
    conf_release(&c);
    return f;
}

/* Admit urls[0..n); returns how many were new. */
static int admit(struct frontier *f, char (*urls)[64], size_t n)
{
    struct frontier_url *u = calloc(n, sizeof(*u));
    unsigned char *isnew = calloc(n, 1);
    int c = 0, rc;

    for (size_t i = 0; i < n; i++)
        t_mkurl(&u[i], urls[i], 0);
    rc = frontier_admit(f, u, n, 1000, isnew);
    CHECK(rc == DC_OK, "admit: %s", frontier_errstr(f));
    for (size_t i = 0; i < n; i++)
        c += isnew[i];
    free(u);
    free(isnew);
    return c;
}

/* Pop and complete everything at depth 0 (bounded); returns the count. */
static size_t drain(struct frontier *f, size_t expect)
{
    size_t total = 0;

    for (int round = 0; round < 200 && total < expect; round++) {
        struct frontier_lease *l = NULL;
        size_t n = 0;
        int64_t next;
        int rc = frontier_pop(f, 0, 1000000 + round * 10000, 1000, &l, &n,
                              &next);
        CHECK(rc == DC_OK, "pop: %s", frontier_errstr(f));
        if (rc)
            break;
        int *o = calloc(n ? n : 1, sizeof(*o));
        rc = frontier_complete(f, l, o, NULL, n, 1000000 + round * 10000);
        CHECK(rc == DC_OK, "complete: %s", frontier_errstr(f));
        free(o);
        frontier_leases_free(l, n);
        total += n;
    }
    return total;
}

/* ---- cases ---- */

/* frontier__key_slot agrees with the server on many keys. */
static void t_slots(void)
{
    const char *fixed[] = {"123456789", "foo", "{user1000}.following",
                           "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
                           "{}", "dc:{17}:q:0:a.test", "x{"};
    char k[64];
    int bad = 0;

    for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
        CHECK(frontier__key_slot(fixed[i], strlen(fixed[i])) ==
                  cmd_int(0, "CLUSTER KEYSLOT %s", fixed[i]),
              "slot of %s", fixed[i]);
    srand(KEY_SEED);
    printf("u-rcluster: 500 random keys, srand(%d)\n", KEY_SEED);
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "k%d{%d}%x", rand(), rand() % 3 ? i : -1,
                 (unsigned)rand());
        bad += frontier__key_slot(k, strlen(k)) !=
               cmd_int(0, "CLUSTER KEYSLOT %s", k);
    }
    CHECK(bad == 0, "%d of 500 random keys (seed %d) in another slot", bad,
          KEY_SEED);
}

/* What `dcrawl seed` queued is what the frontier (prefix dc) sees. */
static void t_seeded(long long seeds)
{
    char err[256] = "";
    int rc;
    struct frontier *f = open_f("dc", 1024, err, sizeof(err), &rc);
    struct frontier_stats st;
    int64_t pend[2];
    int lv = -2;

    CHECK(rc == DC_OK, "open: %s", err);
    if (rc)
        return;
    CHECK(frontier_stats(f, &st) == DC_OK, "stats: %s", frontier_errstr(f));
    CHECK(st.admitted == seeds && st.queued == seeds, "seeded %lld: admitted "
          "%lld queued %lld", seeds, (long long)st.admitted,
          (long long)st.queued);
    CHECK(frontier_level(f, 2, pend, &lv) == DC_OK && lv == 0 &&
              pend[0] == seeds, "level %d pending %lld", lv,
          (long long)pend[0]);
    frontier_close(&f);
}

static char urls[2000][64];

/* The whole API over many partitions, spread over the three masters. */
static void t_api(struct frontier *f)
{
    enum { N = 1200 };
    struct frontier_stats st;
    struct seen_usage us;
    int64_t pend[2];
    int lv = -2;
    char v[32];

    for (int m = 0; m < NM; m++) /* SCRIPT LOAD went to every master */
        for (int k = 0; k < FRONTIER_NSCRIPTS; k++)
            CHECK(script_on(m, f->sha[k]), "script %d on master %d", k, m);
    for (int i = 0; i < N; i++)
        snprintf(urls[i], sizeof(urls[i]), "http://h%d.test/p%d", i % 400, i);
    CHECK(admit(f, urls, N) == N, "first admit: all new");
    CHECK(admit(f, urls, N) == 0, "second admit: none new");
    for (int m = 0; m < NM; m++)
        CHECK(cmd_int(m, "DBSIZE", NULL) > PARTS / 6,
              "master %d holds keys: %lld", port[m], cmd_int(m, "DBSIZE", NULL));
    CHECK(frontier_level(f, 2, pend, &lv) == DC_OK && lv == 0 && pend[0] == N,
          "level %d pending %lld", lv, (long long)pend[0]);
    CHECK(frontier_meta_set(f, "max_depth", "3") == DC_OK, "meta set");
    CHECK(frontier_meta_get(f, "max_depth", v, sizeof(v)) == DC_OK &&
              strcmp(v, "3") == 0, "meta get %s", v);
    CHECK(drain(f, N) == N, "every URL popped once");
    CHECK(frontier_stats(f, &st) == DC_OK && st.done == N && st.queued == 0 &&
              st.leased == 0 && st.admitted == N,
          "stats done %lld queued %lld", (long long)st.done,
          (long long)st.queued);
    CHECK(frontier_level(f, 2, pend, &lv) == DC_OK && lv == -1, "level %d", lv);

    /* seen-set alone: new once */
    struct frontier_url u[500];
    unsigned char isnew[500];
    int c1 = 0, c2 = 0;
    for (int i = 0; i < 500; i++) {
        snprintf(urls[N + i], sizeof(urls[0]), "http://s%d.test/", i);
        t_mkurl(&u[i], urls[N + i], 0);
    }
    CHECK(seen_batch(f, u, 500, 1, isnew) == DC_OK, "check-only");
    for (int i = 0; i < 500; i++)
        c1 += isnew[i];
    CHECK(seen_batch(f, u, 500, 0, isnew) == DC_OK, "seen");
    for (int i = 0; i < 500; i++)
        c2 += isnew[i];
    CHECK(c1 == 500 && c2 == 500, "seen new: %d %d", c1, c2);
    CHECK(seen_batch(f, u, 500, 0, isnew) == DC_OK, "seen again");
    c2 = 0;
    for (int i = 0; i < 500; i++)
        c2 += isnew[i];
    CHECK(c2 == 0, "seen again new: %d", c2);
    CHECK(seen_usage(f, 0, &us) == DC_OK && us.members >= 500 + N,
          "usage members %llu", (unsigned long long)us.members);

    /* content digests over many slots: the second claimant is a dup */
    const char *dg[64], *uri[64];
    char dgs[32][48];
    int64_t ms[64], oms[64];
    unsigned char dup[64];
    char *orig[64];
    int dups = 0;
    for (int i = 0; i < 32; i++) {
        snprintf(dgs[i], sizeof(dgs[i]), "sha1:ABCDEFGH%02dXYZ%c%c", i,
                 'A' + i % 26, '2' + i % 8);
        dg[i] = dg[32 + i] = dgs[i];
        uri[i] = urls[i];
        uri[32 + i] = urls[100 + i];
        ms[i] = ms[32 + i] = i;
    }
    CHECK(frontier_digest_claim(f, dg, uri, ms, 64, dup, orig, oms) == DC_OK,
          "digest: %s", frontier_errstr(f));
    for (int i = 0; i < 64; i++) {
        dups += dup[i];
        if (i >= 32)
            CHECK(orig[i] && strcmp(orig[i], urls[i - 32]) == 0, "orig %d", i);
        free(orig[i]);
    }
    CHECK(dups == 32, "digest dups %d", dups);
}

/* The noise state hashes (<prefix>:{p}:noise) over many slots: one batch
 * put and get, each blob back in its host's partition. */
static size_t noise_found;
static void noise_one(void *ud, size_t i, const void *blob, size_t len)
{
    char (*h)[64] = ud;

    noise_found += len == strlen(h[i]) && memcmp(blob, h[i], len) == 0;
}

static void t_noise(struct frontier *f)
{
    enum { N = 300 };
    static char h[N][64];
    const char *hosts[N];
    const unsigned char *blobs[N];
    size_t lens[N];

    for (int i = 0; i < N; i++) {
        snprintf(h[i], sizeof(h[i]), "n%d.test", i);
        hosts[i] = h[i];
        blobs[i] = (const unsigned char *)h[i];
        lens[i] = strlen(h[i]); /* the host's name as its blob */
    }
    CHECK(frontier_noise_put(f, hosts, blobs, lens, N - 10) == DC_OK,
          "noise put: %s", frontier_errstr(f));
    noise_found = 0;
    CHECK(frontier_noise_get(f, hosts, N, noise_one, h) == DC_OK,
          "noise get: %s", frontier_errstr(f));
    CHECK(noise_found == N - 10, "noise blobs back: %zu", noise_found);
    for (int m = 0; m < NM; m++) {
        redisReply *r = cmd(m, "KEYS %s", "t:{*}:noise");
        CHECK(r->type == REDIS_REPLY_ARRAY && r->elements > 0,
              "master %d holds noise hashes", port[m]);
        freeReplyObject(r);
    }
}

/* Scripts after SCRIPT FLUSH on one master: the NOSCRIPT path sends them
 * again with EVAL, which caches them there. With the module's native
 * admit, pop and complete (no script), the script checked is reclaim's,
 * run on every partition the drain used. */
static void t_noscript(struct frontier *f)
{
    int k = f->native ? FRONTIER_SCRIPT_RECLAIM
            : f->seen_mod ? FRONTIER_SCRIPT_ADMIT_MOD : FRONTIER_SCRIPT_ADMIT;
    size_t got = 0;

    freeReplyObject(cmd(1, "SCRIPT FLUSH"));
    CHECK(!script_on(1, f->sha[k]), "flushed");
    for (int i = 0; i < 300; i++)
        snprintf(urls[i], sizeof(urls[i]), "http://n%d.test/x", i);
    CHECK(admit(f, urls, 300) == 300, "admit after SCRIPT FLUSH");
    CHECK(f->native || script_on(1, f->sha[k]),
          "admit script cached again by EVAL");
    CHECK(admit(f, urls, 300) == 0, "again after SCRIPT FLUSH");
    CHECK(drain(f, 300) == 300, "pop after SCRIPT FLUSH");
    if (f->native) {
        CHECK(frontier_reclaim(f, 3000000, 0, &got) == DC_OK && got == 0,
              "reclaim after SCRIPT FLUSH: %s", frontier_errstr(f));
        CHECK(script_on(1, f->sha[k]), "reclaim script cached again by EVAL");
    }
}

/* Move slot s from master a to master b; with keys == NULL every key
 * moves and the slot changes owner, else only `keys` move (ASK state). */
static void migrate(int s, int a, int b, const char *only)
{
    freeReplyObject(cmd(b, "CLUSTER SETSLOT %d IMPORTING %s", s, id[a]));
    freeReplyObject(cmd(a, "CLUSTER SETSLOT %d MIGRATING %s", s, id[b]));
    redisReply *keys = cmd(a, "CLUSTER GETKEYSINSLOT %d 1000", s);
    for (size_t i = 0; i < keys->elements; i++) {
        const char *k = keys->element[i]->str;
        if (only && strcmp(k, only) != 0)
            continue;
        redisReply *r = cmd(a, "MIGRATE 127.0.0.1 %d %s 0 5000", port[b], k);
        CHECK(r->type == REDIS_REPLY_STATUS, "MIGRATE %s: %s", k,
              r->str ? r->str : "?");
        freeReplyObject(r);
    }
    freeReplyObject(keys);
    if (only)
        return;
    int order[NM] = {b, a, 3 - a - b}; /* the importing node first */
    for (int m = 0; m < NM; m++)
        freeReplyObject(cmd(order[m], "CLUSTER SETSLOT %d NODE %s", s, id[b]));
}

/* A partition of the "t" frontier whose slot master m serves. */
static int part_on(int m, int skip)
{
    char tag[16];

    for (int p = 0; p < PARTS; p++) {
        snprintf(tag, sizeof(tag), "{%d}", p);
        if (p != skip && owner(frontier__key_slot(tag, strlen(tag))) == m)
            return p;
    }
    return -1;
}

/* URLs of hosts in partition p (up to n, from a bounded search). */
static int urls_in(struct frontier *f, int p, int n, const char *tag)
{
    int k = 0;

    for (int i = 0; i < 100000 && k < n; i++) {
        char h[32];
        snprintf(h, sizeof(h), "%s%d.test", tag, i);
        if (frontier_partition(f, h, strlen(h)) == p)
            snprintf(urls[k++], sizeof(urls[0]), "http://%s/", h);
    }
    return k;
}

static void t_moved(struct frontier *f)
{
    int p = part_on(0, -1), s;
    char tag[16], key[64];
    struct frontier_stats st0, st;

    snprintf(tag, sizeof(tag), "{%d}", p);
    s = frontier__key_slot(tag, strlen(tag));
    CHECK(urls_in(f, p, 20, "mv") == 20, "hosts in partition %d", p);
    CHECK(admit(f, urls, 10) == 10, "admit before the move");
    CHECK(frontier_stats(f, &st0) == DC_OK, "stats");
    migrate(s, 0, 2, NULL);
    CHECK(owner(s) == 2, "slot %d now on master 2", s);
    /* the frontier's map is stale: MOVED, read again, sent to master 2 */
    CHECK(admit(f, urls, 20) == 10, "admit after the move: 10 new");
    CHECK(frontier_stats(f, &st) == DC_OK && st.queued == st0.queued + 10,
          "queued %lld", (long long)st.queued);
    snprintf(key, sizeof(key), "t:{%d}:pend", p);
    CHECK(cmd_int(2, "EXISTS %s", key) == 1, "pend key on master 2");
    CHECK(cmd_int(0, "EXISTS %s", key) < 0, "master 0 answers MOVED");
    CHECK(drain(f, 20) == 20, "pop after the move");
}

static void t_ask(struct frontier *f)
{
    int p = part_on(1, -1), s;
    char tag[16], key[64];
    int64_t pend[2];
    int lv;
    struct frontier_stats st;

    snprintf(tag, sizeof(tag), "{%d}", p);
    s = frontier__key_slot(tag, strlen(tag));
    CHECK(urls_in(f, p, 8, "ask") == 8, "hosts in partition %d", p);
    CHECK(admit(f, urls, 7) == 7, "admit before the migration");
    snprintf(key, sizeof(key), "t:{%d}:pend", p);
    migrate(s, 1, 0, key); /* only pend moves; the slot stays MIGRATING */
    redisReply *r = cmd(1, "GET %s", key);
    CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ASK ", 4) == 0,
          "source answers ASK: %s", r->str ? r->str : "?");
    freeReplyObject(r);
    CHECK(owner(s) == 1, "slot still on master 1");
    /* pend is read from master 0 after ASK, the rest from master 1 */
    CHECK(frontier_level(f, 2, pend, &lv) == DC_OK && lv == 0 && pend[0] == 7,
          "level %d pending %lld: %s", lv, (long long)pend[0],
          frontier_errstr(f));
    CHECK(frontier_stats(f, &st) == DC_OK && st.queued == 7,
          "queued %lld", (long long)st.queued);
    /* a script over pend (moved) and stat (not moved): TRYAGAIN from both
     * nodes, retried a few times, then a clear error; nothing admitted */
    time_t t0 = time(NULL);
    struct frontier_url u;
    unsigned char isnew = 9;
    t_mkurl(&u, urls[7], 0);
    int rc = frontier_admit(f, &u, 1, 1000, &isnew);
    CHECK(rc == DC_EREDIS && strstr(frontier_errstr(f), "TRYAGAIN"),
          "admit into a half-moved slot: %d %s", rc, frontier_errstr(f));
    CHECK(time(NULL) - t0 <= 5, "TRYAGAIN retries are bounded");
    migrate(s, 1, 0, NULL); /* finish: the slot moves to master 0 */
    CHECK(owner(s) == 0, "slot now on master 0");
    CHECK(admit(f, urls + 7, 1) == 1, "admitted once the slot moved");
    CHECK(drain(f, 8) == 8, "pop after the migration");
}

static int cluster_ok(int m)
{
    redisReply *r = cmd(m, "CLUSTER INFO");
    int ok = r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");

    freeReplyObject(r);
    return ok;
}

/* A slot no master serves (CLUSTER DELSLOTS, full coverage not required
 * meanwhile): a clear error for calls routed to it; served again
 * (ADDSLOTS), the same call works. */
static void t_unserved(void)
{
    char err[256] = "", tag[16], want[64];
    int rc, ok = 0;
    struct frontier *g;
    int p = part_on(0, -1), s;

    snprintf(tag, sizeof(tag), "{%d}", p);
    s = frontier__key_slot(tag, strlen(tag));
    for (int m = 0; m < NM; m++) { /* the other slots stay up */
        freeReplyObject(cmd(m, "CONFIG SET cluster-require-full-coverage no"));
        freeReplyObject(cmd(m, "CLUSTER DELSLOTS %d", s));
    }
    g = open_f("t", PARTS, err, sizeof(err), &rc);
    CHECK(rc == DC_OK, "open with slot %d unserved: %s", s, err);
    if (!g)
        return;
    CHECK(urls_in(g, p, 1, "un") == 1, "host in partition %d", p);
    snprintf(want, sizeof(want), "slot %d is not served", s);
    struct frontier_url u;
    unsigned char isnew;
    t_mkurl(&u, urls[0], 0);
    rc = frontier_admit(g, &u, 1, 1000, &isnew);
    CHECK(rc == DC_EREDIS && strstr(frontier_errstr(g), want),
          "admit to an unserved slot: %d %s", rc, frontier_errstr(g));
    freeReplyObject(cmd(0, "CLUSTER ADDSLOTS %d", s));
    for (int m = 0; m < NM; m++)
        freeReplyObject(cmd(m, "CONFIG SET cluster-require-full-coverage yes"));
    for (int i = 0; i < 100 && !ok; i++) { /* bounded: 10 s */
        ok = cluster_ok(0) && cluster_ok(1) && cluster_ok(2) && owner(s) == 0;
        if (!ok)
            usleep(100000);
    }
    CHECK(ok, "slot %d served again", s);
    rc = frontier_admit(g, &u, 1, 1000, &isnew);
    CHECK(rc == DC_OK && isnew == 1, "admit once served: %d %s", rc,
          frontier_errstr(g));
    CHECK(drain(g, 1) == 1, "pop once served");
    frontier_close(&g);
}

/* Admit rate over the cluster (printed, not checked): 40 batches of 500. */
static void t_rate(struct frontier *f)
{
    struct timespec t0, t1;
    uint64_t rt0 = frontier_roundtrips(f);
    int fresh = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int b = 0; b < 40; b++) {
        for (int i = 0; i < 500; i++)
            snprintf(urls[i], sizeof(urls[i]), "http://r%d.test/%d", i % 250,
                     b * 500 + i);
        fresh += admit(f, urls, 500);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) +
               (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(fresh == 20000, "rate: %d new", fresh);
    printf("u-rcluster: admit 20000 URLs (250 hosts) in 40 batches: %.3f s, "
           "%.0f URLs/s, %llu round trips\n", s, 20000 / s,
           (unsigned long long)(frontier_roundtrips(f) - rt0));
    CHECK(drain(f, 20000) == 20000, "rate: drained");
}

/* The master on port p3 dies: clear errors, no crash. */
static void t_down(struct frontier *f, int pid)
{
    char err[256] = "", want[32];
    int rc;

    kill(pid, SIGKILL);
    for (int i = 0; i < 100; i++) { /* until the port refuses (5 s) */
        redisContext *c = redisConnect("127.0.0.1", port[2]);
        int up = c && !c->err;
        redisFree(c);
        if (!up)
            break;
        usleep(50000);
    }
    snprintf(want, sizeof(want), "127.0.0.1:%d", port[2]);
    for (int i = 0; i < 300; i++)
        snprintf(urls[i], sizeof(urls[i]), "http://d%d.test/x", i);
    struct frontier_url u[300];
    unsigned char isnew[300];
    for (int i = 0; i < 300; i++)
        t_mkurl(&u[i], urls[i], 0);
    time_t t0 = time(NULL);
    rc = frontier_admit(f, u, 300, 1000, isnew);
    CHECK(rc == DC_EREDIS && strstr(frontier_errstr(f), want),
          "admit with a dead master: %d %s", rc, frontier_errstr(f));
    rc = frontier_admit(f, u, 300, 1000, isnew);
    CHECK(rc == DC_EREDIS && strstr(frontier_errstr(f), "redis cluster"),
          "again: %d %s", rc, frontier_errstr(f));
    struct frontier *g = open_f("t", PARTS, err, sizeof(err), &rc);
    CHECK(rc == DC_EREDIS && !g && strstr(err, "redis cluster"),
          "open with a dead master: %d %s", rc, err);
    CHECK(time(NULL) - t0 < 30, "errors in bounded time");
}

int main(void)
{
    const char *ports = getenv("DCRAWL_TEST_RCLUSTER_PORTS");
    const char *seeds = getenv("DCRAWL_TEST_RCLUSTER_SEEDS");
    const char *kpid = getenv("DCRAWL_TEST_RCLUSTER_KILL");
    char err[256] = "";
    int rc;

    signal(SIGPIPE, SIG_IGN); /* as the daemon: a dead master is EPIPE */
    url = getenv("DCRAWL_TEST_RCLUSTER");
    if (!url || !ports || !seeds || !kpid ||
        sscanf(ports, "%d %d %d", &port[0], &port[1], &port[2]) != 3) {
        fprintf(stderr, "u-rcluster: run by tests/e2e/rcluster.sh\n");
        return 1;
    }
    for (int m = 0; m < NM; m++) {
        raw[m] = redisConnect("127.0.0.1", port[m]);
        if (!raw[m] || raw[m]->err) {
            fprintf(stderr, "u-rcluster: cannot connect to %d\n", port[m]);
            return 1;
        }
        redisReply *r = cmd(m, "CLUSTER MYID");
        snprintf(id[m], sizeof(id[m]), "%s", r->str ? r->str : "");
        freeReplyObject(r);
    }
    t_slots();
    t_seeded(atoll(seeds));
    struct frontier *f = open_f("t", PARTS, err, sizeof(err), &rc);
    CHECK(rc == DC_OK && f, "open: %s", err);
    if (f) {
        t_api(f);
        t_noise(f);
        t_noscript(f);
        t_moved(f);
        t_ask(f);
        t_rate(f);
        t_unserved();
        t_down(f, atoi(kpid));
        frontier_close(&f);
    }
    for (int m = 0; m < NM; m++)
        redisFree(raw[m]);
    return t_done("u-rcluster");
}
