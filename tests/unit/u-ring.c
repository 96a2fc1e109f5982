/*
 * u-ring.c: the consistent-hash ring of node ids (ring/ring.c).
 *
 * The plain (c < 1) assignment is checked against a brute-force reference
 * written here from the ring's documented definition: node id s has the
 * points H("s#0") .. H("s#<vnodes-1>"), H = ring_hash; an item
 * belongs to the node of the first point >= its hash (wrapping past the
 * top to the lowest point; equal points ordered by node index, i.e. by the
 * sorted id). The reference finds that point by a linear scan over every
 * point, sharing no code with the ring's binary search.
 *
 * Bounded loads (c >= 1): the cap ceil(c * m / n) is checked exactly. How
 * many items change owner when one node joins or leaves has no exact
 * answer, so it is held under a bound derived from measurements (see
 * MOVE_BOUND below) that a modulo assignment fails by a wide margin.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ring.h"
#include "t.h"

#define MAXN 64

/* ---- helpers ---------------------------------------------------------- */

static void node_ids(char ids[][32], const char **p, size_t n, size_t first)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], 32, "node-%zu", first + i);
        p[i] = ids[i];
    }
}

/* Items: partition items 0..m-1 (what the crawler assigns). */
static uint64_t *part_items(size_t m)
{
    uint64_t *h = xcalloc(m ? m : 1, sizeof(*h));

    for (size_t i = 0; i < m; i++)
        h[i] = ring_item(i);
    return h;
}

/* Items: host names hashed like the crawler's hosts. */
static uint64_t *host_items(size_t m)
{
    uint64_t *h = xcalloc(m ? m : 1, sizeof(*h));
    char buf[64];

    for (size_t i = 0; i < m; i++) {
        int len = snprintf(buf, sizeof(buf), "h%zu.example", i);
        h[i] = ring_hash(buf, (size_t)len);
    }
    return h;
}

/* Assign and translate node indexes to ids (NULL for no owner). */
static const char **assign_ids(const struct ring *r,
                               const uint64_t *items, size_t m, double c)
{
    uint32_t *own = xcalloc(m ? m : 1, sizeof(*own));
    const char **out = xcalloc(m ? m : 1, sizeof(*out));

    ring_assign(r, items, m, c, own);
    for (size_t i = 0; i < m; i++)
        out[i] = own[i] == UINT32_MAX ? NULL : ring_node(r, own[i]);
    free(own);
    return out;
}

/* ---- the brute-force reference ------------------------------------------ */

/* Owner id of hash x on the ring of ids (any order, unique) with vnodes
 * points each: linear scan for the smallest point >= x, else the smallest
 * point. Ties between equal points go to the smaller id. */
