/*
 * cmd-crawl.c: `dcrawl crawl`, the one-shot crawl: (embedded Redis) ->
 * seed -> node until idle -> merge -> summary. The same steps as running
 * `dcrawl seed`, `dcrawl node --exit-when-idle` and `dcrawl merge` by hand
 * against one Redis (help text in main.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crawler.h"
#include "frontier.h"
#include "merge.h"

struct crawl_args {
    struct cli_conf cc;
    const char *seeds, *out, *redis;
    char **urls;
    int nurls, quiet;
};

static int parse_args(struct crawl_args *a, int argc, char **argv)
{
    int i, k;
    a->urls = xcalloc((size_t)argc, sizeof(*a->urls));
    for (i = 1; i < argc; i++) {
        const char *s = argv[i];
        if ((k = cli_conf_arg(&a->cc, argc, argv, &i))) {
            if (k < 0)
                return 2;
        } else if (!strcmp(s, "--seeds") && i + 1 < argc) {
            a->seeds = argv[++i];
        } else if (!strcmp(s, "--depth") && i + 1 < argc) {
            cli_conf_kv(&a->cc, "crawl.depth", argv[++i]);
        } else if (!strcmp(s, "--out") && i + 1 < argc) {
            a->out = argv[++i];
        } else if (!strcmp(s, "--redis") && i + 1 < argc) {
            a->redis = argv[++i];
        } else if (!strcmp(s, "--id") && i + 1 < argc) {
            cli_conf_kv(&a->cc, "crawl.node_id", argv[++i]);
        } else if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
            a->quiet = 1;
        } else if (s[0] == '-') {
            fprintf(stderr, "dcrawl crawl: unknown option or missing value: %s\n", s);
            return 2;
        } else {
            a->urls[a->nurls++] = argv[i];
        }
    }
    if (!a->out || (!a->seeds && !a->nurls)) {
        fprintf(stderr, "dcrawl crawl: give --out DIR and --seeds FILE or URLs "
                        "(see dcrawl crawl --help)\n");
        return 2;
    }
    return 0;
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

/* t0: dc_mono_us() when the command started (for its wall clock). */
static int run(struct crawl_args *a, struct conf *c, const char *redis,
               const char *id, int64_t t0)
{
    struct frontier *f = NULL;
    struct seed_stats ss;
    struct node_opts o = {0};
    struct node_stats st;
    struct merge_stats ms;
    char err[512], buf[16];
    int rc;

    if (frontier_open(&f, redis, c, id, err, sizeof(err))) {
        fprintf(stderr, "dcrawl crawl: %s\n", err);
        return 2;
    }
    snprintf(buf, sizeof(buf), "%d", c->crawl_depth);
    if (frontier_meta_set(f, "max_depth", buf) ||
        seeds_load(f, c, a->seeds, a->urls, a->nurls, stderr, &ss)) {
        fprintf(stderr, "dcrawl crawl: loading seeds: %s\n", frontier_errstr(f));
        frontier_close(&f);
        return 1;
    }
    if (!a->quiet)
        printf("seeds: %zu accepted, %zu already seen, %zu rejected, %zu over "
               "scope.host_budget\n",
               ss.accepted, ss.seen, ss.rejected, ss.budget);
    o.out_dir = a->out;
    o.exit_when_idle = 1;
    o.quiet = a->quiet;
    node_install_signals();
    rc = node_run(f, c, id, &o, &st, err, sizeof(err));
    frontier_close(&f);
    if (rc) {
        fprintf(stderr, "dcrawl crawl: %s\n", err);
        return 1;
    }
    memset(&ms, 0, sizeof(ms));
    if (merge_run(a->out, NULL, &ms, stderr, err, sizeof(err))) {
        fprintf(stderr, "dcrawl crawl: merge: %s\n", err);
        return 1;
    }
    st.command_us = dc_mono_us() - t0;
    if (!a->quiet)
        node_print_summary(stdout, &st, a->out);
    if (!a->quiet)
        fflush(stdout);
    /* no page got any response: say why per seed host, exit 1 */
    return failures_report(stderr, &st) ? 1 : 0;
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
    if (!rc)
        rc = cli_conf_apply(&a.cc, &c) ? 2 : 0;
    if (rc) {
        free(a.urls);
        return rc;
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
    }
    rc = run(&a, &c, redis, id, t0);
    embedded_redis_stop(&er);
out:
    conf_release(&c);
    free(a.urls);
    return rc;
}
