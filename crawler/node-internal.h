/*
 * node-internal.h: the parts the node loop (node.c) is built from: the
 * libcurl fetcher (fetch.c), the parse/build worker pool (workers.c), the
 * per-host robots.txt cache (robots-cache.c), politeness.c (when a leased
 * transfer may start), fpmap.c and retry.c (per-URL bookkeeping), and
 * at the end struct node with the functions its phase files share
 * (node-*.c, sitemaps.c). Code outside crawler/ should not include this
 * file.
 *
 * Ownership: a fetch_result is created by the fetcher, handed to the caller
 * by fetcher_next_done, carried through a work_job and freed with the job.
 */
#ifndef DC_NODE_INTERNAL_H
#define DC_NODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf.h"
#include "crawler.h"
#include "dc-limits.h"
#include "frontier.h"
#include "warc.h"
#include "noise.h"

/* -------------------------------------------------------------- fetch */

struct fetch_result {
    char *url;          /* requested */
    char *final_url;    /* effective URL after redirects */
    int status;         /* 0 on transport error */
    char *content_type;
    char ip[64];
    char *req_head;     /* last request's header block as sent */
    size_t req_len, req_cap;
    char *resp_head;    /* last response's header block as received */
    size_t resp_len, resp_cap;
    char *body;         /* as transferred (content-coded) */
    size_t body_len, body_cap;
    size_t max_bytes;
    int truncated;
    int head_too_big;   /* header block over FETCH_MAX_HEAD_BYTES: aborted */
    int flooded;        /* one libcurl call past the fetcher's call cap: aborted */
    int64_t call_cap_ms;   /* that cap (fetch_call_cap_ms) */
    int sock;              /* its connection's socket, -1 not seen yet */
    uint64_t perform_call; /* on_progress: the perform call last seen in */
    int64_t perform_ms;    /* and when it first saw it there */
    void *easy;            /* its libcurl handle while in flight (fetch.c) */
    struct fetch_guard *guard; /* the fetcher's (fetch-guard.c) */
    int curl_code;
    int os_errno;       /* CURLINFO_OS_ERRNO of a failed connect, 0 none */
    char error[256];    /* "" when none */
    int64_t started_ms;
    int64_t ended_ms;   /* when the node saw it end (node-fetch.c), 0 not yet */
    void *ud;           /* caller's */
    char *location;     /* a 3xx's Location, resolved (pages only), or NULL */
    /* scope.private_addresses: the last address refused (reason text
     * and its netclass), sockets opened since, and the verdict: the
     * transfer failed because every address it could use was refused
     * (error then holds the reason) */
    char refused[192];
    int refused_class;
    int opened_since;
    int private_refused;
    const struct fetch_policy *policy;
};
void fetch_result_free(struct fetch_result *r);

/* The longest one libcurl call may run before the transfer keeping it
 * busy is ended (a frame flood): a quarter of fetch.low_speed_time, so the
 * transfers waiting behind the call keep their own low-speed window, within
 * [FETCH_CALL_CAP_MIN_MS, FETCH_CALL_CAP_MAX_MS]. */
#define FETCH_CALL_CAP_MIN_MS 250
#define FETCH_CALL_CAP_MAX_MS 2000
int64_t fetch_call_cap_ms(const struct conf *c);

/* fetch-cache.c: how long libcurl keeps a host's addresses and an idle
 * connection, from the rate transfers start at (kept here, one per
 * fetcher; zeroed to start). */
#define FETCH_DNS_CACHE_S 10
#define FETCH_DNS_CACHE_ENTRIES 2000
#define FETCH_CONN_IDLE_S 118
struct fetch_cache_times {
    int64_t since_ms;   /* start of this second's count */
    long n;             /* transfers started since since_ms */
    long dns_s, idle_s; /* the times now, in seconds */
};
void fetch_cache_times(struct fetch_cache_times *t, int64_t now_ms,
                       int concurrency);

/* fetch-guard.c: a thread that shuts down the socket still receiving the
 * most when one libcurl call has run for cap_ms (a frame flood libcurl
 * keeps reading without calling back). */
struct fetch_guard;
struct fetch_guard *fetch_guard_new(int64_t cap_ms); /* NULL: no thread */
void fetch_guard_free(struct fetch_guard **g);
void fetch_guard_add(struct fetch_guard *g, int fd);
void fetch_guard_remove(struct fetch_guard *g, int fd);
/* Around each curl_multi_perform call (call: its number, never 0). */
void fetch_guard_enter(struct fetch_guard *g, uint64_t call);
void fetch_guard_leave(struct fetch_guard *g);
/* The last call in which a socket was shut down, 0 none. */
uint64_t fetch_guard_cut_call(struct fetch_guard *g);
/* Record fd as shut down by the fetcher itself (on_progress); whether fd is
 * the socket shut down last (until a new socket gets its number): the
 * transfers that failed on a cut connection are labelled a frame flood. */
void fetch_guard_cut(struct fetch_guard *g, int fd);
int fetch_guard_was_cut(struct fetch_guard *g, int fd);

struct fetcher;
struct fetcher *fetcher_new(const struct conf *c);
void fetcher_free(struct fetcher **f);
/* Send "X-Dcrawl-Node: id" with every request of f (set before the first
 * transfer), so a server log shows which node fetched what. */
int fetcher_set_node(struct fetcher *f, const char *id);
/* Start a GET of url (body capped at max_bytes), following redirects up
 * to fetch.max_redirects inside libcurl (robots.txt). DC_OK or DC_ECURL. */
int fetcher_add(struct fetcher *f, const char *url, size_t max_bytes, void *ud);
/* The same for a page: redirects are not followed; a 3xx comes back with
 * its Location in r->location, for the caller to admit as a new URL. */
int fetcher_add_page(struct fetcher *f, const char *url, size_t max_bytes,
                     void *ud);
/* scope.private_addresses: the ranges the seeds allow (netclass mask);
 * the mode comes from the conf. Every connection a transfer opens is
 * checked (fetch.c), redirect hops and every address tried included. */
