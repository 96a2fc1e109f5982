/*
 * frontier_bench.c: does the frontier slow down as it grows? Admits, pops
 * and completes through the frontier API (frontier.h, the calls the node
 * makes) against private redis-servers, at several queue sizes.
 *
 *   build-rel/bench/frontier_bench [--sizes 100000,1000000,10000000,30000000]
 *        [--hosts 1000000] [--window 50000] [--rounds 5] [--ref 100000]
 *        [--batch 512] [--fill-batch 8192] [--pop 512] [--delay-ms 1000]
 *        [--max-gb 12] [--module PATH] [--cmdstats 0]
 *
 * Servers: started as the crawl's embedded one (bench/redis-priv.h), with
 * the dcrawl-seen module, so the seen-set layout is mod-u64 as a crawl's by
 * default, and admit, pop and complete are the module's native commands
 * (DCRAWL_LUA_FRONTIER=1 in the environment times the Lua scripts
 * instead), on the native queue layout (DCRAWL_QUEUE_LAYOUT=zset-list:
 * a ZSET per depth and a LIST per host queue, as before it; frontier.h);
 * default configuration otherwise (1024 partitions,
 * host_connections 1, lease 60 s). The handles do not join a cluster: pop
 * does not check partition ownership (one GET per partition call less
 * than a node).
 *
 * URLs: id i becomes http://h<host>.example/<section>/segment-<n>/
 * page-<i>.html (60 to 80 bytes), host = a hash of i mod --hosts, so the
 * URLs spread evenly over the hosts; all at depth 0. Every id is new.
 *
 * Per size S (sizes ascending, one Redis filled cumulatively): admit new
 * URLs in --fill-batch batches until S URLs are queued (fill, timed apart);
 * then, timed, admit --window new URLs in --batch batches (admits/s; the
 * queue grows to S + window), then pop (--pop at most per call) and
 * complete (outcome done, politeness delay --delay-ms) --window URLs, one
 * complete call per pop, as the node does (pops/s and completes/s count
 * the time inside each call; the queue is back at S).
 *
 * Reference: a second redis-server holds a frontier of --ref queued URLs
 * (0: none) and gets the same window, in --rounds slices interleaved with
 * the big one's (admit slice big, admit slice reference, ..., then pop and
 * complete the same way), so "x ref" (the /rf columns, and the last line
 * for the largest size) compares the two under the same load of the
 * machine at the same moment. Across rows the machine's state differs
 * (rows minutes apart, the big server's memory grown): the same binary
 * gave pop/s x0.67 to x0.90 between 100 k and 10 M on an idle machine.
 *
 * As a node, each handle calls frontier_reclaim every 5 s (between the
 * calls, not timed): it also drops politeness clocks already past from
 * the host hashes, which would otherwise hold every host ever completed
 * and make each host lookup slower as the run ages, at every size.
 *
 * Memory: INFO used_memory minus that of the empty database, per queued
 * URL (URL text, queues, ready sets and the seen-set of every URL admitted
 * so far, popped ones included); the seen-set's own MEMORY USAGE is printed
 * apart, and the rest per queued URL. Before each fill the memory it would
 * take is estimated from the last bytes/URL; beyond --max-gb the run stops.
 *
 * --cmdstats 1: where the server's time goes. Each server's statistics
 * are reset before the window (CONFIG RESETSTAT) and its INFO
 * commandstats printed after it, per window URL: calls, microseconds and
 * microseconds per call of each command. Commands run by the scripts are
 * counted under their own names and again inside EVALSHA, so EVALSHA's
 * time minus theirs is the Lua interpreter's own part.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"

#include "linkstream.h"
#include "redis-priv.h"

#define MAX_SIZES 8
#define URL_CAP 128

struct opts {
    uint64_t sizes[MAX_SIZES];
    int nsizes;
    uint64_t hosts, ref;
    size_t window, rounds, batch, fill_batch, pop;
    int64_t delay_ms;
    double max_gb;
    const char *module;
    int cmdstats;                  /* print INFO commandstats per window */
};

/* One redis-server, the frontier on it and the window's sums. */
struct target {
    struct bench_redis sv;
    redisContext *r;
    struct frontier *f;
    uint64_t next;                 /* next URL id */
    double reclaim_at;             /* now_s() of the next frontier_reclaim */
    long long mem0;                /* used_memory of the empty database */
    double admit_s, pop_s, complete_s, cpu_admit, cpu_popc;
};

