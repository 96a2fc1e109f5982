/*
 * u-fetch-guard.c: the frame-flood guard (crawler/fetch-guard.c) on real
 * loopback TCP sockets. A "call" is marked under way and never left while
 * the peer floods one socket; the guard must shut down the socket it was
 * given (its own number, whatever other sockets came and went), must not
 * touch a socket it was told is closed, and must not touch a socket that
 * took the number of one closed behind its back. Every wait is bounded
 * (a few seconds); nothing is asserted about how fast the guard is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "node-internal.h"
#include "t.h"

#define CAP_MS 100
#define WAIT_MS 4000

/* A connected loopback pair: *c the client's end, *s the server's. */
static int tcp_pair(int *c, int *s)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
        listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len))
        return -1;
    *c = socket(AF_INET, SOCK_STREAM, 0);
    if (*c < 0 || connect(*c, (struct sockaddr *)&a, sizeof(a)))
        return -1;
    *s = accept(l, NULL, NULL);
    close(l);
    return *s < 0 ? -1 : 0;
}

struct flood {
    int s, c;           /* write to s, drain c */
    atomic_int stop;
};

/* Write to the server's end and read at the client's end (the reader a
 * stuck libcurl call would be) until told to stop or the pair breaks. */
static void *flood_main(void *ud)
{
    struct flood *f = ud;
    char buf[16384];
    memset(buf, 'x', sizeof(buf));
    while (!atomic_load(&f->stop)) {
        struct pollfd p = {f->c, POLLIN, 0};
        if (send(f->s, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
            errno != EAGAIN && errno != EWOULDBLOCK)
            break;
        if (poll(&p, 1, 10) > 0 && recv(f->c, buf, sizeof(buf), 0) <= 0)
            break;
    }
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Flood the pair during one call that never ends; whether the guard cut
 * the client's end (within WAIT_MS). */
static int flooded_cut(struct fetch_guard *g, int c, int s, uint64_t call)
{
    struct flood f = {s, c, 0};
    pthread_t th;
    int cut = 0;

    if (pthread_create(&th, NULL, flood_main, &f))
        return -1;
    fetch_guard_enter(g, call);
    for (int waited = 0; waited < WAIT_MS && !cut; waited += 20) {
        sleep_ms(20);
        cut = fetch_guard_cut_call(g) == call;
    }
    fetch_guard_leave(g);
    atomic_store(&f.stop, 1);
    pthread_join(th, NULL);
    return cut && fetch_guard_was_cut(g, c);
}

/* Sockets opened and closed before the flooded one: it is still found. */
static void test_cut_after_churn(void)
{
    struct fetch_guard *g = fetch_guard_new(CAP_MS);
    int c, s;

    CHECK(g != NULL, "guard thread");
    if (!g)
        return;
    for (int i = 0; i < 50; i++) {
        int x = socket(AF_INET, SOCK_STREAM, 0);
        fetch_guard_add(g, x);
        fetch_guard_remove(g, x);
        close(x);
    }
    CHECK(tcp_pair(&c, &s) == 0, "loopback pair");
    fetch_guard_add(g, c);
    CHECK(flooded_cut(g, c, s, 7) == 1, "the flooded socket was not cut");
    fetch_guard_remove(g, c);
    close(c);
    close(s);
    fetch_guard_free(&g);
}

/* A socket forgotten (closed through the callback) is never cut. */
static void test_removed_not_cut(void)
{
    struct fetch_guard *g = fetch_guard_new(CAP_MS);
    int c, s;

    if (!g || tcp_pair(&c, &s)) {
        CHECK(0, "setup");
        return;
    }
    fetch_guard_add(g, c);
    fetch_guard_remove(g, c);
    CHECK(flooded_cut(g, c, s, 8) == 0, "a forgotten socket was cut");
    CHECK(fetch_guard_cut_call(g) != 8, "a cut in call 8");
    close(c);
    close(s);
    fetch_guard_free(&g);
}

/* A socket closed behind the guard's back whose number a new, unregistered
 * socket takes: the new one is not the guard's to cut. */
static void test_reused_number_not_cut(void)
{
    struct fetch_guard *g = fetch_guard_new(CAP_MS);
    int old, c, s;

    if (!g) {
        CHECK(0, "guard thread");
        return;
    }
    old = socket(AF_INET, SOCK_STREAM, 0);
    fetch_guard_add(g, old);
    close(old); /* no fetch_guard_remove */
    if (tcp_pair(&c, &s)) {
        CHECK(0, "loopback pair");
        fetch_guard_free(&g);
        return;
    }
    if (c != old) { /* the number went elsewhere: move it */
        dup2(c, old);
        close(c);
        c = old;
    }
    CHECK(flooded_cut(g, c, s, 9) == 0, "a reused number was cut");
    close(c);
    close(s);
    fetch_guard_free(&g);
}

int main(void)
{
    test_cut_after_churn();
    test_removed_not_cut();
    test_reused_number_not_cut();
    return t_done("u-fetch-guard");
}
