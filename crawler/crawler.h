/*
 * crawler.h: the dcrawl binary: the CLI (main.c, cmd-*.c, options.c) and
 * the node that moves a URL from the frontier to the output:
 *
 *   frontier_pop ──> robots check ──> fetch (libcurl multi, main thread)
 *        ^                                  │
 *        │                                  v
 *   frontier_admit <── dedup cache <── workers (threads): decode, gumbo
 *   frontier_complete  noise filter         parse, noise blocks,
 *   content digests                         fingerprints, WARC build
 *                                           │
 *                                           v
 *                          warc_writer_append (per-depth WARC + JSONL)
 *
 * The main thread owns the curl multi handle, the Redis connection
 * (frontier), the dedup cache and the writers; worker threads only turn a
 * fetched page into links and WARC bytes. Nothing here is a library for
 * other modules: this header is shared by the files of crawler/ only.
 */
#ifndef DC_CRAWLER_H
#define DC_CRAWLER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf.h"
#include "dc-limits.h"
#include "options.h"
#include "parser.h"

/* --redis URL help of the commands that take one. */
#define CLI_REDIS_HELP                                                      \
    "the crawl's Redis (or redis.url / DCRAWL_REDIS_URL);\n"               \
    "its password: DCRAWL_REDIS_PASSWORD or\n"                             \
    "redis.password_file (not the command line)"

struct frontier;

/* The exit status of node, crawl and merge when their output cannot be
 * written (DC_EOUTPUT: disk full, quota, I/O error); 1 is any other
 * failure, 2 bad usage or settings. */
#define CLI_EXIT_OUTPUT 3

/* ------------------------------------------------------------ commands */