void fetcher_set_ranges(struct fetcher *f, uint64_t mask);
/* The private_addresses mode (NETCLASS_*) and ranges f applies. */
int fetcher_private_mode(const struct fetcher *f);
uint64_t fetcher_ranges(const struct fetcher *f);
/* Drive transfers; wait at most timeout_ms for activity or a wakeup (not
 * at all when a wakeup came since the last wait: fetcher_wait_fd may have
 * taken its signal). */
int fetcher_run(struct fetcher *f, int timeout_ms);
/* Wait at most timeout_ms for activity on the transfers, a wakeup, or fd
 * readable (returns 1 then); the transfers are not driven. */
int fetcher_wait_fd(struct fetcher *f, int fd, int timeout_ms);

/* A finished transfer (caller owns it), or NULL. */
struct fetch_result *fetcher_next_done(struct fetcher *f);
/* Abort one running transfer and return its result (caller owns it and
 * its ud), or NULL when none runs (a node stopping at once). */
struct fetch_result *fetcher_cancel(struct fetcher *f);
/* The same for one running transfer whose ud pick(ud, arg) picks, or
 * NULL when none is left. */
struct fetch_result *fetcher_cancel_if(struct fetcher *f,
                                       int (*pick)(void *ud, void *arg),
                                       void *arg);
/* Interrupt fetcher_run from another thread. */
void fetcher_wakeup(struct fetcher *f);
size_t fetcher_active(const struct fetcher *f);
/* The kind of r's transport error (enum node_err_kind; r->status 0). */
int fetch_error_kind(const struct fetch_result *r);

/* ------------------------------------------------------------ workers */

/* Links of a page, ready for admission: link i's canonical URL is
 * blob + link[i].off (NUL-terminated), its host blob + link[i].hoff
 * (hlen bytes). nav: the noise block stage's signals (NOISE_SIG_*,
 * worker) of the link's block, turned into the block rule's verdict on
 * the node (0 content, else navigation; noise_repeat); blk: that block
 * (its parser block index); page_text: the page's text outside links
 * (characters), for the page guard. verdict/ticket: the noise cluster
 * stage's output (node), n entries each, sized once per page. */
struct work_link {
    uint32_t off, hoff, hlen, blk;
    uint64_t fp;   /* dedup_fingerprint of the URL */
    unsigned char nav;
};
struct work_links {
    char *blob;
    size_t blob_len, blob_cap;
    struct work_link *link;
    size_t n, cap;
    unsigned char *verdict;
    uint64_t *ticket;
    size_t page_text;
};

struct work_job {
    /* in */
    struct fetch_result *res;
    struct frontier_lease lease; /* owned copy */
    int depth;           /* link distance from the seeds: the lease's
                          * depth level, or less (n->hops, node-admit.c);
                          * what the output says and links count from */
    int follow;          /* extract links for admission (depth < max) */
    int64_t backoff_ms;  /* transient failure: the host's back-off (node) */
    /* out */
    struct warc_built built;
    struct work_links links;
    size_t links_found, links_rejected, decoded_len;
    size_t links_new_count; /* set by the node after admission */
    char *dup_of_uri;       /* content duplicate of this URL (node) */
    int64_t dup_of_ms;
    struct noise_stats noise; /* this page's noise decisions (node) */
    int parsed;
    struct work_job *next;
    /* redirects (in: hops so far, set by the node; out: the target) */
    int redirects;
    int redirect;         /* links holds the Location target: same depth */
    char *redirect_to;    /* canonical target (raw Location if not http) */
    /* page directives and decoding (workers) */
    char *canonical, *refresh; /* resolved, or NULL */
    int noindex;
    int decode_truncated; /* decoding stopped at fetch.max_bytes */
    size_t held_bytes;    /* body bytes counted in workers_pending_bytes */
};
void work_job_free(struct work_job *j);
/* The warc_page view of a job (pointers into the job). */
void work_job_page(const struct work_job *j, struct warc_page *pg);

struct workers;
typedef void (*workers_wake_fn)(void *ud);
/* Start n threads (n >= 1). wake(ud) is called from a worker thread after
 * each finished job. */
struct workers *workers_new(int n, const struct conf *c, workers_wake_fn wake,
                            void *ud);
void workers_submit(struct workers *w, struct work_job *j);
/* All finished jobs, as a list (caller owns them), or NULL. */
struct work_job *workers_take_done(struct workers *w);
/* Jobs taken (list, oldest first) that the caller will not handle now:
 * back on the done list, ahead of the jobs finished since, so the next
 * workers_take_done returns them first; counted pending again. */
void workers_put_back(struct workers *w, struct work_job *list);
/* Jobs submitted and not yet taken back; *bytes (when not NULL) their
 * bodies' bytes, the memory the backlog holds (the node bounds it,
 * NODE_BACKLOG_BYTES). */
size_t workers_pending(struct workers *w, size_t *bytes);
void workers_free(struct workers **w);

/* --------------------------------------------------------- politeness */

/* When a leased transfer may start (politeness.c): at most
 * politeness.host_connections per host, the host's gap since the end of
 * its last transfer, politeness.ip_connections per address, and per-host
 * back-off. */
#define POLITE_IP_MAX 64
struct polite;
struct polite *polite_new(const struct conf *c);
void polite_free(struct polite **p);
/* Queue a transfer of host (a host key, "host[:port]"); it may start
 * gap_ms after the end of the host's last transfer. later: it yields to
 * the host's transfers queued with later 0 (starts only while none of
 * them waits), for a page of the next level fetched while the current
 * one drains (node-ahead.c): the host's pages of the current level are
 * what the level waits for. ud is the caller's. */
void polite_queue(struct polite *p, const char *host, int64_t gap_ms,
                  int later, void *ud);
/* The next queued transfer that may start at now, its address slot taken
 * (ipkey, cap bytes: the address counted, "" when none; give it back to
 * polite_ended), or NULL. It goes on from where the previous call stopped
 * (each queued transfer is looked at once per round): call polite_rewind
 * first to start a round from the head. */
