/*
 * cmd-status.c: `dcrawl status` (options and help: parse_args): the live
 * picture of a crawl from its Redis (frontier_status) as a table or one
 * JSON object, once or every SECONDS with --watch until SIGINT/SIGTERM.
 *
 * Figures per node come from its heartbeat hash: PAGES counts the URLs it
 * wrote (any status, transport errors included), PAGES/S is that count
 * per second over the node's last 10 s, or over the time it has run when
 * that is shorter (node_rate_add in summary.c).
 *
 * --http serves the same as a page (status-http.c); the JSON object is
 * shared (status_json_open).
 *
 * Exit status: 0 shown (or watch / --http ended by a signal), 1 Redis
 * error (unreachable, error reply), 2 usage error, credentials refused or
 * a --http address that cannot be listened on.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crawler.h"
#include "frontier.h"

#define WATCH_DEFAULT_S "2" /* seconds, when --watch has no value */
#define WATCH_MIN_S 0.1
#define WATCH_MAX_S 86400.0

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void install_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* a Redis read in progress just goes on */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Sleep up to seconds, waking early on a signal. */
/* ---- table ---- */

/* "0.4s", "12s", "7m", "3h", "2d"; "-" for an unknown age. */
static void fmt_age(char *out, size_t cap, int64_t ms)
{
    if (ms < 0)
        snprintf(out, cap, "-");
    else if (ms < 10000)
        snprintf(out, cap, "%.1fs", (double)ms / 1000.0);
    else if (ms < 120000)
        snprintf(out, cap, "%llds", (long long)(ms / 1000));
    else if (ms < 7200000)
        snprintf(out, cap, "%lldm", (long long)(ms / 60000));
    else if (ms < 172800000)
        snprintf(out, cap, "%lldh", (long long)(ms / 3600000));
    else
        snprintf(out, cap, "%lldd", (long long)(ms / 86400000));
}

static void fmt_num(char *out, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%lld", (long long)v);
}

/* Age of the node's last heartbeat; 0 when its clock is ahead of ours. */
static int64_t heartbeat_age(const struct frontier_status *st,
                             const struct frontier_status_node *nd)
{
    if (nd->updated_ms < 0)
        return -1;
    return st->now_ms > nd->updated_ms ? st->now_ms - nd->updated_ms : 0;
}

static void print_node(FILE *o, const struct frontier_status *st,
                       const struct frontier_status_node *nd)
{
    char age[32], pages[32], rate[32], infl[32];

    fmt_age(age, sizeof(age), heartbeat_age(st, nd));
    fmt_num(pages, sizeof(pages), nd->pages);
    fmt_num(infl, sizeof(infl), nd->inflight >= 0 ? nd->inflight : nd->leases);
    if (nd->pages_s >= 0)
        snprintf(rate, sizeof(rate), "%.1f", nd->pages_s);
    else
        snprintf(rate, sizeof(rate), "-");
    fprintf(o, "  %-20s %-16s %-10s %6lld %8s %9s %8s  %s%s\n", nd->id,
            nd->host ? nd->host : "-",
            nd->live ? (nd->state ? nd->state : "-") : "dead",
            (long long)nd->parts, infl, pages, rate, age,
            nd->live ? "" : " (no heartbeat)");
}

static void print_depth(FILE *o, const char *label,
                        const struct frontier_status_depth *d)
{
    fprintf(o, "  %-5s %7lld %7lld %7lld %7lld %9lld %9lld %9lld %7lld %8lld\n",
            label, (long long)d->hosts, (long long)d->hosts_ready,
            (long long)d->hosts_polite, (long long)d->hosts_busy,
            (long long)d->queued, (long long)d->inflight, (long long)d->done,
            (long long)d->failed, (long long)d->skipped);
}

static size_t nodes_in_state(const struct frontier_status *st,
                             const char *state)
{
    size_t n = 0;

    for (size_t i = 0; i < st->nnodes; i++)
        n += st->nodes[i].live && st->nodes[i].state &&
             strcmp(st->nodes[i].state, state) == 0;
    return n;
}

