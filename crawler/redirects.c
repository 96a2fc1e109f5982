/*
 * redirects.c: how many redirect hops led to a URL that is waiting in the
 * frontier as a redirect target. The frontier stores plain URLs, so the
 * count rides here, keyed by the URL's fingerprint: put when the node
 * admits a new target, taken when that URL's fetch comes back.
 *
 * An open-addressing table (linear probing, backward-shift deletion, no
 * tombstones), doubled at 1/2 load, never more than REDIRECTS_MAX entries.
 *
 * Thread rules: the node's thread only.
 */
#include <stdlib.h>

#include "conf.h"
#include "node-internal.h"

struct redirects {
    uint64_t *fp;    /* 0 = empty slot (a zero fingerprint is stored as 1) */
    unsigned char *hops;
    size_t cap, n;
};

struct redirects *redirects_new(void)
{
    return xcalloc(1, sizeof(struct redirects));
}

static uint64_t key(uint64_t fp)
{
    return fp ? fp : 1;
}

static size_t slot(const struct redirects *m, uint64_t k)
{
    size_t i = (size_t)(k ^ (k >> 29)) & (m->cap - 1);
    while (m->fp[i] && m->fp[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void grow(struct redirects *m)
{
    struct redirects old = *m;
    size_t i;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->fp = xcalloc(m->cap, sizeof(*m->fp));
    m->hops = xcalloc(m->cap, 1);
    for (i = 0; i < old.cap; i++)
        if (old.fp[i]) {
            size_t j = slot(m, old.fp[i]);
            m->fp[j] = old.fp[i];
            m->hops[j] = old.hops[i];
        }
    free(old.fp);
    free(old.hops);
}

void redirects_put(struct redirects *m, uint64_t fp, int hops)
{
    uint64_t k = key(fp);
    size_t i;
    if (m->n >= REDIRECTS_MAX)
        return;
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    i = slot(m, k);
    if (!m->fp[i])
        m->n++;
    m->fp[i] = k;
    m->hops[i] = (unsigned char)(hops > 255 ? 255 : hops < 0 ? 0 : hops);
}

int redirects_take(struct redirects *m, uint64_t fp)
{
    uint64_t k = key(fp);
    size_t i, j;
    int hops;
    if (!m->n)
        return 0;
    i = slot(m, k);
    if (!m->fp[i])
        return 0;
    hops = m->hops[i];
    m->fp[i] = 0;
    m->n--;
    /* backward shift: pull later members of the run into the hole */
    for (j = (i + 1) & (m->cap - 1); m->fp[j]; j = (j + 1) & (m->cap - 1)) {
        size_t home = (size_t)(m->fp[j] ^ (m->fp[j] >> 29)) & (m->cap - 1);
        if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
            m->fp[i] = m->fp[j];
            m->hops[i] = m->hops[j];
            m->fp[j] = 0;
            i = j;
        }
    }
    return hops;
}

size_t redirects_count(const struct redirects *m)
{
    return m ? m->n : 0;
}

void redirects_free(struct redirects **mp)
{
    if (!mp || !*mp)
        return;
    free((*mp)->fp);
    free((*mp)->hops);
    free(*mp);
    *mp = NULL;
}
