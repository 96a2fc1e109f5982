/*
 * status-http.c: `dcrawl status --http ADDR:PORT`, the status page.
 *
 * Two threads. The main thread reads Redis every interval seconds
 * (frontier_status, the read `dcrawl status` makes), adds (time, pages)
 * to a ring of samples covering the last WINDOW_MS, and renders the answer
 * of /status.json once per read. libmicrohttpd's one polling thread
 * answers requests from that rendered copy, taken under a mutex: a request
 * never makes a Redis round trip, so any number of browsers cost Redis
 * nothing.
 *
 *   /             the page: crawler/status-page.html, embedded at build
 *                 time (HTML, CSS and JS; no external assets, so it works
 *                 offline; its Content-Security-Policy allows none)
 *   /status.json  the object `dcrawl status --json` prints, plus
 *                 refresh_s (the read interval), redis_error (null, or the
 *                 last read's error: the figures are then the last good
 *                 read's) and samples: [[ms, pages], ...] oldest first,
 *                 pages being the URLs done + failed (all nodes)
 * Anything else is 404; methods other than GET and HEAD get 405.
 * No authentication and no TLS: bind to loopback, or put it behind a
 * proxy that adds them.
 *
 * Memory: struct web owns the last good status object (body) and the
 * rendered answer (json); both are replaced whole, the answer under the
 * lock. A response copies the answer (MHD_RESPMEM_MUST_COPY).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "crawler.h"
#include "frontier.h"

#define WINDOW_MS 600000   /* samples kept: the last 10 minutes */
#define SAMPLES_MAX 6000   /* ... and at most this many */
#define CONN_LIMIT 64      /* connections served at once */
#define CONN_TIMEOUT_S 15  /* an idle connection is closed after this */
#define LISTEN_BACKLOG 64

/* The page, generated from crawler/status-page.html (cmake/embed-lua.cmake). */
extern const char dc_status_page[];

struct sample {
    int64_t ms, pages;
};

struct web {
    struct frontier *f;
    const char *redis;          /* the Redis URL as shown */
    double interval;
    struct sample *ring;        /* SAMPLES_MAX; n of them from head */
    size_t head, n;
    char *body;                 /* last good status object, no '}' */
    pthread_mutex_t lock;       /* guards json, json_len */
    char *json;
    size_t json_len;
};

/* ---- listening socket ---- */

/* Split "host:port" / "[v6]:port" into host (cap bytes) and port. */
static int split_addr(const char *addr, char *host, size_t cap,
                      const char **port)
{
    const char *h = addr, *end;
    size_t len;

    if (addr[0] == '[') {
        h = addr + 1;
        end = strchr(h, ']');
        if (!end || end[1] != ':')
            return -1;
    } else {
        end = strrchr(addr, ':');
        if (!end || memchr(addr, ':', (size_t)(end - addr)))
            return -1; /* none, or an IPv6 address without brackets */
    }
    len = (size_t)(end - h);
    if (len == 0 || len >= cap)
        return -1;
    memcpy(host, h, len);
    host[len] = '\0';
    *port = end + (*end == ']' ? 2 : 1);
    return 0;
}

static int port_ok(const char *p)
{
    char *end;
    long v = strtol(p, &end, 10);

    return *p >= '0' && *p <= '9' && !*end && v >= 0 && v <= 65535;
}

/* The address of "ADDR:PORT" in *ai (freeaddrinfo), or -1 with a message
 * naming what (the option or setting it came from). */
static int resolve(const char *what, const char *addr, struct addrinfo **ai,
                   char *err, size_t errlen)
{
    struct addrinfo hints;
    char host[256];
    const char *port;
    int rc;

    if (split_addr(addr, host, sizeof(host), &port) || !port_ok(port)) {
        snprintf(err, errlen, "%s %s: expected ADDR:PORT, e.g. "
                              "127.0.0.1:8080 or [::1]:8080", what, addr);
        return -1;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    rc = getaddrinfo(host, port, &hints, ai);
    if (rc) {
        snprintf(err, errlen, "%s %s: %s", what, addr, gai_strerror(rc));
        return -1;
    }
    return 0;
}

int http_addr_check(const char *what, const char *addr, char *err,
                    size_t errlen)
{
    struct addrinfo *ai = NULL;

    if (!addr || !*addr)
        return 0;
    if (resolve(what, addr, &ai, err, errlen))
        return -1;
    freeaddrinfo(ai);
    return 0;
}

int http_listen(const char *what, const char *addr, int *fd, char *err,
                size_t errlen)
{
    struct addrinfo *ai = NULL;
    int s, one = 1;

    *fd = -1;
    if (resolve(what, addr, &ai, err, errlen))
        return -1;
    s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    if (s < 0 ||
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, LISTEN_BACKLOG)) {
        snprintf(err, errlen, "%s %s: cannot listen: %s", what, addr,
                 strerror(errno));
        if (s >= 0)
            close(s);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    *fd = s;
    return 0;
}

/* "http://127.0.0.1:8080/" of a bound socket (the port given 0 included). */
static void bound_url(int fd, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[128], port[16];

    if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
        getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port,
                    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)) {
        snprintf(out, cap, "?");
        return;
    }
    snprintf(out, cap, ss.ss_family == AF_INET6 ? "http://[%s]:%s/"
                                                : "http://%s:%s/",
             host, port);
}

/* ---- the Redis reads and the rendered answer ---- */

