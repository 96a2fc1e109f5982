/*
 * noise.c: the rules of the noise module (see noise.h): the cluster stage
 * (noise_filter) and the block stage's repeated and signals rules
 * (noise_repeat), page by page. The per-host history they read and write
 * (host table, cluster sets, seen table) is in noise-host.c, its export
 * and import in noise-state.c, the bit-parallel LCS in lcs.c; the structs
 * are in noise-internal.h.
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

int noise_block_is_nav(double link_ratio, size_t text, size_t link_text)
{
    if (!text)
        return 1;
    return (double)link_text > link_ratio * (double)text;
}

unsigned noise_block_signals(double link_ratio, size_t text, size_t link_text,
                             int snav, int main, size_t nlinks, size_t nsect,
                             size_t nav_links, size_t nav_mirror)
{
    unsigned sig = noise_block_is_nav(link_ratio, text, link_text)
                       ? NOISE_SIG_RATIO
                       : 0;
    sig |= snav ? NOISE_SIG_NAV : 0;
    sig |= main ? NOISE_SIG_MAIN : 0;
    if (nsect >= NOISE_OUTLINE_MIN &&
        (double)nsect >= NOISE_OUTLINE_SHARE * (double)nlinks)
        sig |= NOISE_SIG_OUTLINE;
    if (snav && !main && nav_links >= NOISE_JUDGE_MIN &&
        (double)nav_mirror >= NOISE_MIRROR_SHARE * (double)nav_links)
        sig |= NOISE_SIG_MIRROR;
    return sig;
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
const char *noise_verdict_name(unsigned v)
{
    static const char *const name[] = {"kept", "block", "cluster", "budget"};
    return v < sizeof(name) / sizeof(name[0]) ? name[v] : NULL;
}

void noise_sig_letters(unsigned sig, char buf[NOISE_SIG_LETTERS])
{
    static const unsigned bit[] = {NOISE_SIG_RATIO, NOISE_SIG_NAV,
                                   NOISE_SIG_MAIN, NOISE_SIG_OUTLINE,
                                   NOISE_SIG_MIRROR};
    size_t i, k = 0;

    for (i = 0; i < sizeof(bit) / sizeof(bit[0]); i++)
        if (sig & bit[i])
            buf[k++] = "RSMOC"[i];
    if (!k)
        buf[k++] = '-';
    buf[k] = '\0';
}

/* ------------------------------------------------------------ filter */

/* url without its scheme; *path its path and query when url is on the
 * page's host, else NULL. */
static const char *url_split(const char *url, const char *host,
                             size_t hostlen, const char **path)
{
    const char *s = strstr(url, "://");

    s = s ? s + 3 : url;
    *path = strcspn(s, "/?#") == hostlen && memcmp(s, host, hostlen) == 0
                ? s + hostlen
                : NULL;
    return s;
}

/* The compared part of url: path+query on the page's host, else the URL
 * without its scheme; at most NOISE_KEY_MAX bytes. */
