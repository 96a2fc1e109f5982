/*
 * noise.c: the cluster stage and the per-host state (see noise.h).
 *
 * Per host: two cluster sets, `content` (URLs that survived the block
 * stage) and `nav` (the noise samples), each at most max_clusters
 * clusters in fixed slots. A new cluster takes a free slot, else the
 * least recently used one; "first cluster" in the join rule means first in
 * slot order. Each cluster has a representative (the URL that founded it),
 * a count of distinct members (exact up to MEMBERS_KEEP, by fingerprint),
 * and its admitted count for the template budget.
 *
 * Per page: the nav links are clustered first, so the page's own samples
 * count; then each other link joins or founds its content cluster, and is
 * dropped when that cluster's representative is similar to the
 * representative of a nav cluster with at least template_min distinct
 * members, or when the cluster has used its budget.
 *
 * Why template_min (default 2) and not every nav cluster: a sidebar of
 * "popular posts" puts single article URLs into the nav set, and the same
 * articles are linked from text too; with template_min 1 every such text
 * link is dropped (on the generated test site this cut the precision of
 * "noise" to about 0.6; bench/noise-eval shows both). A nav cluster with
 * two or more distinct URLs is a template (a menu of sort orders, a
 * calendar), which is what the cluster stage is for.
 *
 * Costs: an exact-URL memo per host (fingerprint -> cluster, direct
 * mapped) answers repeated links (menus repeat on every page) without any
 * LCS; a length bound skips representatives that cannot reach the
 * threshold (sim <= (1 + short/long) / 2); whether a content cluster
 * looks like navigation is cached until the nav set changes.
 *
 * Repeated rule (noise_repeat): per host a set of link fingerprints seen
 * in over-ratio blocks, NOISE_SEEN_MAX entries in 4-way buckets; a new
 * fingerprint replaces the entry of its bucket whose last sighting is
 * oldest, so links that recur on every page (menus) stay while one-off
 * tables of contents age out. The page's over-ratio links are grouped by
 * block (sorted in a scratch array kept in struct noise); a block repeats
 * when at least NOISE_REPEAT_SHARE of its links are in the set as it was
 * before the page; then the links of the page's over-ratio blocks of at
 * least NOISE_REPEAT_MIN links are recorded.
 *
 * Why single-link blocks are judged but not recorded: a table whose cells
 * each hold one link (the Python docs' module index, py-modindex.html) is
 * a list, not a menu, yet it names most links of the library's table of
 * contents; recording those cells made that table of contents look
 * repeated and cut off the section pages only it links (Python docs kept
 * 0.81 of the noise-off pages with single-link blocks recorded, 0.88
 * without; bench/noise-real.sh). A fingerprint is the FNV-1a hash of the
 * canonical URL; a collision can only make a block look repeated early.
 *
 * Signals rule (noise_repeat, the default): the same table holds two
 * kinds of fingerprints, told apart by a salt (nav_fp): links of
 * over-ratio blocks outside semantic navigation (for P, as above, blocks
 * of NOISE_REPEAT_MIN+ links), and links of semantic navigation blocks
 * (the navigation history: contextual links and which S links are noise
 * samples). The page's over-ratio links are grouped by block; each block
 * is judged (signals_block), then the page guard, then the page's links
 * are recorded. Measured with bench/noise-real.sh (depth 3, share of the
 * noise-off pages kept): with every navigation link a noise sample,
 * Javadoc kept 0.53 (its source pages src-html/.../X.html resemble the
 * per-class class-use/X.html menu links), and tests/e2e/pager.sh's site
 * lost its sliding pager's pages (its numbers, dropped as repeated, made
 * the next numbers look-alikes); with only recurring navigation as
 * samples the pager site is whole and Javadoc keeps 0.63 (the rest:
 * class-use pages linked only from its menu). The contextual keep takes
 * Javadoc to 0.97 and costs the generated bench site 3.0 % of its pages
 * fetched through navigation only (0 without; tests/e2e/noise.sh).
 *
 * Cluster recurrence (signals): each nav cluster counts the pages that fed
 * it (last_page, pages); with fewer than two it drops no look-alike.
 *
 * Tickets (noise_admitted): host slot (16 bits), cluster slot (16 bits),
 * low 32 bits of the cluster's serial; stale tickets fail the serial check.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"

#define MEMBERS_KEEP 8
#define MEMO_SLOTS 1024 /* per host, power of two */
#define SEEN_WAYS 4
#define SEEN_BUCKETS (NOISE_SEEN_MAX / SEEN_WAYS) /* power of two */

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
    struct cluster *c;
    size_t n; /* slots used so far (<= max_clusters) */
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
    struct memo_ent *memo;
    struct seen_ent *seen; /* SEEN_BUCKETS * SEEN_WAYS; repeated rule */
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
    struct noise_state *gone; /* dirty hosts dropped (LRU), not yet taken */
    size_t ngone, gone_cap;
    size_t recur_min; /* pages a nav cluster needs to drop look-alikes */
};