void polite_rewind(struct polite *p);
void *polite_next(struct polite *p, int64_t now, char *ipkey, size_t cap);
/* ms until a queued transfer may become startable by time (0: one may
 * start now; INT64_MAX: none, or all wait for an address slot). */
int64_t polite_wait_ms(struct polite *p, int64_t now);
/* A transfer of host ended at now: give back ipkey's slot, learn the
 * host's address ip (CURLINFO_PRIMARY_IP, may be "" or NULL). */
void polite_ended(struct polite *p, const char *host, const char *ipkey,
                  const char *ip, int64_t now);
/* Give back the host and address slots taken by polite_next without a
 * transfer. */
void polite_release(struct polite *p, const char *host, const char *ipkey);
/* A transient failure of host: its back-off in ms (1 s doubling per
 * consecutive failure, capped by politeness.max_backoff); the host's
 * queued transfers wait it out from now. */
int64_t polite_failure(struct polite *p, const char *host, int64_t now,
                       int page_only);
/* One URL's own back-off before its retry number attempt (1, 2, ...):
 * 1 s doubling, capped by politeness.max_backoff. */
int64_t polite_url_backoff(const struct polite *p, unsigned attempt);
/* Nothing of host starts before until (ms; an earlier hold is kept when
 * later). */
void polite_hold(struct polite *p, const char *host, int64_t until);
/* A success of host: its next failure backs off from 1 s again, its hold
 * ends. */
void polite_success(struct polite *p, const char *host);
size_t polite_waiting(const struct polite *p);
/* Transfers of host in flight or queued (robots.txt and sitemaps too). */
size_t polite_host_load(struct polite *p, const char *host);
/* For progress and metrics: hosts with a transfer waiting now; transfers
 * that started later than they were queued (their host's gap or
 * connection limit, or their IP's) and the milliseconds they waited. */
struct polite_counts {
    size_t hosts_waiting;
    uint64_t waits, wait_ms;
};
void polite_counts(const struct polite *p, struct polite_counts *out);
/* Remove and return the first queued transfer regardless of time (stop). */
void *polite_take(struct polite *p);
/* The IP literal of a host key into out ("" when the host is a name). */
void polite_host_ip(const char *host, char *out, size_t cap);

/* -------------------------------------------------------- robots cache */

enum robots_state { ROBOTS_UNKNOWN, ROBOTS_FETCHING, ROBOTS_READY };

/* Which RFC 9309 §2.3.1 rule a robots.txt fetch fell under. */
enum robots_rule {
    ROBOTS_RULE_PARSED,      /* 2xx: the body's rules */
    ROBOTS_RULE_4XX,         /* 4xx: unavailable, allow all */
    ROBOTS_RULE_REDIRECTS,   /* more redirects than followed: unavailable,
                                allow all */
    ROBOTS_RULE_5XX,         /* 5xx: unreachable, disallow all */
    ROBOTS_RULE_UNREACHABLE, /* transport error or other status: disallow */
    ROBOTS_RULE_PRIVATE,     /* its address refused (scope.private_addresses):
                                the host's URLs are skipped, no retry */
};

/* Tries of a failing (5xx / unreachable) robots.txt, and the first wait;
 * the wait doubles: 1, 2, 4 s. After the last try the host stays
 * "disallow all" until robots.expiry. Errors robots_error_final calls
 * final are not retried (a dead host, see robots-cache.c). */
#define ROBOTS_FAIL_TRIES 4
#define ROBOTS_FAIL_WAIT_MS 1000
/* Sitemaps fetched per host (robots.txt lines and index entries), and how
 * deep sitemap indexes are followed (robots.txt's sitemaps are level 0). */
#define ROBOTS_SITEMAP_FETCHES 32
#define ROBOTS_SITEMAP_NESTING 2
/* After a change of Redis server, the hosts whose sitemaps were read this
 * recently are read again (sitemaps.c), if the cache still holds them. */
#define ROBOTS_SITEMAP_RECHECK_MS 600000

struct robots_cache;
struct robots_entry {
    struct robots_cache *cache; /* the cache holding it (robots_cache_get) */
    size_t cost;              /* its estimated bytes, counted there */
    char *host;               /* "host[:port]" */
    char *origin;             /* "http://host:port" */
    int state;
    int rule;                 /* enum robots_rule of the last fetch */
    int fails;                /* consecutive failed fetches */
    int try_depth;            /* depth of the lease that started the
                                 last robots.txt fetch */
    int dead_depth;           /* -1, or the host is dead (robots_error_final)
                                 for URLs of this depth and shallower */
    int64_t dead_ms;          /* when it was found dead */
    int refused_class;        /* ROBOTS_RULE_PRIVATE: the address's netclass */
    char error[256];          /* why the last fetch failed (5xx /
                                 unreachable): libcurl's text or "HTTP
                                 503"; "" after a success */
    struct parser_robots *rules;
    double crawl_delay;       /* seconds, -1 none (capped) */
    int64_t expires_ms;
    struct frontier_lease *parked; /* leases waiting for the rules */
    size_t nparked, capparked;
    /* sitemaps: queue of URLs still to fetch, one fetch at a time */
    int sm_depth;             /* depth given to sitemap URLs, -1 = none */
    int sm_started;           /* robots.txt's sitemaps were queued */
    int sm_busy;              /* a sitemap fetch is in flight */
    struct robots_sitemap {
        char *url;
        int level;            /* index nesting level */
    } *sm_queue;
    size_t sm_n, sm_cap, sm_fetched; /* [0, sm_fetched) taken; all kept */
    uint64_t sm_urls;         /* URLs taken from this host's sitemaps */
    int64_t sm_done_ms;       /* when they were all read (or the answer
                                 restored), 0 while they are not */
    /* the answer for Redis (robots_store_value), kept while the sitemaps
     * are read: it is stored after their URLs (sitemaps.c) */
    struct frontier_robots sm_keep;
    char *sm_keep_body;       /* owned; sm_keep.host NULL when none */
};

/* Most bytes the entries of one cache are estimated to hold (struct,
 * strings, robots.txt bytes parsed); past it, or past max_hosts entries,
 * idle entries are dropped least recently used first (robots-cache.c).
 * A fixed bound, not a setting: it keeps a few hundred hosts' worst-case
 * (500 KiB) robots.txt files, tens of thousands of typical ones (1-3 KiB),
 * and is what stops hostile robots.txt files from growing the node. */