static const char *ref_owner(const char **ids, size_t n, int vnodes,
                             uint64_t x)
{
    const char *best = NULL, *low = NULL;
    uint64_t besth = 0, lowh = 0;
    char buf[64];

    for (size_t i = 0; i < n; i++) {
        for (int v = 0; v < vnodes; v++) {
            int len = snprintf(buf, sizeof(buf), "%s#%d", ids[i], v);
            uint64_t h = ring_hash(buf, (size_t)len);
            if (h >= x && (!best || h < besth ||
                           (h == besth && strcmp(ids[i], best) < 0))) {
                best = ids[i];
                besth = h;
            }
            if (!low || h < lowh || (h == lowh && strcmp(ids[i], low) < 0)) {
                low = ids[i];
                lowh = h;
            }
        }
    }
    return best ? best : low;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_bad_args(void)
{
    struct ring *r = (struct ring *)&r; /* not NULL */
    const char *ids[] = {"a", "b"};

    CHECK(ring_new(&r, ids, 2, 0) == DC_EINVAL, "vnodes 0");
    CHECK(r == NULL, "ring left NULL on error");
    r = (struct ring *)&r;
    CHECK(ring_new(&r, ids, 2, -5) == DC_EINVAL, "vnodes -5");
    CHECK(r == NULL, "ring left NULL on error");
    ring_free(&r); /* NULL is fine */
    CHECK(r == NULL, "free of NULL");
}

static void test_empty(void)
{
    struct ring *r = NULL;
    uint64_t *items = part_items(100);
    uint32_t own[100];
    int bad = 0;

    CHECK(ring_new(&r, NULL, 0, 10) == DC_OK, "empty ring");
    if (!r)
        goto out;
    CHECK(ring_nodes(r) == 0, "no nodes");
    CHECK(ring_node(r, 0) == NULL, "no node 0");
    CHECK(ring_find(r, "a") == -1, "find on empty ring");
    for (int k = 0; k < 2; k++) {
        memset(own, 0, sizeof(own));
        ring_assign(r, items, 100, k ? 1.25 : 0.0, own);
        for (size_t i = 0; i < 100; i++)
            bad += own[i] != UINT32_MAX;
    }
    CHECK(bad == 0, "%d items owned on an empty ring", bad);
    ring_assign(r, items, 0, 1.25, own); /* no items: no crash */
    ring_free(&r);
    CHECK(r == NULL, "free NULLs the pointer");
out:
    free(items);
}

/* The ring depends on the set of ids only: order and duplicates don't
 * matter, indexes follow the sorted order, find() inverts node(). */
static void test_order_dups(void)
{
    const char *a[] = {"n3", "n1", "n2", "n10", "n0"};
    const char *b[] = {"n10", "n0", "n2", "n2", "n3", "n1", "n0", "n10"};
    const char *sorted[] = {"n0", "n1", "n10", "n2", "n3"};
    struct ring *ra = NULL, *rb = NULL;
    uint64_t *items = host_items(5000);
    double cs[] = {0.0, 1.0, 1.1, 1.25};

    CHECK(ring_new(&ra, a, 5, 50) == DC_OK, "ring a");
    CHECK(ring_new(&rb, b, 8, 50) == DC_OK, "ring b");
    if (!ra || !rb)
        goto out;
    CHECK(ring_nodes(rb) == 5, "duplicates dropped: %zu",
          ring_nodes(rb));
    for (size_t i = 0; i < 5; i++) {
        const char *na = ring_node(ra, i);
        CHECK(na && !strcmp(na, sorted[i]), "node %zu is %s", i, sorted[i]);
        CHECK(ring_find(ra, sorted[i]) == (long)i, "find %s",
              sorted[i]);
    }
    CHECK(ring_find(ra, "n4") == -1, "find absent id");
    CHECK(ring_node(ra, 5) == NULL, "node out of range");
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
        const char **oa = assign_ids(ra, items, 5000, cs[k]);
        const char **ob = assign_ids(rb, items, 5000, cs[k]);
        size_t diff = 0, none = 0;
        for (size_t i = 0; i < 5000; i++) {
            none += !oa[i] || !ob[i];
            diff += oa[i] && ob[i] && strcmp(oa[i], ob[i]);
        }
        CHECK(none == 0, "c=%.2f: %zu items without owner", cs[k], none);
        CHECK(diff == 0, "c=%.2f: %zu items differ with order/dups", cs[k],
              diff);
        free(oa);
        free(ob);
    }
out:
    ring_free(&ra);
    ring_free(&rb);
    free(items);
}

/* c < 1 is plain consistent hashing: equal to the linear-scan reference. */
static void test_plain_matches_reference(void)
{
    static const size_t ns[] = {1, 2, 3, 7, 20};
    static const int vs[] = {1, 3, 50};
    uint64_t *items = host_items(1500);
    char ids[MAXN][32];
    const char *p[MAXN];

    /* extreme hashes reach the wrap-around */
    items[0] = 0;
    items[1] = UINT64_MAX;
    for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
        for (size_t b = 0; b < sizeof(vs) / sizeof(vs[0]); b++) {
            struct ring *r = NULL;
            const char **own;
            size_t bad = 0;

            node_ids(ids, p, ns[a], 0);
            if (ring_new(&r, p, ns[a], vs[b]) != DC_OK) {
                CHECK(0, "ring n=%zu v=%d", ns[a], vs[b]);
                continue;
            }
            own = assign_ids(r, items, 1500, 0.5);
            for (size_t i = 0; i < 1500; i++) {
                const char *want = ref_owner(p, ns[a], vs[b], items[i]);
                bad += !own[i] || strcmp(own[i], want);
            }
            CHECK(bad == 0, "n=%zu vnodes=%d: %zu of 1500 items differ from "
                            "the reference", ns[a], vs[b], bad);
            free(own);
            ring_free(&r);
        }
    }
    free(items);
}