static void state_keep_gone(struct noise *nz, struct host *h);

int noise_block_is_nav(double link_ratio, size_t text, size_t link_text)
{
    if (!text)
        return 1;
    return (double)link_text > link_ratio * (double)text;
}

int noise_rule_parse(const char *s, int *rule)
{
    if (s && strcmp(s, "signals") == 0)
        *rule = NOISE_RULE_SIGNALS;
    else if (s && strcmp(s, "ratio") == 0)
        *rule = NOISE_RULE_RATIO;
    else if (s && strcmp(s, "repeated") == 0)
        *rule = NOISE_RULE_REPEATED;
    else
        return DC_EINVAL;
    return DC_OK;
}

struct noise *noise_new(const struct noise_conf *c)
{
    struct noise *nz = xcalloc(1, sizeof(*nz));

    nz->c = *c;
    if (nz->c.max_clusters < 1)
        nz->c.max_clusters = 1;
    if (nz->c.max_clusters > 65535)
        nz->c.max_clusters = 65535;
    if (nz->c.template_min < 1)
        nz->c.template_min = 1;
    nz->recur_min = nz->c.block_rule == NOISE_RULE_SIGNALS ? 2 : 1;
    nz->hosts = xcalloc(NOISE_MAX_HOSTS, sizeof(*nz->hosts));
    noise__pat_init(&nz->pat);
    return nz;
}

/* ------------------------------------------------------------- hosts */

static void cset_release(struct cset *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->c[i].rep);
    free(s->c);
    s->c = NULL;
    s->n = 0;
}

static void host_release(struct host *h)
{
    free(h->name);
    cset_release(&h->content);
    cset_release(&h->nav);
    free(h->memo);
    free(h->seen);
    memset(h, 0, sizeof(*h));
}

static struct host *host_get(struct noise *nz, const char *name, size_t len)
{
    struct host *h, *lru = NULL;
    size_t i;

    for (i = 0; i < nz->nhosts; i++) {
        h = &nz->hosts[i];
        if (h->len == len && memcmp(h->name, name, len) == 0)
            goto found;
        if (!lru || h->used < lru->used)
            lru = h;
    }
    if (nz->nhosts < NOISE_MAX_HOSTS) {
        h = &nz->hosts[nz->nhosts++];
    } else {
        h = lru;
        state_keep_gone(nz, h);
        host_release(h);
    }
    h->name = xmalloc(len + 1);
    memcpy(h->name, name, len);
    h->name[len] = '\0';
    h->len = len;
    h->content.c = xcalloc(nz->c.max_clusters, sizeof(struct cluster));
    h->nav.c = xcalloc(nz->c.max_clusters, sizeof(struct cluster));
    h->memo = xcalloc(MEMO_SLOTS, sizeof(*h->memo));
    if (nz->c.enabled && nz->c.block_rule != NOISE_RULE_RATIO)
        h->seen = xcalloc(SEEN_BUCKETS * SEEN_WAYS, sizeof(*h->seen));
    h->nav_version = 1;
found:
    h->used = ++nz->clock;
    return h;
}

