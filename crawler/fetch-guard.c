/*
 * fetch-guard.c: a receive guard for the fetcher's connections.
 *
 * libcurl 7.88 reads HTTP/2 frames that carry no body (a SETTINGS or PING
 * flood) inside one curl_multi_perform call for as long as they keep
 * coming, without calling back into the fetcher, so nothing on the node's
 * thread can stop it. This file runs one thread beside it: the fetcher
 * registers every socket it opens and closes (fetch_guard_add/remove) and
 * marks each perform call (fetch_guard_enter/leave). When one call has run
 * for its cap, the thread notes the bytes each socket has received
 * (TCP_INFO), and if the call is still running FETCH_GUARD_TICK_MS later it
 * shuts down (shutdown(2), the descriptor stays libcurl's to close) the
 * socket that received the most in between, at least
 * FETCH_GUARD_MIN_BYTES: the next read there sees the end of the stream,
 * libcurl fails that connection's transfers and returns. A flood thus
 * costs about the cap plus what arrives in that time, whatever
 * libcurl's read loop does.
 *
 * Thread rules: add/remove/enter/leave/cut_call on the node's thread, the
 * guard thread reads the socket list under the mutex. The thread sleeps
 * its ticks on a condition variable, so fetch_guard_free wakes it at once
 * (a plain sleep made every node's exit wait up to one tick).
 */
#include <netinet/in.h>
#include <linux/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "node-internal.h"

#define FETCH_GUARD_TICK_MS 250
#define FETCH_GUARD_MIN_BYTES (64 << 10)

struct guard_sock {
    int fd;
    uint64_t base; /* bytes received when the stuck call was first seen */
};

struct fetch_guard {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* signalled on stop */
    struct guard_sock *s;
    size_t n, cap;
    atomic_uint_fast64_t call;     /* perform call under way, 0 none */
    atomic_int_fast64_t call_ms;   /* when it started */
    atomic_uint_fast64_t cut_call; /* last call a socket was cut in */
    atomic_int cut_fd;             /* the socket cut last, -1 none */
    atomic_int stop;
    int64_t cap_ms;                /* a call longer than this is cut */
};

static uint64_t received(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(uint64_t))
        return 0;
    return ti.tcpi_bytes_received;
}

/* The call has run past the bound: note (first look) or cut (second). */
static void check(struct fetch_guard *g, uint64_t call, int *noted)
{
    size_t i, best = SIZE_MAX;
    uint64_t most = FETCH_GUARD_MIN_BYTES;
    pthread_mutex_lock(&g->mu);
    for (i = 0; i < g->n; i++) {
        uint64_t now = received(g->s[i].fd);
        if (!*noted) {
            g->s[i].base = now;
        } else if (now - g->s[i].base >= most) {
            most = now - g->s[i].base;
            best = i;
        }
    }
    if (*noted && best != SIZE_MAX && atomic_load(&g->call) == call) {
        shutdown(g->s[best].fd, SHUT_RDWR);
        atomic_store(&g->cut_fd, g->s[best].fd);
        atomic_store(&g->cut_call, call);
    }
    pthread_mutex_unlock(&g->mu);
    *noted = 1;
}

/* Sleep one tick, or until stopped. Returns 0 once stopped. */
static int guard_sleep(struct fetch_guard *g)
{
    struct timespec ts;
    int stop;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += FETCH_GUARD_TICK_MS * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&g->mu);
    while (!(stop = atomic_load(&g->stop)) &&
           pthread_cond_timedwait(&g->cv, &g->mu, &ts) == 0)
        ;
    pthread_mutex_unlock(&g->mu);
    return !stop;
}

static void *guard_main(void *ud)
{
    struct fetch_guard *g = ud;
    uint64_t seen = 0;
    int noted = 0;
    for (;;) {
        uint64_t call = atomic_load(&g->call);
        if (!guard_sleep(g))
            break;
        if (!call || call != atomic_load(&g->call) ||
            dc_now_ms() - atomic_load(&g->call_ms) < g->cap_ms)
            continue;
        if (call != seen) {
            seen = call;
            noted = 0;
        }
        if (atomic_load(&g->cut_call) != call)
            check(g, call, &noted);
    }
    return NULL;
}

struct fetch_guard *fetch_guard_new(int64_t cap_ms)
{
    struct fetch_guard *g = xcalloc(1, sizeof(*g));
    g->cap_ms = cap_ms;
    pthread_condattr_t ca;
    atomic_store(&g->cut_fd, -1);
    pthread_mutex_init(&g->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&g->thread, NULL, guard_main, g) != 0) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g);
        return NULL;
    }
    return g;
}

void fetch_guard_free(struct fetch_guard **gp)
{
    struct fetch_guard *g = gp ? *gp : NULL;
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    atomic_store(&g->stop, 1);
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g->s);
    free(g);
    *gp = NULL;
}

void fetch_guard_add(struct fetch_guard *g, int fd)
{
    if (!g || fd < 0)
        return;
    atomic_compare_exchange_strong(&g->cut_fd, &fd, -1); /* number reused */
    pthread_mutex_lock(&g->mu);
    xgrow((void **)&g->s, &g->cap, g->n + 1, sizeof(*g->s));
    g->s[g->n].fd = fd;
    g->s[g->n++].base = received(fd);
    pthread_mutex_unlock(&g->mu);
}

void fetch_guard_remove(struct fetch_guard *g, int fd)
{
    size_t i;
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    for (i = 0; i < g->n; i++)
        if (g->s[i].fd == fd) {
            g->s[i] = g->s[--g->n];
            break;
        }
    pthread_mutex_unlock(&g->mu);
}

void fetch_guard_enter(struct fetch_guard *g, uint64_t call)
{
    if (!g)
        return;
    atomic_store(&g->call_ms, dc_now_ms());
    atomic_store(&g->call, call);
}

void fetch_guard_leave(struct fetch_guard *g)
{
    if (g)
        atomic_store(&g->call, 0);
}

uint64_t fetch_guard_cut_call(struct fetch_guard *g)
{
    return g ? atomic_load(&g->cut_call) : 0;
}

void fetch_guard_cut(struct fetch_guard *g, int fd)
{
    if (g)
        atomic_store(&g->cut_fd, fd);
}

int fetch_guard_was_cut(struct fetch_guard *g, int fd)
{
    return g && fd >= 0 && atomic_load(&g->cut_fd) == fd;
}
