/*
 * fetch.c: the libcurl multi fetcher. One multi handle drives every
 * transfer of the node (event-driven, curl_multi_poll with a wakeup so the
 * worker threads can interrupt the wait). Connections are reused through
 * the multi's connection cache (keep-alive), HTTP/2 is negotiated over TLS
 * when fetch.http2 is on, TLS peers are verified (against fetch.ca_file /
 * fetch.ca_path when set, else the system's CA store). Redirects: robots.txt
 * fetches (fetcher_add) follow them inside libcurl up to
 * fetch.max_redirects; pages (fetcher_add_page) never do: the 3xx comes
 * back with its Location, and the node admits the target as a new URL
 * through dedup (so each hop is recorded and a loop ends).
 *
 * Time limits: fetch.connect_timeout for the connection, fetch.timeout for
 * the whole transfer, and a low-speed limit (fewer than
 * fetch.low_speed_limit bytes/s for fetch.low_speed_time s) so a server
 * that drips its body or never answers frees its slot early. Errors carry
 * libcurl's own detailed message (CURLOPT_ERRORBUFFER), e.g. for broken
 * chunked encoding.
 *
 * What is kept of each transfer: the last request's header block exactly
 * as sent (debug callback, CURLINFO_HEADER_OUT), the last response's header
 * block as received (a new status line starts a new block), and the body as
 * transferred: content-coding is NOT decoded here (the WARC keeps the
 * entity as the server sent it; workers decode for parsing), transfer
 * coding (chunked) is. The body is capped at max_bytes: a longer body is
 * cut there and flagged `truncated`.
 *
 * Private addresses (scope.private_addresses): libcurl opens every socket
 * through on_open (CURLOPT_OPENSOCKETFUNCTION) with the address it is about
 * to connect to, after DNS and for each address happy eyeballs tries and
 * each redirect hop, so neither a name that resolves to 10.0.0.1 (DNS
 * rebinding included) nor a redirect gets past it. A refused address gets
 * no socket: libcurl goes on to the host's next address, and fails the
 * transfer with CURLE_COULDNT_CONNECT when none is left; finish() then
 * marks the result private_refused with the reason as its error. No proxy
 * is used (CURLOPT_PROXY ""; libcurl would otherwise take http_proxy and
 * the like from the environment), as the check would see the proxy's
 * address, not the page's.
 *
 * Name lookups run on libcurl's resolver threads (Debian's libcurl is
 * built with its threaded resolver), never on the node loop; with
 * CURLOPT_QUICK_EXIT a transfer that times out before its lookup answered
 * does not wait for that lookup either (libcurl otherwise joins the
 * thread: a stalled DNS server would hold the loop, and its heartbeat,
 * for the resolver's whole timeout). Each lookup is a thread the main
 * thread creates; their stacks are small (main.c, thread_stacks) so that
 * glibc reuses them.
 *
 * Header limits: a response header block over FETCH_MAX_HEAD_BYTES (a
 * server sending 10,000 Set-Cookie lines) is aborted by on_header and
 * recorded as "response header block over 256 KiB"; a single header line
 * over libcurl's own CURL_MAX_HTTP_HEADER (100 KiB, e.g. a 1 MiB Location)
 * makes libcurl fail with CURLE_OUT_OF_MEMORY, recorded as "response header
 * line too long". Over HTTP/2, nghttp2 and libcurl bound the header block
 * themselves (a HEADERS frame followed by endless CONTINUATION frames ends
 * in nghttp2's error). libcurl 7.88 reads frames that carry no body (a
 * SETTINGS flood) inside one curl_multi_perform for as long as they keep
 * coming: on_progress ends such a transfer after
 * fetch_call_cap_ms with a
 * clear error and shuts its connection down; and as libcurl may keep
 * reading such frames without calling back at all, fetch-guard.c's thread
 * shuts down the socket still receiving the most once one call has run for
 * that cap. A small send buffer (FETCH_SNDBUF) makes a flood whose
 * acknowledgements the server does not read end sooner still.
 *
 * Thread rules: everything but fetcher_wakeup runs on the node's thread.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "conf.h"
#include "node-internal.h"

/* The most bytes of one response's header block kept; more aborts it. */
#define FETCH_MAX_HEAD_BYTES ((size_t)256 * 1024)
/* The longest Content-Length a body buffer is allocated for at once. */
#define BODY_PREALLOC_MAX ((size_t)1 << 20)