/* ---------------------------------------------------------- clusters */

static uint64_t fp_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

/* Could a and b (lengths) reach similarity t? */
static int len_ok(size_t a, size_t b, double t)
{
    size_t lo = a < b ? a : b, hi = a < b ? b : a;

    if (!hi)
        return 1;
    return (1.0 + (double)lo / (double)hi) / 2 >= t;
}

static void member_add(struct cluster *c, uint64_t fp)
{
    size_t i, k = c->members < MEMBERS_KEEP ? c->members : MEMBERS_KEEP;

    for (i = 0; i < k; i++)
        if (c->fps[i] == fp)
            return;
    if (c->members < MEMBERS_KEEP)
        c->fps[c->members] = fp;
    c->members++;
}

/* The first cluster of s whose representative is similar to the pattern
 * (set to key), or -1. */
static long cset_find(struct noise *nz, struct cset *s, size_t keylen)
{
    size_t i;

    for (i = 0; i < s->n; i++) {
        struct cluster *c = &s->c[i];
        if (!c->rep || !len_ok(keylen, c->len, nz->c.similarity))
            continue;
        if (noise__pat_sim(&nz->pat, c->rep, c->len) >= nz->c.similarity)
            return (long)i;
    }
    return -1;
}

static size_t cset_found(struct noise *nz, struct host *h, struct cset *s,
                         const char *key, size_t len, int nav)
{
    size_t i, slot = 0;

    if (s->n < nz->c.max_clusters) {
        slot = s->n++;
    } else {
        for (i = 1; i < s->n; i++)
            if (s->c[i].used < s->c[slot].used)
                slot = i;
        free(s->c[slot].rep);
        if (nav)
            h->nav_version++;
    }
    memset(&s->c[slot], 0, sizeof(s->c[slot]));
    s->c[slot].rep = xmalloc(len + 1);
    memcpy(s->c[slot].rep, key, len);
    s->c[slot].rep[len] = '\0';
    s->c[slot].len = len;
    s->c[slot].serial = ++nz->serial;
    return slot;
}

/* Nav cluster c got a member on the host's current page. */
static void nav_page(struct noise *nz, struct host *h, struct cluster *c)
{
    if (c->last_page == h->fpages)
        return;
    c->last_page = h->fpages;
    if (++c->pages == nz->recur_min && c->members >= nz->c.template_min)
        h->nav_version++;
}

/* The cluster key->fp joins in s (founding one if needed). */
static struct cluster *cluster_of(struct noise *nz, struct host *h, int nav,
                                  const char *key, size_t len, size_t *slotp)
{
    struct cset *s = nav ? &h->nav : &h->content;
    uint64_t fp = fp_bytes(key, len) ^ (uint64_t)nav;
    struct memo_ent *m = &h->memo[fp & (MEMO_SLOTS - 1)];
    struct cluster *c;
    size_t before;
    long i;

    if (m->fp == fp && m->nav == nav && s->c[m->slot].rep &&
        s->c[m->slot].serial == m->serial) {
        c = &s->c[m->slot];
        *slotp = m->slot;
        c->used = ++nz->clock;
        if (nav)
            nav_page(nz, h, c);
        return c;
    }
    noise__pat_set(&nz->pat, key, len);
    i = cset_find(nz, s, len);
    if (i < 0)
        i = (long)cset_found(nz, h, s, key, len, nav);
    c = &s->c[i];
    c->used = ++nz->clock;
    before = c->members;
    member_add(c, fp);
    if (nav && before < nz->c.template_min &&
        c->members >= nz->c.template_min && c->pages >= nz->recur_min)
        h->nav_version++;
    if (nav)
        nav_page(nz, h, c);
    m->fp = fp;
    m->nav = nav;
    m->slot = (uint32_t)i;
    m->serial = c->serial;
    *slotp = (size_t)i;
    return c;
}

