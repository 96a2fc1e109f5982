/*
 * fpmap.c: a small number per URL fingerprint, for the node's per-URL
 * bookkeeping that the frontier does not store (it keeps plain URLs):
 *
 *   - n->redir: how many redirect hops led to a URL waiting in the
 *     frontier as a redirect target; put when the node admits the target,
 *     taken when its fetch comes back;
 *   - n->hops: a URL's link distance from the seeds when it is shorter
 *     than the depth level it is queued at: the noise filter drops a
 *     menu's links, so a page first reached by a content link at depth 3
 *     may be one menu link from the seed (node-admit.c); read at fetch,
 *     taken when the URL's lease completes for good.
 *
 * An open-addressing table (linear probing, backward-shift deletion, no
 * tombstones), doubled at 1/2 load, never more than its max entries (a
 * put past that is dropped: the caller's number falls back to its
 * default).
 *
 * Thread rules: the node's thread only.
 */
#include <stdlib.h>

#include "conf.h"
#include "node-internal.h"

struct fpmap {
    uint64_t *fp;    /* 0 = empty slot (a zero fingerprint is stored as 1) */
    unsigned char *v;
    size_t cap, n, max;
};

struct fpmap *fpmap_new(size_t max)
{
    struct fpmap *m = xcalloc(1, sizeof(struct fpmap));
    m->max = max;
    return m;
}

static uint64_t key(uint64_t fp)
{
    return fp ? fp : 1;
}

static size_t home(const struct fpmap *m, uint64_t k)
{
    return (size_t)(k ^ (k >> 29)) & (m->cap - 1);
}

static size_t slot(const struct fpmap *m, uint64_t k)
{
    size_t i = home(m, k);
    while (m->fp[i] && m->fp[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void grow(struct fpmap *m)
{
    struct fpmap old = *m;
    size_t i;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->fp = xcalloc(m->cap, sizeof(*m->fp));
    m->v = xcalloc(m->cap, 1);
    for (i = 0; i < old.cap; i++)
        if (old.fp[i]) {
            size_t j = slot(m, old.fp[i]);
            m->fp[j] = old.fp[i];
            m->v[j] = old.v[i];
        }
    free(old.fp);
    free(old.v);
}

static unsigned char clamp(int v)
{
    return (unsigned char)(v > 255 ? 255 : v < 0 ? 0 : v);
}

void fpmap_put(struct fpmap *m, uint64_t fp, int v)
{
    uint64_t k = key(fp);
    size_t i;
    if (m->cap) {
        i = slot(m, k);
        if (m->fp[i]) {
            m->v[i] = clamp(v);
            return;
        }
    }
    if (m->n >= m->max)
        return;
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    i = slot(m, k);
    m->n++;
    m->fp[i] = k;
    m->v[i] = clamp(v);
}

void fpmap_lower(struct fpmap *m, uint64_t fp, int v)
{
    if (m->n) {
        size_t i = slot(m, key(fp));
        if (m->fp[i]) {
            if (clamp(v) < m->v[i])
                m->v[i] = clamp(v);
            return;
        }
    }
    fpmap_put(m, fp, v);
}

int fpmap_get(const struct fpmap *m, uint64_t fp, int dflt)
{
    size_t i;
    if (!m->n)
        return dflt;
    i = slot(m, key(fp));
    return m->fp[i] ? m->v[i] : dflt;
}

int fpmap_take(struct fpmap *m, uint64_t fp, int dflt)
{
    uint64_t k = key(fp);
    size_t i, j;
    int v;
    if (!m->n)
        return dflt;
    i = slot(m, k);
    if (!m->fp[i])
        return dflt;
    v = m->v[i];
    m->fp[i] = 0;
    m->n--;
    /* backward shift: pull later members of the run into the hole */
    for (j = (i + 1) & (m->cap - 1); m->fp[j]; j = (j + 1) & (m->cap - 1)) {
        if (((j - home(m, m->fp[j])) & (m->cap - 1)) >=
            ((j - i) & (m->cap - 1))) {
            m->fp[i] = m->fp[j];
            m->v[i] = m->v[j];
            m->fp[j] = 0;
            i = j;
        }
    }
    return v;
}

size_t fpmap_count(const struct fpmap *m)
{
    return m ? m->n : 0;
}

void fpmap_free(struct fpmap **mp)
{
    if (!mp || !*mp)
        return;
    free((*mp)->fp);
    free((*mp)->v);
    free(*mp);
    *mp = NULL;
}