#define ROBOTS_CACHE_BYTES ((size_t)64 << 20)
/* A cache of at most max_hosts hosts (robots.cache_hosts) and
 * ROBOTS_CACHE_BYTES. */
struct robots_cache *robots_cache_new(size_t max_hosts);
/* The entry of url's host, created (state UNKNOWN) when absent; it may
 * drop idle entries, so an entry pointer held across this call must
 * belong to an entry that is not idle (FETCHING, parked leases, a sitemap
 * in flight) or to url's host. */
struct robots_entry *robots_cache_get(struct robots_cache *rc, const char *url);
/* A new round: entries used before it may be dropped again (the entries
 * used in a round are not). */
void robots_cache_round(struct robots_cache *rc);
/* The entry of url's host if the cache holds one (never created), or NULL. */
struct robots_entry *robots_cache_find(struct robots_cache *rc, const char *url);
/* Entries held, their estimated bytes and the entries dropped so far. */
size_t robots_cache_count(const struct robots_cache *rc, size_t *bytes,
                          uint64_t *evicted);
/* Park a lease (moved: the caller's copy must not be freed). */
void robots_entry_park(struct robots_entry *e, struct frontier_lease *l);

/*
 * The rule a robots.txt fetch result falls under, and the rule set it
 * gives: 2xx -> the body parsed (gunzipped when gzip- or deflate-coded;
 * only the first 500 KiB are read) for `agent` with `flags`
 * (PARSER_ROBOTS_*); 4xx -> allow all; too many redirects (or a 3xx left
 * unfollowed) -> allow all (RFC 9309: "MAY assume ... unavailable"); 5xx,
 * transport errors and any other status -> disallow all. desc gets a short
 * line such as "404 -> allow all". The caller frees the rules.
 */
struct parser_robots *robots_rules_from(const struct fetch_result *r,
                                        const char *agent, unsigned flags,
                                        int *rule, char *desc, size_t cap);

/* Install rules from a robots.txt fetch result (robots_rules_from) and
 * set the expiry: robots.expiry, or for a failed fetch (5xx /
 * unreachable) a retry after ROBOTS_FAIL_WAIT_MS doubled per failure,
 * until ROBOTS_FAIL_TRIES; a final error (robots_error_final) marks the
 * host dead for e->try_depth instead, with no retry before
 * robots.expiry. Crawl-delay is capped at robots.max_crawl_delay. */
void robots_entry_set(struct robots_entry *e, const struct fetch_result *r,
                      const char *agent_token, const struct conf *c,
                      int64_t now_ms);
/* Is the entry's last fetch a failure that will be tried again? Leases of
 * such a host wait (are put back) instead of being skipped. */
/* Answers worth keeping in Redis for the host's next owner (robots.txt
 * read, 4xx or too many redirects; not 5xx or transport errors, which
 * the next owner should retry): fills out from r and returns 1, else 0.
 * out->host is left to the caller, out->body points into r. */
int robots_store_value(const struct robots_entry *e,
                       const struct fetch_result *r, int64_t now_ms,
                       struct frontier_robots *out);
/* Set e's rules from a stored answer as if fetched at s->fetched_ms;
 * 0 when it has expired (robots.expiry) and e is left as it was. The
 * previous owner queued the host's sitemaps, so this one does not. */
int robots_entry_restore(struct robots_entry *e,
                         const struct frontier_robots *s,
                         const char *agent_token, const struct conf *c,
                         int64_t now_ms);

int robots_entry_retrying(const struct robots_entry *e);
/* 1 when r's error will not go away on a retry seconds later (name not
 * resolved, connection refused, certificate not verified): the host is
 * dead, its robots.txt is not retried. */
int robots_error_final(const struct fetch_result *r);
/* A dead host whose URL of `depth` arrives at a deeper level than the
 * fetch that found it dead, ROBOTS_REVIVE_MS or more after it: its rules
 * are forgotten (state UNKNOWN) so that robots.txt is tried once more;
 * returns 1 then, else 0. */
#define ROBOTS_REVIVE_MS 30000
int robots_entry_revive(struct robots_entry *e, int depth, int64_t now_ms);
/* The gap (ms) before the host's next transfer: the larger of
 * politeness.delay and the host's Crawl-delay (already capped). */
int64_t robots_entry_delay_ms(const struct robots_entry *e,
                              const struct conf *c);
/* Queue a sitemap URL (copied) at nesting level `level`; refused (0)
 * past ROBOTS_SITEMAP_FETCHES or ROBOTS_SITEMAP_NESTING, or when the URL
 * was queued before (each sitemap fetched once). 1 if queued. */
int robots_entry_sitemap_push(struct robots_entry *e, const char *url,
                              int level);
/* Take the next queued sitemap (caller frees the string), or NULL. */
char *robots_entry_sitemap_take(struct robots_entry *e, int *level);
/* Keep a copy of the answer to store (robots_store_value's, host set)
 * until the sitemaps are read; robots_entry_keep_take hands it over (the
 * caller frees *body) and returns 0 when none is kept; _drop forgets it. */
void robots_entry_keep(struct robots_entry *e, const struct frontier_robots *s);
void robots_entry_keep_drop(struct robots_entry *e);
int robots_entry_keep_take(struct robots_entry *e, struct frontier_robots *out,
                           char **body);
/* Forget what was read of the host's sitemaps when they were started and
 * are not known to have been read ROBOTS_SITEMAP_RECHECK_MS or more
 * before now, so that sitemaps_queue starts them again: 1 then, else 0. */
int robots_entry_sitemaps_again(struct robots_entry *e, int64_t now_ms);
/* fn(ud, e) for every entry of the cache (fn must not add or drop any). */
void robots_cache_each(struct robots_cache *rc,
                       void (*fn)(void *ud, struct robots_entry *e), void *ud);
void robots_cache_free(struct robots_cache **rc);