/* Every subcommand: argv[0] is the command name. Returns the exit status. */
int cmd_crawl(int argc, char **argv);
int cmd_seed(int argc, char **argv);
int cmd_node(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_dedup(int argc, char **argv);
int cmd_robots(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_config(int argc, char **argv);

/* Shared option handling: --config FILE, --set k=v (OPT_CONF_ROWS in
 * options.h) and options that stand for one key (--depth, --id:
 * OPT_SETTING rows). cli_conf_apply applies defaults, config file,
 * environment, --set, then those options, in that order. Returns 0 or
 * prints the error and returns 2. */
struct cli_conf {
    const char *config_file;
    struct opt_list sets;
    const char *keys[8]; /* options that stand for a key (--depth ...) */
    const char *vals[8];
    int nkv;
};
/* Record an option that sets a key (applied after --set). */
void cli_conf_kv(struct cli_conf *cc, const char *key, const char *val);
int cli_conf_apply(const struct cli_conf *cc, struct conf *c);
/* Open the frontier on `redis` (else redis.url); on failure print
 * "dcrawl CMD: reason" and return 2. Fills id with the node id. */
int cli_frontier_open(const char *cmd, const char *redis, const struct conf *c,
                      char *id, size_t idcap, struct frontier **f);
/* cli_conf_apply, then cli_frontier_open: 0, or 2 (error printed, *c
 * released). */
int cli_open(const char *cmd, const struct cli_conf *cc, const char *redis,
             struct conf *c, char *id, size_t idcap, struct frontier **f);
/* Node id: crawl.node_id or the hostname, made safe for file names. */
void cli_node_id(const struct conf *c, char *out, size_t cap);

/* --------------------------------------------------------------- seeds */

struct seed_stats {
    size_t lines, accepted, seen, rejected;
    size_t budget; /* refused by scope.host_budget (not queued, not seen) */
    /* scope.private_addresses=seeds: the non-public ranges the seeds'
     * hosts resolved to (all seeding so far, netclass mask), and seed
     * hosts not resolved (SEED_RANGES_BUDGET_MS, SEED_RANGES_HOSTS_MAX) */
    uint64_t ranges;
    size_t unresolved;
};
/*
 * Read seeds (one URL per line; blank lines and '#' comments skipped) from
 * path ("-" = stdin) plus the extra URLs in args, canonicalize and admit
 * them at depth 0. Each bad line is reported on err as "NAME:LINE: reason"
 * and the rest still load. With ranges set, the seeds' non-public ranges
 * are recorded for scope.private_addresses=seeds (seed-ranges.c).
 * Returns DC_OK, DC_EIO (cannot read) or DC_EREDIS.
 */
int seeds_load(struct frontier *f, const struct conf *c, const char *path,
               char **args, int nargs, int ranges, FILE *err,
               struct seed_stats *st);
/* The ranges st allows, on out unless NULL ("seeds: non-public ranges
 * allowed ..."),
 * and a warning on err when seed hosts were left unresolved. */
void seeds_print_ranges(FILE *out, FILE *err, const struct seed_stats *st);

/* --------------------------------------------------- private addresses */

/* scope.private_addresses (netclass.c): an address's class is the index
 * of the non-public block holding it (a "range": 127.0.0.0/8, 10.0.0.0/8,
 * 169.254.169.254/32 ...), NETCLASS_PUBLIC, or NETCLASS_OTHER (not IPv4
 * or IPv6). A set of ranges is a mask of bits 1 << class. */
#define NETCLASS_PUBLIC (-1)
#define NETCLASS_OTHER (-2)
enum { NETCLASS_SEEDS, NETCLASS_DENY, NETCLASS_ALLOW };
struct sockaddr;
int netclass_of(const struct sockaddr *sa);
/* The class of an address literal ("10.0.0.1", "::1"); NETCLASS_OTHER
 * when it is not one. */
int netclass_of_text(const char *ip);
/* The range's CIDR ("10.0.0.0/8") and kind ("private"); "public". */
const char *netclass_cidr(int c);
const char *netclass_what(int c);
/* "deny", "seeds" or "allow" to NETCLASS_* (anything else: deny). */
int netclass_mode_parse(const char *s);
/* May a connection to an address of class c be opened under mode, with
 * mask the seeds' ranges? */
int netclass_allowed(int mode, uint64_t mask, int c);
/* A mask from and to its text: CIDRs separated by commas (unknown ones
 * ignored); the text is cut at a whole entry to fit cap. */
uint64_t netclass_mask_parse(const char *list);
void netclass_mask_format(uint64_t mask, char *out, size_t cap);
/* The crawl's Redis meta field holding the seeds' ranges. */
#define NETCLASS_META "private_ranges"

/* The seeds' ranges (seed-ranges.c): every distinct seed host is resolved
 * once (an address literal is its own answer), one after the other, within
 * SEED_RANGES_BUDGET_MS per seeds_load; the non-public ranges found
 * are added to the crawl's NETCLASS_META field before the seeds that
 * brought them are queued. */
#define SEED_RANGES_BUDGET_MS 10000
#define SEED_RANGES_HOSTS_MAX 65536 /* distinct hosts looked at */
struct seed_ranges;
struct seed_ranges *seed_ranges_new(void);
void seed_ranges_free(struct seed_ranges **sr);
/* Note url's host (a canonical URL; its "host[:port]" at host, hostlen). */
void seed_ranges_add(struct seed_ranges *sr, const char *host, size_t hostlen);
/* Resolve the hosts noted since the last call (no Redis). */
void seed_ranges_resolve(struct seed_ranges *sr);
/* seed_ranges_resolve, then add the ranges found
 * to f's NETCLASS_META (union with what is there); DC_OK or DC_EREDIS. */
int seed_ranges_flush(struct seed_ranges *sr, struct frontier *f);
/* The ranges found so far, and hosts left unresolved (budget, cap). */
uint64_t seed_ranges_mask(const struct seed_ranges *sr);
size_t seed_ranges_unresolved(const struct seed_ranges *sr);

/* ------------------------------------------------------ embedded redis */

struct embedded_redis {
    int pid;
    int signalled; /* SIGTERM sent */
    char dir[512];
    char url[640];
};
/* Start a private redis-server (unix socket in dir, no TCP port), loading
 * the seen-set module `module` (conf redis.module: a path, "" for
 * dcrawl-seen.so next to the running binary when it exists, "none").
 * Returns DC_OK and fills er->url, or DC_EREDIS with a message in err. */
int embedded_redis_start(struct embedded_redis *er, const char *dir,
                         const char *module, char *err, size_t errlen);
/* embedded_redis_signal asks it to exit without waiting; _stop asks (if
 * not yet asked) and waits until it is gone. Both take an unstarted one. */
void embedded_redis_signal(struct embedded_redis *er);
void embedded_redis_stop(struct embedded_redis *er);

/* -------------------------------------------------------------- status */

struct frontier_status;
/* The object `dcrawl status --json` prints, without its closing brace, so
 * a caller may add fields (cmd-status.c); status_json_str writes a JSON
 * string (NULL: null). */
void status_json_open(FILE *o, const struct frontier_status *st,
                      const char *redis);
void status_json_str(FILE *o, const char *s);
/* Parse "ADDR:PORT" ("[v6]:PORT" for IPv6; a name is resolved), bind and
 * listen: *fd is the socket. 0, or -1 with a one-line message in err that
 * starts with what (the option it came from) (status-http.c; the metrics
 * server and `status --http` share it). http_addr_check only parses ("":
 * nothing to check). */
int http_listen(const char *what, const char *addr, int *fd, char *err,
                size_t errlen);
int http_addr_check(const char *what, const char *addr, char *err,
                    size_t errlen);
/* Sleep up to seconds (100 ms steps), waking early when *stop is set. */
void status_nap(double seconds, volatile sig_atomic_t *stop);
/* Serve the status page on listen socket fd (taken: closed on return),
 * reading f every interval seconds, until *stop is set. 0, or 1 when the
 * server could not start (reported on stderr). */
int status_http_serve(struct frontier *f, int fd, double interval,
                      const char *redis, volatile sig_atomic_t *stop);

/* ---------------------------------------------------------------- node */

/* quiet: no summary and no progress lines. redis_url: where the node's
 * monitor reads the frontier's per-depth figures (its own connection;
 * progress and metrics only). eta: progress shows the time left in the
 * current depth (`dcrawl crawl`). */
struct node_opts {
    const char *out_dir;
    int exit_when_idle;
    int quiet;
    const char *redis_url;
    int eta;
    int fresh_redis; /* a server started for this run (dcrawl crawl's
                        embedded one): no earlier run left leases to put
                        back, so the start skips that pass */
};

/* Transport errors by kind, for metrics (fetch_error_kind). */
enum node_err_kind {
    NODE_ERR_DNS, NODE_ERR_CONNECT, NODE_ERR_TLS, NODE_ERR_TIMEOUT,
    NODE_ERR_TOO_LARGE, NODE_ERR_OTHER, NODE_ERR_KINDS
};
/* Transfer duration bins (ms upper bounds; one more bin for the rest). */
#define NODE_DUR_BINS 13
extern const int64_t node_dur_le_ms[NODE_DUR_BINS - 1];


/* Why URLs were given up (failures.c): one kind of error, its message
 * with host, address and numbers taken out, how many URLs it cost and one
 * host it happened on. */
#define NODE_ERRORS_MAX 32
struct node_error {
    char what[200];
    char host[96];
    uint64_t n;
};
/* A seed (depth 0 URL) this node gave up on, the first one per host. */
#define NODE_SEED_FAILS_MAX 32
struct node_seed_fail {
    char host[96];
    char url[256];
    char why[320];
};

struct node_stats {
    /* the node loop, from its start to its exit (monotonic clock): the
     * time the summary's rates are taken over */
    int64_t started_us, finished_us;
    /* the whole command (`dcrawl crawl`: seeding, node loop, merge), set
     * by the command before the summary; 0 when not measured */
    int64_t command_us;
    /* ... and its parts: before the node loop (settings, Redis, seeds)
     * and the merge */
    int64_t setup_us, merge_us;
    /* robots_skipped: URLs disallowed by robots.txt rules;
     * robots_unreachable: URLs skipped because their host's robots.txt
     * could not be fetched (5xx, transport error: disallow all) */
    /* pages: URLs written to the output with their outcome, a response
     * (any status, revisits included) or a transport error; bytes: their
     * response bodies */
    uint64_t pages, bytes, errors, retries, robots_skipped, robots_fetches;
    uint64_t robots_unreachable;
    uint64_t skipped;   /* "skipped" lines written (never requested) */
    /* leases completed as done, failed or skipped: one per line written
     * (pages + skipped) once its completion reached Redis (a retry
     * completes its lease without a line and is not counted) */
    uint64_t leases_completed;
    uint64_t private_skipped; /* of those: address refused by
                                 scope.private_addresses */
    /* URLs given up with an error (transport errors of pages, robots.txt
     * unreachable), by kind; kinds past NODE_ERRORS_MAX in errors_other */
    struct node_error errs[NODE_ERRORS_MAX];
    size_t nerrs;
    uint64_t errors_other;
    struct node_seed_fail seed_fails[NODE_SEED_FAILS_MAX];
    size_t nseed_fails;
    uint64_t content_dups; /* pages archived as revisits */
    uint64_t content_dups_followed; /* ... whose links were followed (in
                                       another directory than the first,
                                       not below it) */
    uint64_t links_found, links_admitted, links_new, links_cached;
    /* noise filter: links seen, dropped by block / cluster, refused by
     * template budget */
    uint64_t noise_seen, noise_block, noise_cluster, noise_budget;
    /* scope: links dropped per enum parser_scope_reason (index 0 unused),
     * admits refused by scope.host_budget */
    uint64_t scope_dropped[PARSER_SCOPE_NREASONS], scope_budget;
    /* politeness: pages recorded as failed after their retries, 429/503
     * responses whose Retry-After was honoured, leases handed back to the
     * frontier unstarted because their host's Crawl-delay lets them wait
     * there (node-fetch.c start_page) */
    uint64_t failed, retry_after, gap_returned;
    /* cluster: leases handed back unstarted because their partition
     * moved, Redis reconnects, partitions taken / given up / lost */
    uint64_t handed_back, reconnects;
    /* partitions lost while in use (node-lapse.c): transfers aborted,
     * leases forgotten uncompleted (aborted, or fetched and not written) */
    uint64_t lapse_aborted, lapse_dropped;
    /* cut off from the web (node-offline.c): times, failures put back
     * uncounted, control probes sent */
    uint64_t offline_times, offline_requeued, offline_probes;
    /* loop steps longer than cluster.node_timeout / NODE_STALL_PART
     * (node.c), the longest of them and its step's name */
    uint64_t stalls;
    int64_t stall_max_us;
    const char *stall_step;
    /* Redis failover (node-failover.c): changes of server seen, pages
     * put back to be fetched again because their links went to the old
     * server, hosts whose sitemaps were read again (sitemaps.c) */
    uint64_t server_changes, failover_refetch, sitemaps_again;
    uint64_t robots_restored;   /* robots.txt answers read from Redis */
    /* URLs of the next level leased while the level before drained
     * (node-ahead.c), pages of those given back to be fetched again (the
     * node stopped) and held leases extended (frontier_renew) */
    uint64_t pages_ahead, ahead_given_back, ahead_renewed;
    uint64_t robots_evicted;    /* hosts dropped from the robots cache */
    /* noise repetition state per host: read from Redis, written to it,
     * reads and writes that failed (hosts); round trips they took */
    uint64_t noise_restored, noise_saved, noise_store_failed;
    uint64_t noise_roundtrips;
    uint64_t parts_acquired, parts_released, parts_lost, leases_reclaimed;
    /* dedup: cache counters, Redis round trips of the node's frontier
     * handle, and the seen-set's size (seen_usage) at the end */
    uint64_t cache_hits, cache_misses, cache_evictions;
    uint64_t redis_roundtrips;
    uint64_t seen_urls, seen_bytes, seen_keys, seen_not_compact;
    const char *seen_layout;    /* seen_layout_name */
    /* bucket keys of the layout, and how many of them were asked
     * (seen_* are extrapolated from those when fewer than all) */
    uint64_t seen_keys_total, seen_keys_asked;
    uint64_t pages_per_depth[DC_DEPTHS];
    uint64_t status[6]; /* pages by status: 0 = transport error, 1xx..5xx */
    int max_depth;
    /* live figures (progress, metrics): pages' transport errors by kind
     * (enum node_err_kind); transfers (robots.txt and sitemaps included)
     * by duration, dur_bins[i] those up to node_dur_le_ms[i], the last
     * one the rest, and their total ms; pages the workers parsed;
     * robots.txt fetches by outcome (2xx, 4xx = no rules, 5xx or no
     * response); bytes written to WARC files */
    uint64_t err_kind[NODE_ERR_KINDS];
    uint64_t dur_bins[NODE_DUR_BINS], dur_ms;
    uint64_t pages_parsed;
    uint64_t robots_ok, robots_missing, robots_failed;
    uint64_t warc_bytes;
};

/* Run the node loop on f until idle (with exit_when_idle) or until
 * node_request_stop(). Returns DC_OK or the error that stopped it. */
int node_run(struct frontier *f, const struct conf *c, const char *node_id,
             const struct node_opts *o, struct node_stats *st, char *err,
             size_t errlen);
/* Ask the running node to stop (async-signal-safe). */
void node_request_stop(void);
/* Install SIGINT/SIGTERM handlers that call node_request_stop(). */
void node_install_signals(void);

/* Pages/s of the node's heartbeat (`dcrawl status` PAGES/S; summary.c):
 * a running total sampled at most once a second, the rate taken over the
 * last NODE_RATE_WINDOW_S seconds, or over the time since the first sample
 * while less than that has been observed (never over time not seen). */
#define NODE_RATE_WINDOW_S 10
struct node_rate {
    struct {
        int64_t ms;     /* sample time */
        uint64_t count; /* the total then */
    } s[NODE_RATE_WINDOW_S + 2]; /* oldest first, >= 1 s apart */
    int n;
};
/* Add the total `count` at now_ms (any ms clock, not going back) and
 * return count per second over the window; 0 before any time passed. */
double node_rate_add(struct node_rate *r, int64_t now_ms, uint64_t count);

/* Fill st's Redis round trips and seen-set size from f: MEMORY USAGE of
 * every bucket key up to SUMMARY_SEEN_KEYS_MAX keys (one round trip per
 * 8192 keys), of that many evenly spread keys beyond (summary.c). */
void node_dedup_stats(struct frontier *f, struct node_stats *st);

/* Print the crawl summary. */
void node_print_summary(FILE *out, const struct node_stats *st,
                        const char *out_dir);

/* ----------------------------------------------------------- failures */

/* Pages that got an HTTP response (any status; robots.txt and sitemaps
 * not counted). */
uint64_t node_responses(const struct node_stats *st);
/* Transfers ended, robots.txt and sitemaps included (the count of the
 * dur_bins histogram; metrics.c). */
uint64_t node_transfers(const struct node_stats *st);
/* msg with what varies between hosts taken out, so one kind of failure
 * groups together: host (from the "host[:port]" key) -> "HOST", other
 * IPv4 addresses -> "ADDR", numbers -> "N" (not an "HTTP 503" status). */
void failures_normalize(const char *msg, const char *host, char *out,
                        size_t cap);
/* Count one URL given up for msg on host (prefix, e.g. "robots.txt
 * unreachable: ", is put before the normalized message; may be ""). */
void failures_count(struct node_stats *st, const char *prefix,
                    const char *msg, const char *host);
/* Remember why a seed URL was given up (kept for the first URL per
 * host, NODE_SEED_FAILS_MAX hosts). */
void failures_seed(struct node_stats *st, const char *url, const char *host,
                   const char *why);
/* When no page got a response (and the node handled some URL): print
 * "dcrawl: URL: why" per seed host to out and return 1; else 0. */
int failures_report(FILE *out, const struct node_stats *st);

/* The crawl's depth limit: <prefix>:meta max_depth, else (none, or Redis
 * did not answer) fallback. */
int node_max_depth(struct frontier *f, int fallback);

#endif