_Static_assert(sizeof(((struct fetch_result *)0)->error) >= CURL_ERROR_SIZE,
               "fetch_result.error holds libcurl's error buffer");

struct fetch_policy {
    int mode;      /* NETCLASS_* */
    uint64_t mask; /* the seeds' ranges */
};

struct fetcher {
    CURLM *multi;
    struct fetch_policy policy;
    const struct conf *c;
    CURL **idle;            /* easy handles ready for reuse */
    size_t nidle, capidle;
    CURL **busy;            /* handles with a transfer under way */
    size_t nbusy, capbusy;
    struct fetch_result **done;
    size_t ndone, capdone, done_pos;
    size_t active;
    struct curl_slist *headers; /* X-Dcrawl-Node (fetcher_set_node) */
    struct fetch_guard *guard;  /* frame floods (fetch-guard.c), or NULL */
    atomic_int woken;           /* fetcher_wakeup since the last wait */
    struct fetch_cache_times cache; /* libcurl's cache times (fetch-cache.c) */
};

void fetch_result_free(struct fetch_result *r)
{
    if (!r)
        return;
    free(r->url);
    free(r->final_url);
    free(r->content_type);
    free(r->req_head);
    free(r->resp_head);
    free(r->body);
    free(r->location);
    free(r);
}

static void buf_add(char **buf, size_t *len, size_t *cap, const char *p,
                    size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 1024;
        while (c < *len + n + 1)
            c *= 2;
        *buf = xrealloc(*buf, c);
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* The body buffer sized from the response's Content-Length at its first
 * bytes (when it says at most BODY_PREALLOC_MAX), not grown by doubling:
 * one allocation, and no third of it left unused on average (the parse
 * backlog counts buffer capacity). A larger or missing length grows. */
static void body_reserve(struct fetch_result *r)
{
    curl_off_t cl = -1;
    size_t want;
    if (r->body || !r->easy ||
        curl_easy_getinfo(r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) !=
            CURLE_OK || cl <= 0 || cl > (curl_off_t)BODY_PREALLOC_MAX)
        return;
    want = (size_t)cl < r->max_bytes ? (size_t)cl : r->max_bytes;
    r->body = xmalloc(want + 1);
    r->body_cap = want + 1;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch_result *r = ud;
    size_t len = sz * n, room = r->max_bytes - r->body_len;
    body_reserve(r);
    if (len > room) {
        buf_add(&r->body, &r->body_len, &r->body_cap, p, room);
        r->truncated = 1;
        return 0; /* abort the transfer: the cap is reached */
    }
    buf_add(&r->body, &r->body_len, &r->body_cap, p, len);
    return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct fetch_result *r = ud;
    size_t len = sz * n;
    if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        r->resp_len = 0; /* a new response (redirect, 100) starts over */
        r->body_len = 0;
        r->truncated = 0;
    }
    if (r->resp_len + len > FETCH_MAX_HEAD_BYTES) {
        r->head_too_big = 1;
        return 0; /* absurd header block: abort */
    }
    buf_add(&r->resp_head, &r->resp_len, &r->resp_cap, p, len);
    return len;
}

/* The send buffer of every connection (the kernel doubles it). A crawler
 * sends requests of a few KiB, so it costs nothing; what it bounds is a
 * server that floods frames each of which nghttp2 must acknowledge
 * (HTTP/2 SETTINGS, PING) and never reads the acknowledgements: once this
 * buffer and the server's receive window are full, nghttp2's own limit on
 * queued acknowledgements (1000) ends the connection, after some hundred
 * KiB of flood instead of the megabytes an autotuned buffer would take in
 * (and the seconds libcurl spends reading them inside one call). */
#define FETCH_SNDBUF (16 << 10)

