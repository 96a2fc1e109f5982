/*
 * cmd-merge.c: `dcrawl merge DIR [--out OUTDIR]` (help text in main.c).
 */
#include <stdio.h>
#include <string.h>

#include "crawler.h"
#include "merge.h"

int cmd_merge(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    struct merge_stats st;
    char err[512];
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "dcrawl merge: unexpected argument: %s\n", argv[i]);
            return 2;
        } else
            dir = argv[i];
    }
    if (!dir) {
        fprintf(stderr, "dcrawl merge: give the crawl's output DIR\n");
        return 2;
    }
    memset(&st, 0, sizeof(st));
    if (merge_run(dir, out, &st, stderr, err, sizeof(err))) {
        fprintf(stderr, "dcrawl merge: %s\n", err);
        return 1;
    }
    printf("merge: %llu pages from %llu files (%llu URL duplicates dropped, "
           "%llu torn records skipped) -> %s%s\n",
           (unsigned long long)st.pages, (unsigned long long)st.files,
           (unsigned long long)st.url_duplicates, (unsigned long long)st.torn,
           out ? out : dir, out ? "" : "/merged");
    return 0;
}
