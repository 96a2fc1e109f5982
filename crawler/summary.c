/*
 * summary.c: the human summary printed at the end of `dcrawl crawl` and
 * `dcrawl node`.
 */
#include <stdio.h>

#include "crawler.h"

void node_print_summary(FILE *out, const struct node_stats *st,
                        const char *out_dir)
{
    double secs = (double)(st->finished_us - st->started_us) / 1e6;
    uint64_t dropped = st->links_cached + (st->links_admitted - st->links_new);
    int d;
    if (secs <= 0)
        secs = 1e-6;
    fprintf(out, "crawled %llu pages in %.2f s: %.0f pages/s, %.1f MB\n",
            (unsigned long long)st->pages, secs, (double)st->pages / secs,
            (double)st->bytes / 1e6);
    fprintf(out, "  depth  pages\n");
    for (d = 0; d < 64 && d <= st->max_depth; d++)
        fprintf(out, "  %5d  %llu\n", d, (unsigned long long)st->pages_per_depth[d]);
    fprintf(out, "  HTTP status: 2xx %llu, 3xx %llu, 4xx %llu, 5xx %llu, "
                 "transport errors %llu; retries %llu\n",
            (unsigned long long)st->status[2], (unsigned long long)st->status[3],
            (unsigned long long)st->status[4], (unsigned long long)st->status[5],
            (unsigned long long)st->status[0], (unsigned long long)st->retries);
    fprintf(out, "  links: %llu found, %llu new; duplicates dropped: %llu "
                 "(%llu by the in-process cache, %llu by Redis)\n",
            (unsigned long long)st->links_found, (unsigned long long)st->links_new,
            (unsigned long long)dropped, (unsigned long long)st->links_cached,
            (unsigned long long)(st->links_admitted - st->links_new));
    fprintf(out, "  robots.txt: %llu fetched, %llu URLs disallowed\n",
            (unsigned long long)st->robots_fetches,
            (unsigned long long)st->robots_skipped);
    fprintf(out, "  output: %s/depth-*/ (per node)", out_dir);
    fprintf(out, ", merged: %s/merged/pages.jsonl and %s/merged/depth-*.warc.gz\n",
            out_dir, out_dir);
}