/* libcurl 7.88 reads HTTP/2 frames that carry no body (a SETTINGS flood)
 * inside one call for as long as they keep coming, which holds the node's
 * other transfers (and their time limits) meanwhile: no call may run past
 * fetch_call_cap_ms. */
int64_t fetch_call_cap_ms(const struct conf *c)
{
    int64_t ms = (int64_t)(c->fetch_low_speed_time * 250);
    return ms < FETCH_CALL_CAP_MIN_MS   ? FETCH_CALL_CAP_MIN_MS
           : ms > FETCH_CALL_CAP_MAX_MS ? FETCH_CALL_CAP_MAX_MS
                                        : ms;
}
static _Thread_local uint64_t perform_calls; /* this thread's so far */

/* Progress callback (libcurl calls it inside its read loops too): ends the
 * transfer that keeps one call busy for its call cap from
 * its own first callback in that call (a transfer that merely waited
 * behind it is not blamed). Its connection is shut down at the same time
 * (shutdown, not close: the descriptor stays libcurl's to close): libcurl
 * would otherwise go on reading the flood on it, inside the same call,
 * while it winds the HTTP/2 session down, and the next read now sees the
 * end of the stream at once. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un)
{
    struct fetch_result *r = ud;
    int64_t now = dc_now_ms();
    (void)dt; (void)dn; (void)ut; (void)un;
    if (r->sock < 0 && r->easy) {
        curl_socket_t s = CURL_SOCKET_BAD;
        if (curl_easy_getinfo(r->easy, CURLINFO_ACTIVESOCKET, &s) == CURLE_OK &&
            s != CURL_SOCKET_BAD)
            r->sock = (int)s;
    }
    if (r->perform_call != perform_calls) {
        r->perform_call = perform_calls;
        r->perform_ms = now;
        return 0;
    }
    if (now - r->perform_ms <= r->call_cap_ms)
        return 0;
    if (!r->flooded && r->sock >= 0) {
        shutdown(r->sock, SHUT_RDWR);
        fetch_guard_cut(r->guard, r->sock);
    }
    r->flooded = 1;
    return 1;
}

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size,
                    void *ud)
{
    struct fetch_result *r = ud;
    (void)h;
    if (type != CURLINFO_HEADER_OUT)
        return 0;
    /* libcurl hands over one whole request header block per request */
    r->req_len = 0;
    buf_add(&r->req_head, &r->req_len, &r->req_cap, data, size);
    return 0;
}

/* The address of a, as text. */
static void addr_text(const struct sockaddr *a, char *out, size_t cap)
{
    const void *p = a->sa_family == AF_INET6
                        ? (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr
                        : (const void *)&((const struct sockaddr_in *)a)->sin_addr;
    if (!inet_ntop(a->sa_family, p, out, (socklen_t)cap))
        snprintf(out, cap, "?");
}

static const char *mode_name(int mode)
{
    return mode == NETCLASS_DENY ? "deny" : mode == NETCLASS_ALLOW ? "allow" : "seeds";
}

static curl_socket_t on_open(void *ud, curlsocktype purpose,
                             struct curl_sockaddr *a)
{
    struct fetch_result *r = ud;
    int c = netclass_of(&a->addr), sndbuf = FETCH_SNDBUF;
    curl_socket_t fd;
    (void)purpose;
    if (!netclass_allowed(r->policy->mode, r->policy->mask, c)) {
        char ip[INET6_ADDRSTRLEN];
        addr_text(&a->addr, ip, sizeof(ip));
        snprintf(r->refused, sizeof(r->refused),
                 "private address %s (%s %s) not allowed by "
                 "scope.private_addresses=%s",
                 ip, netclass_what(c), netclass_cidr(c),
                 mode_name(r->policy->mode));
        r->refused_class = c;
        r->opened_since = 0;
        return CURL_SOCKET_BAD;
    }
    r->opened_since++;
    fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd != CURL_SOCKET_BAD) { /* see FETCH_SNDBUF */
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        fetch_guard_add(r->guard, fd);
    }
    return fd;
}

