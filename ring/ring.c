/*
 * ring.c: who owns which partition (ring.h). A consistent-hash ring of the live
 * node ids, `vnodes` points per node, with bounded loads.
 *
 * Points. Node id s gets the points H("s#0") ... H("s#<vnodes-1>"), H being
 * dedup_murmur3_x64_128's first 64 bits. The points are sorted by value
 * (ties by node index, so every process builds the same ring). Ids are
 * sorted and made unique first: the ring depends only on the set of ids.
 *
 * Assignment (Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with
 * Bounded Loads", 2017). Items are placed in the order given; item i starts
 * at the first point >= item_hash[i] (wrapping) and walks clockwise to the
 * first node that holds fewer than cap = ceil(c * items / nodes) items.
 * c < 1 means no cap: plain consistent hashing. With the cap a node never
 * holds more than c times the mean, and when a node joins or leaves most
 * items keep their owner (the walk only moves items near the change, plus
 * a short cascade of items pushed past full nodes).
 *
 * Every node computes the assignment from the same inputs (sorted live ids,
 * used partitions in partition order), so their views agree whenever their
 * inputs do; while they disagree the partition leases in Redis keep
 * ownership exclusive (frontier/cluster.c).
 *
 * Thread rules: a ring is immutable after ring_new; any number of
 * threads may call ring_assign on it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "ring.h"

struct ring_point {
    uint64_t h;
    uint32_t node;
};

struct ring {
    char **ids;           /* sorted, unique */
    size_t nids;
    struct ring_point *pts;
    size_t npts;
};

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int point_cmp(const void *a, const void *b)
{
    const struct ring_point *x = a, *y = b;

    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

uint64_t ring_hash(const void *p, size_t len)
{
    uint64_t h[2];

    dedup_murmur3_x64_128(p, len, 0, h);
    return h[0];
}

uint64_t ring_item(uint64_t key)
{
    /* splitmix64's finalizer: partition numbers 0, 1, 2... spread evenly */
    key += 0x9e3779b97f4a7c15ULL;
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
    key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
    return key ^ (key >> 31);
}

int ring_new(struct ring **out, const char *const *ids,
                      size_t n, int vnodes)
{
    struct ring *r;
    size_t k = 0;

    *out = NULL;
    if (vnodes < 1 || n > UINT32_MAX || (n && (size_t)vnodes > SIZE_MAX / n))
        return DC_EINVAL;
    r = xcalloc(1, sizeof(*r));
    r->ids = xcalloc(n ? n : 1, sizeof(*r->ids));
    for (size_t i = 0; i < n; i++)
        r->ids[i] = xstrdup(ids[i]);
    qsort(r->ids, n, sizeof(*r->ids), str_cmp);
    for (size_t i = 0; i < n; i++) { /* unique */
        if (k && !strcmp(r->ids[k - 1], r->ids[i]))
            free(r->ids[i]);
        else
            r->ids[k++] = r->ids[i];
    }
    r->nids = k;
    r->npts = k * (size_t)vnodes;
    r->pts = xcalloc(r->npts ? r->npts : 1, sizeof(*r->pts));
    for (size_t i = 0; i < k; i++) {
        size_t len = strlen(r->ids[i]);
        char *buf = xmalloc(len + 16);
        for (int v = 0; v < vnodes; v++) {
            int bl = snprintf(buf, len + 16, "%s#%d", r->ids[i], v);
            struct ring_point *pt = &r->pts[i * (size_t)vnodes + (size_t)v];
            pt->h = ring_hash(buf, (size_t)bl);
            pt->node = (uint32_t)i;
        }
        free(buf);
    }
    qsort(r->pts, r->npts, sizeof(*r->pts), point_cmp);
    *out = r;
    return DC_OK;
}

void ring_free(struct ring **rp)
{
    struct ring *r = *rp;

    if (!r)
        return;
    for (size_t i = 0; i < r->nids; i++)
        free(r->ids[i]);
    free(r->ids);
    free(r->pts);
    free(r);
    *rp = NULL;
}

size_t ring_nodes(const struct ring *r)
{
    return r->nids;
}

const char *ring_node(const struct ring *r, size_t i)
{
    return i < r->nids ? r->ids[i] : NULL;
}

long ring_find(const struct ring *r, const char *id)
{
    size_t lo = 0, hi = r->nids;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->ids[mid], id);
        if (!c)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Index of the first point with h >= x, wrapping to 0. */
static size_t first_point(const struct ring *r, uint64_t x)
{
    size_t lo = 0, hi = r->npts;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->pts[mid].h < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == r->npts ? 0 : lo;
}

void ring_assign(const struct ring *r,
                          const uint64_t *item_hash, size_t nitems, double c,
                          uint32_t *owner)
{
    size_t *load, cap = SIZE_MAX;

    if (r->nids == 0) {
        for (size_t i = 0; i < nitems; i++)
            owner[i] = UINT32_MAX;
        return;
    }
    if (c >= 1.0) {
        double d = ceil(c * (double)nitems / (double)r->nids);
        cap = d < 1.0 ? 1 : (size_t)d;
    }
    load = xcalloc(r->nids, sizeof(*load));
    for (size_t i = 0; i < nitems; i++) {
        size_t k = first_point(r, item_hash[i]);
        /* total capacity >= nitems, so some node has room: the walk ends
         * within one turn of the ring */
        for (size_t step = 0; step < r->npts; step++) {
            uint32_t nd = r->pts[k].node;
            if (load[nd] < cap) {
                owner[i] = nd;
                load[nd]++;
                break;
            }
            k = k + 1 == r->npts ? 0 : k + 1;
        }
    }
    free(load);
}
