/*
 * cmd-dedup.c: `dcrawl dedup`: check URL lists produced elsewhere against a
 * crawl's seen-set and print the new ones. Its options and help are the
 * table in parse_args (options.h).
 *
 * Each input runs through dedup-pipe.c: -j threads read and canonicalize
 * chunks of lines ahead, this thread runs the cache, and an I/O thread
 * asks Redis (seen_batch: the same keys as the crawl's admit, so a URL
 * printed here is never crawled and a crawled URL is never printed) and
 * prints the new URLs in input order, the three overlapped. Bad lines go
 * to stderr as "NAME:LINE: reason: text"; totals at the end. The cache and
 * the frontier live across inputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup-pipe.h"
#include "dedup.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#define DEDUP_MAX_JOBS 64

/* Read and answer one input through the pipeline (dedup-pipe.c). */
static int dedup_input(struct frontier *f, struct dedup_cache *cache,
                       const struct conf *c, const char *path, int jobs,
                       int check_only, struct dd_totals *t)
{
    struct dd_input di;
    int rc;

    di.in = strcmp(path, "-") ? fopen(path, "r") : stdin;
    di.name = strcmp(path, "-") ? path : "stdin";
    di.jobs = jobs;
    di.check_only = check_only;
    di.url_flags = c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    di.url_max_length = (size_t)c->url_max_length;
    if (!di.in) {
        fprintf(stderr, "dcrawl dedup: %s: %s\n", path, strerror(errno));
        return DC_EIO;
    }
    rc = dd_pipe_run(f, cache, &di, stdout, t);
    if (rc == DC_EIO && ferror(di.in))
        fprintf(stderr, "dcrawl dedup: %s: read error\n", path);
    if (di.in != stdin)
        fclose(di.in);
    return rc;
}

static void print_totals(const struct dd_totals *t, struct dedup_cache *cache,
                         struct frontier *f, int check_only)
{
    struct dedup_cache_stats cs;
    uint64_t asked;

    dedup_cache_stats(cache, &cs);
    asked = cs.hits + cs.misses;
    fprintf(stderr,
            "dedup: %llu URLs read: %llu new%s, %llu already seen, %llu bad; "
            "cache hit rate %.1f%%, %llu Redis round trips\n",
            (unsigned long long)t->read, (unsigned long long)t->fresh,
            check_only ? " (not marked: --check-only)" : "",
            (unsigned long long)t->seen, (unsigned long long)t->bad,
            asked ? 100.0 * (double)cs.hits / (double)asked : 0.0,
            (unsigned long long)frontier_roundtrips(f));
}

struct dedup_args {
    struct cli_conf cc;
    const char *redis;
    struct opt_list files;
    int jobs, check_only, quiet;
};

static int parse_args(struct dedup_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "redis", &a->redis, "URL",
                       CLI_REDIS_HELP),
        OPT_FLAG_ROW(0, "check-only", &a->check_only,
                     "print the new URLs without marking them seen"),
        OPT_INT_ROW('j', NULL, &a->jobs, "N", 1, DEDUP_MAX_JOBS,
                    "read and canonicalize ahead on N threads (default 1)"),
        OPT_FLAG_ROW('q', "quiet", &a->quiet, "no totals"),
        OPT_CONF_ROWS(&a->cc),
        OPT_ARGS_ROW(&a->files, "FILE"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "dedup",
        "usage: dcrawl dedup --redis URL [--check-only] [-j N] [options] [FILE...|-]\n",
        "Reads URLs, one per line (blank lines and # comments skipped; no FILE =\n"
        "stdin), canonicalizes and fingerprints them, checks them against the\n"
        "crawl's seen-set and prints the new ones (canonical form, input order),\n"
        "marking them seen. A URL printed here is never crawled later, and a URL\n"
        "already crawled or queued is never printed. Bad lines go to stderr with\n"
        "their line numbers; totals go to stderr at the end.\n",
        opts};
    int rc;

    a->jobs = 1;
    rc = opt_parse(&cmd, argc, argv);
    return rc;
}

int cmd_dedup(int argc, char **argv)
{
    struct dedup_args a = {0};
    struct conf c;
    struct frontier *f = NULL;
    struct dedup_cache *cache;
    struct dd_totals t = {0};
    static const char *const stdin_only[] = {"-"};
    const char *const *files;
    char id[128], layout[512];
    size_t i, nfiles;
    int rc = parse_args(&a, argc, argv);

    if (rc != OPT_RUN)
        return rc;
    files = a.files.n ? a.files.v : stdin_only;
    nfiles = a.files.n ? a.files.n : 1;
    rc = cli_open("dedup", &a.cc, a.redis, &c, id, sizeof(id), &f);
    free(a.cc.sets.v);
    if (rc) {
        free(a.files.v);
        return rc;
    }
    if (seen_layout(f, layout, sizeof(layout)))
        fprintf(stderr, "dcrawl dedup: %s\n", layout);
    cache = dedup_cache_new((size_t)c.dedup_cache_entries);
    setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    for (i = 0; i < nfiles && rc != DC_EREDIS; i++) {
        int r = dedup_input(f, cache, &c, files[i], a.jobs, a.check_only, &t);
        if (r == DC_EREDIS)
            fprintf(stderr, "dcrawl dedup: %s\n", frontier_errstr(f));
        if (r)
            rc = r;
    }
    if (fflush(stdout) != 0 && !rc)
        rc = DC_EIO;
    if (!a.quiet)
        print_totals(&t, cache, f, a.check_only);
    dedup_cache_free(&cache);
    frontier_close(&f);
    conf_release(&c);
    free(a.files.v);
    return rc ? 1 : 0;
}
