/*
 * noise-internal.h: helpers shared between the noise module's files, its
 * unit test and its benchmark; the per-host structs that noise.c,
 * noise-host.c and noise-state.c share (see noise.c for the design).
 *
 * Code outside of the noise module should use only the public functions
 * defined in "noise.h", and should *not* include this file.
 */
#ifndef DC_NOISE_INTERNAL_H
#define DC_NOISE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "noise.h"

/*
 * A prepared LCS pattern: the match masks of one string a, so that many
 * strings b can be compared with it. peq holds 256 rows of `words` words;
 * rows of bytes not in a are all zero between uses (set() clears only
 * the rows the previous pattern used).
 */
struct lcs_pat {
    uint64_t *peq;
    size_t words, cap_words; /* words in use / allocated per row */
    uint64_t *v;             /* working row, cap_words words */
    uint64_t rows[4];        /* bitmap of the non-zero rows */
    size_t m;
};

void noise__pat_init(struct lcs_pat *p);
void noise__pat_release(struct lcs_pat *p);
/* a is not kept. */
void noise__pat_set(struct lcs_pat *p, const char *a, size_t m);
size_t noise__pat_lcs(struct lcs_pat *p, const char *b, size_t n);
/* mean of LCS/m and LCS/n for the pattern and b. */
double noise__pat_sim(struct lcs_pat *p, const char *b, size_t n);

/* Repeated rule: fingerprints held for host (0 when it has no state). */
size_t noise__seen_count(struct noise *nz, const char *host, size_t hostlen);

/* The O(m n) dynamic program: the test oracle. */
size_t noise__lcs_dp(const char *a, size_t alen, const char *b, size_t blen);

/* ------------------------------------------------ noise*.c internals */

#define MEMBERS_KEEP 8
#define MEMO_SLOTS 1024 /* per host at most, power of two */
#define MEMO_START 64   /* ... at first, doubled past half full */
#define SEEN_WAYS 4
#define SEEN_BUCKETS (NOISE_SEEN_MAX / SEEN_WAYS) /* at most, power of two */
#define SEEN_START 16   /* buckets at first, doubled when one is full */

struct cluster {
    char *rep; /* NULL: free slot */
    size_t len;
    uint64_t serial, used, admitted;
    uint64_t fps[MEMBERS_KEEP];
    size_t members;
    uint64_t nav_checked; /* host nav_version when looks_nav was set; 0 never */
    int looks_nav;
    uint64_t last_page; /* nav set: host page that last added to it */
    uint64_t pages;     /* nav set: pages that added to it */
};

struct cset {
    struct cluster *c; /* grown as clusters are founded */
    size_t n;          /* slots used so far (<= max_clusters) */
    size_t cap;
};

struct memo_ent {
    uint64_t fp; /* 0: empty */
    uint64_t serial;
    uint32_t slot;
    int nav;
};

struct seen_ent {
    uint64_t fp;   /* 0: empty */
    uint64_t page; /* host page number of the last sighting */
};

struct host {
    char *name; /* NULL: free slot */
    size_t len;
    uint64_t used;
    struct cset content, nav;
    uint64_t nav_version;
    struct memo_ent *memo; /* memo_cap slots, memo_n of them used */
    size_t memo_cap, memo_n;
    struct seen_ent *seen; /* seen_nb * SEEN_WAYS; repeated rule */
    size_t seen_nb;
    uint64_t pages;        /* pages judged by noise_repeat */
    uint64_t saved_pages;  /* pages when last exported or imported */
    uint64_t fpages;       /* pages seen by noise_filter */
};

struct rep_ent {
    uint32_t block, i;
    uint64_t fp;
    unsigned sig; /* NOISE_SIG_* of the link's block */
};

struct noise {
    struct noise_conf c;
    struct host *hosts;
    size_t nhosts;
    uint64_t clock, serial;
    struct lcs_pat pat;
    struct rep_ent *rep; /* noise_repeat scratch */
    size_t rep_cap;
    /* noise_repeat's last page: sure[i] for a link of an outline (O), a
     * table of contents (T) or main content (M), which noise_filter keeps
     * even when it looks like navigation; sure_n links, 0 once
     * noise_filter took it */
    unsigned char *sure;
    size_t sure_cap, sure_n;
    struct noise_state *gone; /* dirty hosts dropped (LRU), not yet taken */
    size_t ngone, gone_cap;
    size_t recur_min; /* pages a nav cluster needs to drop look-alikes */
};

/* noise-host.c: the state of host name[0..len), made (dropping the least
 * recently used host when NOISE_MAX_HOSTS are held) when new, with its
 * tables; host_entry makes the entry only (the tables stay NULL until a
 * host_get: a host leased but never judged costs its name). */
struct host *noise__host_get(struct noise *nz, const char *name, size_t len);
struct host *noise__host_entry(struct noise *nz, const char *name,
                               size_t len);
/* noise-host.c: the state of host name[0..len), or NULL. */
struct host *noise__host_find(struct noise *nz, const char *name, size_t len);
void noise__host_release(struct host *h);
/* noise-host.c: FNV-1a of s[0..n), never 0. */
uint64_t noise__fp(const char *s, size_t n);
/* noise-host.c: the cluster key[0..len) joins or founds in the nav (nav
 * 1) or content set of h; its slot in *slot. */
struct cluster *noise__cluster_of(struct noise *nz, struct host *h, int nav,
                                  const char *key, size_t len, size_t *slot);
/* noise-host.c: is content cluster c like a template nav cluster? */
int noise__looks_nav(struct noise *nz, struct host *h, struct cluster *c);
/* noise-host.c: the seen table (repeated and signals rules). */
int noise__seen_has(const struct host *h, uint64_t fp);
void noise__seen_put(struct host *h, uint64_t fp);
void noise__seen_merge(struct host *h, uint64_t fp, uint64_t page);

/* noise-state.c: h is dropped (LRU): keep its state for
 * noise_state_take_dirty if it changed since it was last saved. */
void noise__state_keep_gone(struct noise *nz, struct host *h);

#endif
