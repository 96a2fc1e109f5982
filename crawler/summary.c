/*
 * summary.c: the figures a node reports: the human summary printed at the
 * end of `dcrawl crawl` and `dcrawl node`, and the pages/s of its
 * heartbeat (node_rate_add, shown by `dcrawl status`).
 *
 * Pages and time: "pages" are the URLs written to the output with their
 * outcome, a response of any status (revisits included) or a transport
 * error. The headline says how many of them got a 2xx status, how many a
 * response at all, and how many a transport error; its rates are per
 * second of the node loop (from its start to its exit when idle), which
 * leaves out seeding and the merge. `dcrawl crawl` measures the whole
 * command too and prints that wall clock on its own line.
 *
 * Dedup figures: the cache hit rate is hits / (hits + misses) of the
 * node's in-process cache (links answered without Redis); Redis round
 * trips are every pipeline the node's frontier handle sent (admit, pop,
 * complete, reclaim, level checks), per page; the seen-set size and bytes
 * per URL come from SCARD (DCSEEN.CARD) and MEMORY USAGE of the bucket
 * keys, read once at the end, after the timing stops: of every key up to
 * SUMMARY_SEEN_KEYS_MAX keys (256 partitions of b256-i64), beyond that of
 * SUMMARY_SEEN_KEYS_MAX evenly spread keys, extrapolated, and the line
 * says so. MEMORY USAGE of an intset is its allocation plus the key's
 * overhead; of a mod-u64 key it is what the dcrawl-seen module reports
 * for its own type, and the line says that too.
 *
 * Failures: robots.txt skips are split into "disallowed by robots.txt
 * rules" and "robots.txt unreachable" (RFC 9309: a 5xx or unreachable
 * robots.txt means disallow all, which is not the site's rule), and the
 * SUMMARY_TOP_ERRORS most frequent kinds of error are listed with an
 * example host (failures.c).
 */
#include <stdio.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#define SUMMARY_TOP_ERRORS 5
#define U(x) ((unsigned long long)(x)) /* a counter for %llu */
#define SUMMARY_SEEN_KEYS_MAX ((size_t)256 * 256)

static void rate_drop_oldest(struct node_rate *r)
{
    memmove(r->s, r->s + 1, (size_t)(r->n - 1) * sizeof(r->s[0]));
    r->n--;
}

double node_rate_add(struct node_rate *r, int64_t now_ms, uint64_t count)
{
    const int cap = (int)(sizeof(r->s) / sizeof(r->s[0]));
    double secs;

    if (r->n == 0 || now_ms - r->s[r->n - 1].ms >= 1000) {
        if (r->n == cap) /* cannot happen at >= 1 s apart; stay bounded */
            rate_drop_oldest(r);
        r->s[r->n].ms = now_ms;
        r->s[r->n++].count = count;
    }
    /* keep one sample at least NODE_RATE_WINDOW_S old, none older */
    while (r->n > 1 && now_ms - r->s[1].ms >= NODE_RATE_WINDOW_S * 1000)
        rate_drop_oldest(r);
    secs = (double)(now_ms - r->s[0].ms) / 1000.0;
    if (secs <= 0 || count < r->s[0].count)
        return 0.0;
    return (double)(count - r->s[0].count) / secs;
}

void node_dedup_stats(struct frontier *f, struct node_stats *st)
{
    struct seen_usage u;

    st->redis_roundtrips = frontier_roundtrips(f);
    st->seen_layout = seen_layout_name(f);
    if (seen_usage(f, SUMMARY_SEEN_KEYS_MAX, &u) != DC_OK)
        return;
    st->seen_keys_total = u.total;
    st->seen_keys_asked = u.sampled;
    st->seen_urls = u.members;
    st->seen_bytes = u.bytes;
    st->seen_keys = u.keys;
    st->seen_not_compact = u.not_compact;
}

static void print_dedup(FILE *out, const struct node_stats *st)
{
    uint64_t asked = st->cache_hits + st->cache_misses;
    int sampled = st->seen_keys_asked < st->seen_keys_total;
    int mod = st->seen_layout && strcmp(st->seen_layout, "mod-u64") == 0;

    fprintf(out, "  dedup: cache hit rate %.1f%% (%llu of %llu links, %llu "
                 "evictions); %.2f Redis round trips per page\n",
            asked ? 100.0 * (double)st->cache_hits / (double)asked : 0.0,
            U(st->cache_hits), U(asked), U(st->cache_evictions),
            st->pages ? (double)st->redis_roundtrips / (double)st->pages : 0.0);
    if (!st->seen_urls)
        return;
    fprintf(out, "  seen-set (layout %s): %s%llu URLs in %llu keys (of the "
                 "%llu the layout has), %.1f bytes per URL in Redis (MEMORY "
                 "USAGE of ",
            st->seen_layout ? st->seen_layout : "?", sampled ? "about " : "",
            U(st->seen_urls), U(st->seen_keys), U(st->seen_keys_total),
            (double)st->seen_bytes / (double)st->seen_urls);
    if (sampled)
        fprintf(out, "%llu keys evenly spread, extrapolated",
                U(st->seen_keys_asked));
    else
        fprintf(out, "every key");
    fprintf(out, "%s)", mod ? ", as the dcrawl-seen module reports it" : "");
    if (st->seen_not_compact)
        fprintf(out, "; %llu buckets outgrew set-max-intset-entries",
                U(st->seen_not_compact));
    fputc('\n', out);
}

