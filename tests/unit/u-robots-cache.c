/*
 * u-robots-cache.c: the node's robots.txt cache entries (crawler/
 * robots-cache.c) on a fake clock: which failures are final (a dead host:
 * no retry, tried again only for a deeper level) and which are retried
 * after 1, 2, 4 s before the host stays "disallow all"; and the bound on
 * the cache: past its cap the least recently used idle hosts are dropped
 * (never one a lease or transfer waits on), and a dropped host's rules
 * come back from a real Redis (frontier_robots_put/get, as the node does)
 * and still apply; which sitemap states a change of Redis server resets.
 * Needs DCRAWL_TEST_REDIS (tests/with-redis.sh).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "conf.h"
#include "node-internal.h"
#include "parser.h"
#include "t.h"

static struct fetch_result failed(int status, CURLcode code, const char *err)
{
    struct fetch_result r;
    memset(&r, 0, sizeof(r));
    r.status = status;
    r.curl_code = code;
    snprintf(r.error, sizeof(r.error), "%s", err);
    return r;
}

static void test_final(void)
{
    static const struct { int status; CURLcode code; int final; } rows[] = {
        {0, CURLE_COULDNT_RESOLVE_HOST, 1},
        {0, CURLE_COULDNT_CONNECT, 1},
        {0, CURLE_PEER_FAILED_VERIFICATION, 1},
        {0, CURLE_SSL_CACERT_BADFILE, 1},
        {0, CURLE_OPERATION_TIMEDOUT, 0},
        {0, CURLE_RECV_ERROR, 0},
        {0, CURLE_OK, 0}, /* "transfer could not start" */
        {503, CURLE_OK, 0},
        {500, CURLE_OK, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct fetch_result r = failed(rows[i].status, rows[i].code, "x");
        CHECK(robots_error_final(&r) == rows[i].final, "row %zu: final %d", i,
              rows[i].final);
    }
}

/* A refused host at depth 1: dead at once, its URLs disallowed, no retry;
 * depth 1 again: still dead; depth 2 within ROBOTS_REVIVE_MS: still dead;
 * depth 2 later: revived once, then dead for 2. */
static void test_dead(void)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new(1024);
    struct robots_entry *e = robots_cache_get(rc, "http://127.0.9.1:1/a");
    struct fetch_result r = failed(0, CURLE_COULDNT_CONNECT,
                                   "Failed to connect to 127.0.9.1 port 1");
    conf_init(&c);
    CHECK(e && e->dead_depth == -1, "a new entry is not dead");
    e->try_depth = 1;
    robots_entry_set(e, &r, "dcrawl", &c, 1000);
    CHECK(e->state == ROBOTS_READY && !robots_entry_retrying(e), "dead: no retry");
    CHECK(e->dead_depth == 1, "dead for depth 1 (%d)", e->dead_depth);
    CHECK(e->rule == ROBOTS_RULE_UNREACHABLE && !strcmp(e->error, r.error),
          "the error kept for the skipped lines");
    CHECK(!parser_robots_allowed(e->rules, "/a"), "disallow all");
    CHECK(e->expires_ms == 1000 + (int64_t)(c.robots_expiry * 1000),
          "kept until robots.expiry");
    CHECK(!robots_entry_revive(e, 0, 1000 + ROBOTS_REVIVE_MS) &&
              !robots_entry_revive(e, 1, 1000 + ROBOTS_REVIVE_MS),
          "same or shallower level: not tried again");
    CHECK(!robots_entry_revive(e, 2, 1000 + ROBOTS_REVIVE_MS - 1) &&
              e->state == ROBOTS_READY,
          "a deeper level soon after: not tried again");
    CHECK(robots_entry_revive(e, 2, 1000 + ROBOTS_REVIVE_MS) &&
              e->state == ROBOTS_UNKNOWN,
          "a deeper level later: tried again");
    e->state = ROBOTS_FETCHING;
    e->try_depth = 2;
    robots_entry_set(e, &r, "dcrawl", &c, 2000);
    CHECK(e->dead_depth == 2 && !robots_entry_revive(e, 2, 2000 + ROBOTS_REVIVE_MS),
          "dead again, for depth 2");
    /* then the host answers: alive */
    e->state = ROBOTS_FETCHING;
    e->try_depth = 3;
    r = failed(404, CURLE_OK, "");
    robots_entry_set(e, &r, "dcrawl", &c, 3000);
    CHECK(e->dead_depth == -1 && !robots_entry_revive(e, 4, 3000 + ROBOTS_REVIVE_MS) &&
          parser_robots_allowed(e->rules, "/a"), "404: alive, allow all");
    conf_release(&c);
    robots_cache_free(&rc);
}

