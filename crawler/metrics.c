/*
 * metrics.c: a node's figures in the Prometheus text exposition format
 * (version 0.0.4), served at /metrics by libmicrohttpd on its own thread.
 *
 * The server never touches the node loop: it renders the last view the
 * monitor (monitor.c) published, through a render callback that copies it
 * under the monitor's lock. A scrape costs one copy and one text render;
 * the frontier's per-depth figures in it come from the monitor's own
 * periodic read (the one `dcrawl status` does), never from a read per
 * scrape.
 *
 * Names follow Prometheus conventions: dcrawl_ prefix, counters end in
 * _total, durations in seconds, sizes in bytes. The list of names is
 * metrics_names (docker/grafana/metric-names.txt must name the same, a
 * test compares them with a live scrape).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "crawler.h"
#include "frontier.h"
#include "node-internal.h"

const int64_t node_dur_le_ms[NODE_DUR_BINS - 1] = {
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000
};

uint64_t node_transfers(const struct node_stats *st)
{
    uint64_t n = 0;
    for (int i = 0; i < NODE_DUR_BINS; i++)
        n += st->dur_bins[i];
    return n;
}

/* ------------------------------------------------------------- render */

struct text {
    char *p;
    size_t len, cap;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tprintf(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < t->cap - t->len)
            break;
        xgrow((void **)&t->p, &t->cap, t->len + (size_t)(n > 0 ? n : 0) + 1024, 1);
    }
    t->len += (size_t)n;
}

static void head(struct text *t, const char *name, const char *type,
                 const char *help)
{
    tprintf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(struct text *t, const char *name, const char *type,
                const char *help, unsigned long long v)
{
    head(t, name, type, help);
    tprintf(t, "%s %llu\n", name, v);
}

/* A label value with \, " and newline escaped (node ids are plain, but a
 * setting may hold anything). */
static void label_value(struct text *t, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            tprintf(t, "\\%c", *s);
        else if (*s == '\n')
            tprintf(t, "\\n");
        else
            tprintf(t, "%c", *s);
    }
}

#define U(x) ((unsigned long long)(x))

static void render_fetch(struct text *t, const struct node_snapshot *s)
{
    static const char *kinds[NODE_ERR_KINDS] = {
        "dns", "connect", "tls", "timeout", "too_large", "other"
    };
    const struct node_stats *st = &s->st;
    uint64_t cum = 0, n = 0;
    int i;
    head(t, "dcrawl_responses_total", "counter",
         "Pages that got an HTTP response, by status class.");
    for (i = 1; i <= 5; i++)
        tprintf(t, "dcrawl_responses_total{class=\"%dxx\"} %llu\n", i,
                U(st->status[i]));
    head(t, "dcrawl_fetch_errors_total", "counter",
         "Pages that got no response (transport errors), by kind.");
    for (i = 0; i < NODE_ERR_KINDS; i++)
        tprintf(t, "dcrawl_fetch_errors_total{kind=\"%s\"} %llu\n", kinds[i],
                U(st->err_kind[i]));
    one(t, "dcrawl_fetched_bytes_total", "counter",
        "Response body bytes of pages, as transferred.", U(st->bytes));
    head(t, "dcrawl_fetch_duration_seconds", "histogram",
         "Transfer time from start to end (robots.txt and sitemaps included).");
    n = node_transfers(st);
    for (i = 0; i < NODE_DUR_BINS - 1; i++) {
        cum += st->dur_bins[i];
        tprintf(t, "dcrawl_fetch_duration_seconds_bucket{le=\"%g\"} %llu\n",
                (double)node_dur_le_ms[i] / 1000.0, U(cum));
    }
    tprintf(t, "dcrawl_fetch_duration_seconds_bucket{le=\"+Inf\"} %llu\n", U(n));
    tprintf(t, "dcrawl_fetch_duration_seconds_sum %.3f\n",
            (double)st->dur_ms / 1000.0);
    tprintf(t, "dcrawl_fetch_duration_seconds_count %llu\n", U(n));
    one(t, "dcrawl_pages_parsed_total", "counter",
        "Pages whose HTML the workers parsed.", U(st->pages_parsed));
    one(t, "dcrawl_transfers_in_flight", "gauge",
        "Transfers running now (robots.txt and sitemaps included).",
        U(s->in_flight));
}

static void render_links(struct text *t, const struct node_snapshot *s)
{
    const struct node_stats *st = &s->st;
    uint64_t scope = 0;
    for (int i = 1; i < PARSER_SCOPE_NREASONS; i++)
        scope += st->scope_dropped[i];
    one(t, "dcrawl_links_found_total", "counter",
        "Links found on parsed pages.", U(st->links_found));
    one(t, "dcrawl_links_admitted_total", "counter",
        "Links that were new URLs, queued for crawling.", U(st->links_new));
    head(t, "dcrawl_links_dropped_total", "counter",
         "Links not queued, by reason (robots: URLs skipped by robots.txt).");
    tprintf(t, "dcrawl_links_dropped_total{reason=\"cache\"} %llu\n",
            U(st->links_cached));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"redis\"} %llu\n",
            U(st->links_admitted - st->links_new));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"noise_block\"} %llu\n",
            U(st->noise_block));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"noise_cluster\"} %llu\n",
            U(st->noise_cluster));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"budget\"} %llu\n",
            U(st->noise_budget + st->scope_budget));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"scope\"} %llu\n", U(scope));
    tprintf(t, "dcrawl_links_dropped_total{reason=\"robots\"} %llu\n",
            U(st->robots_skipped + st->robots_unreachable));
    head(t, "dcrawl_robots_fetches_total", "counter",
         "robots.txt fetches by outcome (missing: 4xx, no rules; "
         "unreachable: 5xx or no response).");
    tprintf(t, "dcrawl_robots_fetches_total{outcome=\"ok\"} %llu\n",
            U(st->robots_ok));
    tprintf(t, "dcrawl_robots_fetches_total{outcome=\"missing\"} %llu\n",
            U(st->robots_missing));
    tprintf(t, "dcrawl_robots_fetches_total{outcome=\"unreachable\"} %llu\n",
            U(st->robots_failed));
}

