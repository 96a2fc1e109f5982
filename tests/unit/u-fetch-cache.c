/*
 * u-fetch-cache.c: how long the fetcher lets libcurl keep a host's
 * addresses and an idle connection (crawler/fetch-cache.c), as a table of
 * transfer start rates on a fake clock: the times shrink as transfers
 * start faster, never below 1 s nor above their caps, and go back up when
 * the rate falls or after a pause.
 */
#include <stdint.h>

#include "node-internal.h"
#include "t.h"

struct row {
    long per_s;       /* transfers started in one second */
    int concurrency;  /* fetch.concurrency */
    long dns_s, idle_s; /* the times for the next second */
};

static const struct row rows[] = {
    {1, 512, FETCH_DNS_CACHE_S, FETCH_CONN_IDLE_S},
    {4, 16, FETCH_DNS_CACHE_S, 6},              /* 24 / 4 */
    {10, 512, FETCH_DNS_CACHE_S, 52},           /* 520 / 10 */
    {200, 512, FETCH_DNS_CACHE_S, 2},           /* 2000 / 200, 520 / 200 */
    {400, 512, 5, 1},
    {1000, 512, 2, 1},
    {5000, 512, 1, 1},                          /* never under 1 s */
    {100000, 8, 1, 1},
};

/* Start per_s transfers evenly over one second from *now; the times the
 * first start of the next second sees. */
static void run_second(struct fetch_cache_times *t, int64_t *now, long per_s,
                       int conc)
{
    for (long i = 0; i < per_s; i++)
        fetch_cache_times(t, *now + i * 1000 / per_s, conc);
    *now += 1000;
    fetch_cache_times(t, *now, conc);
}

static void test_rates(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct fetch_cache_times first = {0}, t = {0};
        int64_t now = 1000000;
        fetch_cache_times(&first, now, rows[i].concurrency);
        CHECK(first.dns_s == FETCH_DNS_CACHE_S &&
                  first.idle_s == FETCH_CONN_IDLE_S,
              "row %zu: first start %ld/%ld", i, first.dns_s, first.idle_s);
        run_second(&t, &now, rows[i].per_s, rows[i].concurrency);
        CHECK(t.dns_s == rows[i].dns_s, "row %zu: dns %ld want %ld", i,
              t.dns_s, rows[i].dns_s);
        CHECK(t.idle_s == rows[i].idle_s, "row %zu: idle %ld want %ld", i,
              t.idle_s, rows[i].idle_s);
    }
}

/* Fast, then slow again; fast, then a pause of minutes; a clock that
 * steps back. */
static void test_recovery(void)
{
    struct fetch_cache_times t = {0};
    int64_t now = 5000;

    run_second(&t, &now, 2000, 512);
    CHECK(t.dns_s == 1 && t.idle_s == 1, "fast: %ld/%ld", t.dns_s, t.idle_s);
    run_second(&t, &now, 1, 512);
    CHECK(t.dns_s == FETCH_DNS_CACHE_S && t.idle_s == FETCH_CONN_IDLE_S,
          "slow again: %ld/%ld", t.dns_s, t.idle_s);
    run_second(&t, &now, 2000, 512);
    now += 300000;
    fetch_cache_times(&t, now, 512);
    CHECK(t.dns_s == FETCH_DNS_CACHE_S && t.idle_s == FETCH_CONN_IDLE_S,
          "after a pause: %ld/%ld", t.dns_s, t.idle_s);
    run_second(&t, &now, 2000, 512);
    fetch_cache_times(&t, now - 60000, 512);
    CHECK(t.dns_s >= 1 && t.dns_s <= FETCH_DNS_CACHE_S && t.idle_s >= 1 &&
              t.idle_s <= FETCH_CONN_IDLE_S,
          "clock back: %ld/%ld", t.dns_s, t.idle_s);
}

int main(void)
{
    test_rates();
    test_recovery();
    return t_done("u-fetch-cache");
}
