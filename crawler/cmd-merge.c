/*
 * cmd-merge.c: `dcrawl merge DIR [--out OUTDIR] [--keep POLICY]
 * [--add FILE]... [--mem MB] [--tmp DIR]`. Its options and help are the
 * table below (options.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "crawler.h"
#include "merge.h"

#define MERGE_MEM_MAX_MB (1024 * 1024)

struct merge_args {
    struct merge_opts o;
    const char *dir, *keep;
    struct opt_list adds;
    int mem_mb;
};

static int parse_args(struct merge_args *a, int argc, char **argv)
{
    const struct opt opts[] = {
        OPT_STRING_ROW(0, "out", &a->o.outdir, "OUTDIR",
                       "where to write (default DIR/merged)"),
        OPT_STRING_ROW(0, "keep", &a->keep, "POLICY",
                       "which content duplicate keeps its body:\n"
                       "highest-score (default: most in-links during the\n"
                       "crawl, then shortest URL) or shortest-url"),
        OPT_LIST_ROW(0, "add", &a->adds, "FILE",
                     "also merge a foreign WARC file (wget, Heritrix,\n"
                     "warcio; its pages go to depth 0); broken files are\n"
                     "reported and skipped; repeatable"),
        OPT_INT_ROW(0, "mem", &a->mem_mb, "MB", 1, MERGE_MEM_MAX_MB,
                    "sort buffer budget (default 64)"),
        OPT_STRING_ROW(0, "tmp", &a->o.tmpdir, "DIR",
                       "where sort runs go (default OUTDIR)"),
        OPT_ARG_ROW(&a->dir, "DIR"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "merge",
        "usage: dcrawl merge DIR [--out OUTDIR] [--keep highest-score|shortest-url]\n"
        "                       [--add FILE.warc.gz]... [--mem MB] [--tmp DIR]\n",
        "Reads DIR/depth-*/ of every node and writes OUTDIR (default DIR/merged):\n"
        "depth-<d>.warc.gz per depth, pages.jsonl, index.cdxj (CDXJ, sorted) and\n"
        "summary.json. One copy per URL (the most recent); one full copy per\n"
        "payload digest, the other URLs with that payload become revisit records.\n"
        "Memory stays bounded (external sort); outputs appear only when complete.\n"
        "Torn records at a file's end are skipped with a warning.\n"
        "\n"
        "Exit status 0; 1 when the merge failed (one line says why); 2 on bad\n"
        "usage; 3 when OUTDIR (or --tmp DIR) cannot be written (disk full, quota,\n"
        "I/O error): the line names the file and the reason, nothing is\n"
        "published and an earlier merge's output is left as it was.\n",
        opts};
    int rc = opt_parse(&cmd, argc, argv);

    if (rc == OPT_RUN && a->keep && !strcmp(a->keep, "shortest-url"))
        a->o.keep = MERGE_KEEP_SHORTEST;
    else if (rc == OPT_RUN && a->keep && strcmp(a->keep, "highest-score"))
        rc = opt_usage_error(&cmd, "unknown --keep policy: %s", a->keep);
    if (rc == OPT_RUN && !a->dir)
        rc = opt_usage_error(&cmd, "give the crawl's output DIR");
    return rc;
}

static void report(const struct merge_stats *st, const char *dir,
                   const char *out)
{
    printf("merge: %llu pages from %llu files (%llu URL duplicates dropped, "
           "%llu content duplicates as revisits, %llu torn records skipped",
           (unsigned long long)st->pages, (unsigned long long)st->files,
           (unsigned long long)st->url_duplicates,
           (unsigned long long)st->content_duplicates,
           (unsigned long long)st->torn);
    if (st->added_files || st->added_bad)
        printf(", %llu foreign files added, %llu skipped",
               (unsigned long long)st->added_files,
               (unsigned long long)st->added_bad);
    printf(") -> %s%s\n", out ? out : dir, out ? "" : "/merged");
}

int cmd_merge(int argc, char **argv)
{
    struct merge_args a;
    struct merge_stats st;
    char err[512];
    int rc;

    memset(&a, 0, sizeof(a));
    rc = parse_args(&a, argc, argv);
    if (rc != OPT_RUN)
        return rc;
    a.o.adds = a.adds.v;
    a.o.nadds = a.adds.n;
    a.o.mem_bytes = (size_t)a.mem_mb << 20;
    rc = merge_run_opts(a.dir, &a.o, &st, stderr, err, sizeof(err));
    free(a.adds.v);
    if (rc) {
        fprintf(stderr, "dcrawl merge: %s\n", err[0] ? err : "failed");
        return rc == DC_EOUTPUT ? CLI_EXIT_OUTPUT : 1;
    }
    report(&st, a.dir, a.o.outdir);
    return 0;
}
