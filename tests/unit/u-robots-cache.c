/*
 * u-robots-cache.c: the node's robots.txt cache entries (crawler/
 * robots-cache.c) on a fake clock: which failures are final (a dead host:
 * no retry, tried again only for a deeper level) and which are retried
 * after 1, 2, 4 s before the host stays "disallow all".
 */
#include <stdint.h>
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
 * depth 1 again: still dead; depth 2: revived once, then dead for 2. */
static void test_dead(void)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new();
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
    CHECK(!robots_entry_revive(e, 0) && !robots_entry_revive(e, 1),
          "same or shallower level: not tried again");
    CHECK(robots_entry_revive(e, 2) && e->state == ROBOTS_UNKNOWN,
          "a deeper level: tried again");
    e->state = ROBOTS_FETCHING;
    e->try_depth = 2;
    robots_entry_set(e, &r, "dcrawl", &c, 2000);
    CHECK(e->dead_depth == 2 && !robots_entry_revive(e, 2), "dead again, for depth 2");
    /* then the host answers: alive */
    e->state = ROBOTS_FETCHING;
    e->try_depth = 3;
    r = failed(404, CURLE_OK, "");
    robots_entry_set(e, &r, "dcrawl", &c, 3000);
    CHECK(e->dead_depth == -1 && !robots_entry_revive(e, 4) &&
          parser_robots_allowed(e->rules, "/a"), "404: alive, allow all");
    conf_release(&c);
    robots_cache_free(&rc);
}

/* A timeout or a 5xx: retried after 1, 2, 4 s, never dead. */
static void test_transient(void)
{
    struct conf c;
    struct robots_cache *rc = robots_cache_new();
    struct robots_entry *e = robots_cache_get(rc, "http://slow.example/");
    struct fetch_result r = failed(0, CURLE_OPERATION_TIMEDOUT, "Operation timed out");
    int64_t now = 0, waits[] = {1000, 2000, 4000};
    conf_init(&c);
    for (int i = 0; i < 3; i++) {
        robots_entry_set(e, &r, "dcrawl", &c, now);
        CHECK(robots_entry_retrying(e) && e->dead_depth == -1 &&
              e->expires_ms == now + waits[i], "try %d: retried after %lld ms", i + 1,
              (long long)waits[i]);
        CHECK(!robots_entry_revive(e, 5), "try %d: not dead", i + 1);
        now = e->expires_ms;
    }
    r = failed(503, CURLE_OK, "");
    robots_entry_set(e, &r, "dcrawl", &c, now);
    CHECK(!robots_entry_retrying(e) && !strcmp(e->error, "HTTP 503"),
          "4th failure: disallow all until robots.expiry");
    conf_release(&c);
    robots_cache_free(&rc);
}

int main(void)
{
    test_final();
    test_dead();
    test_transient();
    return t_done("u-robots-cache");
}