static int on_close(void *ud, curl_socket_t fd)
{
    fetch_guard_remove(ud, fd);
    return close(fd);
}

struct fetcher *fetcher_new(const struct conf *c)
{
    struct fetcher *f = xcalloc(1, sizeof(*f));
    f->c = c;
    f->policy.mode = netclass_mode_parse(c->scope_private_addresses);
    f->multi = curl_multi_init();
    if (!f->multi) {
        free(f);
        return NULL;
    }
    curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                      (long)c->politeness_host_connections);
    curl_multi_setopt(f->multi, CURLMOPT_MAXCONNECTS,
                      (long)c->fetch_concurrency * 2 + 16);
    f->guard = fetch_guard_new(fetch_call_cap_ms(c));
    return f;
}

static CURL *easy_get(struct fetcher *f)
{
    const struct conf *c = f->c;
    CURL *h;
    if (f->nidle)
        return f->idle[--f->nidle];
    h = curl_easy_init();
    if (!h)
        return NULL;
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->crawl_user_agent);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)c->fetch_max_redirects);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, c->fetch_accept_encoding);
    curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, f->guard);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->fetch_timeout * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(c->fetch_connect_timeout * 1000));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, (long)c->fetch_low_speed_limit);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)c->fetch_low_speed_time);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                     c->fetch_http2 ? (long)CURL_HTTP_VERSION_2TLS
                                    : (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->fetch_verify_tls ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->fetch_verify_tls ? 2L : 0L);
    if (c->fetch_ca_file && *c->fetch_ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->fetch_ca_file);
    if (c->fetch_ca_path && *c->fetch_ca_path)
        curl_easy_setopt(h, CURLOPT_CAPATH, c->fetch_ca_path);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_VERBOSE, 1L); /* feeds on_debug only */
    curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
#if LIBCURL_VERSION_NUM >= 0x075700
    /* a transfer that ends while its name is still being looked up
     * (connect timeout against a stalled DNS server) leaves the lookup
     * thread behind instead of waiting for it on the node loop */
    curl_easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
#endif
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open);
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* not from the environment */
    if (f->headers)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, f->headers);
    return h;
}

static int add(struct fetcher *f, const char *url, size_t max_bytes,
               int follow, void *ud)
{
    CURL *h = easy_get(f);
    struct fetch_result *r;
    if (!h)
        return DC_ECURL;
    r = xcalloc(1, sizeof(*r));
    r->url = xstrdup(url);
    r->max_bytes = max_bytes;
    r->ud = ud;
    r->started_ms = dc_now_ms();
    r->policy = &f->policy;
    r->call_cap_ms = fetch_call_cap_ms(f->c);
    r->sock = -1;
    r->refused_class = NETCLASS_PUBLIC;
    r->easy = h;
    r->guard = f->guard;
    curl_easy_setopt(h, CURLOPT_URL, url);
    fetch_cache_times(&f->cache, r->started_ms, f->c->fetch_concurrency);
    curl_easy_setopt(h, CURLOPT_DNS_CACHE_TIMEOUT, f->cache.dns_s);
    curl_easy_setopt(h, CURLOPT_MAXAGE_CONN, f->cache.idle_s);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, r);
    curl_easy_setopt(h, CURLOPT_PRIVATE, r);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_DEBUGDATA, r);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION,
                     follow && f->c->fetch_max_redirects > 0 ? 1L : 0L);
    if (curl_multi_add_handle(f->multi, h) != CURLM_OK) {
        fetch_result_free(r);
        curl_easy_cleanup(h);
        return DC_ECURL;
    }
    xgrow((void **)&f->busy, &f->capbusy, f->nbusy + 1, sizeof(*f->busy));
    f->busy[f->nbusy++] = h;
    f->active++;
    return DC_OK;
}

int fetcher_add(struct fetcher *f, const char *url, size_t max_bytes, void *ud)
{
    return add(f, url, max_bytes, 1, ud);
}

int fetcher_add_page(struct fetcher *f, const char *url, size_t max_bytes,
                     void *ud)
{
    return add(f, url, max_bytes, 0, ud);
}