/* -------------------------------------- per-URL numbers (fpmap.c) */

/* A number 0..255 per URL fingerprint, in memory, per node: a restart or a
 * host that moves to another node forgets them (each redirect hop is a new
 * URL through dedup, so a chain still ends; a page's hops fall back to its
 * depth level). At most max entries; a put past that is dropped. */
struct fpmap;
struct fpmap *fpmap_new(size_t max);
void fpmap_put(struct fpmap *m, uint64_t fp, int v);
/* put v unless fp holds a smaller number already */
void fpmap_lower(struct fpmap *m, uint64_t fp, int v);
/* The number of fp (dflt when none); take removes the entry. */
int fpmap_get(const struct fpmap *m, uint64_t fp, int dflt);
int fpmap_take(struct fpmap *m, uint64_t fp, int dflt);
size_t fpmap_count(const struct fpmap *m);
void fpmap_free(struct fpmap **m);
/* n->redir: hops that led to a queued redirect target; n->hops: link
 * distances shorter than the level a URL is queued at (node-admit.c) */
#define REDIRECTS_MAX (1u << 20)
#define HOPS_MAX (1u << 19)

/* ------------------------------------------------------- retry table */

/* URLs that failed transiently (retry.c): fingerprint -> attempts so far.
 * Only URLs that failed at least once are kept, until their final
 * outcome, so a linear scan is cheap; past RETRY_MAX entries a failure is
 * final. Zero-initialised is empty. */
#define RETRY_MAX 65536
struct retry_entry {
    uint64_t fp;
    unsigned char tries;
};
struct retry {
    struct retry_entry *v;
    size_t n, cap;
};
/* Should this transient failure of fp be retried (at most max times)?
 * Counts the attempt into *attempt if so; forgets fp when it is final. */
int retry_again(struct retry *t, uint64_t fp, int max, unsigned *attempt);
/* fp reached its final outcome: forget it. */
void retry_forget(struct retry *t, uint64_t fp);
void retry_release(struct retry *t);

/* ---------------------------------------------------------- the node */

/*
 * struct node: the state of one node loop (node.c), grouped by the phase
 * that owns it. The loop's phases live in their own files:
 *
 *   node-cluster.c  membership: heartbeat, partition ownership (tick timer)
 *   node-pop.c      pop: lease URLs into free slots; depth-level changes
 *   node-fetch.c    fetch: robots.txt check, politeness queue, transfers
 *   sitemaps.c      sitemap fetches of a host and their page URLs
 *   node-admit.c    results: content digests, noise stage, link admission
 *   node-write.c    write: WARC + JSON line of a page; lease completions
 *   node-store.c    robots.txt answers and noise state from/to Redis
 */
#define NODE_MAX_DEPTH DC_DEPTH_MAX
/* Finished pages handled per batch (digest claim, admission, completion). */
#define NODE_JOB_BATCH 1024
/* ... and at least this many, however slow pages are (node.c, batch_cap). */
#define NODE_JOB_BATCH_MIN 8
/* While idle, how often the node asks whether a depth level is done. */
#define NODE_LEVEL_CHECK_MS 20
/* Most body bytes of fetched pages waiting for the workers; beyond it the
 * node leases nothing new until they catch up. Under 50 ms of latency the
 * backlog must cover the pipeline's refill: 6 MiB once cost a third of
 * the pages/s; since transfers start during the node's Redis round trips
 * (node.c, on_reply_wait), 8 MiB costs nothing there (2156 pages/s against
 * 2064 with 16 MiB), while on loopback 16 MiB cost peak RSS (bench 40 x
 * 500: 62-68 MB, 56-63 MB with 8 MiB). Neither the mean transfer time nor
 * the backlog's count tells the two apart (256 transfers queue at a
 * loopback server too), so the bound stays fixed. */
#define NODE_BACKLOG_BYTES ((size_t)8 << 20)
/* Pages of the next level held until the current one ends, and leases of
 * it waiting for their host's robots.txt (node-ahead.c): at most this many
 * each, and this many bytes of pages. */
#define NODE_AHEAD_JOBS 1024
#define NODE_AHEAD_BYTES ((size_t)4 << 20)
/* Held leases dispatched per turn once their level has come. Each is a
 * host met for the first time: its robots.txt transfer costs the loop a
 * name lookup thread or a connection attempt (~0.1 ms). A site linking to
 * a hundred other hosts released them all in one turn, and its own
 * connection waited behind them (13 ms per level on bench/deadhosts.sh's
 * gen site); a few per turn let its pages go in between. */
#define NODE_AHEAD_RELEASE 16
/* URLs of a host leased beyond politeness.host_connections (hosts without
 * a politeness gap): the next transfer starts the moment one ends, while
 * the page before is still parsed and admitted; the politeness queue keeps
 * the host's transfers to host_connections. A lease counts until its page
 * is written and completed, so the window must cover the pages between a
 * transfer's end and its completion (workers, the results batch): with 16,
 * one host on one connection found it full after every results batch and
 * waited for the next pop (the dead-host bench site, 1,100 pages: 150-200
 * ms of 370-700 idle between transfers; 22-30 ms with 64, loop 0.50 ->
 * 0.43 s; 40 x 500 on loopback 3,367 -> 3,796 pages/s). Every ready host
 * still gets its host_connections before any gets more (lua/pop.lua).
 * With politeness.delay > 0 one (node.c): a host fetches one URL a gap,
 * and a host that has no clock in the frontier yet (nothing of it
 * completed, as every host at depth 0 and while the node leases the next
 * level ahead) would otherwise take the whole window, leases that it holds
 * for as many gaps, filling the node's room (node-pop.c: twice
 * fetch.concurrency) so that hosts with one URL left wait for a slot after
 * their gap. */
#define NODE_LEASE_AHEAD 64
/* The lease-ahead a node asks of the frontier: 1 with politeness.delay > 0,
 * else NODE_LEASE_AHEAD (node.c). */
int node__lease_ahead(const struct conf *c);
/* A step of the loop longer than cluster.node_timeout / NODE_STALL_PART
 * is reported (node.c): nothing on the loop may wait on the network
 * (name lookups run on libcurl's resolver threads, fetch.c) */
