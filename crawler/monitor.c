/*
 * monitor.c: what a running node shows of itself, off the node loop. The
 * loop publishes a snapshot of its figures every NODE_PUBLISH_MS (a copy
 * under a lock, microseconds); a thread of the monitor
 *
 *   - reads the frontier's per-depth queued / in-flight counts (the read
 *     `dcrawl status` does, frontier_status, on a Redis connection of its
 *     own) every STATUS_MS while it has a use for them;
 *   - prints the progress line on stderr: on a terminal one line redrawn
 *     every second (cut to the terminal's width), otherwise a plain
 *     "progress:" line every output.progress_interval seconds; -q prints
 *     none; nothing of it reaches the output files;
 *   - and the metrics server (metrics.c, output.metrics_listen) renders
 *     the same view on each scrape.
 *
 * Rates say what they count and over what time: responses (any status,
 * the count `dcrawl status` and the summary call pages) per second over
 * the last NODE_RATE_WINDOW_S seconds (node_rate_add).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "crawler.h"
#include "frontier.h"
#include "node-internal.h"

#define STATUS_MS 2000   /* frontier read period for metrics */
#define LINE_STATUS_MS 900 /* a progress line's figures are at most this old */
#define TTY_LINE_MS 1000 /* redraw period on a terminal */
#define TICK_MS 250      /* the thread's longest sleep */

enum progress_mode { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_PLAIN };

struct monitor {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int stop, started;
    struct monitor_view v;      /* under mu */
    int have_snap;              /* under mu */
    /* the thread's own */
    const struct conf *c;
    char *redis_url, *id;
    struct frontier *fs;        /* status reads; NULL until opened */
    int status_failed;
    enum progress_mode mode;
    int eta, drawn;
    int64_t line_ms, next_line, next_status, last_status, started_ms;
    struct node_rate rate;
    struct monitor_view line;   /* the copy a progress line is made of */
    struct metrics_server *srv;
};

/* ------------------------------------------------------------ progress */

static void hms(char *out, size_t cap, int64_t ms)
{
    int64_t s = ms / 1000;
    if (s >= 3600)
        snprintf(out, cap, "%lld:%02lld:%02lld", (long long)(s / 3600),
                 (long long)(s / 60 % 60), (long long)(s % 60));
    else
        snprintf(out, cap, "%lld:%02lld", (long long)(s / 60),
                 (long long)(s % 60));
}

/* The progress line of view v (rate: responses/s over the last window). */
static void progress_line(struct monitor *m, const struct monitor_view *v,
                          double rate, char *out, size_t cap)
{
    const struct node_stats *st = &v->snap.st;
    char el[32], left[32];
    size_t n;
    int d = v->snap.level;
    uint64_t resp = st->status[1] + st->status[2] + st->status[3] +
                    st->status[4] + st->status[5];
    int64_t run_s = (v->snap.ms - m->started_ms + 999) / 1000;
    hms(el, sizeof(el), v->snap.ms - m->started_ms);
    n = (size_t)snprintf(out, cap,
                         "depth %d | %llu responses (%llu 2xx), %.1f/s over "
                         "the last %d s | ",
                         d, (unsigned long long)resp,
                         (unsigned long long)st->status[2], rate,
                         (int)(run_s < NODE_RATE_WINDOW_S ? (run_s > 0 ? run_s : 1)
                                                         : NODE_RATE_WINDOW_S));
    if (n < cap && d >= 0 && d < v->ndepths) {
        const struct frontier_status_depth *q = &v->depths[d];
        n += (size_t)snprintf(out + n, cap - n,
                              "depth %d: %lld queued, %lld in flight | ", d,
                              (long long)q->queued, (long long)q->inflight);
        if (n < cap && m->eta && rate > 0) {
            hms(left, sizeof(left),
                (int64_t)((double)(q->queued + q->inflight) / rate * 1000));
            n += (size_t)snprintf(out + n, cap - n, "~%s left in depth %d | ",
                                  left, d);
        }
    }
    if (n < cap)
        snprintf(out + n, cap - n,
                 "%llu transport errors | %zu hosts waiting on politeness "
                 "| %s elapsed",
                 (unsigned long long)st->status[0], v->snap.polite.hosts_waiting,
                 el);
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
        return ws.ws_col;
    return 120;
}

static void print_progress(struct monitor *m, const struct monitor_view *v,
                           int64_t now)
{
    char line[512];
    double rate = node_rate_add(&m->rate, now, v->snap.st.pages);
    progress_line(m, v, rate, line, sizeof(line));
    if (m->mode == PROGRESS_TTY) {
        int w = term_width() - 1;
        if ((int)strlen(line) > w)
            line[w] = '\0';
        fprintf(stderr, "\r\033[K%s", line);
        m->drawn = 1;
    } else {
        fprintf(stderr, "progress: %s\n", line);
    }
    fflush(stderr);
}

/* ------------------------------------------------------------- thread */

/* Read the frontier's per-depth figures into the view. A failure is not
 * the node's problem (its own connection sees it): the figures just age,
 * and the read is tried again next period. */