static void print_stalls(FILE *o, const struct frontier_status *st)
{
    const struct frontier_status_depth *t = &st->total;

    fprintf(o, "stalls: %lld hosts waiting on politeness, %lld at their "
               "connection limit, %lld ready; nodes: %zu idle (no work), "
               "%zu waiting for a lower depth, %zu waiting on politeness\n",
            (long long)t->hosts_polite, (long long)t->hosts_busy,
            (long long)t->hosts_ready, nodes_in_state(st, "idle"),
            nodes_in_state(st, "level-wait"), nodes_in_state(st, "politeness"));
    if (st->nlive == 0 && t->queued > 0)
        fprintf(o, "stalls: %lld URLs queued and no live node\n",
                (long long)t->queued);
}

static void print_parts(FILE *o, const struct frontier_status *st)
{
    fprintf(o, "partitions: %d", st->partitions);
    if (st->parts_used >= 0)
        fprintf(o, ", %lld used", (long long)st->parts_used);
    fprintf(o, ", %lld owned", (long long)st->parts_owned);
    if (st->parts_owner_unknown)
        fprintf(o, " (%lld by ids not in the node list)",
                (long long)st->parts_owner_unknown);
    fprintf(o, ", %lld with pending work and no owner",
            (long long)st->parts_unowned_pending);
    if (st->partition_by[0])
        fprintf(o, "; by %s", st->partition_by);
    fprintf(o, "\n");
}

static void print_fail_hosts(FILE *o, const struct frontier_status *st)
{
    if (!st->nfail)
        return;
    fprintf(o, "error hosts (URLs given up):");
    for (size_t i = 0; i < st->nfail; i++)
        fprintf(o, "%s %s %lld", i ? "," : "", st->fail[i].host,
                (long long)st->fail[i].failed);
    fputc('\n', o);
}

static void print_table(FILE *o, const struct frontier_status *st,
                        const char *redis)
{
    char when[64];
    time_t secs = (time_t)(st->now_ms / 1000);
    struct tm tm;

    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&secs, &tm));
    fprintf(o, "dcrawl status: %s at %s\n", redis, when);
    if (!st->crawl) {
        fprintf(o, "no crawl in this Redis yet (no meta key): no nodes, "
                   "nothing queued\n");
        return;
    }
    fprintf(o, "nodes: %zu live, %zu dead\n", st->nlive,
            st->nnodes - st->nlive);
    if (st->nnodes == 0)
        fprintf(o, "  no nodes\n");
    else
        fprintf(o, "  %-20s %-16s %-10s %6s %8s %9s %8s  %s\n", "ID", "HOST",
                "STATE", "PARTS", "INFLIGHT", "PAGES", "PAGES/S", "HEARTBEAT");
    for (size_t i = 0; i < st->nnodes; i++)
        print_node(o, st, &st->nodes[i]);
    print_parts(o, st);
    fprintf(o, "  %-5s %7s %7s %7s %7s %9s %9s %9s %7s %8s\n", "DEPTH",
            "HOSTS", "READY", "POLITE", "BUSY", "QUEUED", "INFLIGHT", "DONE",
            "FAILED", "SKIPPED");
    for (int d = 0; d < st->ndepths; d++) {
        char label[16];
        snprintf(label, sizeof(label), "%d", d);
        print_depth(o, label, &st->depths[d]);
    }
    print_depth(o, "total", &st->total);
    fprintf(o, "urls: %lld admitted, %lld links already seen, %lld refused "
               "by the host budget\n",
            (long long)st->admitted, (long long)st->seen,
            (long long)st->budget);
    if (st->leases_unread)
        fprintf(o, "note: %lld leases not read (over %d per partition): in "
                   "flight is undercounted\n",
                (long long)st->leases_unread, FRONTIER_STATUS_LEASES_PER_PART);
    print_stalls(o, st);
    print_fail_hosts(o, st);
}