static void render_node(struct text *t, const struct node_snapshot *s)
{
    one(t, "dcrawl_politeness_waits_total", "counter",
        "Transfers that started later than queued (host gap or connection "
        "limits).", U(s->polite.waits));
    head(t, "dcrawl_politeness_wait_seconds_total", "counter",
         "Time those transfers waited.");
    tprintf(t, "dcrawl_politeness_wait_seconds_total %.3f\n",
            (double)s->polite.wait_ms / 1000.0);
    one(t, "dcrawl_politeness_hosts_waiting", "gauge",
        "Hosts with a transfer waiting on politeness now.",
        U(s->polite.hosts_waiting));
    one(t, "dcrawl_redis_round_trips_total", "counter",
        "Round trips (pipelines) the node loop sent to Redis.",
        U(s->roundtrips));
    one(t, "dcrawl_redis_reconnects_total", "counter",
        "Reconnects to Redis.", U(s->reconnects));
    one(t, "dcrawl_partitions_owned", "gauge",
        "Frontier partitions this node owns now.", U(s->parts_owned));
    one(t, "dcrawl_private_address_skips_total", "counter",
        "URLs skipped because their address is not public "
        "(scope.private_addresses).", U(s->st.private_skipped));
    one(t, "dcrawl_leases_reclaimed_total", "counter",
        "Expired leases of other nodes put back in their queues.",
        U(s->st.leases_reclaimed));
    one(t, "dcrawl_warc_bytes_written_total", "counter",
        "Bytes of page records written to WARC files.", U(s->st.warc_bytes));
    one(t, "dcrawl_depth_level", "gauge",
        "Depth level the node serves now (-1 before the first).",
        U(s->level < 0 ? 0 : s->level));
}

static void render_frontier(struct text *t, const struct monitor_view *v)
{
    int d;
    head(t, "dcrawl_frontier_queued", "gauge",
         "URLs queued in the whole frontier, by depth (read every few "
         "seconds).");
    for (d = 0; d < v->ndepths; d++)
        tprintf(t, "dcrawl_frontier_queued{depth=\"%d\"} %lld\n", d,
                (long long)v->depths[d].queued);
    head(t, "dcrawl_frontier_in_flight", "gauge",
         "URLs leased and not yet completed in the whole frontier, by depth.");
    for (d = 0; d < v->ndepths; d++)
        tprintf(t, "dcrawl_frontier_in_flight{depth=\"%d\"} %lld\n", d,
                (long long)v->depths[d].inflight);
}

char *metrics_render(const struct monitor_view *v, size_t *len)
{
    struct text t = {0};
    head(&t, "dcrawl_node_info", "gauge", "The node's id and version.");
    tprintf(&t, "dcrawl_node_info{node=\"");
    label_value(&t, v->node_id);
    tprintf(&t, "\",version=\"%s\"} 1\n", DCRAWL_VERSION);
    render_fetch(&t, &v->snap);
    render_links(&t, &v->snap);
    render_node(&t, &v->snap);
    render_frontier(&t, v);
    *len = t.len;
    return t.p;
}

/* ------------------------------------------------------------- server */

struct metrics_server {
    struct MHD_Daemon *d;
    metrics_render_fn render;
    void *ud;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_len, void **state)
{
    struct metrics_server *s = cls;
    struct MHD_Response *r;
    enum MHD_Result ret;
    unsigned code = MHD_HTTP_OK;
    const char *type = "text/plain; version=0.0.4; charset=utf-8";
    char *body;
    size_t len;
    (void)version, (void)upload, (void)upload_len, (void)state;
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        body = xstrdup("only GET\n");
        code = MHD_HTTP_METHOD_NOT_ALLOWED;
    } else if (!strcmp(url, "/metrics")) {
        body = s->render(s->ud, &len);
        r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        goto send;
    } else {
        body = xstrdup(strcmp(url, "/") ? "not found; see /metrics\n"
                                        : "dcrawl node: see /metrics\n");
        code = strcmp(url, "/") ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK;
    }
    len = strlen(body);
    r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
send:
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

int metrics_server_start(struct metrics_server **out, const char *spec,
                         metrics_render_fn render, void *ud, char *err,
                         size_t errlen)
{
    struct metrics_server *s;
    int fd;
    *out = NULL;
    if (http_listen("--metrics", spec, &fd, err, errlen))
        return DC_EINVAL;
    s = xcalloc(1, sizeof(*s));
    s->render = render;
    s->ud = ud;
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
                            0, NULL, NULL, answer, s,
                            MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_CONNECTION_LIMIT, 16u,
                            MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                            MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, errlen, "%s: the HTTP server did not start", spec);
        close(fd);
        free(s);
        return DC_EINVAL;
    }
    *out = s;
    return DC_OK;
}

void metrics_server_stop(struct metrics_server **sp)
{
    if (!sp || !*sp)
        return;
    MHD_stop_daemon((*sp)->d); /* closes the listening socket */
    free(*sp);
    *sp = NULL;
}
