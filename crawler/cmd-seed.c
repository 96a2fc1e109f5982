/*
 * cmd-seed.c: `dcrawl seed`: upload seeds to a crawl's Redis. Its options
 * and help are the table below (options.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"

struct seed_args {
    struct cli_conf cc;
    const char *redis, *depth;
    struct opt_list files;
};

static int parse_args(struct seed_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "redis", &a->redis, "URL",
                       CLI_REDIS_HELP),
        OPT_STRING_ROW(0, "depth", &a->depth, "N",
                       "set the crawl's depth limit (link hops from seeds)"),
        OPT_CONF_ROWS(&a->cc),
        OPT_ARGS_ROW(&a->files, "FILE"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "seed",
        "usage: dcrawl seed --redis URL [--depth N] [options] FILE|- [FILE...]\n",
        "Canonicalizes and deduplicates the URLs (one per line; blank lines and\n"
        "# comments skipped) and queues the new ones at depth 0. Prints accepted /\n"
        "already seen / rejected counts; each rejected line is reported on stderr\n"
        "with its line number, and the other lines still load. The non-public\n"
        "address ranges the seeds' hosts resolve to (loopback, 10.0.0.0/8, ...)\n"
        "are recorded for the nodes' scope.private_addresses=seeds and printed\n"
        "(not with scope.private_addresses deny or allow: give this command the\n"
        "nodes' setting).\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    if (rc == OPT_RUN && !a->files.n)
        rc = opt_usage_error(&cmd, "give a seed file or -");
    if (rc != OPT_RUN)
        return rc;
    if (a->depth)
        cli_conf_kv(&a->cc, "crawl.depth", a->depth);
    return OPT_RUN;
}

/* Load every file, adding up the counts; 0 or 1. */
static int load_all(struct frontier *f, const struct conf *c,
                    const struct opt_list *files, struct seed_stats *tot)
{
    struct seed_stats st;
    size_t i;
    int rc = 0;

    for (i = 0; i < files->n && !rc; i++) {
        int r = seeds_load(f, c, files->v[i], NULL, 0,
                           netclass_mode_parse(c->scope_private_addresses) ==
                               NETCLASS_SEEDS,
                           stderr, &st);
        tot->lines += st.lines;
        tot->accepted += st.accepted;
        tot->seen += st.seen;
        tot->rejected += st.rejected;
        tot->budget += st.budget;
        tot->ranges |= st.ranges;
        tot->unresolved += st.unresolved;
        if (r == DC_EREDIS)
            fprintf(stderr, "dcrawl seed: redis: %s\n", frontier_errstr(f));
        if (r)
            rc = 1;
    }
    return rc;
}

/*
 * Seeds that the master acknowledged but no replica received would be
 * lost with a failover (the crawl would never see them). So the upload
 * ends with WAIT for the server's replicas (frontier_replicated), and is
 * sent again, whole, when the server changed during it (a failover
 * happened: what went to the old master may be missing; admission is
 * insert-if-absent, so the second upload only adds what is missing).
 */
#define SEED_REPLICA_WAIT_MS 5000
#define SEED_UPLOADS 3

static int load_replicated(struct frontier *f, const struct conf *c,
                           const struct opt_list *files,
                           struct seed_stats *tot, int *replicas,
                           int *replicated)
{
    int i, rc = 0, nrep, acked;

    for (i = 0; i < SEED_UPLOADS; i++) {
        uint64_t epoch = frontier_epoch(f);
        memset(tot, 0, sizeof(*tot));
        rc = load_all(f, c, files, tot);
        if (!rc && (rc = frontier_replicated(f, SEED_REPLICA_WAIT_MS, &nrep,
                                             &acked)))
            fprintf(stderr, "dcrawl seed: redis: %s\n", frontier_errstr(f));
        if (rc)
            return rc;
        if (frontier_epoch(f) == epoch)
            break;
        fprintf(stderr, "dcrawl seed: the Redis server changed during the "
                        "upload (a failover?): uploading again\n");
    }
    if (i == SEED_UPLOADS) {
        fprintf(stderr, "dcrawl seed: the Redis server changed during each "
                        "of %d uploads: the seeds may be incomplete\n", i);
        return 1;
    }
    *replicas = nrep;
    *replicated = acked;
    return 0;
}

static void print_replicas(int nrep, int acked)
{
    if (nrep > 0 && acked < nrep)
        fprintf(stderr, "dcrawl seed: warning: %d of %d replicas acknowledged "
                        "the seeds within %d ms; a failover now could lose "
                        "them\n", acked, nrep, SEED_REPLICA_WAIT_MS);
    else if (nrep > 0)
        printf("seeds: on all %d replicas\n", nrep);
}

int cmd_seed(int argc, char **argv)
{
    struct seed_args a = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct seed_stats tot = {0};
    char id[128];
    int nrep = -1, acked = 0;
    int rc = parse_args(&a, argc, argv);

    if (rc != OPT_RUN)
        return rc;
    rc = cli_open("seed", &a.cc, a.redis, &c, id, sizeof(id), &f);
    if (rc)
        goto out;
    if (a.depth) {
        char buf[16];
        snprintf(buf, sizeof(buf), "%d", c.crawl_depth);
        if (frontier_meta_set(f, "max_depth", buf))
            rc = 1;
    }
    if (!rc)
        rc = load_replicated(f, &c, &a.files, &tot, &nrep, &acked);
    printf("seeds: %zu accepted, %zu already seen, %zu rejected, %zu over "
           "scope.host_budget (%zu URLs read)\n",
           tot.accepted, tot.seen, tot.rejected, tot.budget, tot.lines);
    seeds_print_ranges(stdout, stderr, &tot);
    if (!rc)
        print_replicas(nrep, acked);
    frontier_close(&f);
    conf_release(&c);
out:
    free(a.files.v);
    free(a.cc.sets.v);
    return rc;
}