/* A timeout or a 5xx: retried after 1, 2, 4 s, never dead. */
static void test_transient(void)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new(1024);
    struct robots_entry *e = robots_cache_get(rc, "http://slow.example/");
    struct fetch_result r = failed(0, CURLE_OPERATION_TIMEDOUT, "Operation timed out");
    int64_t now = 0, waits[] = {1000, 2000, 4000};
    conf_init(&c);
    for (int i = 0; i < 3; i++) {
        robots_entry_set(e, &r, "dcrawl", &c, now);
        CHECK(robots_entry_retrying(e) && e->dead_depth == -1 &&
              e->expires_ms == now + waits[i], "try %d: retried after %lld ms", i + 1,
              (long long)waits[i]);
        CHECK(!robots_entry_revive(e, 5, INT64_MAX / 2), "try %d: not dead", i + 1);
        now = e->expires_ms;
    }
    r = failed(503, CURLE_OK, "");
    robots_entry_set(e, &r, "dcrawl", &c, now);
    CHECK(!robots_entry_retrying(e) && !strcmp(e->error, "HTTP 503"),
          "4th failure: disallow all until robots.expiry");
    conf_release(&c);
    robots_cache_free(&rc);
}

#define EV_CAP 16
#define EV_HOSTS 100

static const char robots_txt[] = "User-agent: *\nDisallow: /private\n";

static struct fetch_result ok_robots(void)
{
    struct fetch_result r;
    memset(&r, 0, sizeof(r));
    r.status = 200;
    r.body = (char *)robots_txt;
    r.body_len = sizeof(robots_txt) - 1;
    return r;
}

struct restored {
    struct robots_entry *e;
    const struct conf *c;
    int n;
};

static void restore_cb(void *ud, size_t i, const struct frontier_robots *s)
{
    struct restored *x = ud;
    (void)i;
    x->n += robots_entry_restore(x->e, s, "dcrawl", x->c, 5000);
}

/* EV_HOSTS hosts through a cache of EV_CAP, each in a round of its own:
 * each answer stored as the node stores it; a host with a parked lease and
 * one fetching stay whatever the pressure; the first host is dropped, comes
 * back UNKNOWN, is restored from Redis and its rules apply again. A round
 * larger than the cap keeps all its hosts until the next round. */
static void test_evict(struct frontier *f)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new(EV_CAP);
    struct fetch_result r = ok_robots();
    struct frontier_lease lease;
    struct robots_entry *parked, *fetching, *e;
    struct restored x = {0};
    char url[64];
    uint64_t evicted = 0;
    size_t n, bytes = 0;

    conf_init(&c);
    memset(&lease, 0, sizeof(lease));
    parked = robots_cache_get(rc, "http://parked.test/");
    robots_entry_park(parked, &lease);
    fetching = robots_cache_get(rc, "http://fetching.test/");
    fetching->state = ROBOTS_FETCHING;
    for (int i = 0; i < EV_HOSTS; i++) {
        struct frontier_robots keep;
        snprintf(url, sizeof(url), "http://h%d.test/x", i);
        robots_cache_round(rc); /* one pop batch per host */
        e = robots_cache_get(rc, url);
        robots_entry_set(e, &r, "dcrawl", &c, 1000);
        CHECK(robots_store_value(e, &r, 1000, &keep), "h%d: worth storing", i);
        keep.host = e->host;
        CHECK(frontier_robots_put(f, &keep) == DC_OK, "h%d: stored", i);
    }
    n = robots_cache_count(rc, &bytes, &evicted);
    CHECK(n <= EV_CAP && evicted == EV_HOSTS + 2 - n,
          "held %zu of cap %d, %llu dropped", n, EV_CAP, (unsigned long long)evicted);
    CHECK(bytes > 0 && bytes < (size_t)EV_CAP * 2048, "bytes %zu", bytes);
    CHECK(robots_cache_find(rc, "http://parked.test/") == parked &&
              parked->nparked == 1,
          "a host with a parked lease is never dropped");
    CHECK(robots_cache_find(rc, "http://fetching.test/") == fetching,
          "a host whose robots.txt is being fetched is never dropped");
    CHECK(!robots_cache_find(rc, "http://h0.test/"), "h0 dropped");
    /* one round (one pop batch) larger than the cap: none of its hosts is
     * dropped while it lasts */
    robots_cache_round(rc);
    for (int i = 0; i < 2 * EV_CAP; i++) {
        snprintf(url, sizeof(url), "http://r%d.test/", i);
        robots_entry_set(robots_cache_get(rc, url), &r, "dcrawl", &c, 1000);
    }
    n = robots_cache_count(rc, NULL, NULL);
    CHECK(n >= 2 * EV_CAP, "a round's %d hosts all held (%zu)", 2 * EV_CAP, n);
    robots_cache_round(rc);
    (void)robots_cache_get(rc, "http://next.test/");
    CHECK(robots_cache_count(rc, NULL, NULL) < n,
          "the next round drops them again (%zu)", robots_cache_count(rc, NULL, NULL));
    e = robots_cache_get(rc, "http://h0.test/private/y");
    CHECK(e && e->state == ROBOTS_UNKNOWN && !e->rules, "h0 back as UNKNOWN");
    {
        const char *host = e->host;
        x.e = e;
        x.c = &c;
        CHECK(frontier_robots_get(f, &host, 1, restore_cb, &x) == DC_OK && x.n == 1,
              "h0's answer read back from Redis");
    }
    CHECK(e->state == ROBOTS_READY &&
              !parser_robots_allowed(e->rules, "/private/y") &&
              parser_robots_allowed(e->rules, "/public"),
          "h0's rules apply after the reload");
    conf_release(&c);
    robots_cache_free(&rc);
}