/* Does content cluster c look like one of the host's nav templates? */
static int looks_nav(struct noise *nz, struct host *h, struct cluster *c)
{
    size_t i;

    if (c->nav_checked == h->nav_version)
        return c->looks_nav;
    c->looks_nav = 0;
    c->nav_checked = h->nav_version;
    noise__pat_set(&nz->pat, c->rep, c->len);
    for (i = 0; i < h->nav.n; i++) {
        struct cluster *t = &h->nav.c[i];
        if (!t->rep || t->members < nz->c.template_min ||
            t->pages < nz->recur_min ||
            !len_ok(c->len, t->len, nz->c.similarity))
            continue;
        if (noise__pat_sim(&nz->pat, t->rep, t->len) >= nz->c.similarity) {
            c->looks_nav = 1;
            break;
        }
    }
    return c->looks_nav;
}

/* ------------------------------------------------------------ filter */

/* The compared part of url: path+query on the page's host, else the URL
 * without its scheme; at most NOISE_KEY_MAX bytes. */
static const char *url_key(const char *url, const char *host, size_t hostlen,
                           size_t *len)
{
    const char *s = strstr(url, "://"), *p;
    size_t n;

    s = s ? s + 3 : url;
    p = s + strcspn(s, "/?#");
    if ((size_t)(p - s) == hostlen && memcmp(s, host, hostlen) == 0)
        s = p;
    n = strlen(s);
    *len = n < NOISE_KEY_MAX ? n : NOISE_KEY_MAX;
    return s;
}

static uint64_t ticket_of(const struct noise *nz, const struct host *h,
                          size_t slot, const struct cluster *c)
{
    uint64_t hs = (uint64_t)(h - nz->hosts);

    return hs << 48 | (uint64_t)slot << 32 | (c->serial & 0xffffffffu);
}

static unsigned char judge(struct noise *nz, struct host *h,
                           struct cluster *c)
{
    if (looks_nav(nz, h, c))
        return NOISE_CLUSTER;
    if (nz->c.cluster_budget && c->admitted >= nz->c.cluster_budget)
        return NOISE_BUDGET;
    return NOISE_KEEP;
}

void noise_filter(struct noise *nz, const char *host, size_t hostlen,
                  noise_url_fn url, void *ud, size_t n,
                  const unsigned char *nav, unsigned char *verdict,
                  uint64_t *ticket, struct noise_stats *st)
{
    struct noise_stats local = {0};
    struct host *h;
    struct cluster *c;
    size_t i, len, slot;
    const char *key;

    if (!st)
        st = &local;
    st->seen += n;
    memset(verdict, NOISE_KEEP, n);
    if (ticket)
        memset(ticket, 0, n * sizeof(*ticket));
    if (!nz->c.enabled || !n)
        return;
    h = host_get(nz, host, hostlen);
    h->fpages++;
    for (i = 0; nav && i < n; i++) {
        if (!nav[i])
            continue;
        verdict[i] = NOISE_BLOCK;
        st->dropped_block++;
        if (nav[i] == NOISE_NAV_QUIET)
            continue;
        key = url_key(url(ud, i), host, hostlen, &len);
        cluster_of(nz, h, 1, key, len, &slot);
    }
    for (i = 0; i < n; i++) {
        if (nav && nav[i])
            continue;
        key = url_key(url(ud, i), host, hostlen, &len);
        c = cluster_of(nz, h, 0, key, len, &slot);
        verdict[i] = judge(nz, h, c);
        if (verdict[i] == NOISE_CLUSTER)
            st->dropped_cluster++;
        else if (verdict[i] == NOISE_BUDGET)
            st->refused_budget++;
        else if (ticket)
            ticket[i] = ticket_of(nz, h, slot, c);
    }
}

/* ------------------------------------------------------------ repeat */

static int seen_has(const struct host *h, uint64_t fp)
{
    const struct seen_ent *b = &h->seen[(fp & (SEEN_BUCKETS - 1)) * SEEN_WAYS];
    size_t w;

    for (w = 0; w < SEEN_WAYS; w++)
        if (b[w].fp == fp)
            return 1;
    return 0;
}

