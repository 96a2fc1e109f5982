/*
 * u-polite.c: the node's politeness queue (crawler/politeness.c) driven by
 * scripts of operations on a fake clock: host gaps from the end of the
 * last transfer, one host's transfers kept to host_connections, address
 * slots shared by host:port origins, learnt addresses of named hosts,
 * back-off doubling and its cap, holds.
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "node-internal.h"
#include "t.h"

static struct polite *mk(int ip_conns, double max_backoff)
{
    struct conf c;
    struct polite *p;
    conf_init(&c);
    c.politeness_ip_connections = ip_conns;
    c.politeness_max_backoff = max_backoff;
    p = polite_new(&c);
    conf_release(&c);
    return p;
}

static int tag[16]; /* distinct ud pointers */

static void test_host_ip(void)
{
    static const struct { const char *host, *ip; } rows[] = {
        {"127.0.0.5:8080", "127.0.0.5"}, {"127.0.0.5", "127.0.0.5"},
        {"[::1]:81", "::1"},             {"[2001:db8::1]", "2001:db8::1"},
        {"example.com:80", ""},          {"example.com", ""},
        {"999.1.1.1", ""},               {"[::1", ""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[POLITE_IP_MAX] = "x";
        polite_host_ip(rows[i].host, out, sizeof(out));
        CHECK(!strcmp(out, rows[i].ip), "%s -> '%s' want '%s'", rows[i].host,
              out, rows[i].ip);
    }
}

/* Two origins on one IP, limit 1: the second waits for the first's end. */
static void test_ip_slots(void)
{
    struct polite *p = mk(1, 300);
    char ip[POLITE_IP_MAX];
    CHECK(polite_wait_ms(p, 0) == INT64_MAX, "empty queue never wakes");
    polite_queue(p, "127.0.0.9:81", 500, 0, &tag[0]);
    polite_queue(p, "127.0.0.9:82", 500, 0, &tag[1]);
    polite_queue(p, "127.0.0.10:81", 500, 0, &tag[2]);
    CHECK(polite_waiting(p) == 3, "3 waiting");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == &tag[0] &&
              !strcmp(ip, "127.0.0.9"), "first: slot of 127.0.0.9");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == &tag[2],
          "second origin of the IP waits; the other IP goes");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == NULL && ip[0] == '\0',
          "nothing else");
    CHECK(polite_wait_ms(p, 1000) == INT64_MAX, "blocked on a slot only");
    polite_ended(p, "127.0.0.9:81", "127.0.0.9", "127.0.0.9", 1200);
    CHECK(polite_wait_ms(p, 1200) == 0, "slot free: ready now");
    CHECK(polite_next(p, 1200, ip, sizeof(ip)) == NULL, "round is over");
    polite_rewind(p);
    CHECK(polite_next(p, 1200, ip, sizeof(ip)) == &tag[1], "then the second");
    CHECK(polite_waiting(p) == 0, "none waiting");
    polite_free(&p);
    CHECK(p == NULL, "free NULLs");
    polite_free(NULL);
}

/* The gap counts from the end of the host's last transfer. */
static void test_gap(void)
{
    struct polite *p = mk(4, 300);
    char ip[POLITE_IP_MAX];
    polite_ended(p, "a.test", "", "", 10000); /* e.g. its robots.txt */
    polite_queue(p, "a.test", 500, 0, &tag[0]);
    polite_queue(p, "b.test", 500, 0, &tag[1]); /* never fetched: no gap */
    CHECK(polite_next(p, 10100, ip, sizeof(ip)) == &tag[1], "b first");
    CHECK(polite_next(p, 10100, ip, sizeof(ip)) == NULL, "a not yet");
    CHECK(polite_wait_ms(p, 10100) == 400, "a in 400 ms, got %lld",
          (long long)polite_wait_ms(p, 10100));
    polite_rewind(p);
    CHECK(polite_next(p, 10499, ip, sizeof(ip)) == NULL, "not at 499");
    polite_rewind(p);
    CHECK(polite_next(p, 10500, ip, sizeof(ip)) == &tag[0] && ip[0] == '\0',
          "a at 500, no address known");
    polite_free(&p);
}

/* A named host's address is learnt from its transfer and then counted. */
static void test_learnt(void)
{
    struct polite *p = mk(1, 300);
    char ip[POLITE_IP_MAX];
    polite_queue(p, "x.test", 0, 0, &tag[0]);
    polite_queue(p, "y.test", 0, 0, &tag[1]);
    CHECK(polite_next(p, 0, ip, sizeof(ip)) == &tag[0] && !ip[0], "x unknown");
    CHECK(polite_next(p, 0, ip, sizeof(ip)) == &tag[1] && !ip[0], "y unknown");
    polite_ended(p, "x.test", "", "10.0.0.1", 100);
    polite_ended(p, "y.test", "", "10.0.0.1", 100);
    polite_queue(p, "x.test", 0, 0, &tag[2]);
    polite_queue(p, "y.test", 0, 0, &tag[3]);
    polite_rewind(p);
    CHECK(polite_next(p, 200, ip, sizeof(ip)) == &tag[2] &&
              !strcmp(ip, "10.0.0.1"), "x counted on 10.0.0.1");
    CHECK(polite_next(p, 200, ip, sizeof(ip)) == NULL, "y shares the slot");
    polite_release(p, "x.test", "10.0.0.1");
    polite_rewind(p);
    CHECK(polite_next(p, 200, ip, sizeof(ip)) == &tag[3], "released: y goes");
    CHECK(polite_take(p) == NULL, "take on empty");
    polite_free(&p);
}