/* The byte bound: hosts with large rules are dropped long before the host
 * cap. */
static void test_evict_bytes(void)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new(1000000);
    size_t big = 400 << 10, bytes = 0, n;
    char *body = malloc(big), url[64];
    struct fetch_result r;
    uint64_t evicted = 0;

    conf_init(&c);
    memset(body, '#', big);
    memset(&r, 0, sizeof(r));
    r.status = 200;
    r.body = body;
    r.body_len = big;
    for (int i = 0; i < 400; i++) {
        snprintf(url, sizeof(url), "http://big%d.test/", i);
        robots_cache_round(rc);
        robots_entry_set(robots_cache_get(rc, url), &r, "dcrawl", &c, 1000);
    }
    n = robots_cache_count(rc, &bytes, &evicted);
    CHECK(bytes <= ROBOTS_CACHE_BYTES + big + 4096 && evicted > 0 && n + evicted == 400,
          "400 x 400 KiB rules: %zu held, %zu bytes, %llu dropped", n, bytes,
          (unsigned long long)evicted);
    free(body);
    conf_release(&c);
    robots_cache_free(&rc);
}

/* The sitemap state a change of Redis server or a moved partition resets
 * (robots_entry_sitemaps_again): started and not read, or read less than
 * ROBOTS_SITEMAP_RECHECK_MS ago -> forgotten (queue emptied, to start
 * again); read longer ago, or never started -> kept. And the answer kept
 * until the sitemaps are read is a copy, handed over once. */
static void test_sitemaps_again(void)
{
    struct robots_cache *rc = robots_cache_new(1024);
    struct robots_entry *e = robots_cache_get(rc, "http://s.test/");
    struct frontier_robots k = {0}, out;
    char body[] = "User-agent: *\nSitemap: http://s.test/sm.xml\n", *b = NULL;
    int level;
    char *u;

    CHECK(robots_entry_sitemaps_again(e, 1000) == 0, "never started: kept");
    e->sm_started = 1;
    CHECK(robots_entry_sitemap_push(e, "http://s.test/sm.xml", 0) == 1, "push");
    CHECK(robots_entry_sitemap_push(e, "http://s.test/sm2.xml", 1) == 1, "push 2");
    u = robots_entry_sitemap_take(e, &level);
    CHECK(u && !strcmp(u, "http://s.test/sm.xml"), "take");
    free(u);
    CHECK(robots_entry_sitemaps_again(e, 1000) == 1 && !e->sm_started &&
              e->sm_n == 0 && e->sm_fetched == 0 && e->sm_urls == 0,
          "still reading: forgotten");
    CHECK(robots_entry_sitemap_push(e, "http://s.test/sm.xml", 0) == 1,
          "a forgotten sitemap is queued again");
    e->sm_started = 1;
    e->sm_done_ms = 5000;
    CHECK(robots_entry_sitemaps_again(e, 5000 + ROBOTS_SITEMAP_RECHECK_MS - 1) == 1,
          "read just under the recheck time ago: forgotten");
    e->sm_started = 1;
    e->sm_done_ms = 5000;
    CHECK(robots_entry_sitemaps_again(e, 5000 + ROBOTS_SITEMAP_RECHECK_MS) == 0 &&
              e->sm_started,
          "read the recheck time ago: kept");

    CHECK(robots_entry_keep_take(e, &out, &b) == 0, "nothing kept");
    k.host = e->host;
    k.status = 200;
    k.body = body;
    k.body_len = strlen(body);
    robots_entry_keep(e, &k);
    memset(body, 'x', strlen(body)); /* a copy was kept */
    CHECK(robots_entry_keep_take(e, &out, &b) == 1 && out.body == b &&
              out.body_len == k.body_len && !memcmp(b, "User-agent", 10) &&
              !strcmp(out.host, "s.test"),
          "the kept answer handed over");
    free(b);
    CHECK(robots_entry_keep_take(e, &out, &b) == 0, "handed over once");
    robots_entry_keep(e, &k); /* freed with the cache */
    robots_cache_free(&rc);
}

int main(void)
{
    const char *url = getenv("DCRAWL_TEST_REDIS");
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";

    test_final();
    test_dead();
    test_transient();
    test_evict_bytes();
    test_sitemaps_again();
    if (!url) {
        fprintf(stderr, "u-robots-cache: DCRAWL_TEST_REDIS not set (run via "
                        "tests/with-redis.sh)\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    conf_init(&c);
    c.frontier_partitions = 16;
    CHECK(frontier_open(&f, url, &c, "n1", err, sizeof(err)) == DC_OK && f,
          "frontier_open: %s", err);
    if (f)
        test_evict(f);
    frontier_close(&f);
    conf_release(&c);
    return t_done("u-robots-cache");
}
