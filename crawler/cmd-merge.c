/*
 * cmd-merge.c: `dcrawl merge DIR [--out OUTDIR] [--keep POLICY]
 * [--add FILE]... [--mem MB] [--tmp DIR]` (help text in main.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "crawler.h"
#include "merge.h"

static int usage_err(const char *what, const char *arg)
{
    fprintf(stderr, "dcrawl merge: %s: %s\n", what, arg);
    return 2;
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
    struct merge_opts o;
    struct merge_stats st;
    const char *dir = NULL;
    const char **adds = xcalloc((size_t)argc + 1, sizeof(*adds));
    char err[512];
    int i, rc;

    memset(&o, 0, sizeof(o));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && v) {
            o.outdir = v;
        } else if (!strcmp(a, "--keep") && v) {
            if (!strcmp(v, "highest-score"))
                o.keep = MERGE_KEEP_SCORE;
            else if (!strcmp(v, "shortest-url"))
                o.keep = MERGE_KEEP_SHORTEST;
            else {
                free(adds);
                return usage_err("unknown --keep policy", v);
            }
        } else if (!strcmp(a, "--add") && v) {
            adds[o.nadds++] = v;
        } else if (!strcmp(a, "--mem") && v && atoi(v) > 0) {
            o.mem_bytes = (size_t)atoi(v) << 20;
        } else if (!strcmp(a, "--tmp") && v) {
            o.tmpdir = v;
        } else if (a[0] == '-' || dir) {
            free(adds);
            return usage_err("unexpected argument", a);
        } else {
            dir = a;
            continue;
        }
        i++;
    }
    if (!dir) {
        free(adds);
        fprintf(stderr, "dcrawl merge: give the crawl's output DIR\n");
        return 2;
    }
    o.adds = adds;
    rc = merge_run_opts(dir, &o, &st, stderr, err, sizeof(err));
    free(adds);
    if (rc) {
        fprintf(stderr, "dcrawl merge: %s\n", err[0] ? err : "failed");
        return 1;
    }
    report(&st, dir, o.outdir);
    return 0;
}