static const char *url_key(const char *url, const char *host, size_t hostlen,
                           size_t *len)
{
    const char *p, *s = url_split(url, host, hostlen, &p);
    size_t n;

    if (p)
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

/* sure: a link its block showed to be content (O, T, M): no look-alike test,
 * only the template budget. */
static unsigned char judge(struct noise *nz, struct host *h,
                           struct cluster *c, int sure)
{
    if (!sure && noise__looks_nav(nz, h, c))
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
    const unsigned char *sure = nav && nz->sure_n == n ? nz->sure : NULL;

    nz->sure_n = 0; /* one page's */
    if (!st)
        st = &local;
    st->seen += n;
    memset(verdict, NOISE_KEEP, n);
    if (ticket)
        memset(ticket, 0, n * sizeof(*ticket));
    if (!nz->c.enabled || !n)
        return;
    h = noise__host_get(nz, host, hostlen);
    h->fpages++;
    for (i = 0; nav && i < n; i++) {
        if (!nav[i])
            continue;
        verdict[i] = NOISE_BLOCK;
        st->dropped_block++;
        if (nav[i] == NOISE_NAV_QUIET)
            continue;
        key = url_key(url(ud, i), host, hostlen, &len);
        noise__cluster_of(nz, h, 1, key, len, &slot);
    }
    for (i = 0; i < n; i++) {
        if (nav && nav[i])
            continue;
        key = url_key(url(ud, i), host, hostlen, &len);
        c = noise__cluster_of(nz, h, 0, key, len, &slot);
        verdict[i] = judge(nz, h, c, sure && sure[i]);
        if (verdict[i] == NOISE_CLUSTER)
            st->dropped_cluster++;
        else if (verdict[i] == NOISE_BUDGET)
            st->refused_budget++;
        else if (ticket)
            ticket[i] = ticket_of(nz, h, slot, c);
    }
}

/* ------------------------------------------------------------ repeat */
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
        e[j].fp = noise__fp(u, strlen(u));
        seen += (size_t)noise__seen_has(h, e[j].fp);
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
 * share the block's signals). Sets nav[]: 0 content, 1 navigation and a
 * noise sample, NOISE_NAV_QUIET navigation only; and e[j].fp, except for
 * an outline (O), which is not recorded.
 */
static void signals_block(const struct host *h, noise_url_fn url, void *ud,
                          struct rep_ent *e, size_t k, unsigned char *nav,
                          unsigned char *sure, struct noise_stats *st)
{
    size_t j, seen = 0, hist = 0, query = 0;
    int snav = sig_snav(e[0].sig), repeated, context, known, toc, mirror;
    unsigned char v;
    const char *u;

    if (e[0].sig & NOISE_SIG_OUTLINE) { /* O: content, not recorded */
        for (j = 0; j < k; j++) {
            nav[e[j].i] = 0;
            sure[e[j].i] = 1;
        }
        st->kept_unrepeated += k;
        return;
    }
    for (j = 0; j < k; j++) {
        u = url(ud, e[j].i);
        e[j].fp = noise__fp(u, strlen(u));
        seen += (size_t)noise__seen_has(h, e[j].fp);
        if (snav) {
            hist += (size_t)noise__seen_has(h, nav_fp(e[j].fp));
            query += strchr(u, '?') != NULL;
        }
    }
    /* P: a block of NOISE_JUDGE_MIN+ links, mostly seen before */
    repeated = k >= NOISE_JUDGE_MIN &&
               (double)seen >= NOISE_REPEAT_SHARE * (double)k;
    /* S: a recurring menu; its links new to the host's navigation are
     * per-page (contextual) links once the host has a history */
    context = snav && h->pages >= NOISE_CONTEXT_PAGES &&
              k >= NOISE_JUDGE_MIN &&
              (double)hist >= NOISE_CONTEXT_SHARE * (double)k;
    /* T: a menu this big that the host's navigation has not shown yet is
     * a table of contents (a book's chapters, a set's guides), when it
     * links to documents, not to variations of one (facets, sort orders:
     * queries) */
    toc = snav && k >= NOISE_TOC_MIN &&
          (double)hist < NOISE_CONTEXT_SHARE * (double)k &&
          (double)query < NOISE_TOC_QUERY_SHARE * (double)k;
    /* C: a menu that copies the page's content links; the rest of it,
     * new to the host's navigation, is the page's outline too */
    mirror = snav && (e[0].sig & NOISE_SIG_MIRROR);
    for (j = 0; j < k; j++) {
        if (snav) {
            known = noise__seen_has(h, nav_fp(e[j].fp));
            v = toc || ((context || mirror) && !known) ? 0
                : known                                ? 1
                                                       : NOISE_NAV_QUIET;
        } else {
            v = repeated && noise__seen_has(h, e[j].fp) ? NOISE_NAV_QUIET : 0;
        }
        nav[e[j].i] = v;
        sure[e[j].i] |= (unsigned char)(toc || (mirror && !v));
        st->kept_unrepeated += !v;
    }
}

/* How many other pages of its host does the page lead on to outside
 * navigation: distinct links that nav[] keeps to the host, not to page
 * itself nor to the host's root; counted up to max (at most
 * NOISE_ENTRY_LEADS). */
static size_t leads_on(noise_url_fn url, void *ud, size_t n,
                       const unsigned char *nav, const char *host,
                       size_t hostlen, const char *page, size_t max)
{
    const char *u, *path;
    uint64_t found[NOISE_ENTRY_LEADS], fp; /* url() may reuse its buffer */
    size_t i, k, nf = 0;

    for (i = 0; i < n && nf < max; i++) {
        if (nav[i])
            continue;
        u = url(ud, i);
        url_split(u, host, hostlen, &path);
        if (!path || !*path || strcmp(path, "/") == 0 ||
            (page && strcmp(u, page) == 0))
            continue;
        fp = noise__fp(u, strlen(u));
        for (k = 0; k < nf && found[k] != fp; k++)
            ;
        if (k == nf)
            found[nf++] = fp;
    }
    return nf;
}

/* Would the dead-end rule keep e's link: semantic navigation to the
 * host, dropped on its first sighting? */
static int dead_end_link(noise_url_fn url, void *ud, const struct rep_ent *e,
                         const unsigned char *nav, const char *host,
                         size_t hostlen)
{
    const char *path;

    if (nav[e->i] != NOISE_NAV_QUIET || !sig_snav(e->sig))
        return 0;
    url_split(url(ud, e->i), host, hostlen, &path);
    return path != NULL;
}

/* Signals rule over the page's k over-ratio links (nz->rep, by block). */
static void signals_page(struct noise *nz, struct host *h, noise_url_fn url,
                         void *ud, size_t n, size_t k, unsigned char *nav,
                         size_t page_text, const char *host, size_t hostlen,
                         const char *page, int entry, struct noise_stats *st)
{
    struct rep_ent *e = nz->rep;
    size_t i, j, dropped = 0, leads, shown = 0;
    int dead;

    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && e[j].block == e[i].block; j++)
            ;
        signals_block(h, url, ud, e + i, j - i, nav, nz->sure, st);
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
    /* dead end: when only navigation leads on into the host, its links
     * shown for the first time are followed (whether the page leads on is
     * asked once, at the first such link, before any is kept); an entry
     * page is a dead end too when its content leads on to fewer than
     * NOISE_ENTRY_LEADS pages of the host and its menus show more */
    for (i = 0, dead = -1; i < k && dead; i++) {
        if (!dead_end_link(url, ud, e + i, nav, host, hostlen))
            continue;
        if (dead < 0) {
            leads = leads_on(url, ud, n, nav, host, hostlen, page,
                             entry ? NOISE_ENTRY_LEADS : 1);
            for (j = i; entry && leads && j < k; j++)
                shown += dead_end_link(url, ud, e + j, nav, host, hostlen);
            dead = !leads || (leads < NOISE_ENTRY_LEADS && shown > leads);
        }
        if (dead) {
            nav[e[i].i] = 0;
            nz->sure[e[i].i] = 1;
            st->kept_unrepeated++;
            st->kept_guard++;
        }
    }
    /* record: links of over-ratio blocks for P, semantic ones apart */
    h->pages++;
    for (i = 0; i < k; i = j) {
        for (j = i + 1; j < k && e[j].block == e[i].block; j++)
            ;
        if (e[i].sig & NOISE_SIG_OUTLINE)
            continue;
        if (sig_snav(e[i].sig)) {
            for (; i < j; i++)
                noise__seen_put(h, nav_fp(e[i].fp));
            continue;
        }
        if (j - i < NOISE_REPEAT_MIN)
            continue;
        for (; i < j; i++)
            noise__seen_put(h, e[i].fp);
    }
}

