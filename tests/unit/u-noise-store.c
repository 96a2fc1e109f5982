/*
 * u-noise-store.c: the noise filter's repetition state in Redis
 * (frontier_noise_get / frontier_noise_put, <prefix>:{p}:noise) against a
 * real redis-server (tests/with-redis.sh):
 *  - a batch put and a batch get are one round trip each; binary blobs
 *    come back byte for byte; hosts with nothing stored are not reported;
 *    a put overwrites; each host lands in its partition's hash;
 *  - the state a struct noise learned, saved and read back by a fresh one
 *    (another node), judges the host's next page the same way;
 *  - a key of the wrong type is a failed read (DC_EREDIS, nothing
 *    reported), a garbage value is refused by noise_state_import.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "frontier.h"
#include "noise.h"
#include "t.h"

#define PARTS 16

static const char *redis_url;
static redisContext *raw;

static long long raw_int(const char *fmt, const char *a, const char *b)
{
    redisReply *r = redisCommand(raw, fmt, a, b);
    long long v = -1;

    if (r && r->type == REDIS_REPLY_INTEGER)
        v = r->integer;
    if (r)
        freeReplyObject(r);
    return v;
}

static void raw_do(const char *fmt, const char *a, const char *b,
                   const char *c)
{
    redisReply *r = redisCommand(raw, fmt, a, b, c);

    if (r)
        freeReplyObject(r);
}

static struct frontier *open_f(void)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    c.frontier_partitions = PARTS;
    rc = frontier_open(&f, redis_url, &c, "n1", err, sizeof(err));
    CHECK(rc == DC_OK && f, "frontier_open: %d %s", rc, err);
    conf_release(&c);
    return f;
}

struct got {
    size_t calls;
    int seen[8];
    size_t len[8];
    unsigned char blob[8][64];
};

static void got_one(void *ud, size_t i, const void *blob, size_t len)
{
    struct got *g = ud;

    g->calls++;
    if (i < 8) {
        g->seen[i]++;
        g->len[i] = len;
        memcpy(g->blob[i], blob, len < 64 ? len : 64);
    }
}

static void test_batches(struct frontier *f)
{
    const char *hosts[] = {"a.test", "b.test:8080", "c.test", "none.test",
                           "127.0.0.1:81"};
    static const unsigned char b0[] = {'d', 'n', 1, 0, 0, 0xff, 0},
                               b1[] = {1, 2, 3}, b2[] = {0};
    const unsigned char *blobs[] = {b0, b1, b2};
    const size_t lens[] = {sizeof(b0), sizeof(b1), sizeof(b2)};
    struct got g = {0};
    uint64_t rt;
    char key[64];
    size_t i;

    rt = frontier_roundtrips(f);
    CHECK(frontier_noise_put(f, hosts, blobs, lens, 3) == DC_OK, "put: %s",
          frontier_errstr(f));
    CHECK(frontier_roundtrips(f) == rt + 1, "put: one round trip");
    rt = frontier_roundtrips(f);
    CHECK(frontier_noise_get(f, hosts, 5, got_one, &g) == DC_OK, "get: %s",
          frontier_errstr(f));
    CHECK(frontier_roundtrips(f) == rt + 1, "get: one round trip");
    CHECK(g.calls == 3 && !g.seen[3] && !g.seen[4], "found %zu", g.calls);
    for (i = 0; i < 3; i++)
        CHECK(g.seen[i] == 1 && g.len[i] == lens[i] &&
                  !memcmp(g.blob[i], blobs[i], lens[i]),
              "host %s: blob back as stored", hosts[i]);
    /* each in its partition's hash */
    for (i = 0; i < 3; i++) {
        int p = frontier_partition(f, hosts[i], strlen(hosts[i]));
        snprintf(key, sizeof(key), "dc:{%d}:noise", p);
        CHECK(raw_int("HEXISTS %s %s", key, hosts[i]) == 1, "%s in %s",
              hosts[i], key);
    }
    /* overwrite */
    blobs[0] = b1;
    CHECK(frontier_noise_put(f, hosts, blobs, lens + 1, 1) == DC_OK, "put 2");
    memset(&g, 0, sizeof(g));
    CHECK(frontier_noise_get(f, hosts, 1, got_one, &g) == DC_OK &&
              g.calls == 1 && g.len[0] == sizeof(b1) &&
              !memcmp(g.blob[0], b1, sizeof(b1)),
          "overwritten");
    /* empty batches: no round trip */
    rt = frontier_roundtrips(f);
    CHECK(frontier_noise_get(f, hosts, 0, got_one, &g) == DC_OK &&
              frontier_noise_put(f, hosts, blobs, lens, 0) == DC_OK &&
              frontier_roundtrips(f) == rt,
          "empty batches");
}