static void test_backoff(void)
{
    struct polite *p = mk(1, 5);
    static const int64_t want[] = {1000, 2000, 4000, 5000, 5000};
    for (size_t i = 0; i < 5; i++) {
        int64_t b = polite_failure(p, "h.test", 0, 0);
        CHECK(b == want[i], "failure %zu: %lld want %lld", i, (long long)b,
              (long long)want[i]);
    }
    CHECK(polite_failure(p, "other.test", 0, 0) == 1000, "per host");
    polite_success(p, "h.test");
    CHECK(polite_failure(p, "h.test", 0, 0) == 1000, "reset by a success");
    polite_success(p, "never.test"); /* unknown host: no-op */
    for (int i = 0; i < 100; i++)    /* no overflow past many failures */
        CHECK(polite_failure(p, "h.test", 0, 0) <= 5000, "capped");
    polite_free(&p);
}

/* A 5xx of one page between successes does not hold its host; the second
 * failure in a row does; the page's own back-off grows by attempt. */
static void test_page_error(void)
{
    struct polite *p = mk(1, 5);
    CHECK(polite_failure(p, "h.test", 0, 1) == 0, "one page error: no hold");
    CHECK(polite_failure(p, "h.test", 0, 1) == 2000, "second in a row: 2 s");
    polite_success(p, "h.test");
    CHECK(polite_failure(p, "h.test", 0, 1) == 0, "reset by a success");
    CHECK(polite_failure(p, "h.test", 0, 0) == 2000,
          "a host-level failure after it holds");
    CHECK(polite_url_backoff(p, 1) == 1000 && polite_url_backoff(p, 2) == 2000 &&
              polite_url_backoff(p, 9) == 5000,
          "the page's own back-off: 1 s, 2 s, capped");
    polite_free(&p);
}

/* Leased ahead: one transfer of a host at a time (host_connections 1), the
 * next one's gap counted from the end of the one before, a failure's
 * back-off held by the queued ones. */
static void test_host_conns(void)
{
    struct polite *p = mk(2, 300);
    char ip[POLITE_IP_MAX];
    polite_queue(p, "h.test", 100, 0, &tag[0]);
    polite_queue(p, "h.test", 100, 0, &tag[1]);
    polite_queue(p, "h.test", 100, 0, &tag[2]);
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == &tag[0], "first goes");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == NULL, "one at a time");
    CHECK(polite_wait_ms(p, 1000) == INT64_MAX, "wait for the end");
    polite_ended(p, "h.test", ip, "", 5000);
    polite_rewind(p);
    CHECK(polite_next(p, 5099, ip, sizeof(ip)) == NULL, "gap from the end");
    CHECK(polite_wait_ms(p, 5050) == 50, "in 50 ms, got %lld",
          (long long)polite_wait_ms(p, 5050));
    polite_rewind(p);
    CHECK(polite_next(p, 5100, ip, sizeof(ip)) == &tag[1], "then the second");
    polite_ended(p, "h.test", ip, "", 6000);
    CHECK(polite_failure(p, "h.test", 6000, 0) == 1000, "back-off 1 s");
    CHECK(polite_wait_ms(p, 6000) == 1000, "held 1 s, got %lld",
          (long long)polite_wait_ms(p, 6000));
    polite_hold(p, "h.test", 9000); /* e.g. a Retry-After */
    polite_rewind(p);
    CHECK(polite_next(p, 8999, ip, sizeof(ip)) == NULL, "held to 9000");
    polite_rewind(p);
    CHECK(polite_next(p, 9000, ip, sizeof(ip)) == &tag[2], "then the third");
    polite_release(p, "h.test", ip); /* not started after all */
    polite_queue(p, "h.test", 0, 0, &tag[3]);
    CHECK(polite_next(p, 9000, ip, sizeof(ip)) == &tag[3], "slot given back");
    polite_free(&p);
}

/* A transfer queued "later" (a page of the next level) yields to the
 * host's others, whichever was queued first; other hosts are not held. */
static void test_later(void)
{
    struct polite *p = mk(1, 300);
    char ip[POLITE_IP_MAX];
    polite_queue(p, "h.test", 0, 1, &tag[0]);
    polite_queue(p, "g.test", 0, 1, &tag[1]);
    polite_queue(p, "h.test", 0, 0, &tag[2]);
    polite_rewind(p);
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == &tag[1],
          "another host's later one goes");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == &tag[2],
          "the host's current-level one before its later one");
    CHECK(polite_next(p, 1000, ip, sizeof(ip)) == NULL, "one at a time");
    polite_ended(p, "h.test", ip, "", 2000);
    polite_rewind(p);
    CHECK(polite_next(p, 2000, ip, sizeof(ip)) == &tag[0],
          "then the later one");
    CHECK(polite_waiting(p) == 0, "none waiting");
    polite_free(&p);
}

/* Stop: everything queued comes back, in order, regardless of time. */
static void test_take(void)
{
    struct polite *p = mk(1, 300);
    polite_ended(p, "a.test", "", "", 0);
    polite_queue(p, "a.test", 100000, 0, &tag[0]);
    polite_queue(p, "a.test", 100000, 0, &tag[1]);
    CHECK(polite_take(p) == &tag[0] && polite_take(p) == &tag[1] &&
              polite_take(p) == NULL && polite_waiting(p) == 0, "take order");
    polite_queue(p, "b.test", 0, 0, &tag[2]); /* tail still valid */
    CHECK(polite_take(p) == &tag[2], "queue after take");
    polite_free(&p);
}

int main(void)
{
    test_host_ip();
    test_host_conns();
    test_ip_slots();
    test_gap();
    test_learnt();
    test_backoff();
    test_page_error();
    test_take();
    test_later();
    return t_done("u-polite");
}