/* ---- JSON ---- */

static void json_str(FILE *o, const char *s)
{
    if (!s) {
        fputs("null", o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(o, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(o, "\\u%04x", ch);
        else
            fputc(ch, o);
    }
    fputc('"', o);
}

/* An int field; negative values are "unknown": null. */
static void json_int(FILE *o, const char *name, int64_t v, int comma)
{
    if (v < 0)
        fprintf(o, "\"%s\":null%s", name, comma ? "," : "");
    else
        fprintf(o, "\"%s\":%lld%s", name, (long long)v, comma ? "," : "");
}

static void json_node(FILE *o, const struct frontier_status *st,
                      const struct frontier_status_node *nd)
{
    fputs("{\"id\":", o);
    json_str(o, nd->id);
    fprintf(o, ",\"live\":%s,", nd->live ? "true" : "false");
    json_int(o, "heartbeat_deadline_ms", nd->deadline_ms, 1);
    json_int(o, "heartbeat_age_ms", heartbeat_age(st, nd), 1);
    fputs("\"host\":", o);
    json_str(o, nd->host);
    fputs(",\"state\":", o);
    json_str(o, nd->state);
    fputc(',', o);
    json_int(o, "pid", nd->pid, 1);
    json_int(o, "started_ms", nd->started_ms, 1);
    json_int(o, "updated_ms", nd->updated_ms, 1);
    json_int(o, "pages", nd->pages, 1);
    if (nd->pages_s >= 0 && isfinite(nd->pages_s))
        fprintf(o, "\"pages_s\":%.3f,", nd->pages_s);
    else
        fputs("\"pages_s\":null,", o);
    json_int(o, "inflight", nd->inflight, 1);
    json_int(o, "leases", nd->leases, 1);
    json_int(o, "parts", nd->parts, 1);
    json_int(o, "parts_reported", nd->parts_reported, 1);
    json_int(o, "level", nd->level, 0);
    fputc('}', o);
}

/* Several int fields in a row, the last without a comma. */
struct json_field {
    const char *name;
    int64_t v;
};
#define JSON_INTS(o, ...)                                                   \
    json_ints(o, (const struct json_field[]){__VA_ARGS__},                  \
              sizeof((const struct json_field[]){__VA_ARGS__}) /            \
                  sizeof(struct json_field))

static void json_ints(FILE *o, const struct json_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_int(o, f[i].name, f[i].v, i + 1 < n);
}

static void json_depth(FILE *o, const struct frontier_status_depth *d)
{
    JSON_INTS(o, {"hosts", d->hosts}, {"hosts_ready", d->hosts_ready},
              {"hosts_politeness", d->hosts_polite},
              {"hosts_busy", d->hosts_busy}, {"queued", d->queued},
              {"inflight", d->inflight}, {"done", d->done},
              {"failed", d->failed}, {"skipped", d->skipped});
}

static void json_stalls(FILE *o, const struct frontier_status *st)
{
    fputs("\"stalls\":{", o);
    JSON_INTS(o, {"hosts_politeness", st->total.hosts_polite},
              {"hosts_busy", st->total.hosts_busy},
              {"hosts_ready", st->total.hosts_ready},
              {"nodes_fetching", (int64_t)nodes_in_state(st, "fetching")},
              {"nodes_politeness", (int64_t)nodes_in_state(st, "politeness")},
              {"nodes_idle", (int64_t)nodes_in_state(st, "idle")},
              {"nodes_level_wait", (int64_t)nodes_in_state(st, "level-wait")},
              {"nodes_draining", (int64_t)nodes_in_state(st, "draining")});
    fputs("}", o);
}

static void json_fail_hosts(FILE *o, const struct frontier_status *st)
{
    fputs("\"error_hosts\":[", o);
    for (size_t i = 0; i < st->nfail; i++) {
        fputs(i ? ",{\"host\":" : "{\"host\":", o);
        json_str(o, st->fail[i].host);
        fprintf(o, ",\"failed\":%lld}", (long long)st->fail[i].failed);
    }
    fputc(']', o);
}

void status_json_open(FILE *o, const struct frontier_status *st,
                      const char *redis)
{
    fprintf(o, "{\"time_ms\":%lld,\"redis\":", (long long)st->now_ms);
    json_str(o, redis);
    fprintf(o, ",\"crawl\":%s,\"max_depth\":", st->crawl ? "true" : "false");
    if (st->max_depth >= 0)
        fprintf(o, "%d", st->max_depth);
    else
        fputs("null", o);
    fputs(",\"partition_by\":", o);
    json_str(o, st->partition_by[0] ? st->partition_by : NULL);
    fputs(",\"partitions\":{", o);
    JSON_INTS(o, {"total", st->partitions}, {"used", st->parts_used},
              {"owned", st->parts_owned},
              {"owner_unknown", st->parts_owner_unknown},
              {"unowned_pending", st->parts_unowned_pending});
    fprintf(o, "},\"nodes_live\":%zu,\"nodes\":[", st->nlive);
    for (size_t i = 0; i < st->nnodes; i++) {
        if (i)
            fputc(',', o);
        json_node(o, st, &st->nodes[i]);
    }
    fputs("],\"depths\":[", o);
    for (int d = 0; d < st->ndepths; d++) {
        fprintf(o, "%s{\"depth\":%d,", d ? "," : "", d);
        json_depth(o, &st->depths[d]);
        fputc('}', o);
    }
    fputs("],\"total\":{", o);
    json_depth(o, &st->total);
    fputs("},", o);
    JSON_INTS(o, {"admitted", st->admitted}, {"seen", st->seen},
              {"budget_refused", st->budget},
              {"leases_unread", st->leases_unread},
              {"leases_unknown_node", st->leases_other});
    fputc(',', o);
    json_stalls(o, st);
    fputc(',', o);
    json_fail_hosts(o, st);
    fprintf(o, ",\"roundtrips\":%llu", (unsigned long long)st->roundtrips);
}

void status_json_str(FILE *o, const char *s)
{
    json_str(o, s);
}

/* ---- options ---- */

struct status_opts {
    const char *redis;
    int json;
    int watch;
    double interval;
    const char *http;     /* --http ADDR:PORT, or NULL */
    double http_interval; /* --interval: seconds between Redis reads */
};

static int parse_args(struct status_opts *o, struct cli_conf *cc, int argc,
                      char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "redis", &o->redis, "URL",
                       CLI_REDIS_HELP),
        OPT_FLAG_ROW(0, "json", &o->json,
                     "one JSON object per frame (fields: README, Status)"),
        {OPT_DOUBLE, "watch", 0, &o->interval, "SECONDS",
         "show it again every SECONDS (default 2) until\n"
         "SIGINT/SIGTERM; --json --watch prints JSON lines",
         WATCH_MIN_S, WATCH_MAX_S, WATCH_DEFAULT_S, NULL},
        OPT_STRING_ROW(0, "http", &o->http, "ADDR:PORT",
                       "serve a status page (and /status.json) on ADDR:PORT\n"
                       "until SIGINT/SIGTERM; no authentication: bind to\n"
                       "loopback (127.0.0.1:PORT) unless behind a proxy"),
        {OPT_DOUBLE, "interval", 0, &o->http_interval, "SECONDS",
         "with --http: read Redis every SECONDS (default 2)",
         WATCH_MIN_S, WATCH_MAX_S, NULL, NULL},
        OPT_CONF_ROWS(cc),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "status",
        "usage: dcrawl status --redis URL [--json] [--watch [SECONDS]] [options]\n"
        "       dcrawl status --redis URL --http ADDR:PORT [--interval SECONDS]\n",
        "Reads the crawl's Redis (nothing is written) and shows the nodes (live,\n"
        "or dead while their figures remain: id, host, state, partitions owned,\n"
        "transfers in flight, pages, pages/s, age of the last heartbeat), the\n"
        "partitions (owned, and those with pending work but no owner), per depth\n"
        "the hosts with queued URLs (ready / waiting on politeness / at their\n"
        "connection limit) and the URLs queued, in flight, done, failed and\n"
        "skipped, and a stalls line: hosts waiting on politeness vs nodes with no\n"
        "work, and the hosts with the most URLs given up. With --http it serves\n"
        "the same as a page that refreshes itself (with a pages/s chart of the\n"
        "last 10 minutes) at http://ADDR:PORT/ and as JSON at /status.json,\n"
        "reading Redis every --interval seconds, whatever the requests. Exit\n"
        "status 0, 1 on a Redis error, 2 on bad usage, when Redis refuses the\n"
        "credentials (redis.user, redis.password_file) or a --http address that\n"
        "cannot be listened on.\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    o->watch = o->interval > 0;
    if (rc == OPT_RUN && o->http && (o->watch || o->json))
        return opt_usage_error(&cmd, "--http goes without --json and --watch");
    if (rc == OPT_RUN && !o->http && o->http_interval > 0)
        return opt_usage_error(&cmd, "--interval goes with --http");
    if (o->http_interval <= 0)
        o->http_interval = 2;
    return rc;
}

/* ---- the command ---- */

/* One frame; 0 or 1 (Redis error, reported). */
static int frame(struct frontier *f, const struct status_opts *o,
                 const char *redis, int clear)
{
    struct frontier_status *st;

    if (frontier_status(f, dc_now_ms(), &st)) {
        fprintf(stderr, "dcrawl status: %s\n", frontier_errstr(f));
        return 1;
    }
    if (clear)
        fputs("\033[H\033[J", stdout);
    if (o->json) {
        status_json_open(stdout, st, redis);
        fputs("}\n", stdout);
    } else
        print_table(stdout, st, redis);
    if (o->watch && !o->json && !clear)
        fputc('\n', stdout);
    fflush(stdout);
    frontier_status_free(&st);
    return 0;
}

int cmd_status(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct status_opts o = {0};
    struct conf c;
    struct frontier *f = NULL;
    char err[512];
    char shown[1024];
    int rc, clear, listen_fd = -1;

    rc = parse_args(&o, &cc, argc, argv);
    if (rc != OPT_RUN)
        return rc;
    rc = cli_conf_apply(&cc, &c);
    free(cc.sets.v);
    if (rc)
        return 2;
    if (!o.redis || !*o.redis)
        o.redis = c.redis_url;
    if (!o.redis || !*o.redis) {
        fprintf(stderr, "dcrawl status: no Redis: give --redis URL\n");
        conf_release(&c);
        return 2;
    }
    if (o.http && http_listen("--http", o.http, &listen_fd, err, sizeof(err))) {
        fprintf(stderr, "dcrawl status: %s\n", err);
        conf_release(&c);
        return 2;
    }
    rc = frontier_status_open(&f, o.redis, &c, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "dcrawl status: %s\n", err);
        if (listen_fd >= 0)
            close(listen_fd);
        conf_release(&c);
        return rc == DC_EINVAL || rc == DC_EAUTH || rc == DC_ECONFIG ? 2 : 1;
    }
    frontier_url_redact(o.redis, shown, sizeof(shown));
    if (o.http) {
        install_signals();
        rc = status_http_serve(f, listen_fd, o.http_interval, shown, &stop_flag);
        frontier_close(&f);
        conf_release(&c);
        return rc;
    }
    clear = o.watch && !o.json && isatty(STDOUT_FILENO);
    if (o.watch)
        install_signals();
    do {
        rc = frame(f, &o, shown, clear);
        if (!rc && o.watch)
            status_nap(o.interval, &stop_flag);
    } while (!rc && o.watch && !stop_flag);
    frontier_close(&f);
    conf_release(&c);
    return rc;
}