struct row {
    uint64_t size, queued;
    double fill_rate, admit_rate, pop_rate, complete_rate, popc_rate;
    double ref_admit, ref_pop, ref_popc; /* x the reference's, 0: none */
    double redis_us_admit, redis_us_popc;
    double bytes_url, seen_url, rest_url, used_mb;
};

/* A batch of URLs and the text they point to. */
struct urlbuf {
    size_t cap;
    char *text;
    struct frontier_url *u;
    unsigned char *isnew;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The URL of id i into u (text in buf, URL_CAP bytes). */
static void url_make(const struct opts *o, uint64_t i, char *buf,
                     struct frontier_url *u)
{
    static const char *const sections[] = {
        "articles", "docs/reference", "news/2024", "products/category",
        "blog/posts", "wiki/topics"
    };
    uint64_t h = linkstream_mix64(i + 1);
    int n = snprintf(buf, URL_CAP, "http://h%06" PRIu64 ".example/%s/"
                     "segment-%u/page-%" PRIu64 ".html", h % o->hosts,
                     sections[(h >> 40) % 6], (unsigned)((h >> 48) % 1000),
                     i);

    u->url = buf;
    u->len = (size_t)n;
    u->host = buf + 7;
    u->hostlen = (size_t)(strchr(u->host, '/') - u->host);
    u->fp = dedup_fingerprint(buf, u->len);
    u->depth = 0;
}

static void die(const char *what, struct frontier *f)
{
    fprintf(stderr, "frontier_bench: %s: %s\n", what, frontier_errstr(f));
    exit(1);
}

/* A node calls frontier_reclaim every RECLAIM_S (crawler/node.c
 * RECLAIM_MS): expired leases back, and a sample of politeness clocks
 * already past dropped from the host hashes. Done here at that pace
 * between calls, outside the timed ones. */
#define RECLAIM_S 5.0

static void reclaim_due(struct target *t)
{
    size_t k;

    if (now_s() < t->reclaim_at)
        return;
    if (frontier_reclaim(t->f, dc_now_ms(), 0, &k))
        die("reclaim", t->f);
    t->reclaim_at = now_s() + RECLAIM_S;
}

/* Admit n new URLs in batches of `batch`; returns the seconds spent inside
 * frontier_admit. */
static double admit_ids(const struct opts *o, struct target *t,
                        struct urlbuf *b, uint64_t n, size_t batch)
{
    double secs = 0;

    while (n > 0) {
        size_t k = n < batch ? (size_t)n : batch;
        double t0;
        for (size_t j = 0; j < k; j++)
            url_make(o, t->next + j, b->text + j * URL_CAP, &b->u[j]);
        t0 = now_s();
        if (frontier_admit(t->f, b->u, k, dc_now_ms(), b->isnew))
            die("admit", t->f);
        secs += now_s() - t0;
        t->next += k;
        n -= k;
        reclaim_due(t);
    }
    return secs;
}

/* Pop and complete n URLs; adds the seconds inside pop and complete. */
static void pop_complete(const struct opts *o, struct target *t, size_t n)
{
    int *outcome = xcalloc(o->pop, sizeof(*outcome));
    int64_t *delay = xmalloc(o->pop * sizeof(*delay));
    size_t done = 0;
    int empty = 0;

    for (size_t i = 0; i < o->pop; i++)
        delay[i] = o->delay_ms; /* outcome 0: FRONTIER_DONE */
    while (done < n && empty < 1000) {
        struct frontier_lease *l = NULL;
        size_t nl = 0, want = n - done < o->pop ? n - done : o->pop;
        int64_t next_ms;
        double t0 = now_s(), t1;
        if (frontier_pop(t->f, 0, dc_now_ms(), want, &l, &nl, &next_ms))
            die("pop", t->f);
        t1 = now_s();
        t->pop_s += t1 - t0;
        if (nl && frontier_complete(t->f, l, outcome, delay, nl, dc_now_ms()))
            die("complete", t->f);
        t->complete_s += now_s() - t1;
        frontier_leases_free(l, nl);
        reclaim_due(t);
        done += nl;
        empty = nl ? 0 : empty + 1;
        if (!nl)
            usleep(1000);
    }
    if (done < n)
        fprintf(stderr, "frontier_bench: only %zu of %zu popped\n", done, n);
    free(outcome);
    free(delay);
}

/* The window on big and (when ref is not NULL) on ref, interleaved. */
static void run_window(const struct opts *o, struct target *big,
                       struct target *ref, struct urlbuf *b)
{
    struct target *ts[2] = { big, ref };

