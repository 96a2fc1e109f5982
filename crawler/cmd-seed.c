/*
 * cmd-seed.c: `dcrawl seed`: upload seeds to a crawl's Redis (see the help
 * text in main.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"

int cmd_seed(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct seed_stats st, tot = {0};
    const char *redis = NULL, *depth = NULL, *files[256];
    char id[128];
    int i, nfiles = 0, rc = 0, k;

    for (i = 1; i < argc; i++) {
        if ((k = cli_conf_arg(&cc, argc, argv, &i))) {
            if (k < 0)
                return 2;
        } else if (!strcmp(argv[i], "--redis") && i + 1 < argc) {
            redis = argv[++i];
        } else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
            depth = argv[++i];
            cli_conf_kv(&cc, "crawl.depth", depth);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "dcrawl seed: unknown option or missing value: %s\n", argv[i]);
            return 2;
        } else if (nfiles < 256) {
            files[nfiles++] = argv[i];
        }
    }
    if (!nfiles) {
        fprintf(stderr, "dcrawl seed: give a seed file or - (see dcrawl seed --help)\n");
        return 2;
    }
    if (cli_conf_apply(&cc, &c))
        return 2;
    if (cli_frontier_open("seed", redis, &c, id, sizeof(id), &f)) {
        conf_release(&c);
        return 2;
    }
    if (depth) {
        char buf[16];
        snprintf(buf, sizeof(buf), "%d", c.crawl_depth);
        if (frontier_meta_set(f, "max_depth", buf))
            rc = 1;
    }
    for (i = 0; i < nfiles && !rc; i++) {
        int r = seeds_load(f, &c, files[i], NULL, 0, stderr, &st);
        tot.lines += st.lines;
        tot.accepted += st.accepted;
        tot.seen += st.seen;
        tot.rejected += st.rejected;
        tot.budget += st.budget;
        if (r == DC_EREDIS) {
            fprintf(stderr, "dcrawl seed: redis: %s\n", frontier_errstr(f));
            rc = 1;
        } else if (r) {
            rc = 1;
        }
    }
    printf("seeds: %zu accepted, %zu already seen, %zu rejected, %zu over "
           "scope.host_budget (%zu URLs read)\n",
           tot.accepted, tot.seen, tot.rejected, tot.budget, tot.lines);
    frontier_close(&f);
    conf_release(&c);
    return rc;
}
