/*
 * cmd-crawl.c: `dcrawl crawl`, the one-shot crawl: (embedded Redis) ->
 * seed -> node until idle -> merge -> summary. The same steps as running
 * `dcrawl seed`, `dcrawl node --exit-when-idle` and `dcrawl merge` by hand
 * against one Redis. Its options and help are the table below (options.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "crawler.h"
#include "frontier.h"
#include "merge.h"

struct crawl_args {
    struct cli_conf cc;
    const char *seeds, *out, *redis;
    struct opt_list urls;
    int quiet;
};

static int parse_args(struct crawl_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "seeds", &a->seeds, "FILE",
                       "seed URLs, one per line ('-' = stdin; # comments)"),
        OPT_SETTING_ROW("depth", &a->cc, "crawl.depth", "N",
                        "link hops from the seeds (default crawl.depth = 3)"),
        OPT_STRING_ROW(0, "out", &a->out, "DIR",
                       "output directory (must not hold an earlier crawl\n"
                       "unless --redis continues that crawl)"),
        OPT_STRING_ROW(0, "redis", &a->redis, "URL",
                       "use this Redis: redis://[user@]host:port[/db],\n"
                       "unix:///path, redis-cluster://host:port[,...],\n"
                       "redis-sentinel://host:port[,...]/name;\n"
                       "its password: DCRAWL_REDIS_PASSWORD or\n"
                       "redis.password_file (not the command line)"),
        OPT_SETTING_ROW("id", &a->cc, "crawl.node_id", "ID",
                        "node id used in output file names (default hostname)"),
        OPT_FLAG_ROW('q', "quiet", &a->quiet, "no summary, no progress lines"),
        OPT_SETTING_ROW("metrics", &a->cc, "output.metrics_listen", "ADDR:PORT",
                        "serve Prometheus metrics at http://ADDR:PORT/metrics"),
        OPT_CONF_ROWS(&a->cc),
        OPT_ARGS_ROW(&a->urls, "URL"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "crawl",
        "usage: dcrawl crawl --seeds FILE --depth N --out DIR [options] [URL...]\n",
        "Crawls every page reachable from the seeds within N link hops, writes\n"
        "DIR/depth-<d>/ (WARC + JSON lines), merges into DIR/merged/ and prints a\n"
        "summary. Without --redis a private redis-server is started on a unix\n"
        "socket inside DIR and stopped at the end. Progress goes to stderr: one\n"
        "line redrawn every second on a terminal (depth, responses, rate over the\n"
        "last 10 s, queue of the depth and the time it has left), else a line\n"
        "every output.progress_interval seconds.\n"
        "\n"
        "Exit status 0; 1 when no page got any HTTP response (then one line per\n"
        "seed host on stderr says why, e.g. a certificate or DNS error) or the\n"
        "crawl failed; 2 on bad usage or settings; 3 when DIR cannot be written\n"
        "(disk full, quota, I/O error: one line names the file and the reason;\n"
        "nothing is merged).\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    if (rc == OPT_RUN && (!a->out || (!a->seeds && !a->urls.n)))
        rc = opt_usage_error(&cmd, "give --out DIR and --seeds FILE or URLs");
    return rc;
}

/* An earlier crawl's output in dir? (depth-* folders) */
static int has_output(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    if (!d)
        return 0;
    while (!found && (e = readdir(d)))
        found = !strncmp(e->d_name, "depth-", 6);
    closedir(d);
    return found;
}

static int mkdirs(const char *path)
{
    char buf[4096];
    size_t i, n = strlen(path);
    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == '\0') {
            char ch = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) && errno != EEXIST)
                return -1;
            buf[i] = ch;
        }
    return 0;
}

/* The merge's sort buffers (merge_opts.mem_bytes; `dcrawl merge` uses 64 MB
 * by default). Its passes hold up to two sorters' buffers at once, each
 * half of this: on the 40 x 500 bench site (18,510 pages, ~80 MB of
 * outlink keys) the merge peaks at 26 MB RSS with 16 MB, 45 MB with 64 MB,
 * in the same time (the outlink keys spill to sorted runs either way). */
#define CRAWL_MERGE_MEM ((size_t)16 << 20)

/* Merge the crawl's output (DIR/merged), after giving the memory the node
 * freed back to the system, so the merge does not stack on top of it. */
static int merge_output(const char *out, struct merge_stats *ms, char *err,
                        size_t errlen)
{
    struct merge_opts mo = {0};
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    mo.mem_bytes = CRAWL_MERGE_MEM;
    memset(ms, 0, sizeof(*ms));
    return merge_run_opts(out, &mo, ms, stderr, err, errlen);
}

/* t0: dc_mono_us() when the command started (for its wall clock); er:
 * the private Redis, if any, told to exit once the crawl is done. */
static int run(struct crawl_args *a, struct conf *c, const char *redis,
               struct embedded_redis *er, const char *id, int64_t t0)
{
    struct frontier *f = NULL;
    struct seed_stats ss;
    struct node_opts o = {0};
    struct node_stats st;
    struct merge_stats ms;
    char err[1024], buf[16];
    int64_t t_merge;
    int rc;

