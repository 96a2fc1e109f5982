/*
 * cmd-node.c: `dcrawl node`, the node daemon (help text in main.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crawler.h"
#include "frontier.h"

int cmd_node(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct node_opts o = {0};
    struct node_stats st;
    const char *redis = NULL;
    char err[512], id[128];
    int i, k, rc;

    for (i = 1; i < argc; i++) {
        if ((k = cli_conf_arg(&cc, argc, argv, &i))) {
            if (k < 0)
                return 2;
        } else if (!strcmp(argv[i], "--redis") && i + 1 < argc) {
            redis = argv[++i];
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            o.out_dir = argv[++i];
        } else if (!strcmp(argv[i], "--id") && i + 1 < argc) {
            cli_conf_kv(&cc, "crawl.node_id", argv[++i]);
        } else if (!strcmp(argv[i], "--exit-when-idle")) {
            o.exit_when_idle = 1;
        } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            o.quiet = 1;
        } else {
            fprintf(stderr, "dcrawl node: unknown option or missing value: %s\n", argv[i]);
            return 2;
        }
    }
    if (!o.out_dir) {
        fprintf(stderr, "dcrawl node: give --out DIR\n");
        return 2;
    }
    if (cli_conf_apply(&cc, &c))
        return 2;
    if (cli_frontier_open("node", redis, &c, id, sizeof(id), &f)) {
        conf_release(&c);
        return 2;
    }
    mkdir(o.out_dir, 0755);
    node_install_signals();
    rc = node_run(f, &c, id, &o, &st, err, sizeof(err));
    if (rc)
        fprintf(stderr, "dcrawl node: %s\n", err);
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
    return rc ? 1 : 0;
}