    for (int k = 0; k < 2 && ts[k]; k++)
        ts[k]->admit_s = ts[k]->pop_s = ts[k]->complete_s =
            ts[k]->cpu_admit = ts[k]->cpu_popc = 0;
    for (size_t round = 0; round < o->rounds; round++) {
        size_t n = o->window / o->rounds +
                   (round + 1 == o->rounds ? o->window % o->rounds : 0);
        for (int k = 0; k < 2 && ts[k]; k++) {
            double c0 = bench_redis_cpu(ts[k]->r);
            ts[k]->admit_s += admit_ids(o, ts[k], b, n, o->batch);
            ts[k]->cpu_admit += bench_redis_cpu(ts[k]->r) - c0;
        }
        for (int k = 0; k < 2 && ts[k]; k++) {
            double c0 = bench_redis_cpu(ts[k]->r);
            pop_complete(o, ts[k], n);
            ts[k]->cpu_popc += bench_redis_cpu(ts[k]->r) - c0;
        }
    }
}

static uint64_t queued(struct frontier *f)
{
    struct frontier_stats st;

    if (frontier_stats(f, &st))
        die("stats", f);
    return (uint64_t)st.queued;
}

static void fill(const struct opts *o, struct target *t, struct urlbuf *b,
                 uint64_t size, double *rate)
{
    uint64_t q = queued(t->f), add = size > q ? size - q : 0;
    double secs = admit_ids(o, t, b, add, o->fill_batch);

    *rate = add ? (double)add / secs : 0;
}

static void measure_memory(struct target *t, struct row *w)
{
    struct seen_usage su;
    long long used = bench_redis_info(t->r, "memory", "used_memory");

    if (seen_usage(t->f, 0, &su))
        die("seen usage", t->f);
    w->used_mb = (double)used / 1e6;
    w->bytes_url = (double)(used - t->mem0) / (double)w->queued;
    w->seen_url = (double)su.bytes / (double)w->queued;
    w->rest_url = w->bytes_url - w->seen_url;
}

/* A plain command on t's own connection, or exit with hiredis's error. */
static redisReply *command(struct target *t, const char *cmd, int type)
{
    redisReply *rp = redisCommand(t->r, cmd);

    if (!rp || rp->type != type) {
        fprintf(stderr, "frontier_bench: %s: %s\n", cmd,
                rp ? (rp->type == REDIS_REPLY_ERROR ? rp->str : "bad reply")
                   : t->r->errstr);
        exit(1);
    }
    return rp;
}

static void stats_reset(struct target *t)
{
    freeReplyObject(command(t, "CONFIG RESETSTAT", REDIS_REPLY_STATUS));
}

/* The window's commands on t, from INFO commandstats: calls and server
 * microseconds per window URL (scripts' inner commands included, so an
 * EVALSHA line holds its commands' time too). */
static void stats_print(const char *name, struct target *t, size_t window)
{
    redisReply *rp = command(t, "INFO commandstats", REDIS_REPLY_STRING);
    const char *s;

    printf("  %s: command calls/URL us/URL us/call\n", name);
    for (s = rp->str; (s = strstr(s, "cmdstat_")) != NULL; s++) {
        char cmd[64];
        unsigned long long calls, usec;
        if (sscanf(s, "cmdstat_%63[^:]:calls=%llu,usec=%llu", cmd, &calls,
                   &usec) == 3 && strcmp(cmd, "info") &&
            strcmp(cmd, "config|resetstat"))
            printf("    %-18s %8.3f %8.3f %8.3f\n", cmd,
                   (double)calls / (double)window,
                   (double)usec / (double)window,
                   calls ? (double)usec / (double)calls : 0);
    }
    freeReplyObject(rp);
}

/* Fill big to w->size, then the window. */
static void run_size(const struct opts *o, struct target *big,
                     struct target *ref, struct urlbuf *b, struct row *w)
{
    double w_n = (double)o->window;

