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
 * The sockets are a table indexed by descriptor, so registering and
 * forgetting one costs the same however many the node has opened (a list
 * searched on every close took a tenth of the node's CPU once it had met
 * 150 000 hosts: every entry had been stored as -1, never found again).
 * A socket closed without the close callback would leave its entry until
 * its number is opened again; the guard skips (and forgets) an entry once
 * the descriptor is no longer the socket registered (its inode differs),
 * so a number reused for a file or Redis is never cut.
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
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "node-internal.h"

#define FETCH_GUARD_TICK_MS 250
#define FETCH_GUARD_MIN_BYTES (64 << 10)

struct guard_sock {  /* g->s[fd] */
    uint64_t base;  /* bytes received when the stuck call was first seen */
    uint64_t ino;   /* the socket's inode, 0 not registered */
};

struct fetch_guard {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* signalled on stop */
    struct guard_sock *s;          /* indexed by descriptor */
    size_t cap;
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

static uint64_t inode(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? (uint64_t)st.st_ino
                                                       : 0;
}

/* The call has run past the bound: note (first look) or cut (second). */
static void check(struct fetch_guard *g, uint64_t call, int *noted)
{
    size_t i, best = SIZE_MAX;
    uint64_t most = FETCH_GUARD_MIN_BYTES;
    pthread_mutex_lock(&g->mu);
    for (i = 0; i < g->cap; i++) {
        uint64_t now;
        if (!g->s[i].ino)
            continue;
        if (inode((int)i) != g->s[i].ino) { /* closed behind our back */
            g->s[i].ino = 0;
            continue;
        }
        now = received((int)i);
        if (!*noted) {
            g->s[i].base = now;
        } else if (now - g->s[i].base >= most) {
            most = now - g->s[i].base;
            best = i;
        }
    }
    if (*noted && best != SIZE_MAX && atomic_load(&g->call) == call) {
        shutdown((int)best, SHUT_RDWR);
        atomic_store(&g->cut_fd, (int)best);
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
    int cut = fd;
    size_t old;
    if (!g || fd < 0)
        return;
    /* number reused: no longer the socket cut (on failure the exchange
     * stores cut_fd in `cut`, hence the copy) */
    atomic_compare_exchange_strong(&g->cut_fd, &cut, -1);
    pthread_mutex_lock(&g->mu);
    old = g->cap;
    xgrow((void **)&g->s, &g->cap, (size_t)fd + 1, sizeof(*g->s));
    memset(g->s + old, 0, (g->cap - old) * sizeof(*g->s));
    g->s[fd].base = received(fd);
    g->s[fd].ino = inode(fd);
    pthread_mutex_unlock(&g->mu);
}

void fetch_guard_remove(struct fetch_guard *g, int fd)
{
    if (!g || fd < 0)
        return;
    pthread_mutex_lock(&g->mu);
    if ((size_t)fd < g->cap)
        g->s[fd].ino = 0;
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