static void finish(struct fetcher *f, CURL *h, CURLcode code)
{
    struct fetch_result *r = NULL;
    char *s = NULL;
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&r);
    r->curl_code = code;
    if (code != CURLE_OK) {
        long oe = 0;
        if (curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oe) == CURLE_OK)
            r->os_errno = (int)oe;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &s) == CURLE_OK && s)
        r->final_url = xstrdup(s);
    s = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &s) == CURLE_OK && s)
        r->content_type = xstrdup(s);
    s = NULL;
    if (curl_easy_getinfo(h, CURLINFO_PRIMARY_IP, &s) == CURLE_OK && s)
        snprintf(r->ip, sizeof(r->ip), "%s", s);
    s = NULL;
    if (status >= 300 && status < 400 &&
        curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &s) == CURLE_OK && s)
        r->location = xstrdup(s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL); /* r may outlive h's use */
    r->easy = NULL;
    if (code == CURLE_WRITE_ERROR && r->truncated)
        code = CURLE_OK; /* our own cap: keep what we have */
    if (code == CURLE_COULDNT_CONNECT && r->refused[0] && !r->opened_since) {
        /* every address left was refused: say why, not "couldn't connect" */
        r->private_refused = 1;
        snprintf(r->error, sizeof(r->error), "%s", r->refused);
    }
    if (code != CURLE_OK &&
        ((r->perform_call && r->perform_call == fetch_guard_cut_call(f->guard)) ||
         fetch_guard_was_cut(f->guard, r->sock)))
        r->flooded = 1; /* its connection was cut (guard or on_progress) */
    if (code == CURLE_WRITE_ERROR && r->head_too_big)
        snprintf(r->error, sizeof(r->error),
                 "response header block over %zu KiB", FETCH_MAX_HEAD_BYTES / 1024);
    else if (code != CURLE_OK && r->flooded)
        snprintf(r->error, sizeof(r->error), "server kept the reader busy "
                 "over %lld ms without a break (frame flood)",
                 (long long)r->call_cap_ms);
    else if (code == CURLE_OUT_OF_MEMORY && status > 0)
        /* libcurl may have left another connection's error in the buffer
         * (a dead HTTP/2 connection checked on this transfer's behalf) */
        snprintf(r->error, sizeof(r->error), "response header line too long "
                 "(over libcurl's %d KiB)", CURL_MAX_HTTP_HEADER / 1024);
    if (code != CURLE_OK) {
        if (!r->error[0])
            snprintf(r->error, sizeof(r->error), "%s",
                     curl_easy_strerror(code));
        status = 0;
    } else {
        r->error[0] = '\0';
    }
    r->status = (int)status;
    curl_multi_remove_handle(f->multi, h);
    for (size_t i = 0; i < f->nbusy; i++)
        if (f->busy[i] == h) {
            f->busy[i] = f->busy[--f->nbusy];
            break;
        }
    xgrow((void **)&f->idle, &f->capidle, f->nidle + 1, sizeof(*f->idle));
    f->idle[f->nidle++] = h;
    xgrow((void **)&f->done, &f->capdone, f->ndone + 1, sizeof(*f->done));
    f->done[f->ndone++] = r;
    f->active--;
}

int fetcher_run(struct fetcher *f, int timeout_ms)
{
    int running = 0, left = 0;
    CURLMcode rc;
    CURLMsg *m;
    if (timeout_ms > 0 && !atomic_exchange(&f->woken, 0)) {
        curl_multi_poll(f->multi, NULL, 0, timeout_ms, NULL);
        atomic_store(&f->woken, 0); /* this wait took the signal */
    }
    perform_calls++;
    fetch_guard_enter(f->guard, perform_calls);
    rc = curl_multi_perform(f->multi, &running);
    fetch_guard_leave(f->guard);
    if (rc != CURLM_OK)
        return DC_ECURL;
    while ((m = curl_multi_info_read(f->multi, &left)))
        if (m->msg == CURLMSG_DONE)
            finish(f, m->easy_handle, m->data.result);
    return DC_OK;
}