static void read_status(struct monitor *m, int64_t now)
{
    struct frontier_status *st = NULL;
    char err[256];
    if (!m->fs && frontier_status_open(&m->fs, m->redis_url, m->c, err,
                                       sizeof(err)) != DC_OK) {
        m->fs = NULL;
        return;
    }
    if (frontier_status(m->fs, now, &st) != DC_OK) {
        frontier_close(&m->fs); /* reconnect next time */
        return;
    }
    pthread_mutex_lock(&m->mu);
    m->v.ndepths = st->ndepths;
    memcpy(m->v.depths, st->depths, sizeof(m->v.depths));
    pthread_mutex_unlock(&m->mu);
    frontier_status_free(&st);
}

static int64_t next_wake(const struct monitor *m, int64_t now)
{
    int64_t t = now + TICK_MS;
    if (m->mode != PROGRESS_OFF && m->next_line < t)
        t = m->next_line;
    if (m->next_status < t)
        t = m->next_status;
    return t > now ? t : now + 1;
}

static void wait_until(struct monitor *m, int64_t until_ms)
{
    struct timespec ts;
    int64_t d = until_ms - dc_now_ms();
    if (d <= 0)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += d / 1000;
    ts.tv_nsec += (long)(d % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&m->mu);
    if (!m->stop)
        pthread_cond_timedwait(&m->cv, &m->mu, &ts);
    pthread_mutex_unlock(&m->mu);
}

static void *monitor_main(void *arg)
{
    struct monitor *m = arg;
    for (;;) {
        int64_t now = dc_now_ms();
        int stop, due = m->mode != PROGRESS_OFF && now >= m->next_line;
        if (now >= m->next_status ||
            (due && m->redis_url && now - m->last_status >= LINE_STATUS_MS)) {
            read_status(m, now);
            m->last_status = now;
            m->next_status = m->srv ? now + STATUS_MS : INT64_MAX;
        }
        pthread_mutex_lock(&m->mu);
        stop = m->stop;
        due = due && m->have_snap;
        if (due)
            m->line = m->v;
        pthread_mutex_unlock(&m->mu);
        if (stop)
            break;
        if (due)
            print_progress(m, &m->line, now);
        if (m->mode != PROGRESS_OFF && now >= m->next_line)
            m->next_line = now + m->line_ms;
        wait_until(m, next_wake(m, dc_now_ms()));
    }
    return NULL;
}

/* ------------------------------------------------------------ the API */

static char *render_cb(void *ud, size_t *len)
{
    struct monitor *m = ud;
    struct monitor_view *v = xmalloc(sizeof(*v));
    char *text;
    pthread_mutex_lock(&m->mu);
    *v = m->v;
    pthread_mutex_unlock(&m->mu);
    text = metrics_render(v, len);
    free(v);
    return text;
}

static enum progress_mode progress_mode(const struct conf *c,
                                        const struct node_opts *o)
{
    if (o->quiet)
        return PROGRESS_OFF;
    if (isatty(STDERR_FILENO))
        return PROGRESS_TTY;
    return c->output_progress_interval > 0 ? PROGRESS_PLAIN : PROGRESS_OFF;
}

int monitor_start(struct monitor **out, const struct conf *c,
                  const struct node_opts *o, const char *node_id, char *err,
                  size_t errlen)
{
    struct monitor *m;
    enum progress_mode mode = progress_mode(c, o);
    const char *listen = c->output_metrics_listen;
    int64_t now = dc_now_ms();
    *out = NULL;
    if (mode == PROGRESS_OFF && (!listen || !*listen))
        return DC_OK;
    m = xcalloc(1, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->c = c;
    m->mode = mode;
    m->eta = o->eta;
    m->id = xstrdup(node_id);
    m->v.node_id = m->id;
    m->redis_url = o->redis_url ? xstrdup(o->redis_url) : NULL;
    m->started_ms = now;
    node_rate_add(&m->rate, now, 0); /* the first line's rate is since now */
    m->line_ms = mode == PROGRESS_TTY
                     ? TTY_LINE_MS
                     : (int64_t)(c->output_progress_interval * 1000);
    m->next_line = now + (mode == PROGRESS_TTY ? TTY_LINE_MS : m->line_ms);
    m->next_status = m->redis_url && listen && *listen ? now : INT64_MAX;
    m->last_status = INT64_MIN / 2;
    if (listen && *listen &&
        metrics_server_start(&m->srv, listen, render_cb, m, err, errlen)) {
        monitor_stop(&m);
        return DC_EINVAL;
    }
    if (pthread_create(&m->thread, NULL, monitor_main, m) == 0)
        m->started = 1;
    *out = m;
    return DC_OK;
}

void monitor_publish(struct monitor *m, const struct node_snapshot *s)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->v.snap = *s;
    m->have_snap = 1;
    pthread_mutex_unlock(&m->mu);
}

void monitor_stop(struct monitor **mp)
{
    struct monitor *m;
    if (!mp || !*mp)
        return;
    m = *mp;
    metrics_server_stop(&m->srv); /* no render_cb after this */
    if (m->started) {
        pthread_mutex_lock(&m->mu);
        m->stop = 1;
        pthread_cond_signal(&m->cv);
        pthread_mutex_unlock(&m->mu);
        pthread_join(m->thread, NULL);
    }
    if (m->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    frontier_close(&m->fs);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m->redis_url);
    free(m->id);
    free(m);
    *mp = NULL;
}
