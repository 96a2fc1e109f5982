/*
 * noise-state.c: the export and import of a host's repetition state
 * (noise_state_*, see noise.h), the blob format below, and the states of
 * hosts dropped from the table before they were saved.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"


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
    e = xmalloc(h->seen_nb * SEEN_WAYS * sizeof(*e));
    for (i = 0; i < h->seen_nb * SEEN_WAYS; i++)
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
    struct host *h = noise__host_find(nz, host, hostlen);

    if (!h || !h->seen)
        return 0;
    h->saved_pages = h->pages;
    return state_write(h, out);
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
    if (!blob || !len) { /* nothing saved: known, no tables yet */
        (void)noise__host_entry(nz, host, hostlen);
        return DC_OK;
    }
    h = noise__host_get(nz, host, hostlen);
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
        noise__seen_merge(h, v, h->pages > age ? h->pages - age : 1);
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
    return noise__host_find(nz, host, hostlen) != NULL;
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
void noise__state_keep_gone(struct noise *nz, struct host *h)
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
