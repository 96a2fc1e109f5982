/*
 * node-internal.h: the parts the node loop (node.c) is built from: the
 * libcurl fetcher (fetch.c), the parse/build worker pool (workers.c) and the
 * per-host robots.txt cache (robots-cache.c). Code outside crawler/ should
 * not include this file. politeness.c holds the node's local politeness
 * state (when a leased transfer may start).
 *
 * Ownership: a fetch_result is created by the fetcher, handed to the caller
 * by fetcher_next_done, carried through a work_job and freed with the job.
 */
#ifndef DC_NODE_INTERNAL_H
#define DC_NODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "frontier.h"
#include "merge.h"
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
    int curl_code;
    char error[256];    /* "" when none */
    int64_t started_ms;
    void *ud;           /* caller's */
};
void fetch_result_free(struct fetch_result *r);

struct fetcher;
struct fetcher *fetcher_new(const struct conf *c);
void fetcher_free(struct fetcher **f);
/* Start a GET of url (body capped at max_bytes). DC_OK or DC_ECURL. */
int fetcher_add(struct fetcher *f, const char *url, size_t max_bytes, void *ud);
/* Drive transfers; wait at most timeout_ms for activity or a wakeup. */
int fetcher_run(struct fetcher *f, int timeout_ms);
/* A finished transfer (caller owns it), or NULL. */
struct fetch_result *fetcher_next_done(struct fetcher *f);
/* Interrupt fetcher_run from another thread. */
void fetcher_wakeup(struct fetcher *f);
size_t fetcher_active(const struct fetcher *f);

/* ------------------------------------------------------------ workers */

/* Links of a page, ready for admission: canonical URL i is
 * blob + off[i] (NUL-terminated), its host blob + hoff[i] (hlen[i] bytes).
 * nav[i]: the noise block stage (worker) found link i only in blocks above
 * noise.link_ratio; blk[i]: that block (its parser block index), for the
 * repeated rule's per-host check on the node. verdict/ticket: the noise
 * cluster stage (node), n entries. */
struct work_links {
    char *blob;
    size_t blob_len, blob_cap;
    uint32_t *off, *hoff, *hlen, *blk;
    uint64_t *fp;
    unsigned char *nav, *verdict;
    uint64_t *ticket;
    size_t n, cap;
};

struct work_job {
    /* in */
    struct fetch_result *res;
    struct frontier_lease lease; /* owned copy */
    int depth;
    int follow;          /* extract links for admission (depth < max) */
    /* out */
    struct merge_built built;
    struct work_links links;
    size_t links_found, links_rejected, decoded_len;
    size_t links_new_count; /* set by the node after admission */
    char *dup_of_uri;       /* content duplicate of this URL (node) */
    int64_t dup_of_ms;
    struct noise_stats noise; /* this page's noise decisions (node) */
    int parsed;
    struct work_job *next;
};
void work_job_free(struct work_job *j);
/* The merge_page view of a job (pointers into the job). */
void work_job_page(const struct work_job *j, struct merge_page *pg);

struct workers;
typedef void (*workers_wake_fn)(void *ud);
/* Start n threads (n >= 1). wake(ud) is called from a worker thread after
 * each finished job. */
struct workers *workers_new(int n, const struct conf *c, workers_wake_fn wake,
                            void *ud);
void workers_submit(struct workers *w, struct work_job *j);
/* All finished jobs, as a list (caller owns them), or NULL. */
struct work_job *workers_take_done(struct workers *w);
size_t workers_pending(struct workers *w);
void workers_free(struct workers **w);

/* --------------------------------------------------------- politeness */

/* When a leased transfer may start (politeness.c): the host's gap since
 * the end of its last transfer, politeness.ip_connections per address,
 * and per-host back-off. */
#define POLITE_IP_MAX 64
struct polite;
struct polite *polite_new(const struct conf *c);
void polite_free(struct polite **p);
/* Queue a transfer of host (a host key, "host[:port]"); it may start
 * gap_ms after the end of the host's last transfer. ud is the caller's. */
void polite_queue(struct polite *p, const char *host, int64_t gap_ms,
                  void *ud);
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
/* A transient failure of host: its back-off in ms (1 s doubling per
 * consecutive failure, capped by politeness.max_backoff). */
/* Give back an address slot taken by polite_next without a transfer. */
void polite_release(struct polite *p, const char *ipkey);
int64_t polite_failure(struct polite *p, const char *host, int64_t now);
void polite_success(struct polite *p, const char *host);
size_t polite_waiting(const struct polite *p);
/* Remove and return the first queued transfer regardless of time (stop). */
void *polite_take(struct polite *p);
/* The IP literal of a host key into out ("" when the host is a name). */
void polite_host_ip(const char *host, char *out, size_t cap);

/* -------------------------------------------------------- robots cache */

enum robots_state { ROBOTS_UNKNOWN, ROBOTS_FETCHING, ROBOTS_READY };

struct robots_entry {
    char *host;               /* "host[:port]" */
    char *origin;             /* "http://host:port" */
    int state;
    struct parser_robots *rules;
    double crawl_delay;       /* seconds, -1 none */
    int64_t expires_ms;
    struct frontier_lease *parked; /* leases waiting for the rules */
    size_t nparked, capparked;
};

struct robots_cache;
struct robots_cache *robots_cache_new(void);
/* The entry of url's host, created (state UNKNOWN) when absent. */
struct robots_entry *robots_cache_get(struct robots_cache *rc, const char *url);
/* Park a lease (moved: the caller's copy must not be freed). */
void robots_entry_park(struct robots_entry *e, struct frontier_lease *l);
/* Install rules from a robots.txt fetch result (RFC 9309 §2.3.1: 2xx parse,
 * 4xx allow all, 5xx / unreachable disallow all). */
void robots_entry_set(struct robots_entry *e, const struct fetch_result *r,
                      const char *agent_token, int64_t now_ms);
void robots_cache_free(struct robots_cache **rc);

#endif