    if (frontier_open(&f, redis, c, id, err, sizeof(err))) {
        fprintf(stderr, "dcrawl crawl: %s\n", err);
        return 2;
    }
    snprintf(buf, sizeof(buf), "%d", c->crawl_depth);
    if (frontier_meta_set(f, "max_depth", buf) ||
        seeds_load(f, c, a->seeds, (char **)a->urls.v, (int)a->urls.n,
                   netclass_mode_parse(c->scope_private_addresses) ==
                       NETCLASS_SEEDS,
                   stderr, &ss)) {
        fprintf(stderr, "dcrawl crawl: loading seeds: %s\n", frontier_errstr(f));
        frontier_close(&f);
        return 1;
    }
    if (!a->quiet)
        printf("seeds: %zu accepted, %zu already seen, %zu rejected, %zu over "
               "scope.host_budget\n",
               ss.accepted, ss.seen, ss.rejected, ss.budget);
    seeds_print_ranges(a->quiet ? NULL : stdout, stderr, &ss);
    o.out_dir = a->out;
    o.exit_when_idle = 1;
    o.quiet = a->quiet;
    o.redis_url = redis;
    o.eta = 1;
    o.fresh_redis = er->pid > 0;
    node_install_signals();
    rc = node_run(f, c, id, &o, &st, err, sizeof(err));
    frontier_close(&f);
    embedded_redis_signal(er); /* the merge needs no Redis */
    if (rc) {
        fprintf(stderr, "dcrawl crawl: %s\n", err);
        if (rc == DC_EOUTPUT)
            return CLI_EXIT_OUTPUT;
        return rc == DC_EINVAL ? 2 : 1; /* a setting it could not start with */
    }
    t_merge = dc_mono_us();
    rc = merge_output(a->out, &ms, err, sizeof(err));
    st.merge_us = dc_mono_us() - t_merge;
    if (rc) {
        fprintf(stderr, "dcrawl crawl: merge: %s\n", err);
        return rc == DC_EOUTPUT ? CLI_EXIT_OUTPUT : 1;
    }
    st.command_us = dc_mono_us() - t0;
    st.setup_us = st.started_us - t0;
    if (!a->quiet)
        node_print_summary(stdout, &st, a->out);
    if (!a->quiet)
        fflush(stdout);
    /* no page got any response: say why per seed host, exit 1 */
    return failures_report(stderr, &st) ? 1 : 0;
}

/* Set key to a value known to be valid (a failure is a bug). */
static void set_valid(struct conf *c, const char *key, const char *value)
{
    char err[128];

    if (conf_set_kv(c, key, value, err, sizeof(err)))
        abort();
}

/* The private redis-server serves this one node, so the settings made
 * for a shared Redis change here:
 *  - no credentials: it has no password (its socket is mode 700, no TCP
 *    port); credentials in the settings are for an external Redis;
 *  - EMBEDDED_PARTITIONS partitions, unless the settings give a number:
 *    no other node will ever own one, and every partition a batch touches
 *    costs its own script call (pop, admission, completion), with the
 *    hosts of the real web spread over all of them. frontier.partitions
 *    keeps 1,024 for a shared Redis (a cluster's unit of ownership). Not
 *    fewer: each partition's seen-set value is 256 sorted arrays
 *    (seen/module), where an insert moves the larger members, so an
 *    insert costs more as a partition holds more URLs (at 10 M URLs,
 *    about 5 KB moved per insert with 32 partitions, 160 KB with 1). */
#define EMBEDDED_PARTITIONS "32"

static void embedded_settings(struct conf *c)
{
    char buf[64];
    const char *from = conf_origin(c, "frontier.partitions", buf, sizeof(buf));

    set_valid(c, "redis.user", "");
    set_valid(c, "redis.password", "");
    set_valid(c, "redis.password_file", "");
    if (from && !strcmp(from, "default"))
        set_valid(c, "frontier.partitions", EMBEDDED_PARTITIONS);
}

int cmd_crawl(int argc, char **argv)
{
    struct crawl_args a;
    struct conf c;
    struct embedded_redis er = {0};
    const char *redis;
    char err[512], id[128];
    int64_t t0 = dc_mono_us();
    int rc;

    memset(&a, 0, sizeof(a));
    rc = parse_args(&a, argc, argv);
    if (rc != OPT_RUN)
        return rc;
    rc = cli_conf_apply(&a.cc, &c) ? 2 : 0;
    free(a.cc.sets.v);
    if (rc) {
        free(a.urls.v);
        return rc;
    }
    if (http_addr_check("--metrics", c.output_metrics_listen, err, sizeof(err))) {
        fprintf(stderr, "dcrawl crawl: %s\n", err);
        rc = 2;
        goto out;
    }
    cli_node_id(&c, id, sizeof(id));
    redis = a.redis ? a.redis : c.redis_url;
    if (mkdirs(a.out)) {
        fprintf(stderr, "dcrawl crawl: cannot create %s: %s\n", a.out, strerror(errno));
        rc = 2;
        goto out;
    }
    if (!redis || !*redis) {
        if (has_output(a.out)) {
            fprintf(stderr, "dcrawl crawl: %s already holds a crawl's output "
                            "(depth-*/); use a new --out DIR\n", a.out);
            rc = 2;
            goto out;
        }
        if (embedded_redis_start(&er, a.out, c.redis_module, err,
                                 sizeof(err))) {
            fprintf(stderr, "dcrawl crawl: %s\n", err);
            rc = 2;
            goto out;
        }
        redis = er.url;
        embedded_settings(&c);
    }
    rc = run(&a, &c, redis, &er, id, t0);
    embedded_redis_stop(&er);
out:
    conf_release(&c);
    free(a.urls.v);
    return rc;
}