static void seen_put(struct host *h, uint64_t fp)
{
    struct seen_ent *b = &h->seen[(fp & (SEEN_BUCKETS - 1)) * SEEN_WAYS];
    size_t w, old = 0;

    for (w = 0; w < SEEN_WAYS; w++) {
        if (b[w].fp == fp)
            break;
        if (b[w].page < b[old].page) /* empty ones have page 0 */
            old = w;
    }
    if (w == SEEN_WAYS) {
        w = old;
        b[w].fp = fp;
    }
    b[w].page = h->pages;
}

static int rep_cmp(const void *a, const void *b)
{
    const struct rep_ent *x = a, *y = b;

    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Judge the over-ratio block e[0..k) (one block's links); sets e[j].fp. */
static void repeat_block(const struct host *h, noise_url_fn url, void *ud,
                         struct rep_ent *e, size_t k, unsigned char *nav,
                         struct noise_stats *st)
{
    size_t j, seen = 0;
    const char *u;

    for (j = 0; j < k; j++) {
        u = url(ud, e[j].i);
        e[j].fp = fp_bytes(u, strlen(u));
        seen += (size_t)seen_has(h, e[j].fp);
    }
    if ((double)seen >= NOISE_REPEAT_SHARE * (double)k)
        return;
    for (j = 0; j < k; j++)
        nav[e[j].i] = 0;
    st->kept_unrepeated += k;
}

/* Nav history (signals rule): a second kind of fingerprint in the same
 * table, told apart by a salt. */
static uint64_t nav_fp(uint64_t fp)
{
    fp ^= 0x9e3779b97f4a7c15ull;
    return fp ? fp : 1;
}

static int sig_snav(unsigned sig)
{
    return (sig & (NOISE_SIG_NAV | NOISE_SIG_MAIN)) == NOISE_SIG_NAV;
}

/*
 * Signals rule: judge the over-ratio block e[0..k) (one block's links; they
 * share the block's signals). Sets e[j].fp and nav[]: 0 content, 1
 * navigation and a noise sample, NOISE_NAV_QUIET navigation only.
 */
static void signals_block(const struct host *h, noise_url_fn url, void *ud,
                          struct rep_ent *e, size_t k, unsigned char *nav,
                          struct noise_stats *st)
{
    size_t j, seen = 0, hist = 0;
    int snav = sig_snav(e[0].sig), repeated, context, known;
    unsigned char v;
    const char *u;

    for (j = 0; j < k; j++) {
        u = url(ud, e[j].i);
        e[j].fp = fp_bytes(u, strlen(u));
        seen += (size_t)seen_has(h, e[j].fp);
        if (snav)
            hist += (size_t)seen_has(h, nav_fp(e[j].fp));
    }
    /* P: a block of NOISE_JUDGE_MIN+ links, mostly seen before */
    repeated = k >= NOISE_JUDGE_MIN &&
               (double)seen >= NOISE_REPEAT_SHARE * (double)k;
    /* S: a recurring menu; its links new to the host's navigation are
     * per-page (contextual) links once the host has a history */
    context = snav && h->pages >= NOISE_CONTEXT_PAGES &&
              k >= NOISE_JUDGE_MIN &&
              (double)hist >= NOISE_CONTEXT_SHARE * (double)k;
    for (j = 0; j < k; j++) {
        if (snav) {
            known = seen_has(h, nav_fp(e[j].fp));
            v = context && !known ? 0 : known ? 1 : NOISE_NAV_QUIET;
        } else {
            v = repeated && seen_has(h, e[j].fp) ? NOISE_NAV_QUIET : 0;
        }
        nav[e[j].i] = v;
        st->kept_unrepeated += !v;
    }
}

/* Signals rule over the page's k over-ratio links (nz->rep, by block). */
static void signals_page(struct noise *nz, struct host *h, noise_url_fn url,
                         void *ud, size_t n, size_t k, unsigned char *nav,
                         size_t page_text, struct noise_stats *st)
{
    struct rep_ent *e = nz->rep;
    size_t i, j, dropped = 0;

    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && e[j].block == e[i].block; j++)
            ;
        signals_block(h, url, ud, e + i, j - i, nav, st);
    }
    /* page guard: keep what only R and P condemned */
    for (i = 0; i < k; i++)
        dropped += nav[e[i].i] != 0;
    if ((double)dropped >= NOISE_GUARD_SHARE * (double)n &&
        page_text < NOISE_GUARD_TEXT) {
        for (i = 0; i < k; i++) {
            if (!nav[e[i].i] || sig_snav(e[i].sig))
                continue;
            nav[e[i].i] = 0;
            st->kept_unrepeated++;
            st->kept_guard++;
        }
    }
    /* record: links of over-ratio blocks for P, semantic ones apart */
    h->pages++;
    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && e[j].block == e[i].block; j++)
            ;
        if (sig_snav(e[i].sig)) {
            for (; i < j; i++)
                seen_put(h, nav_fp(e[i].fp));
            continue;
        }
        if (j - i < NOISE_REPEAT_MIN)
            continue;
        for (; i < j; i++)
            seen_put(h, e[i].fp);
    }
}