/* Add a sample; drop those older than WINDOW_MS before it. */
static void samples_add(struct web *w, int64_t ms, int64_t pages)
{
    while (w->n && ms - w->ring[w->head].ms > WINDOW_MS) {
        w->head = (w->head + 1) % SAMPLES_MAX;
        w->n--;
    }
    if (w->n == SAMPLES_MAX) {
        w->head = (w->head + 1) % SAMPLES_MAX;
        w->n--;
    }
    w->ring[(w->head + w->n) % SAMPLES_MAX] = (struct sample){ms, pages};
    w->n++;
}

/* A FILE writing into *buf (open_memstream); aborts on out-of-memory as
 * xmalloc does. */
static FILE *mem_open(char **buf, size_t *len)
{
    FILE *o = open_memstream(buf, len);

    if (!o) {
        fprintf(stderr, "dcrawl: out of memory (open_memstream)\n");
        abort();
    }
    return o;
}

/* The status object without its closing brace (caller frees). */
static char *render_status(const struct frontier_status *st,
                           const char *redis)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = mem_open(&buf, &len);

    status_json_open(o, st, redis);
    fclose(o);
    return buf;
}

/* Render the /status.json answer and swap it in. */
static void publish(struct web *w, int64_t now, const char *error)
{
    char *buf = NULL, *old;
    size_t len = 0;
    FILE *o = mem_open(&buf, &len);

    if (w->body) {
        fputs(w->body, o);
    } else {
        fprintf(o, "{\"time_ms\":%lld,\"redis\":", (long long)now);
        status_json_str(o, w->redis);
    }
    fprintf(o, ",\"refresh_s\":%g,\"redis_error\":", w->interval);
    status_json_str(o, error);
    fputs(",\"samples\":[", o);
    for (size_t i = 0; i < w->n; i++) {
        const struct sample *s = &w->ring[(w->head + i) % SAMPLES_MAX];
        fprintf(o, "%s[%lld,%lld]", i ? "," : "", (long long)s->ms,
                (long long)s->pages);
    }
    fputs("]}\n", o);
    fclose(o);
    pthread_mutex_lock(&w->lock);
    old = w->json;
    w->json = buf;
    w->json_len = len;
    pthread_mutex_unlock(&w->lock);
    free(old);
}

static void refresh(struct web *w)
{
    struct frontier_status *st;
    int64_t now = dc_now_ms();

    if (frontier_status(w->f, now, &st)) {
        publish(w, now, frontier_errstr(w->f));
        return;
    }
    samples_add(w, now, st->total.done + st->total.failed);
    free(w->body);
    w->body = render_status(st, w->redis);
    frontier_status_free(&st);
    publish(w, now, NULL);
}

/* ---- requests (libmicrohttpd's thread) ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code,
                             struct MHD_Response *r, const char *type)
{
    enum MHD_Result ret;

    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; connect-src 'self'; "
                            "script-src 'unsafe-inline'; "
                            "style-src 'unsafe-inline'; img-src data:");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static struct MHD_Response *text(const char *s)
{
    return MHD_create_response_from_buffer(strlen(s), (void *)s,
                                           MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct web *w = cls;
    struct MHD_Response *r;

    (void)version;
    (void)upload;
    (void)con_cls;
    if (*upload_size) { /* a request body: not read, not needed */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                     text("method not allowed\n"), "text/plain");
    if (strcmp(url, "/") == 0)
        return reply(c, MHD_HTTP_OK, text(dc_status_page),
                     "text/html; charset=utf-8");
    if (strcmp(url, "/status.json") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, text("not found\n"), "text/plain");
    pthread_mutex_lock(&w->lock);
    r = MHD_create_response_from_buffer(w->json_len, w->json,
                                        MHD_RESPMEM_MUST_COPY);
    pthread_mutex_unlock(&w->lock);
    if (!r)
        return MHD_NO;
    return reply(c, MHD_HTTP_OK, r, "application/json");
}

/* ---- the loop ---- */

void status_nap(double seconds, volatile sig_atomic_t *stop)
{
    int64_t end = dc_mono_us() + (int64_t)(seconds * 1e6);

    while (!*stop) {
        int64_t left = end - dc_mono_us();
        if (left <= 0)
            break;
        if (left > 100000)
            left = 100000;
        struct timespec ts = {0, (long)left * 1000};
        nanosleep(&ts, NULL);
    }
}

int status_http_serve(struct frontier *f, int fd, double interval,
                      const char *redis, volatile sig_atomic_t *stop)
{
    struct web w = {.f = f, .redis = redis, .interval = interval};
    struct MHD_Daemon *d;
    char url[192];

    /* a Redis gone mid-write is an error reply, not the end of the server */
    signal(SIGPIPE, SIG_IGN);
    w.ring = xcalloc(SAMPLES_MAX, sizeof(*w.ring));
    pthread_mutex_init(&w.lock, NULL);
    refresh(&w); /* an answer exists before the first request */
    bound_url(fd, url, sizeof(url));
    d = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, answer,
                         &w, MHD_OPTION_LISTEN_SOCKET, fd,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
                         MHD_OPTION_CONNECTION_TIMEOUT,
                         (unsigned)CONN_TIMEOUT_S, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "dcrawl status: the HTTP server did not start\n");
        close(fd);
    } else {
        fprintf(stderr, "dcrawl status: serving %s (Redis %s, read every "
                        "%g s)\n", url, redis, interval);
        while (!*stop) {
            status_nap(interval, stop);
            if (!*stop)
                refresh(&w);
        }
        MHD_stop_daemon(d); /* closes fd */
    }
    pthread_mutex_destroy(&w.lock);
    free(w.json);
    free(w.body);
    free(w.ring);
    return d ? 0 : 1;
}
