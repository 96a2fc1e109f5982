/*
 * cmd-node.c: `dcrawl node`, the node daemon. Its options and help are the
 * table below (options.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crawler.h"
#include "frontier.h"

static int parse_args(struct node_opts *o, struct cli_conf *cc,
                      const char **redis, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "redis", redis, "URL",
                       CLI_REDIS_HELP),
        OPT_STRING_ROW(0, "out", &o->out_dir, "DIR", "output directory"),
        OPT_SETTING_ROW("id", cc, "crawl.node_id", "ID",
                        "node id (default crawl.node_id, else the hostname);\n"
                        "a restarted node with the same id takes back at once\n"
                        "the URLs it held when it died"),
        OPT_FLAG_ROW(0, "exit-when-idle", &o->exit_when_idle,
                     "exit when the crawl has nothing left to do"),
        OPT_FLAG_ROW('q', "quiet", &o->quiet, "no summary, no progress lines"),
        OPT_SETTING_ROW("metrics", cc, "output.metrics_listen", "ADDR:PORT",
                        "serve Prometheus metrics at http://ADDR:PORT/metrics"),
        OPT_CONF_ROWS(cc),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "node",
        "usage: dcrawl node --redis URL --out DIR [--exit-when-idle] [options]\n",
        "The node daemon: leases URLs from the frontier, fetches, parses, admits\n"
        "new links and writes DIR/depth-<d>/<id>-<seq>.{warc.gz,jsonl}. Runs\n"
        "until SIGINT/SIGTERM (in-flight pages are finished and written, then it\n"
        "exits 0) or, with --exit-when-idle, until nothing is queued or in flight;\n"
        "then it exits 1 if it handled URLs and none got an HTTP response (one\n"
        "line per seed host it gave up on says why). Progress goes to stderr: one\n"
        "line redrawn every second on a terminal, else a line every\n"
        "output.progress_interval seconds. Exit 2 on bad usage or settings (a\n"
        "--metrics address that cannot be bound too). Exit 3 when the output\n"
        "cannot be written (disk full, quota, I/O error): one line names the\n"
        "file and the reason; the files end with the last complete page, the\n"
        "URLs in flight and the partitions go back at once; free space and\n"
        "start the node again (same --out DIR, same --id) to go on.\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    if (rc == OPT_RUN && !o->out_dir)
        rc = opt_usage_error(&cmd, "give --out DIR");
    return rc;
}

int cmd_node(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct node_opts o = {0};
    struct node_stats st;
    const char *redis = NULL;
    char err[1024], id[128];
    int rc = parse_args(&o, &cc, &redis, argc, argv);

    if (rc != OPT_RUN)
        return rc;
    rc = cli_open("node", &cc, redis, &c, id, sizeof(id), &f);
    free(cc.sets.v);
    if (rc)
        return rc;
    if (http_addr_check("--metrics", c.output_metrics_listen, err, sizeof(err))) {
        fprintf(stderr, "dcrawl node: %s\n", err);
        frontier_close(&f);
        conf_release(&c);
        return 2;
    }
    mkdir(o.out_dir, 0755);
    o.redis_url = redis ? redis : c.redis_url;
    node_install_signals();
    rc = node_run(f, &c, id, &o, &st, err, sizeof(err));
    if (rc)
        fprintf(stderr, "dcrawl node: %s\n", err);
    if (rc == DC_EINVAL) { /* a setting the node could not start with */
        frontier_close(&f);
        conf_release(&c);
        return 2;
    }
    if (!o.quiet)
        node_print_summary(stdout, &st, o.out_dir);
    fflush(stdout);
    /* --exit-when-idle: a node that handled URLs and got no response for
     * any of them says why per seed host and exits 1 (one that had no
     * work, e.g. other nodes took it all, exits 0) */
    if (!rc && o.exit_when_idle && failures_report(stderr, &st))
        rc = 1;
    frontier_close(&f);
    conf_release(&c);
    return rc == DC_EOUTPUT ? CLI_EXIT_OUTPUT : rc ? 1 : 0;
}