    fill(o, big, b, w->size, &w->fill_rate);
    if (o->cmdstats) {
        stats_reset(big);
        if (ref)
            stats_reset(ref);
    }
    run_window(o, big, ref, b);
    if (o->cmdstats) {
        printf("window commands at %" PRIu64 ":\n", w->size);
        stats_print("big", big, o->window);
        if (ref)
            stats_print("ref", ref, o->window);
    }
    w->admit_rate = w_n / big->admit_s;
    w->pop_rate = w_n / big->pop_s;
    w->complete_rate = w_n / big->complete_s;
    w->popc_rate = w_n / (big->pop_s + big->complete_s);
    w->redis_us_admit = big->cpu_admit * 1e6 / w_n;
    w->redis_us_popc = big->cpu_popc * 1e6 / w_n;
    if (ref) {
        w->ref_admit = ref->admit_s / big->admit_s;
        w->ref_pop = ref->pop_s / big->pop_s;
        w->ref_popc = (ref->pop_s + ref->complete_s) /
                      (big->pop_s + big->complete_s);
    }
    w->queued = queued(big->f);
    measure_memory(big, w);
}

static void print_row(const struct row *w)
{
    printf("%10" PRIu64 " %10" PRIu64 " %8.0f %8.0f %8.0f %8.0f %8.0f "
           "%6.2f %6.2f %6.2f %6.1f %6.1f %6.1f %5.1f %6.1f %7.0f\n",
           w->size, w->queued, w->fill_rate, w->admit_rate, w->pop_rate,
           w->complete_rate, w->popc_rate, w->ref_admit, w->ref_pop,
           w->ref_popc,
           w->redis_us_admit, w->redis_us_popc, w->bytes_url, w->seen_url,
           w->rest_url, w->used_mb);
    fflush(stdout);
}

static void print_head(const struct opts *o, struct frontier *f)
{
    char layout[256];

    seen_layout(f, layout, sizeof(layout));
    printf("frontier bench: %" PRIu64 " hosts, window %zu URLs in %zu "
           "rounds (admit batch %zu, pop %zu a call, complete delay %lld "
           "ms), fill batch %zu, reference %" PRIu64 " URLs, %d partitions, "
           "queue layout %s, %s\n", o->hosts, o->window, o->rounds, o->batch,
           o->pop, (long long)o->delay_ms, o->fill_batch, o->ref,
           frontier_partitions(f), frontier_queue_layout(f), layout);
    printf("%10s %10s %8s %8s %8s %8s %8s %6s %6s %6s %6s %6s %6s %5s %6s "
           "%7s\n", "size", "queued", "fill/s", "admit/s", "pop/s", "compl/s",
           "pop+c/s", "adm/rf", "pop/rf", "p+c/rf", "rUs/a", "rUs/pc", "B/URL", "seen",
           "rest", "usedMB");
}

static void print_notes(const struct opts *o, const struct row *rows, int n)
{
    printf("\nfill/s: admits/s while filling (batch %zu); admit/s, pop/s, "
           "compl/s: URLs per second inside the calls over the window; "
           "pop+c/s: URLs per second popped and completed; adm/rf, pop/rf, "
           "p+c/rf: those rates over the reference frontier's (%" PRIu64 " queued) "
           "in the same interleaved window; rUs/a, rUs/pc: redis-server "
           "CPU us per URL; B/URL: used_memory growth per queued URL (seen: "
           "the seen-set's MEMORY USAGE per queued URL; rest: the rest, URL "
           "text included)\n", o->fill_batch, o->ref);
    if (n < 2)
        return;
    printf("largest (%" PRIu64 ") / smallest (%" PRIu64 "): admit/s "
           "x%.3f, pop/s x%.3f, complete/s x%.3f, pop+complete/s x%.3f\n",
           rows[n - 1].size, rows[0].size,
           rows[n - 1].admit_rate / rows[0].admit_rate,
           rows[n - 1].pop_rate / rows[0].pop_rate,
           rows[n - 1].complete_rate / rows[0].complete_rate,
           rows[n - 1].popc_rate / rows[0].popc_rate);
    if (o->ref)
        printf("largest (%" PRIu64 ") / reference (%" PRIu64 ") in the same "
               "window: admit/s x%.3f, pop/s x%.3f, pop+complete/s x%.3f\n",
               rows[n - 1].size, o->ref, rows[n - 1].ref_admit,
               rows[n - 1].ref_pop, rows[n - 1].ref_popc);
}

static void parse_sizes(struct opts *o, const char *s)
{
    o->nsizes = 0;
    while (*s && o->nsizes < MAX_SIZES) {
        char *end;
        o->sizes[o->nsizes++] = strtoull(s, &end, 10);
        if (*end != ',')
            break;
        s = end + 1;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: frontier_bench [--sizes N,N,...] [--hosts N] "
            "[--window N] [--rounds N] [--ref N] [--batch N] "
            "[--fill-batch N] [--pop N] [--delay-ms MS] [--max-gb G] "
            "[--module PATH] [--cmdstats 0|1]\n");
    exit(2);
}

static void opts_default(struct opts *o)
{
    parse_sizes(o, "100000,1000000,10000000,30000000");
    o->hosts = 1000000;
    o->ref = 100000;
    o->window = 50000;
    o->rounds = 5;
    o->batch = o->pop = 512;
    o->fill_batch = 8192;
    o->delay_ms = 1000;
    o->max_gb = 12;
    o->module = DC_SEEN_MODULE;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    static const char *const names[] = {
        "--hosts", "--ref", "--window", "--rounds", "--batch",
        "--fill-batch", "--pop", "--delay-ms"
    };
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        size_t k = 0;
        if (!v)
            usage();
        if (!strcmp(a, "--sizes")) {
            parse_sizes(o, v);
            continue;
        }
        if (!strcmp(a, "--max-gb")) {
            o->max_gb = atof(v);
            continue;
        }
        if (!strcmp(a, "--cmdstats")) {
            o->cmdstats = atoi(v);
            continue;
        }
        if (!strcmp(a, "--module")) {
            o->module = v;
            continue;
        }
        while (k < 8 && strcmp(a, names[k]))
            k++;
        if (k == 8)
            usage();
        uint64_t x = strtoull(v, NULL, 10);
        uint64_t *u64[] = { &o->hosts, &o->ref };
        size_t *sz[] = { &o->window, &o->rounds, &o->batch, &o->fill_batch,
                         &o->pop };
        if (k < 2)
            *u64[k] = x;
        else if (k < 7)
            *sz[k - 2] = (size_t)x;
        else
            o->delay_ms = (int64_t)x;
    }
    if (!o->hosts || !o->window || !o->rounds || !o->batch ||
        !o->fill_batch || !o->pop || !o->nsizes)
        usage();
}

