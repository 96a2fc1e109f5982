/*
 * summary.c: the human summary printed at the end of `dcrawl crawl` and
 * `dcrawl node`.
 *
 * Dedup figures: the cache hit rate is hits / (hits + misses) of the
 * node's in-process cache (links answered without Redis); Redis round
 * trips are every pipeline the node's frontier handle sent (admit, pop,
 * complete, reclaim, level checks), per page fetched; the seen-set size
 * and bytes per URL come from SCARD and MEMORY USAGE of every bucket key
 * (exact, not sampled: MEMORY USAGE of an intset is its allocation plus
 * the key's overhead), read once at the end, after the timing stops.
 *
 * Failures: robots.txt skips are split into "disallowed by robots.txt
 * rules" and "robots.txt unreachable" (RFC 9309: a 5xx or unreachable
 * robots.txt means disallow all, which is not the site's rule), and the
 * SUMMARY_TOP_ERRORS most frequent kinds of error are listed with an
 * example host (failures.c).
 */
#include <stdio.h>

#include "crawler.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#define SUMMARY_TOP_ERRORS 5

void node_dedup_stats(struct frontier *f, struct node_stats *st)
{
    struct seen_usage u;

    st->redis_roundtrips = frontier_roundtrips(f);
    st->seen_layout = seen_layout_name(f);
    if (seen_usage(f, 2048, &u) != DC_OK) /* a sample: fast */
        return;
    st->seen_sampled = u.sampled < u.total;
    st->seen_urls = u.members;
    st->seen_bytes = u.bytes;
    st->seen_keys = u.keys;
    st->seen_not_compact = u.not_compact;
}

static void print_dedup(FILE *out, const struct node_stats *st)
{
    uint64_t asked = st->cache_hits + st->cache_misses;

    fprintf(out, "  dedup: cache hit rate %.1f%% (%llu of %llu links, %llu "
                 "evictions); %.2f Redis round trips per page\n",
            asked ? 100.0 * (double)st->cache_hits / (double)asked : 0.0,
            (unsigned long long)st->cache_hits, (unsigned long long)asked,
            (unsigned long long)st->cache_evictions,
            st->pages ? (double)st->redis_roundtrips / (double)st->pages : 0.0);
    if (!st->seen_urls)
        return;
    fprintf(out, "  seen-set (layout %s): %s%llu URLs in %llu keys, %.1f "
                 "bytes per URL in Redis (MEMORY USAGE%s)",
            st->seen_layout ? st->seen_layout : "?",
            st->seen_sampled ? "about " : "",
            (unsigned long long)st->seen_urls,
            (unsigned long long)st->seen_keys,
            (double)st->seen_bytes / (double)st->seen_urls,
            st->seen_sampled ? " of a sample of keys" : "");
    if (st->seen_not_compact)
        fprintf(out, "; %llu buckets outgrew set-max-intset-entries",
                (unsigned long long)st->seen_not_compact);
    fputc('\n', out);
}

/* Links dropped by scope, per reason, and pages given up after retries. */
static void print_scope(FILE *out, const struct node_stats *st)
{
    uint64_t total = st->scope_budget;
    int r;
    for (r = 1; r < PARSER_SCOPE_NREASONS; r++)
        total += st->scope_dropped[r];
    fprintf(out, "  scope: %llu links dropped (", (unsigned long long)total);
    for (r = 1; r < PARSER_SCOPE_NREASONS; r++)
        fprintf(out, "%s %llu, ", parser_scope_reason(r),
                (unsigned long long)st->scope_dropped[r]);
    fprintf(out, "host budget %llu)\n", (unsigned long long)st->scope_budget);
    fprintf(out, "  politeness: %llu pages failed after retries, %llu "
                 "Retry-After honoured\n",
            (unsigned long long)st->failed,
            (unsigned long long)st->retry_after);
}

/* The most frequent reasons URLs were given up (failures.c). */
static void print_errors(FILE *out, const struct node_stats *st)
{
    size_t order[NODE_ERRORS_MAX], n = st->nerrs, i, k;
    uint64_t total = st->errors_other;

    for (i = 0; i < n; i++) {
        total += st->errs[i].n;
        order[i] = i;
    }
    fprintf(out, "  errors: %llu URLs given up with an error",
            (unsigned long long)total);
    if (!total) {
        fputc('\n', out);
        return;
    }
    fprintf(out, "; most frequent:\n");
    for (i = 1; i < n; i++) /* by count, then first seen */
        for (k = i; k > 0 && st->errs[order[k]].n > st->errs[order[k - 1]].n; k--) {
            size_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (i = 0; i < n && i < SUMMARY_TOP_ERRORS; i++) {
        const struct node_error *e = &st->errs[order[i]];
        fprintf(out, "  %8llu  %s (e.g. %s)\n", (unsigned long long)e->n,
                e->what, e->host);
    }
    if (n > SUMMARY_TOP_ERRORS || st->errors_other) {
        uint64_t rest = st->errors_other;
        for (i = SUMMARY_TOP_ERRORS; i < n; i++)
            rest += st->errs[order[i]].n;
        fprintf(out, "  %8llu  other errors\n", (unsigned long long)rest);
    }
}

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
    fprintf(out, "  noise: %llu links seen, %llu dropped by block, %llu by "
                 "cluster, %llu refused by template budget\n",
            (unsigned long long)st->noise_seen,
            (unsigned long long)st->noise_block,
            (unsigned long long)st->noise_cluster,
            (unsigned long long)st->noise_budget);
    print_scope(out, st);
    print_dedup(out, st);
    fprintf(out, "  content duplicates: %llu pages archived as revisits of an "
                 "earlier copy (links not followed again)\n",
            (unsigned long long)st->content_dups);
    fprintf(out, "  robots.txt: %llu fetched, %llu taken from Redis; URLs "
                 "skipped: %llu disallowed by robots.txt rules, %llu because "
                 "robots.txt was unreachable\n",
            (unsigned long long)st->robots_fetches,
            (unsigned long long)st->robots_restored,
            (unsigned long long)st->robots_skipped,
            (unsigned long long)st->robots_unreachable);
    fprintf(out, "  noise state: %llu hosts taken from Redis, %llu saved, "
                 "%llu failed reads/writes; %llu round trips\n",
            (unsigned long long)st->noise_restored,
            (unsigned long long)st->noise_saved,
            (unsigned long long)st->noise_store_failed,
            (unsigned long long)st->noise_roundtrips);
    print_errors(out, st);
    fprintf(out, "  cluster: partitions %llu taken, %llu handed over, %llu "
                 "lost; %llu leases of other nodes reclaimed, %llu URLs handed "
                 "back unstarted; %llu Redis reconnects\n",
            (unsigned long long)st->parts_acquired,
            (unsigned long long)st->parts_released,
            (unsigned long long)st->parts_lost,
            (unsigned long long)st->leases_reclaimed,
            (unsigned long long)st->handed_back,
            (unsigned long long)st->reconnects);
    fprintf(out, "  output: %s/depth-*/ (per node)", out_dir);
    fprintf(out, ", merged: %s/merged/pages.jsonl and %s/merged/depth-*.warc.gz\n",
            out_dir, out_dir);
}