#define NODE_STALL_PART 5
#define NODE_STALL_WARN_MS 10000

struct node_opts;
struct node_stats;
struct dedup_cache;
struct parser_scope;
struct node;

/* Longest origin ("scheme://host:port") kept for node-offline.c's
 * control probe. */
#define NODE_ORIGIN_MAX 288
/* INFLIGHT_PROBE: node-offline.c's control probe (no host slot, no
 * lease, no robots entry; its result never leaves node-offline.c). */
enum { INFLIGHT_PAGE, INFLIGHT_ROBOTS, INFLIGHT_SITEMAP, INFLIGHT_PROBE };

/* A transfer queued for politeness or in flight (owned by the loop). */
struct inflight {
    int kind;
    struct frontier_lease lease;  /* pages */
    struct robots_entry *robots;  /* robots.txt and sitemap fetches */
    int level;                    /* sitemaps: index nesting level */
    char *url;                    /* robots.txt / sitemap URL (pages: lease.url) */
    char ipkey[POLITE_IP_MAX];    /* address slot held while in flight */
    int64_t queued_ms;            /* when it entered the politeness queue */
    int64_t backoff_ms;           /* pages: back-off of a transient failure */
};

/* One timer of the loop: fn runs once now >= due and sets the next due
 * (usually now + period_ms). */
struct node_timer {
    int64_t due;
    int period_ms;
    int (*fn)(struct node *n, struct node_timer *t, int64_t now);
};
/* In the order they run each turn. */
enum node_timer_id {
    TIMER_TICK,    /* noise state saved, cluster heartbeat (node-cluster.c) */
    TIMER_POP,     /* lease URLs into free slots (node-pop.c) */
    TIMER_LEVEL,   /* next depth level, when nothing is left (node-pop.c) */
    TIMER_DRAIN,   /* stopping: leave once nothing is in flight (node.c) */
    TIMER_RECLAIM, /* expired leases back to their queues (node.c) */
    TIMER_COUNT
};

/* A lease finished this turn, waiting for the batched completion. */
struct node_done {
    struct frontier_lease lease;
    int outcome;   /* enum frontier_outcome */
    int64_t until; /* the host's politeness gap ends then (ms, the node's
                    * clock), 0: no gap */
    uint64_t epoch; /* frontier_epoch its links were admitted in, or
                     * NODE_ANY_EPOCH (node-failover.c) */
};
/* A completion that admitted nothing: valid on any server. */
#define NODE_ANY_EPOCH UINT64_MAX

/* A link waiting for the batched admission: jobs[job]'s link `link`. */
struct node_admit {
    struct frontier_url url;
    uint32_t job, link;
};

/* ------------------------------------------------------------ monitor */

/* What the node loop publishes for progress lines and metrics, a copy
 * taken every NODE_PUBLISH_MS (node.c). */
#define NODE_PUBLISH_MS 250
struct node_snapshot {
    struct node_stats st;       /* warc_bytes filled in from the writers */
    int64_t ms;                 /* dc_now_ms() of the copy */
    int level;                  /* depth served, -1 before the first */
    size_t in_flight, parts_owned;
    struct polite_counts polite;
    uint64_t roundtrips, reconnects;
};
/* The monitor's picture: the last snapshot and the frontier's per-depth
 * figures of its last status read (crawl-wide). */
struct monitor_view {
    struct node_snapshot snap;
    const char *node_id;
    int ndepths;                /* 0 until a status read succeeded */
    struct frontier_status_depth depths[FRONTIER_STATUS_DEPTHS];
};

/* monitor.c: a thread that prints progress lines and feeds the metrics
 * server. monitor_start gives *m = NULL when there is nothing to do (quiet
 * and no metrics); DC_EINVAL with a message when the metrics address is
 * bad or cannot be bound. */
struct monitor;
int monitor_start(struct monitor **m, const struct conf *c,
                  const struct node_opts *o, const char *node_id, char *err,
                  size_t errlen);
void monitor_publish(struct monitor *m, const struct node_snapshot *s);
/* Stop the thread and the server; a progress line on a terminal is
 * erased (the summary follows). NULL ok. */
void monitor_stop(struct monitor **m);

/* metrics.c: the Prometheus text of a view (caller frees), and the HTTP
 * server that serves render(ud) at /metrics on its own thread. */
char *metrics_render(const struct monitor_view *v, size_t *len);
typedef char *(*metrics_render_fn)(void *ud, size_t *len);
struct metrics_server;
int metrics_server_start(struct metrics_server **s, const char *addr_port,
                         metrics_render_fn render, void *ud, char *err,
                         size_t errlen);
void metrics_server_stop(struct metrics_server **s);

