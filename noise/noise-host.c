/*
 * noise-host.c: the per-host history of the noise module (see noise.c for
 * the rules that use it): the host table (NOISE_MAX_HOSTS, least recently
 * used dropped), each host's two cluster sets with the exact-URL memo,
 * the join-or-found step and the "looks like navigation" cache, and the
 * seen table of link fingerprints (4-way buckets, oldest sighting out).
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"

/* ------------------------------------------------------------- hosts */

static void cset_release(struct cset *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->c[i].rep);
    free(s->c);
    s->c = NULL;
    s->n = s->cap = 0;
}

void noise__host_release(struct host *h)
{
    free(h->name);
    cset_release(&h->content);
    cset_release(&h->nav);
    free(h->memo);
    free(h->seen);
    memset(h, 0, sizeof(*h));
}

struct host *noise__host_entry(struct noise *nz, const char *name,
                               size_t len)
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
        noise__state_keep_gone(nz, h);
        noise__host_release(h);
    }
    h->name = xmalloc(len + 1);
    memcpy(h->name, name, len);
    h->name[len] = '\0';
    h->len = len;
    h->nav_version = 1;
found:
    h->used = ++nz->clock;
    return h;
}

/* The memo and seen tables are made when a page of the host is judged or
 * a saved state is read, not for every host leased, and they and the
 * cluster sets grow with what the host shows (all three were made whole,
 * 130 KB a host: a crawl that tried hundreds of off-site hosts that never
 * answer held 60 MB for them on the Linux documentation, and 1,024 hosts
 * judged would hold 130 MB). Growing the seen table never drops an entry
 * (a bucket's entries split between it and its new twin), so its
 * sightings are those of a table made whole. */
struct host *noise__host_get(struct noise *nz, const char *name, size_t len)
{
    struct host *h = noise__host_entry(nz, name, len);

    if (h->memo)
        return h;
    h->memo_cap = MEMO_START;
    h->memo = xcalloc(h->memo_cap, sizeof(*h->memo));
    if (nz->c.enabled && nz->c.block_rule != NOISE_RULE_RATIO) {
        h->seen_nb = SEEN_START;
        h->seen = xcalloc(h->seen_nb * SEEN_WAYS, sizeof(*h->seen));
    }
    return h;
}

/* ---------------------------------------------------------- clusters */

uint64_t noise__fp(const char *s, size_t n)
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
        xgrow((void **)&s->c, &s->cap, s->n + 1, sizeof(*s->c));
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

static struct memo_ent *memo_slot(const struct host *h, uint64_t fp)
{
    return &h->memo[fp & (h->memo_cap - 1)];
}

/* Twice the slots; an entry whose new slot is taken already is dropped
 * (it is a cache). */
static void memo_grow(struct host *h)
{
    struct memo_ent *old = h->memo;
    size_t i, cap = h->memo_cap;

    h->memo_cap *= 2;
    h->memo = xcalloc(h->memo_cap, sizeof(*h->memo));
    h->memo_n = 0;
    for (i = 0; i < cap; i++) {
        struct memo_ent *m;
        if (!old[i].fp)
            continue;
        m = memo_slot(h, old[i].fp);
        h->memo_n += !m->fp;
        *m = old[i];
    }
    free(old);
}

/* The cluster key->fp joins in s (founding one if needed). */
struct cluster *noise__cluster_of(struct noise *nz, struct host *h, int nav,
                                  const char *key, size_t len, size_t *slotp)
{
    struct cset *s = nav ? &h->nav : &h->content;
    uint64_t fp = noise__fp(key, len) ^ (uint64_t)nav;
    struct memo_ent *m = memo_slot(h, fp);
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
    if (!m->fp && ++h->memo_n * 2 > h->memo_cap && h->memo_cap < MEMO_SLOTS) {
        memo_grow(h);
        m = memo_slot(h, fp);
        h->memo_n += !m->fp;
    }
    m->fp = fp;
    m->nav = nav;
    m->slot = (uint32_t)i;
    m->serial = c->serial;
    *slotp = (size_t)i;
    return c;
}