struct fetch_result *fetcher_next_done(struct fetcher *f)
{
    if (f->done_pos == f->ndone) {
        f->done_pos = f->ndone = 0;
        return NULL;
    }
    return f->done[f->done_pos++];
}

int fetcher_wait_fd(struct fetcher *f, int fd, int timeout_ms)
{
    struct curl_waitfd w = { fd, CURL_WAIT_POLLIN, 0 };
    if (curl_multi_poll(f->multi, &w, 1, timeout_ms, NULL) != CURLM_OK)
        return 0;
    return (w.revents & CURL_WAIT_POLLIN) != 0;
}

void fetcher_wakeup(struct fetcher *f)
{
    atomic_store(&f->woken, 1);
    curl_multi_wakeup(f->multi);
}

void fetcher_set_ranges(struct fetcher *f, uint64_t mask)
{
    f->policy.mask = mask;
}

int fetcher_private_mode(const struct fetcher *f)
{
    return f->policy.mode;
}

uint64_t fetcher_ranges(const struct fetcher *f)
{
    return f->policy.mask;
}

size_t fetcher_active(const struct fetcher *f)
{
    return f->active;
}

int fetcher_set_node(struct fetcher *f, const char *id)
{
    size_t len = strlen(id) + sizeof("X-Dcrawl-Node: ");
    char *h = xmalloc(len);
    struct curl_slist *l;

    snprintf(h, len, "X-Dcrawl-Node: %s", id);
    l = curl_slist_append(f->headers, h);
    free(h);
    if (!l)
        return DC_ENOMEM;
    f->headers = l;
    return DC_OK;
}

/* Abort busy[i]: its connection is closed, its result returned. */
static struct fetch_result *cancel_at(struct fetcher *f, size_t i)
{
    struct fetch_result *r = NULL;
    CURL *h = f->busy[i];
    f->busy[i] = f->busy[--f->nbusy];
    curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&r);
    curl_multi_remove_handle(f->multi, h);
    curl_easy_cleanup(h);
    r->easy = NULL;
    f->active--;
    return r;
}

struct fetch_result *fetcher_cancel(struct fetcher *f)
{
    if (!f || !f->nbusy)
        return NULL;
    return cancel_at(f, f->nbusy - 1);
}

struct fetch_result *fetcher_cancel_if(struct fetcher *f,
                                       int (*pick)(void *ud, void *arg),
                                       void *arg)
{
    for (size_t i = 0; f && i < f->nbusy; i++) {
        struct fetch_result *r = NULL;
        curl_easy_getinfo(f->busy[i], CURLINFO_PRIVATE, (char **)&r);
        if (pick(r->ud, arg))
            return cancel_at(f, i);
    }
    return NULL;
}

void fetcher_free(struct fetcher **fp)
{
    struct fetcher *f;
    struct fetch_result *r;
    size_t i;
    if (!fp || !*fp)
        return;
    f = *fp;
    while ((r = fetcher_cancel(f)))
        fetch_result_free(r);
    for (i = f->done_pos; i < f->ndone; i++)
        fetch_result_free(f->done[i]);
    for (i = 0; i < f->nidle; i++)
        curl_easy_cleanup(f->idle[i]);
    curl_multi_cleanup(f->multi);
    fetch_guard_free(&f->guard); /* after the sockets are closed */
    curl_slist_free_all(f->headers);
    free(f->idle);
    free(f->busy);
    free(f->done);
    free(f);
    *fp = NULL;
}

/* The kind of a transport error, for metrics (enum node_err_kind). */
int fetch_error_kind(const struct fetch_result *r)
{
    switch (r->curl_code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return NODE_ERR_DNS;
    case CURLE_COULDNT_CONNECT:
        return NODE_ERR_CONNECT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
        return NODE_ERR_TLS;
    case CURLE_OPERATION_TIMEDOUT:
        return NODE_ERR_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return NODE_ERR_TOO_LARGE;
    default:
        return r->truncated ? NODE_ERR_TOO_LARGE : NODE_ERR_OTHER;
    }
}