/* Link i of page *ud of s.test: 5 menu links, then 20 of the page. */
static const char *page_url(void *ud, size_t i)
{
    static char buf[64];
    const int *k = ud;

    if (i < 5)
        snprintf(buf, sizeof(buf), "http://s.test/menu/%zu", i);
    else
        snprintf(buf, sizeof(buf), "http://s.test/p%d/%zu", *k, i);
    return buf;
}

/* Judge page k; the menu links left as navigation. */
static size_t judge(struct noise *nz, int k)
{
    unsigned char nav[25];
    uint32_t blk[25];
    size_t i, menu = 0;

    for (i = 0; i < 25; i++) {
        nav[i] = NOISE_SIG_RATIO;
        blk[i] = i < 5 ? 1 : 2;
    }
    noise_repeat(nz, "s.test", 6, NULL, 0, page_url, &k, 25, blk, nav, 10000,
                 NULL);
    for (i = 0; i < 5; i++)
        menu += nav[i] != 0;
    return menu;
}

struct imp {
    struct noise *nz;
    const char *const *hosts;
    int rc[4];
    size_t calls;
};

static void import_one(void *ud, size_t i, const void *blob, size_t len)
{
    struct imp *x = ud;

    x->calls++;
    x->rc[i] = noise_state_import(x->nz, x->hosts[i], strlen(x->hosts[i]),
                                  blob, len);
}

static void test_handover(struct frontier *f)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_REPEATED};
    struct noise *a = noise_new(&nc), *b = noise_new(&nc), *c = noise_new(&nc);
    const char *hosts[] = {"s.test", "garbage.test"};
    struct noise_state *s;
    size_t n;
    struct imp x = {b, hosts, {-1, -1}, 0};

    CHECK(judge(a, 0) == 0 && judge(a, 1) == 5, "node A learns the menu");
    n = noise_state_take_dirty(a, &s);
    CHECK(n == 1, "one dirty host: %zu", n);
    if (n == 1) {
        const char *h[] = {s[0].host};
        const unsigned char *bl[] = {s[0].blob};
        char key[32];
        CHECK(frontier_noise_put(f, h, bl, &s[0].len, 1) == DC_OK, "saved");
        snprintf(key, sizeof(key), "dc:{%d}:noise",
                 frontier_partition(f, "s.test", 6));
        printf("u-noise-store: s.test's state: %zu bytes, %s: HLEN %lld\n",
               s[0].len, key, raw_int("HLEN %s", key, NULL));
    }
    noise_state_free(s, n);
    {
        char key[32];
        snprintf(key, sizeof(key), "%d",
                 frontier_partition(f, "garbage.test", 12));
        raw_do("HSET dc:{%s}:noise %s %s", key, "garbage.test",
               "dn\001\377");
    }
    CHECK(frontier_noise_get(f, hosts, 2, import_one, &x) == DC_OK &&
              x.calls == 2,
          "read back: %zu", x.calls);
    CHECK(x.rc[0] == DC_OK && x.rc[1] == DC_EINVAL, "imports: %d %d",
          x.rc[0], x.rc[1]);
    CHECK(judge(b, 2) == 5, "node B (state read) drops the menu");
    CHECK(judge(c, 2) == 0, "node C (nothing read) keeps it");
    noise_free(&a);
    noise_free(&b);
    noise_free(&c);
}

static void test_failed_read(struct frontier *f)
{
    const char *hosts[] = {"w.test"};
    char key[32];
    struct got g = {0};

    snprintf(key, sizeof(key), "dc:{%d}:noise",
             frontier_partition(f, "w.test", 6));
    raw_do("DEL %s", key, NULL, NULL);
    raw_do("SET %s x", key, NULL, NULL);
    CHECK(frontier_noise_get(f, hosts, 1, got_one, &g) == DC_EREDIS &&
              g.calls == 0,
          "wrong type: a failed read");
    raw_do("DEL %s", key, NULL, NULL);
    CHECK(frontier_noise_get(f, hosts, 1, got_one, &g) == DC_OK &&
              g.calls == 0,
          "the handle works after it");
}

int main(void)
{
    struct frontier *f;

    redis_url = getenv("DCRAWL_TEST_REDIS");
    if (!redis_url || strncmp(redis_url, "unix://", 7) != 0) {
        fprintf(stderr, "u-noise-store: DCRAWL_TEST_REDIS not set (run via "
                        "tests/with-redis.sh)\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    raw = redisConnectUnix(redis_url + 7);
    if (!raw || raw->err) {
        fprintf(stderr, "u-noise-store: cannot connect to %s\n", redis_url);
        return 1;
    }
    f = open_f();
    if (f) {
        test_batches(f);
        test_handover(f);
        test_failed_read(f);
        frontier_close(&f);
    }
    redisFree(raw);
    return t_done("u-noise-store");
}