/* Links dropped by scope, per reason, and pages given up after retries. */
static void print_scope(FILE *out, const struct node_stats *st)
{
    uint64_t total = st->scope_budget;
    int r;
    for (r = 1; r < PARSER_SCOPE_NREASONS; r++)
        total += st->scope_dropped[r];
    fprintf(out, "  scope: %llu links dropped (", U(total));
    for (r = 1; r < PARSER_SCOPE_NREASONS; r++)
        fprintf(out, "%s %llu, ", parser_scope_reason(r),
                U(st->scope_dropped[r]));
    fprintf(out, "host budget %llu)\n", U(st->scope_budget));
    fprintf(out, "  politeness: %llu pages failed after retries, %llu "
                 "Retry-After honoured, %llu leases handed back to wait out "
                 "their host's Crawl-delay in the frontier\n",
            U(st->failed), U(st->retry_after), U(st->gap_returned));
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
            U(total));
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
        fprintf(out, "  %8llu  %s (e.g. %s)\n", U(e->n),
                e->what, e->host);
    }
    if (n > SUMMARY_TOP_ERRORS || st->errors_other) {
        uint64_t rest = st->errors_other;
        for (i = SUMMARY_TOP_ERRORS; i < n; i++)
            rest += st->errs[order[i]].n;
        fprintf(out, "  %8llu  other errors\n", U(rest));
    }
}

/* The headline: what the pages were and the rates over the node loop. */
static void print_pages(FILE *out, const struct node_stats *st)
{
    double secs = (double)(st->finished_us - st->started_us) / 1e6;
    uint64_t responses = node_responses(st);

    if (secs <= 0)
        secs = 1e-6;
    fprintf(out, "crawled %llu pages in %.2f s of crawling (the node loop): "
                 "%llu fetched with a 2xx status (%.1f/s), %llu responses "
                 "of any status (%.1f/s), %llu transport errors; %.1f MB of "
                 "bodies\n",
            U(st->pages), secs,
            U(st->status[2]), (double)st->status[2] / secs,
            U(responses), (double)responses / secs,
            U(st->status[0]), (double)st->bytes / 1e6);
    if (st->command_us > 0)
        fprintf(out, "  wall clock of the whole command, from its start to "
                     "this summary (seeding and merge included): %.2f s "
                     "(%.1f ms before the node loop: settings, Redis, seeds; "
                     "merge %.1f ms)\n",
                (double)st->command_us / 1e6,
                (double)st->setup_us / 1e3,
                (double)st->merge_us / 1e3);
}

/* The bin of the histogram st->dur_bins that holds the q-quantile of the
 * transfer times, as "<= N ms" (or "> N ms" for the last) into buf. */
static const char *dur_quantile(const struct node_stats *st, uint64_t n,
                                double q, char *buf, size_t cap)
{
    uint64_t cum = 0;
    int i;
    for (i = 0; i < NODE_DUR_BINS - 1; i++) {
        cum += st->dur_bins[i];
        if ((double)cum >= q * (double)n)
            break;
    }
    if (i < NODE_DUR_BINS - 1)
        snprintf(buf, cap, "<= %lld ms", (long long)node_dur_le_ms[i]);
    else
        snprintf(buf, cap, "> %lld ms", (long long)node_dur_le_ms[i - 1]);
    return buf;
}

/* Transfer times (start to end, robots.txt and sitemaps included), from
 * the histogram the metrics export: a crawl slower than its politeness
 * allows shows here whether the servers were slow to answer. */
static void print_durations(FILE *out, const struct node_stats *st)
{
    char a[32], b[32], c[32], m[32];
    uint64_t n = node_transfers(st);
    if (!n)
        return;
    fprintf(out, "  transfer times: %llu transfers, median %s, p90 %s, p99 "
                 "%s, max %s; mean %.1f ms\n", U(n),
            dur_quantile(st, n, 0.5, a, sizeof(a)),
            dur_quantile(st, n, 0.9, b, sizeof(b)),
            dur_quantile(st, n, 0.99, c, sizeof(c)),
            dur_quantile(st, n, 1.0, m, sizeof(m)),
            (double)st->dur_ms / (double)n);
}