void noise_repeat(struct noise *nz, const char *host, size_t hostlen,
                  noise_url_fn url, void *ud, size_t n, const uint32_t *block,
                  unsigned char *nav, size_t page_text,
                  struct noise_stats *st)
{
    struct noise_stats local = {0};
    struct host *h;
    size_t i, k = 0, j;

    if (!st)
        st = &local;
    if (!nz->c.enabled || nz->c.block_rule == NOISE_RULE_RATIO || !block ||
        !n) {
        for (i = 0; i < n; i++)
            nav[i] = (nav[i] & NOISE_SIG_RATIO) != 0;
        return;
    }
    xgrow((void **)&nz->rep, &nz->rep_cap, n, sizeof(*nz->rep));
    for (i = 0; i < n; i++) {
        if (!(nav[i] & NOISE_SIG_RATIO)) {
            nav[i] = 0;
            continue;
        }
        nz->rep[k].block = block[i];
        nz->rep[k].sig = nav[i];
        nz->rep[k++].i = (uint32_t)i;
        nav[i] = 1;
    }
    if (!k)
        return;
    h = host_get(nz, host, hostlen);
    qsort(nz->rep, k, sizeof(*nz->rep), rep_cmp);
    if (nz->c.block_rule == NOISE_RULE_SIGNALS) {
        signals_page(nz, h, url, ud, n, k, nav, page_text, st);
        return;
    }
    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && nz->rep[j].block == nz->rep[i].block; j++)
            ;
        repeat_block(h, url, ud, nz->rep + i, j - i, nav, st);
    }
    /* record the links of this page's blocks of NOISE_REPEAT_MIN or more */
    h->pages++;
    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && nz->rep[j].block == nz->rep[i].block; j++)
            ;
        if (j - i < NOISE_REPEAT_MIN)
            continue;
        for (; i < j; i++)
            seen_put(h, nz->rep[i].fp);
    }
}

size_t noise__seen_count(struct noise *nz, const char *host, size_t hostlen)
{
    size_t i, k, n = 0;

    for (i = 0; i < nz->nhosts; i++) {
        const struct host *h = &nz->hosts[i];
        if (h->len != hostlen || memcmp(h->name, host, hostlen) || !h->seen)
            continue;
        for (k = 0; k < SEEN_BUCKETS * SEEN_WAYS; k++)
            n += h->seen[k].fp != 0;
    }
    return n;
}

void noise_admitted(struct noise *nz, uint64_t ticket)
{
    size_t hs = (size_t)(ticket >> 48), slot = (size_t)(ticket >> 32) & 0xffff;
    struct host *h;
    struct cluster *c;

    if (!nz || !ticket || hs >= nz->nhosts)
        return;
    h = &nz->hosts[hs];
    if (!h->name || slot >= h->content.n)
        return;
    c = &h->content.c[slot];
    if (c->rep && (c->serial & 0xffffffffu) == (ticket & 0xffffffffu))
        c->admitted++;
}