/* Would filling to `size` pass --max-gb? (estimate from the last row) */
static int too_big(const struct opts *o, const struct row *last,
                   uint64_t size, long long mem0)
{
    double per = last ? last->bytes_url : 0, need;

    need = (double)mem0 + per * (double)(size + o->window);
    if (need <= o->max_gb * 1e9)
        return 0;
    printf("stop: %" PRIu64 " URLs would take about %.1f GB of Redis "
           "(%.0f B/URL), more than --max-gb %.1f\n", size, need / 1e9, per,
           o->max_gb);
    return 1;
}

static void target_open(struct target *t, const struct opts *o,
                        const struct conf *c)
{
    char url[400], err[256];

    memset(t, 0, sizeof(*t));
    bench_redis_start(&t->sv, "dcrawl-frontier-bench", o->module);
    t->r = bench_redis_connect(t->sv.sock);
    snprintf(url, sizeof(url), "unix:%s", t->sv.sock);
    if (frontier_open(&t->f, url, c, "bench", err, sizeof(err))) {
        fprintf(stderr, "frontier_bench: %s\n", err);
        bench_redis_stop(&t->sv);
        exit(1);
    }
    t->mem0 = bench_redis_info(t->r, "memory", "used_memory");
}

static void target_close(struct target *t)
{
    frontier_close(&t->f);
    redisFree(t->r);
    bench_redis_stop(&t->sv);
}

static void run_all(const struct opts *o, struct target *big,
                    struct target *ref)
{
    struct row rows[MAX_SIZES];
    struct urlbuf b;
    double rate;
    int n = 0;

    b.cap = o->batch > o->fill_batch ? o->batch : o->fill_batch;
    b.text = xmalloc(b.cap * URL_CAP);
    b.u = xcalloc(b.cap, sizeof(*b.u));
    b.isnew = xmalloc(b.cap);
    print_head(o, big->f);
    if (ref)
        fill(o, ref, &b, o->ref, &rate);
    for (int k = 0; k < o->nsizes; k++) {
        if (too_big(o, n ? &rows[n - 1] : NULL, o->sizes[k], big->mem0))
            break;
        memset(&rows[n], 0, sizeof(rows[n]));
        rows[n].size = o->sizes[k];
        run_size(o, big, ref, &b, &rows[n]);
        print_row(&rows[n++]);
    }
    print_notes(o, rows, n);
    free(b.text);
    free(b.u);
    free(b.isnew);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct target big, ref;
    struct conf c;

    memset(&o, 0, sizeof(o));
    opts_default(&o);
    parse_opts(argc, argv, &o);
    conf_init(&c);
    target_open(&big, &o, &c);
    if (o.ref)
        target_open(&ref, &o, &c);
    run_all(&o, &big, o.ref ? &ref : NULL);
    if (o.ref)
        target_close(&ref);
    target_close(&big);
    conf_release(&c);
    return 0;
}