/* Does content cluster c look like one of the host's nav templates? */
int noise__looks_nav(struct noise *nz, struct host *h, struct cluster *c)
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

/* ------------------------------------------------------------ seen */

/* The state of host name[0..len), or NULL. */
struct host *noise__host_find(struct noise *nz, const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < nz->nhosts; i++)
        if (nz->hosts[i].name && nz->hosts[i].len == len &&
            memcmp(nz->hosts[i].name, name, len) == 0)
            return &nz->hosts[i];
    return NULL;
}

/* The bucket of fp in h's seen table (SEEN_WAYS entries). */
static struct seen_ent *seen_bucket(const struct host *h, uint64_t fp)
{
    return &h->seen[(fp & (h->seen_nb - 1)) * SEEN_WAYS];
}

/* Twice the buckets: bucket b's entries go to b or b + the old count. */
static void seen_grow(struct host *h)
{
    struct seen_ent *old = h->seen;
    size_t i, w, nb = h->seen_nb;

    h->seen_nb *= 2;
    h->seen = xcalloc(h->seen_nb * SEEN_WAYS, sizeof(*h->seen));
    for (i = 0; i < nb * SEEN_WAYS; i++) {
        struct seen_ent *b;
        if (!old[i].fp)
            continue;
        b = seen_bucket(h, old[i].fp);
        for (w = 0; b[w].fp; w++)
            ;
        b[w] = old[i];
    }
    free(old);
}

/* The bucket for fp, grown until it holds fp or has a free way (or the
 * table is whole). */
static struct seen_ent *seen_room(struct host *h, uint64_t fp)
{
    struct seen_ent *b = seen_bucket(h, fp);
    size_t w;

    for (;;) {
        for (w = 0; w < SEEN_WAYS; w++)
            if (!b[w].fp || b[w].fp == fp)
                return b;
        if (h->seen_nb >= SEEN_BUCKETS)
            return b;
        seen_grow(h);
        b = seen_bucket(h, fp);
    }
}

/* The way of bucket b that holds fp, else its oldest way (empty ways have
 * page 0). */
static size_t seen_way(const struct seen_ent *b, uint64_t fp)
{
    size_t w, old = 0;

    for (w = 0; w < SEEN_WAYS; w++) {
        if (b[w].fp == fp)
            return w;
        if (b[w].page < b[old].page)
            old = w;
    }
    return old;
}

int noise__seen_has(const struct host *h, uint64_t fp)
{
    const struct seen_ent *b = seen_bucket(h, fp);
    size_t w;

    for (w = 0; w < SEEN_WAYS; w++)
        if (b[w].fp == fp)
            return 1;
    return 0;
}

/* fp seen on the host's current page: its entry, else the oldest one. */
void noise__seen_put(struct host *h, uint64_t fp)
{
    struct seen_ent *b = seen_room(h, fp);
    size_t w = seen_way(b, fp);

    b[w].fp = fp;
    b[w].page = h->pages;
}

/* Insert fp last seen at `page`, as noise__seen_put does but keeping the
 * more recent sighting and never pushing out a more recent entry. */
void noise__seen_merge(struct host *h, uint64_t fp, uint64_t page)
{
    struct seen_ent *b = seen_room(h, fp);
    size_t w = seen_way(b, fp);

    if (b[w].fp == fp) {
        if (b[w].page < page)
            b[w].page = page;
        return;
    }
    if (b[w].fp && b[w].page >= page)
        return;
    b[w].fp = fp;
    b[w].page = page;
}

/* Repeated rule: fingerprints held for host (0 when it has no state). */
size_t noise__seen_count(struct noise *nz, const char *host, size_t hostlen)
{
    size_t i, k, n = 0;

    for (i = 0; i < nz->nhosts; i++) {
        const struct host *h = &nz->hosts[i];
        if (h->len != hostlen || memcmp(h->name, host, hostlen) || !h->seen)
            continue;
        for (k = 0; k < h->seen_nb * SEEN_WAYS; k++)
            n += h->seen[k].fp != 0;
    }
    return n;
}