void noise_free(struct noise **nzp)
{
    struct noise *nz;
    size_t i;

    if (!nzp || !*nzp)
        return;
    nz = *nzp;
    for (i = 0; i < nz->nhosts; i++)
        host_release(&nz->hosts[i]);
    free(nz->hosts);
    noise__pat_release(&nz->pat);
    free(nz->rep);
    noise_state_free(nz->gone, nz->ngone);
    free(nz);
    *nzp = NULL;
}

/* ------------------------------------------------------------- state */

/*
 * Persistence of the repetition state (noise_state_*, see noise.h). Blob
 * layout, version 1 (integers as LEB128 varints):
 *
 *     'd' 'n' 1  pages  count  count x { fp: 8 bytes little-endian, age }
 *
 * pages is the host's page counter, age = pages - the entry's last
 * sighting (capped at STATE_AGE_MAX), entries most recent first. Only the
 * NOISE_STATE_KEEP most recent entries are written: the links that recur
 * on every page (menus) are the most recent ones, one-off tables of
 * contents the oldest. An import checks the whole blob before it changes
 * anything.
 */
#define STATE_AGE_MAX ((1u << 21) - 1) /* 3 varint bytes */

static size_t put_varint(unsigned char *out, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        out[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (unsigned char)v;
    return n;
}

/* A varint at *p (< end) into *v, *p moved past it; -1 when malformed. */
static int get_varint(const unsigned char **p, const unsigned char *end,
                      uint64_t *v)
{
    unsigned shift = 0;

    *v = 0;
    while (*p < end && shift < 64) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
        shift += 7;
    }
    return -1;
}

static struct host *host_find(struct noise *nz, const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < nz->nhosts; i++)
        if (nz->hosts[i].name && nz->hosts[i].len == len &&
            memcmp(nz->hosts[i].name, name, len) == 0)
            return &nz->hosts[i];
    return NULL;
}

static int ent_recent(const void *a, const void *b)
{
    const struct seen_ent *x = a, *y = b;

    return x->page > y->page ? -1 : x->page < y->page;
}

/* h's state as a blob into out (NOISE_STATE_MAX_BYTES); its length. */
static size_t state_write(const struct host *h, unsigned char *out)
{
    struct seen_ent *e;
    size_t i, k = 0, len = 3;

    out[0] = 'd';
    out[1] = 'n';
    out[2] = NOISE_STATE_VERSION;
    len += put_varint(out + len, h->pages);
    if (!h->seen) {
        len += put_varint(out + len, 0);
        return len;
    }
    e = xmalloc(SEEN_BUCKETS * SEEN_WAYS * sizeof(*e));
    for (i = 0; i < SEEN_BUCKETS * SEEN_WAYS; i++)
        if (h->seen[i].fp)
            e[k++] = h->seen[i];
    qsort(e, k, sizeof(*e), ent_recent);
    if (k > NOISE_STATE_KEEP)
        k = NOISE_STATE_KEEP;
    len += put_varint(out + len, k);
    for (i = 0; i < k; i++) {
        uint64_t age = h->pages >= e[i].page ? h->pages - e[i].page : 0;
        for (size_t b = 0; b < 8; b++)
            out[len++] = (unsigned char)(e[i].fp >> (8 * b));
        len += put_varint(out + len, age < STATE_AGE_MAX ? age : STATE_AGE_MAX);
    }
    free(e);
    return len;
}

size_t noise_state_export(struct noise *nz, const char *host, size_t hostlen,
                          unsigned char *out)
{
    struct host *h = host_find(nz, host, hostlen);

    if (!h || !h->seen)
        return 0;
    h->saved_pages = h->pages;
    return state_write(h, out);
}

/* Insert fp last seen at `page`, as seen_put does but keeping the more
 * recent sighting and never pushing out a more recent entry. */