void noise_repeat(struct noise *nz, const char *host, size_t hostlen,
                  const char *page, int entry, noise_url_fn url, void *ud,
                  size_t n,
                  const uint32_t *block, unsigned char *nav, size_t page_text,
                  struct noise_stats *st)
{
    struct noise_stats local = {0};
    struct host *h;
    size_t i, k = 0, j;

    if (!st)
        st = &local;
    nz->sure_n = 0;
    if (!nz->c.enabled || nz->c.block_rule == NOISE_RULE_RATIO || !block ||
        !n) {
        for (i = 0; i < n; i++)
            nav[i] = (nav[i] & NOISE_SIG_RATIO) != 0;
        return;
    }
    if (nz->c.block_rule == NOISE_RULE_SIGNALS) {
        /* M: in main content only repetition makes noise, and a look-alike
         * is no repetition; a link past the DOM is content */
        xgrow((void **)&nz->sure, &nz->sure_cap, n, 1);
        for (i = 0; i < n; i++)
            nz->sure[i] = (nav[i] & NOISE_SIG_MAIN) != 0 ||
                          block[i] == NOISE_BLOCK_NONE;
        nz->sure_n = n;
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
    h = noise__host_get(nz, host, hostlen);
    qsort(nz->rep, k, sizeof(*nz->rep), rep_cmp);
    if (nz->c.block_rule == NOISE_RULE_SIGNALS) {
        signals_page(nz, h, url, ud, n, k, nav, page_text, host, hostlen,
                     page, entry, st);
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
            noise__seen_put(h, nz->rep[i].fp);
    }
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
        noise__host_release(&nz->hosts[i]);
    free(nz->hosts);
    noise__pat_release(&nz->pat);
    free(nz->rep);
    free(nz->sure);
    noise_state_free(nz->gone, nz->ngone);
    free(nz);
    *nzp = NULL;
}
