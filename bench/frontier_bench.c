/*
 * frontier_bench.c: does the frontier slow down as it grows? Admits, pops
 * and completes through the frontier API (frontier.h, the calls the node
 * makes) against a private redis-server, at several queue sizes.
 *
 *   build-rel/bench/frontier_bench [--sizes 100000,1000000,10000000,30000000]
 *        [--hosts 1000000] [--window 50000] [--batch 512] [--fill-batch 8192]
 *        [--pop 512] [--delay-ms 1000] [--max-gb 12] [--module PATH]
 *
 * Server: started as the crawl's embedded one (bench/redis-priv.h), with
 * the dcrawl-seen module, so the seen-set layout is mod-u64 as a crawl's by
 * default; default configuration otherwise (1024 partitions,
 * host_connections 1, lease 60 s). The handle does not join a cluster:
 * pop does not check partition ownership (one GET per partition call
 * less than a node).
 *
 * URLs: id i becomes http://h<host>.example/<section>/segment-<n>/
 * page-<i>.html (60 to 80 bytes), host = a hash of i mod --hosts, so the
 * URLs spread evenly over the hosts; all at depth 0. Every id is new.
 *
 * Per size S (sizes ascending, one Redis, filled cumulatively): admit new
 * URLs in --fill-batch batches until S URLs are queued (fill, timed apart);
 * then, timed, admit --window new URLs in --batch batches (admits/s; the
 * queue grows to S + window), then pop (--pop at most per call) and
 * complete (outcome done, politeness delay --delay-ms) --window URLs, one
 * complete call per pop, as the node does (pops/s and completes/s count
 * the time inside each call; the queue is back at S). Memory: INFO
 * used_memory minus that of the empty database, per queued URL (URL text,
 * queues, ready sets and the seen-set of every URL admitted so far, popped
 * ones included); the seen-set's own MEMORY USAGE is printed apart, and the
 * rest per queued URL. Before each fill the memory it would take is
 * estimated from the last bytes/URL; beyond --max-gb the run stops there.
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
    uint64_t hosts;
    size_t window, batch, fill_batch, pop;
    int64_t delay_ms;
    double max_gb;
    const char *module;
};

struct row {
    uint64_t size, queued;
    double fill_rate, admit_rate, pop_rate, complete_rate;
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

/* Admit ids [*next, *next + n) in batches of `batch`; returns the seconds
 * spent inside frontier_admit. */
static double admit_ids(const struct opts *o, struct frontier *f,
                        struct urlbuf *b, uint64_t *next, uint64_t n,
                        size_t batch)
{
    double secs = 0;

    while (n > 0) {
        size_t k = n < batch ? (size_t)n : batch;
        double t0;
        for (size_t j = 0; j < k; j++)
            url_make(o, *next + j, b->text + j * URL_CAP, &b->u[j]);
        t0 = now_s();
        if (frontier_admit(f, b->u, k, dc_now_ms(), b->isnew))
            die("admit", f);
        secs += now_s() - t0;
        *next += k;
        n -= k;
    }
    return secs;
}