static void seen_merge(struct host *h, uint64_t fp, uint64_t page)
{
    struct seen_ent *b = &h->seen[(fp & (SEEN_BUCKETS - 1)) * SEEN_WAYS];
    size_t w, old = 0;

    for (w = 0; w < SEEN_WAYS; w++) {
        if (b[w].fp == fp) {
            if (b[w].page < page)
                b[w].page = page;
            return;
        }
        if (b[w].page < b[old].page)
            old = w;
    }
    if (b[old].fp && b[old].page >= page)
        return;
    b[old].fp = fp;
    b[old].page = page;
}

int noise_state_import(struct noise *nz, const char *host, size_t hostlen,
                       const void *blob, size_t len)
{
    const unsigned char *p = blob, *end = p + len, *ents;
    uint64_t pages, count, v, age;
    struct host *h;
    size_t i;

    if (!nz->c.enabled)
        return DC_OK;
    h = host_get(nz, host, hostlen);
    if (!blob || !len)
        return DC_OK;
    if (len > NOISE_STATE_MAX_BYTES || len < 3 || p[0] != 'd' || p[1] != 'n' ||
        p[2] != NOISE_STATE_VERSION)
        return DC_EINVAL;
    p += 3;
    if (get_varint(&p, end, &pages) || get_varint(&p, end, &count) ||
        count > NOISE_STATE_KEEP)
        return DC_EINVAL;
    ents = p;
    for (i = 0; i < count; i++) { /* check it all first */
        if ((size_t)(end - p) < 8 || !memcmp(p, "\0\0\0\0\0\0\0\0", 8))
            return DC_EINVAL;
        p += 8;
        if (get_varint(&p, end, &age) || age > STATE_AGE_MAX)
            return DC_EINVAL;
    }
    if (p != end)
        return DC_EINVAL;
    if (h->pages < pages)
        h->pages = pages;
    for (p = ents, i = 0; i < count; i++) {
        v = 0;
        for (size_t b = 0; b < 8; b++)
            v |= (uint64_t)p[b] << (8 * b);
        p += 8;
        (void)get_varint(&p, end, &age);
        seen_merge(h, v, h->pages > age ? h->pages - age : 1);
    }
    h->saved_pages = h->pages;
    return DC_OK;
}

int noise_state_used(const struct noise *nz)
{
    return nz->c.enabled && nz->c.block_rule != NOISE_RULE_RATIO;
}

int noise_state_has(struct noise *nz, const char *host, size_t hostlen)
{
    return host_find(nz, host, hostlen) != NULL;
}

static void state_push(struct noise_state **v, size_t *n, size_t *cap,
                       const struct host *h)
{
    unsigned char buf[NOISE_STATE_MAX_BYTES];
    struct noise_state *s;

    xgrow((void **)v, cap, *n + 1, sizeof(**v));
    s = &(*v)[(*n)++];
    s->host = xmalloc(h->len + 1);
    memcpy(s->host, h->name, h->len + 1);
    s->hostlen = h->len;
    s->len = state_write(h, buf);
    s->blob = xmalloc(s->len);
    memcpy(s->blob, buf, s->len);
}

/* h is dropped (LRU): keep its state for the next noise_state_take_dirty
 * if it changed since it was last saved. */
static void state_keep_gone(struct noise *nz, struct host *h)
{
    if (!h->seen || h->pages == h->saved_pages ||
        nz->ngone >= NOISE_STATE_GONE_MAX)
        return;
    state_push(&nz->gone, &nz->ngone, &nz->gone_cap, h);
}

size_t noise_state_take_dirty(struct noise *nz, struct noise_state **out)
{
    struct noise_state *v = nz->gone;
    size_t n = nz->ngone, cap = nz->gone_cap, i;

    nz->gone = NULL;
    nz->ngone = nz->gone_cap = 0;
    for (i = 0; i < nz->nhosts; i++) {
        struct host *h = &nz->hosts[i];
        if (!h->name || !h->seen || h->pages == h->saved_pages)
            continue;
        state_push(&v, &n, &cap, h);
        h->saved_pages = h->pages;
    }
    if (!n) {
        free(v);
        v = NULL;
    }
    *out = v;
    return n;
}

void noise_state_free(struct noise_state *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(s[i].host);
        free(s[i].blob);
    }
    free(s);
}