struct node {
    /* given by the caller (borrowed) */
    struct frontier *f;
    const struct conf *c;
    const char *id;
    const struct node_opts *o;
    struct node_stats *st;
    /* the parts the loop drives (owned) */
    struct fetcher *fetch;
    struct workers *workers;
    struct robots_cache *robots;
    struct dedup_cache *cache;
    struct noise *noise;
    FILE *noise_log;              /* noise.log: the links dropped */
    struct fpmap *redir;          /* hops behind queued redirect targets */
    struct fpmap *hops;           /* link distances below a URL's level */
    struct polite *polite;        /* when leased transfers may start */
    struct fetch_result **ended;  /* finished transfers, results not taken */
    size_t nended, capended;
    /* transfers taken from the politeness queue inside a Redis call that
     * must be given back instead: they wait for the next launch, outside
     * any call (node__launch_ready) */
    struct inflight **deferred;
    size_t ndeferred, capdeferred;
    int pump_ok;                  /* the reply hook may run transfers */
    int pumping;                  /* ... and runs them now */
    /* the results phase yields to a due tick (node.c, phase_results) */
    int results_due;              /* finished pages put back: no wait */
    int64_t job_us;               /* results time per page, smoothed */
    struct parser_scope *scope;   /* which links are followed */
    struct warc_writer *writers[NODE_MAX_DEPTH + 1]; /* one per depth */
    char agent[64];               /* robots.txt product token */
    /* the loop: timers and turn flags */
    struct {
        struct node_timer timers[TIMER_COUNT];
        int stopping;  /* stop requested: no new leases, drain */
        int pop_empty; /* a pop found nothing here: the level timer checks */
        int restart;   /* the level changed: start a new turn at once */
        int done;      /* leave the loop (idle, or drained) */
        int kick;      /* leases were completed: try to pop at once */
    } loop;
    /* depth levels and pop */
    int level, maxd;
    int waiting_level;            /* no work at this level here */
    /* leases popped here and not completed yet, per depth (node-pop.c
     * counts them, node-write.c's completions take them off): when the
     * current level's reach 0, its end is asked for at once rather than
     * at the level timer's next period. Leases dropped without a
     * completion (a lost partition) leave it above 0: the timer then. */
    size_t out[NODE_MAX_DEPTH + 1];
    int seed_wait;                /* a daemon found no work at all: the
                                     seeds that end the wait may come with
                                     a new max_depth (node-pop.c) */
    int64_t next_ready;           /* an owned host is ready then (pop) */
    size_t parked;                /* leases waiting for robots.txt */
    /* the next level, fetched while this one drains (node-ahead.c) */
    struct {
        struct frontier_lease *lease; /* robots.txt unknown: not started */
        size_t nlease, caplease;
        struct work_job *jobs, *tail; /* pages whose links must wait */
        size_t njobs, bytes;
        int active;                   /* leased ahead since the level began */
        int release;                  /* some leases' level has come */
        int64_t renew_ms;             /* extend the held leases then (0: none) */
    } ahead;
    /* scope.private_addresses=seeds: when the seeds' ranges were last
     * asked for and when leases last came (dc_mono_us): a lease popped
     * before that read has its range there, if it ever will */
    int64_t ranges_read_us, popped_us;
    /* Redis failover (node-failover.c): the server epoch the caches
     * belong to; the epoch of the results batch being handled
     * (NODE_ANY_EPOCH outside one); orphans to put back at the tick */
    uint64_t epoch, batch_epoch;
    int orphans_due;
    /* the way to the web (node-offline.c): when a host last answered
     * (wall ms); failures waiting for a verdict (since held_since); cut
     * off since (0: not), the next probe; stopped waiting (gave_up) */
    struct {
        int64_t last_ok_ms;
        struct fetch_result **v;
        size_t n, cap;
        int64_t held_since, offline_since, probe_at;
        int gave_up;
        /* the two origins that answered last (distinct, "" none), and a
         * control probe of one of them in flight */
        char ok_origin[2][NODE_ORIGIN_MAX];
        int probing;
    } net;
    /* partitions lost (node-lapse.c): the frontier's lost count last
     * acted on; transfers aborted since, their slots not given back yet */
    struct {
        uint64_t lost_seen;
        struct fetch_result **v;
        size_t n, cap;
    } lapse;
    /* cluster: heartbeat figures */
    struct {
        uint64_t reconnects;      /* frontier_reconnects last seen */
        struct node_rate pages;   /* st->pages over time (pages/s) */
    } rate;
    /* completion batch (node-write.c) */
    struct {
        struct node_done *v;
        size_t n, cap;
    } done;
    /* admission batch (node-admit.c) */
    struct {
        struct node_admit *v;
        size_t n, cap;
    } adm;
    struct retry retry;           /* URLs that failed transiently */
    struct monitor *mon;          /* progress and metrics, or NULL */
    int64_t mon_next;             /* next snapshot for it (ms) */
    struct node_snapshot snap;    /* its buffer (large: not on the stack) */
    int64_t stall_quiet_us;       /* no stall warning before (node.c) */
    /* why the node stopped: a bad scope.* setting at setup, or the
     * output error ("PATH: reason") */
    char errmsg[768];
    /* DC_EOUTPUT once a page or "skipped" line could not be written:
     * nothing is written after it and the node stops (node.c hands its
     * leases and partitions back) */
    int write_rc;
};

/* node.c */
int node__stop_requested(void);
/* scope.private_addresses=seeds: read the seeds' ranges from the crawl's
 * Redis into the fetcher; returns 1 when an address of class c (refused
 * a moment ago) is allowed now, else 0 (other modes: 0, nothing read).
 * Redis is asked only when leases were popped since the last read (the
 * ranges of a seed are in Redis before the seed is queued), so a page
 * with many refused links costs one round trip per pop, not per link. */
int node__ranges_refresh(struct node *n, int c);
int node__local_idle(const struct node *n);
/* node-cluster.c, node-pop.c: timer functions */
int node__timer_tick(struct node *n, struct node_timer *t, int64_t now);
int node__timer_pop(struct node *n, struct node_timer *t, int64_t now);
int node__timer_level(struct node *n, struct node_timer *t, int64_t now);
/* node-ahead.c: the next level while this one drains. allowed: the pop
 * may lease URLs of level + 1 now. hold_lease: keep a lease of it whose
 * host's robots.txt is unknown (moved out of l). hold_job: 1 when the page
 * was kept (its links wait for the level's end). take_jobs: the kept pages
 * whose level has come, as a list. release_leases: dispatch the kept
 * leases whose level has come, NODE_AHEAD_RELEASE at a time (ahead.release
 * is set while more wait: the loop calls again next turn). renew: extend
 * the held leases when due. give_back: the node stops, everything held
 * goes back to its queue.
 * hold_job takes the job (1) in both cases: kept, or given back when the
 * node stops. */
int node__ahead_allowed(const struct node *n);
void node__ahead_hold_lease(struct node *n, struct frontier_lease *l);
int node__ahead_hold_job(struct node *n, struct work_job *j);
struct work_job *node__ahead_take_jobs(struct node *n);
void node__ahead_release_leases(struct node *n, int64_t now);
int node__ahead_renew(struct node *n, int64_t now);
void node__ahead_give_back(struct node *n);
void node__ahead_free(struct node *n);
/* node-fetch.c */
void node__dispatch(struct node *n, struct frontier_lease *l, int64_t now);
void node__launch_ready(struct node *n, int64_t now);
/* The same inside a Redis call (the reply hook): a transfer that would be
 * given back (partition moved, lease too old) or cannot start is deferred
 * to the next node__launch_ready, which runs outside any call. */