/* Pop and complete n URLs; seconds inside pop and complete apart. */
static void pop_complete(const struct opts *o, struct frontier *f, size_t n,
                         double *pop_s, double *complete_s)
{
    int *outcome = xcalloc(o->pop, sizeof(*outcome));
    int64_t *delay = xmalloc(o->pop * sizeof(*delay));
    size_t done = 0;
    int empty = 0;

    for (size_t i = 0; i < o->pop; i++)
        delay[i] = o->delay_ms; /* outcome 0: FRONTIER_DONE */
    *pop_s = *complete_s = 0;
    while (done < n && empty < 1000) {
        struct frontier_lease *l = NULL;
        size_t nl = 0, want = n - done < o->pop ? n - done : o->pop;
        int64_t next_ms;
        double t0 = now_s(), t1;
        if (frontier_pop(f, 0, dc_now_ms(), want, &l, &nl, &next_ms))
            die("pop", f);
        t1 = now_s();
        *pop_s += t1 - t0;
        if (nl && frontier_complete(f, l, outcome, delay, nl, dc_now_ms()))
            die("complete", f);
        *complete_s += now_s() - t1;
        frontier_leases_free(l, nl);
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

static uint64_t queued(struct frontier *f)
{
    struct frontier_stats st;

    if (frontier_stats(f, &st))
        die("stats", f);
    return (uint64_t)st.queued;
}

static void measure_memory(struct frontier *f, redisContext *r,
                           long long mem0, struct row *w)
{
    struct seen_usage su;
    long long used = bench_redis_info(r, "memory", "used_memory");

    if (seen_usage(f, 0, &su))
        die("seen usage", f);
    w->used_mb = (double)used / 1e6;
    w->bytes_url = (double)(used - mem0) / (double)w->queued;
    w->seen_url = (double)su.bytes / (double)w->queued;
    w->rest_url = w->bytes_url - w->seen_url;
}

/* Fill to w->size, then time the windows. */
static void run_size(const struct opts *o, struct frontier *f,
                     redisContext *r, struct urlbuf *b, uint64_t *next,
                     long long mem0, struct row *w)
{
    uint64_t q = queued(f), add = w->size > q ? w->size - q : 0;
    double secs, c0, pop_s, complete_s;

    secs = admit_ids(o, f, b, next, add, o->fill_batch);
    w->fill_rate = add ? (double)add / secs : 0;
    c0 = bench_redis_cpu(r);
    secs = admit_ids(o, f, b, next, o->window, o->batch);
    w->admit_rate = (double)o->window / secs;
    w->redis_us_admit = (bench_redis_cpu(r) - c0) * 1e6 / (double)o->window;
    c0 = bench_redis_cpu(r);
    pop_complete(o, f, o->window, &pop_s, &complete_s);
    w->redis_us_popc = (bench_redis_cpu(r) - c0) * 1e6 / (double)o->window;
    w->pop_rate = (double)o->window / pop_s;
    w->complete_rate = (double)o->window / complete_s;
    w->queued = queued(f);
    measure_memory(f, r, mem0, w);
}

static void print_row(const struct row *w)
{
    printf("%11" PRIu64 " %11" PRIu64 " %9.0f %9.0f %9.0f %9.0f %9.0f "
           "%7.1f %7.1f %7.1f %8.1f %8.1f %8.0f\n",
           w->size, w->queued, w->fill_rate, w->admit_rate, w->pop_rate,
           w->complete_rate,
           1.0 / (1.0 / w->pop_rate + 1.0 / w->complete_rate),
           w->redis_us_admit, w->redis_us_popc, w->bytes_url, w->seen_url,
           w->rest_url, w->used_mb);
    fflush(stdout);
}

static void print_head(const struct opts *o, struct frontier *f)
{
    char layout[256];

    seen_layout(f, layout, sizeof(layout));
    printf("frontier bench: %" PRIu64 " hosts, window %zu URLs (admit batch "
           "%zu, pop %zu a call, complete delay %lld ms), fill batch %zu, "
           "%d partitions, seen-set %s\n", o->hosts, o->window, o->batch,
           o->pop, (long long)o->delay_ms, o->fill_batch,
           frontier_partitions(f), layout);
    printf("%11s %11s %9s %9s %9s %9s %9s %7s %7s %7s %8s %8s %8s\n",
           "size", "queued", "fill/s", "admit/s", "pop/s", "compl/s",
           "pop+c/s", "rUs/adm", "rUs/p+c", "B/URL", "seen B", "rest B",
           "used MB");
}

static void print_ratios(const struct row *rows, int n)
{
    if (n < 2)
        return;
    printf("\nlargest (%" PRIu64 ") / smallest (%" PRIu64 "): admit/s "
           "x%.3f, pop/s x%.3f, complete/s x%.3f\n", rows[n - 1].size,
           rows[0].size, rows[n - 1].admit_rate / rows[0].admit_rate,
           rows[n - 1].pop_rate / rows[0].pop_rate,
           rows[n - 1].complete_rate / rows[0].complete_rate);
}

static void parse_sizes(struct opts *o, const char *s)
{
    o->nsizes = 0;
    while (*s && o->nsizes < MAX_SIZES) {
        char *end;
        o->sizes[o->nsizes++] = strtoull(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s)
            break;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: frontier_bench [--sizes N,N,...] [--hosts N] "
            "[--window N] [--batch N] [--fill-batch N] [--pop N] "
            "[--delay-ms MS] [--max-gb G] [--module PATH]\n");
    exit(2);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    parse_sizes(o, "100000,1000000,10000000,30000000");
    o->hosts = 1000000;
    o->window = 50000;
    o->batch = 512;
    o->fill_batch = 8192;
    o->pop = 512;
    o->delay_ms = 1000;
    o->max_gb = 12;
    o->module = DC_SEEN_MODULE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--sizes"))
            parse_sizes(o, v);
        else if (!strcmp(a, "--hosts"))
            o->hosts = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--window"))
            o->window = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batch"))
            o->batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--fill-batch"))
            o->fill_batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--pop"))
            o->pop = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--delay-ms"))
            o->delay_ms = strtoll(v, NULL, 10);
        else if (!strcmp(a, "--max-gb"))
            o->max_gb = atof(v);
        else if (!strcmp(a, "--module"))
            o->module = v;
        else
            usage();
    }
    if (!o->hosts || !o->window || !o->batch || !o->fill_batch || !o->pop ||
        !o->nsizes)
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

static void run_all(const struct opts *o, struct frontier *f,
                    redisContext *r)
{
    struct row rows[MAX_SIZES];
    struct urlbuf b;
    uint64_t next = 0;
    long long mem0 = bench_redis_info(r, "memory", "used_memory");
    int n = 0;

    b.cap = o->batch > o->fill_batch ? o->batch : o->fill_batch;
    b.text = xmalloc(b.cap * URL_CAP);
    b.u = xcalloc(b.cap, sizeof(*b.u));
    b.isnew = xmalloc(b.cap);
    print_head(o, f);
    for (int k = 0; k < o->nsizes; k++) {
        if (too_big(o, n ? &rows[n - 1] : NULL, o->sizes[k], mem0))
            break;
        memset(&rows[n], 0, sizeof(rows[n]));
        rows[n].size = o->sizes[k];
        run_size(o, f, r, &b, &next, mem0, &rows[n]);
        print_row(&rows[n++]);
    }
    printf("\nfill/s: admits/s while filling (batch %zu); admit/s, pop/s, "
           "compl/s: URLs per second inside the calls over the window; "
           "pop+c/s: URLs per second popped and completed; rUs: redis-server "
           "CPU us per URL; B/URL: used_memory growth per queued URL (seen "
           "B: the seen-set's MEMORY USAGE; rest B: the rest, URL text "
           "included)\n", o->fill_batch);
    print_ratios(rows, n);
    free(b.text);
    free(b.u);
    free(b.isnew);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench_redis sv;
    struct conf c;
    struct frontier *f = NULL;
    redisContext *r;
    char url[400], err[256];

    memset(&o, 0, sizeof(o));
    parse_opts(argc, argv, &o);
    bench_redis_start(&sv, "dcrawl-frontier-bench", o.module);
    r = bench_redis_connect(sv.sock);
    snprintf(url, sizeof(url), "unix:%s", sv.sock);
    conf_init(&c);
    if (frontier_open(&f, url, &c, "bench", err, sizeof(err))) {
        fprintf(stderr, "frontier_bench: %s\n", err);
        bench_redis_stop(&sv);
        return 1;
    }
    run_all(&o, f, r);
    frontier_close(&f);
    conf_release(&c);
    redisFree(r);
    bench_redis_stop(&sv);
    return 0;
}