/* c >= 1: no node above ceil(c * m / n), every item owned. */
static void test_cap(void)
{
    static const size_t ns[] = {1, 2, 3, 10, 33};
    static const size_t ms[] = {0, 1, 2, 5, 60, 1024, 10000};
    static const double cs[] = {1.0, 1.05, 1.1, 1.25, 2.0};
    static const int vs[] = {1, 100};
    char ids[MAXN][32];
    const char *p[MAXN];
    size_t cases = 0, bad = 0;

    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 7; b++)
            for (size_t d = 0; d < 5; d++)
                for (size_t e = 0; e < 2; e++) {
                    struct ring *r = NULL;
                    uint64_t *items = host_items(ms[b]);
                    uint32_t *own = xcalloc(ms[b] + 1, sizeof(*own));
                    size_t load[MAXN] = {0}, cap, maxl = 0;
                    int ok = 1;

                    node_ids(ids, p, ns[a], 0);
                    ring_new(&r, p, ns[a], vs[e]);
                    ring_assign(r, items, ms[b], cs[d], own);
                    cap = (size_t)ceil(cs[d] * (double)ms[b] / (double)ns[a]);
                    for (size_t i = 0; i < ms[b]; i++) {
                        if (own[i] >= ns[a]) {
                            ok = 0;
                            continue;
                        }
                        load[own[i]]++;
                    }
                    for (size_t i = 0; i < ns[a]; i++)
                        maxl = load[i] > maxl ? load[i] : maxl;
                    if (maxl > cap || !ok) {
                        ok = 0;
                        fprintf(stderr, "n=%zu m=%zu c=%.2f v=%d: max load "
                                "%zu > cap %zu or item unowned\n", ns[a],
                                ms[b], cs[d], vs[e], maxl, cap);
                    }
                    cases++;
                    bad += !ok;
                    free(own);
                    free(items);
                    ring_free(&r);
                }
    CHECK(bad == 0, "%zu of %zu cap cases broken", bad, cases);
    CHECK(cases == 5 * 7 * 5 * 2, "ran %zu cases", cases);
}

/* Plain hashing: on leave only the leaver's items move (to anyone), on
 * join only items that go to the newcomer move. */
static void test_plain_stability(void)
{
    enum { N = 10, M = 20000 };
    char ids[N + 1][32];
    const char *p[N + 1];
    struct ring *r0 = NULL, *rl = NULL, *rj = NULL;
    uint64_t *items = host_items(M);
    const char **o0, **ol, **oj;
    size_t bad_leave = 0, bad_join = 0, moved_leave = 0, moved_join = 0;

    node_ids(ids, p, N + 1, 0); /* node-0 .. node-10; node-10 joins */
    ring_new(&r0, p, N, 100);
    ring_new(&rl, p + 1, N - 1, 100); /* node-0 leaves */
    ring_new(&rj, p, N + 1, 100);
    o0 = assign_ids(r0, items, M, 0.0);
    ol = assign_ids(rl, items, M, 0.0);
    oj = assign_ids(rj, items, M, 0.0);
    for (size_t i = 0; i < M; i++) {
        if (strcmp(o0[i], ol[i])) {
            moved_leave++;
            bad_leave += strcmp(o0[i], "node-0") != 0;
        }
        if (strcmp(o0[i], oj[i])) {
            moved_join++;
            bad_join += strcmp(oj[i], "node-10") != 0;
        }
    }
    CHECK(bad_leave == 0, "%zu items of staying nodes moved on leave",
          bad_leave);
    CHECK(bad_join == 0, "%zu items moved between old nodes on join",
          bad_join);
    /* and something did move: the check above is not vacuous */
    CHECK(moved_leave > 0 && moved_join > 0, "moved %zu / %zu", moved_leave,
          moved_join);
    free(o0);
    free(ol);
    free(oj);
    ring_free(&r0);
    ring_free(&rl);
    ring_free(&rj);
    free(items);
}