void node__launch_held(struct node *n, int64_t now);
/* How long the loop may wait before node__launch_ready could start a
 * transfer: 0 when one may start now; INT64_MAX while nothing waits for
 * politeness, or while every transfer slot (fetch.concurrency) is taken:
 * a transfer's end wakes the loop, and a wait of 0 then would spin. */
int64_t node__launch_wait_ms(struct node *n, int64_t now);
void node__drop_queued(struct node *n);
/* A transfer ended at now: its host and address slots are free (the next
 * transfer may start before node__on_fetched takes the result). */
void node__transfer_ended(struct node *n, struct fetch_result *r,
                          int64_t now);
void node__on_fetched(struct node *n, struct fetch_result *r);
/* on_fetched past the cut-off check (node-offline.c) */
void node__fetched(struct node *n, struct fetch_result *r);
void node__fetch_requeue(struct node *n, struct fetch_result *r);
void node__inflight_free(struct inflight *in);
/* The host a transfer is for (a page's lease, a robots.txt or sitemap's
 * entry; not for INFLIGHT_PROBE). */
const char *node__inflight_host(const struct inflight *in);
/* A finished or cancelled transfer dropped unrecorded: its lease is
 * forgotten here (it expires or is handed back in Redis), the rest freed. */
void node__result_drop(struct fetch_result *r);
/* sitemaps.c: start reading the host's sitemaps once its robots.txt is
 * read; keep (may be NULL) is the answer for Redis, stored now when there
 * are none, else once they are read. sitemaps_again: after a change of
 * Redis server, read again the sitemaps that may have been lost. */
void sitemaps_queue(struct node *n, struct robots_entry *e,
                    const struct frontier_robots *keep);
void sitemaps_again(struct node *n);
/* A queued sitemap fetch that does not run: skipped (moved 0: the next
 * one goes on) or its host's partition moved or the node stops (moved 1:
 * the host's sitemaps start again with its next lease here, and its
 * robots.txt answer is not stored). */
void sitemaps_not_read(struct node *n, struct robots_entry *e, int moved);
void sitemaps_done(struct node *n, struct robots_entry *e, int level,
                   struct fetch_result *r);
/* node-admit.c */
int node__claim_digests(struct node *n, struct work_job **jobs, size_t nj);
int node__admit_links(struct node *n, struct work_job **jobs, size_t nj);
/* A leased URL's link distance from the seeds: its depth level, or less
 * when n->hops knows a shorter path; never more than n->maxd. The entry
 * goes when the lease completes for good (node__complete_from). */
int node__distance(struct node *n, const struct frontier_lease *l);
/* noise.log: open OUT/noise-<id>.tsv (when the setting is on; DC_OK and
 * nothing done when off), close it; either returns DC_EOUTPUT with the
 * reason in n->errmsg when the file cannot be opened or written. */
int node__noise_log_open(struct node *n);
int node__noise_log_close(struct node *n);
/* node-write.c */
void node__lease_clear(struct frontier_lease *l);
void node__complete(struct node *n, struct frontier_lease *l, int outcome,
                    int64_t delay_ms);
void node__complete_from(struct node *n, struct frontier_lease *l,
                         int outcome, int64_t delay_ms, int64_t from_ms);
int node__flush_completions(struct node *n);
void node__done_release(struct node *n);
void node__skip_url(struct node *n, struct frontier_lease *l, const char *why,
                    const char *error, int outcome);
int node__finish_job(struct node *n, struct work_job *j);
/* node-lapse.c */
/* The partition of in's host. */
int node__inflight_partition(struct node *n, const struct inflight *in);
/* Partitions whose validity ended: abort their running transfers. */
void node__lapse_check(struct node *n);
/* Give back the slots of the aborted transfers, forget their leases. */
void node__lapse_flush(struct node *n);
/* l's partition is lost: l forgotten (1; write and complete nothing),
 * else 0. node__job_lapsed: the same for a job's lease. */
int node__lease_lapsed(struct node *n, struct frontier_lease *l);
int node__job_lapsed(struct node *n, struct work_job *j);
void node__lapse_init(struct node *n);
void node__lapse_release(struct node *n);
/* node-offline.c: is the node cut off from the web? */
/* How long a suspect failure waits for another host's answer, and the
 * gap between probes while cut off. */
#define NODE_OFFLINE_VERDICT_MS 2000
#define NODE_OFFLINE_PROBE_MS 1000
/* A failed name lookup this slow is a resolver that does not answer. */
#define NODE_OFFLINE_DNS_MS 1000
/* A result held for the verdict (1: the caller must not touch it). */
int node__offline_hold(struct node *n, struct fetch_result *r);
/* r ended the control probe: handled and freed (1), else 0. */
int node__offline_probe_ended(struct node *n, struct fetch_result *r);
/* Verdicts due at now; the cut-off's time bound. */
void node__offline_tick(struct node *n, int64_t now);
/* How many transfers may start now (cap while connected). */
size_t node__offline_cap(struct node *n, int64_t now, size_t cap);
/* While cut off, the ms until the next probe may start (0: now, or
 * connected). */
int64_t node__offline_wait_ms(const struct node *n, int64_t now);
void node__offline_release(struct node *n);
/* node-failover.c */
/* The Redis server changed since the caches were filled: drop them and
 * read again the sitemaps that may be lost; 1 then, else 0. */
int node__failover_check(struct node *n);
/* Complete the done batch (k leases), none on a newer server than the
 * one its links went to. */
int node__complete_epoch(struct node *n, struct frontier_lease *l,
                         int *outcome, int64_t *delay,
                         const uint64_t *epoch, size_t k);
/* node-store.c */
int node__robots_from_store(struct node *n, struct frontier_lease *l,
                            size_t nl, int64_t now);
void node__noise_from_store(struct node *n, const struct frontier_lease *l,
                            size_t nl);
void node__noise_flush(struct node *n);

#endif
