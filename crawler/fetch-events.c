/*
 * fetch-events.c: the event loop under the fetcher (fetch.c): libcurl's
 * multi socket interface on an epoll set, instead of curl_multi_poll +
 * curl_multi_perform.
 *
 * Why: curl_multi_perform runs every transfer's state machine on each
 * call, and a transfer whose socket nobody reported ready checks it with
 * a poll(2) of its own. With hundreds of transfers waiting on slow servers
 * (the node keeps fetch.concurrency of them) that is hundreds of system
 * calls per turn of the node loop, most of them for sockets with nothing
 * to read. Here libcurl tells us which sockets it waits on
 * (CURLMOPT_SOCKETFUNCTION: added to, changed in or removed from the epoll
 * set) and when its next timeout is due (CURLMOPT_TIMERFUNCTION); a turn
 * hands libcurl only the sockets epoll reported and, when due, its timer.
 *
 * Wakeups from other threads (workers with finished pages) go through an
 * eventfd in the same epoll set. Everything else runs on the node's thread.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <curl/curl.h>

#include "node-internal.h"

#define EVENTS_MAX 256 /* ready sockets taken per epoll_wait */

static int64_t now_us(void)
{
    return (int64_t)dc_mono_us();
}

static int on_socket(CURL *easy, curl_socket_t s, int what, void *ud,
                     void *sockp)
{
    struct fetch_events *e = ud;
    struct epoll_event ev;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(e->ep, EPOLL_CTL_DEL, s, NULL); /* may be closed already */
        return 0;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
                (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (sockp) {
        if (epoll_ctl(e->ep, EPOLL_CTL_MOD, s, &ev) == 0 || errno != ENOENT)
            return 0;
    }
    /* new to us (or an fd number reused after a close) */
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, s, &ev) != 0 && errno == EEXIST)
        epoll_ctl(e->ep, EPOLL_CTL_MOD, s, &ev);
    curl_multi_assign(e->multi, s, e);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *ud)
{
    struct fetch_events *e = ud;
    (void)m;
    e->timer_us = timeout_ms < 0 ? -1 : now_us() + (int64_t)timeout_ms * 1000;
    e->timer_set++;
    return 0;
}

int fetch_events_init(struct fetch_events *e, void *multi)
{
    struct epoll_event ev;
    memset(e, 0, sizeof(*e));
    e->multi = multi;
    e->timer_us = -1;
    e->ep = epoll_create1(EPOLL_CLOEXEC);
    e->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e->ep < 0 || e->wake < 0) {
        fetch_events_close(e);
        return DC_EIO;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = e->wake;
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, e->wake, &ev) != 0) {
        fetch_events_close(e);
        return DC_EIO;
    }
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, e);
    return DC_OK;
}

static int cselect(uint32_t ev)
{
    return (ev & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) |
           (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
           (ev & EPOLLERR ? CURL_CSELECT_ERR : 0);
}

/* One libcurl call, watched by the frame-flood guard (fetch-guard.c). */
static CURLMcode action(struct fetch_events *e, curl_socket_t s, int what)
{
    int running;
    CURLMcode rc;
    fetch_guard_enter(e->guard, e->call);
    rc = curl_multi_socket_action(e->multi, s, what, &running);
    fetch_guard_leave(e->guard);
    return rc;
}

/* libcurl's timer is due: run its timeouts. The timer is one-shot; when
 * libcurl does not set it again, its earliest timeout is still the one we
 * fired for (libcurl only reports changes): look again in 1 ms. */
static int run_timer(struct fetch_events *e)
{
    uint64_t set = e->timer_set;
    e->timer_us = -1;
    if (action(e, CURL_SOCKET_TIMEOUT, 0) != CURLM_OK)
        return DC_ECURL;
    if (e->timer_set == set)
        e->timer_us = now_us() + 1000;
    return DC_OK;
}

/* One turn: wait up to timeout_ms (0: do not wait) for a socket, the
 * timer or a wakeup, then hand libcurl what happened. */
int fetch_events_run(struct fetch_events *e, int timeout_ms)
{
    struct epoll_event ev[EVENTS_MAX];
    int64_t t = now_us(), wait = timeout_ms > 0 ? timeout_ms : 0;
    int n;
    if (e->timer_us >= 0 && (e->timer_us - t + 999) / 1000 < wait)
        wait = e->timer_us > t ? (e->timer_us - t + 999) / 1000 : 0;
    n = epoll_wait(e->ep, ev, EVENTS_MAX, (int)wait);
    if (n < 0 && errno != EINTR)
        return DC_EIO;
    for (int i = 0; i < n; i++) {
        if (ev[i].data.fd == e->wake) {
            uint64_t v;
            if (read(e->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
                return DC_EIO;
            continue;
        }
        if (action(e, ev[i].data.fd, cselect(ev[i].events)) != CURLM_OK)
            return DC_ECURL;
    }
    if (e->timer_us >= 0 && e->timer_us <= now_us())
        return run_timer(e);
    return DC_OK;
}

void fetch_events_wakeup(struct fetch_events *e)
{
    uint64_t one = 1;
    if (e->wake >= 0 && write(e->wake, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is full, so a wakeup is pending anyway */
    }
}

void fetch_events_close(struct fetch_events *e)
{
    if (e->ep >= 0)
        close(e->ep);
    if (e->wake >= 0)
        close(e->wake);
    e->ep = e->wake = -1;
}