void node_print_summary(FILE *out, const struct node_stats *st,
                        const char *out_dir)
{
    uint64_t dropped = st->links_cached + (st->links_admitted - st->links_new);
    int d;

    print_pages(out, st);
    fprintf(out, "  depth  pages (%llu URLs leased while the level before "
                 "drained, %llu of them given back, %llu lease renewals)\n",
            U(st->pages_ahead), U(st->ahead_given_back), U(st->ahead_renewed));
    for (d = 0; d < DC_DEPTHS && d <= st->max_depth; d++)
        fprintf(out, "  %5d  %llu\n", d, U(st->pages_per_depth[d]));
    fprintf(out, "  HTTP status: 2xx %llu, 3xx %llu, 4xx %llu, 5xx %llu, "
                 "transport errors %llu; retries %llu\n",
            U(st->status[2]), U(st->status[3]),
            U(st->status[4]), U(st->status[5]),
            U(st->status[0]), U(st->retries));
    print_durations(out, st);
    fprintf(out, "  links: %llu found, %llu new; duplicates dropped: %llu "
                 "(%llu by the in-process cache, %llu by Redis)\n",
            U(st->links_found), U(st->links_new),
            U(dropped), U(st->links_cached),
            U(st->links_admitted - st->links_new));
    fprintf(out, "  noise: %llu links seen, %llu dropped by block, %llu by "
                 "cluster, %llu refused by template budget\n",
            U(st->noise_seen), U(st->noise_block), U(st->noise_cluster),
            U(st->noise_budget));
    print_scope(out, st);
    print_dedup(out, st);
    fprintf(out, "  content duplicates: %llu pages archived as revisits of an "
                 "earlier copy; links followed on %llu of them (in another "
                 "directory than the copy and not below it, so their "
                 "relative links lead elsewhere)\n",
            U(st->content_dups), U(st->content_dups_followed));
    fprintf(out, "  robots.txt: %llu fetched, %llu taken from Redis, %llu "
                 "hosts dropped from memory; URLs skipped: %llu disallowed by "
                 "robots.txt rules, %llu because robots.txt was unreachable\n",
            U(st->robots_fetches), U(st->robots_restored), U(st->robots_evicted),
            U(st->robots_skipped), U(st->robots_unreachable));
    fprintf(out, "  private addresses: %llu URLs skipped: private address "
                 "(refused by scope.private_addresses)\n",
            U(st->private_skipped));
    fprintf(out, "  noise state: %llu hosts taken from Redis, %llu saved, "
                 "%llu failed reads/writes; %llu round trips\n",
            U(st->noise_restored), U(st->noise_saved),
            U(st->noise_store_failed), U(st->noise_roundtrips));
    print_errors(out, st);
    fprintf(out, "  cluster: partitions %llu taken, %llu handed over, %llu "
                 "lost; %llu leases of other nodes reclaimed, %llu URLs handed "
                 "back unstarted, %llu transfers aborted and %llu leases left "
                 "to the next owner as their partition was lost; %llu Redis "
                 "reconnects, %llu changes of "
                 "Redis server (%llu pages to fetch again, %llu hosts' "
                 "sitemaps read again)\n",
            U(st->parts_acquired), U(st->parts_released), U(st->parts_lost),
            U(st->leases_reclaimed), U(st->handed_back),
            U(st->lapse_aborted), U(st->lapse_dropped), U(st->reconnects),
            U(st->server_changes), U(st->failover_refetch),
            U(st->sitemaps_again));
    if (st->offline_times || st->offline_probes) /* node-offline.c */
        fprintf(out, "  cut off from the web %llu times: %llu failures put "
                     "back uncounted; %llu control probes\n",
                U(st->offline_times), U(st->offline_requeued),
                U(st->offline_probes));
    if (st->stalls) /* node.c: steps that held the heartbeat */
        fprintf(out, "  node loop: %llu steps blocked over a fifth of "
                     "cluster.node_timeout, the longest %.1f s in %s\n",
                U(st->stalls), (double)st->stall_max_us / 1e6,
                st->stall_step ? st->stall_step : "?");
    fprintf(out, "  output: %s/depth-*/ (per node: %llu lines written, "
                 "%llu leases completed for them)",
            out_dir, U(st->pages + st->skipped), U(st->leases_completed));
    fprintf(out, ", merged: %s/merged/pages.jsonl and %s/merged/depth-*.warc.gz\n",
            out_dir, out_dir);
}