/*
 * Bounded loads: items moved on one join / one leave.
 *
 * MOVE_BOUND = 3 * m / n. Measured with this ring (vnodes 100, partition
 * items 0..m-1, nodes "node-<k>", joiner node-<n>, leaver node-0; the
 * worst of c = 1.05, 1.10, 1.25; this test prints every case):
 *
 *     n   m      join moved (x m/n)   leave moved (x m/n)
 *     3   1024   0.80                 1.10
 *     10  1024   1.19                 1.16
 *     10  10000  1.10                 1.15
 *     30  10000  1.25                 1.31
 *
 * The least possible is m/(n+1) on join and m/n (the leaver's items) on
 * leave; the cascade of items pushed past full nodes adds up to ~30 %, so
 * the worst measured is 1.31 m/n and 3 m/n leaves a 2.3x margin. A modulo
 * assignment (hash mod n) moves n/(n+1) of all items on a join: measured
 * 9.10 m/n at n = 10, m = 10000, three times the bound; test_move_bound
 * checks that it fails.
 */
#define MOVE_BOUND(m, n) (3.0 * (double)(m) / (double)(n))

static size_t count_moved(const char **a, const char **b, size_t m)
{
    size_t k = 0;

    for (size_t i = 0; i < m; i++)
        k += strcmp(a[i], b[i]) != 0;
    return k;
}

static void move_case(size_t n, size_t m, double c, double *join,
                      double *leave)
{
    char ids[MAXN][32];
    const char *p[MAXN];
    struct ring *r0 = NULL, *rl = NULL, *rj = NULL;
    uint64_t *items = part_items(m);
    const char **o0, **ol, **oj;

    node_ids(ids, p, n + 1, 0);
    ring_new(&r0, p, n, 100);
    ring_new(&rl, p + 1, n - 1, 100);
    ring_new(&rj, p, n + 1, 100);
    o0 = assign_ids(r0, items, m, c);
    ol = assign_ids(rl, items, m, c);
    oj = assign_ids(rj, items, m, c);
    *join = (double)count_moved(o0, oj, m);
    *leave = (double)count_moved(o0, ol, m);
    free(o0);
    free(ol);
    free(oj);
    ring_free(&r0);
    ring_free(&rl);
    ring_free(&rj);
    free(items);
}

static void test_move_bound(void)
{
    static const size_t ns[] = {3, 10, 10, 30};
    static const size_t ms[] = {1024, 1024, 10000, 10000};
    static const double cs[] = {1.05, 1.10, 1.25};

    for (size_t a = 0; a < 4; a++) {
        double bound = MOVE_BOUND(ms[a], ns[a]);
        for (size_t k = 0; k < 3; k++) {
            double j, l;
            move_case(ns[a], ms[a], cs[k], &j, &l);
            CHECK(j <= bound, "n=%zu m=%zu c=%.2f: join moved %.0f > %.0f",
                  ns[a], ms[a], cs[k], j, bound);
            CHECK(l <= bound, "n=%zu m=%zu c=%.2f: leave moved %.0f > %.0f",
                  ns[a], ms[a], cs[k], l, bound);
            /* a leave moves at least the leaver's items: > 0 */
            CHECK(l > 0, "leave moved nothing");
            printf("  moved n=%zu m=%zu c=%.2f: join %.2f m/n, leave "
                   "%.2f m/n (bound 3.00)\n", ns[a], ms[a], cs[k],
                   j * (double)ns[a] / (double)ms[a],
                   l * (double)ns[a] / (double)ms[a]);
        }
    }
    /* the bound tells a consistent assignment from a modulo one */
    {
        size_t n = 10, m = 10000, moved = 0;
        uint64_t *items = part_items(m);
        for (size_t i = 0; i < m; i++)
            moved += items[i] % n != items[i] % (n + 1);
        CHECK((double)moved > MOVE_BOUND(m, n),
              "modulo moved %zu, under the bound", moved);
        printf("  modulo n=%zu m=%zu: join moves %.2f m/n\n", n, m,
               (double)moved * (double)n / (double)m);
        free(items);
    }
}

int main(void)
{
    test_bad_args();
    test_empty();
    test_order_dups();
    test_plain_matches_reference();
    test_cap();
    test_plain_stability();
    test_move_bound();
    return t_done("u-ring");
}
