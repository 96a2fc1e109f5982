/*
 * u-fpmap.c: the node's number-per-fingerprint table (crawler/fpmap.c):
 * put, lower (keeps the smaller), get, take with backward-shift deletion
 * checked against a plain array over many keys in colliding runs, the
 * zero fingerprint, clamping to 0..255 and the entry bound.
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "node-internal.h"
#include "t.h"

static void test_basic(void)
{
    struct fpmap *m = fpmap_new(100);
    CHECK(fpmap_get(m, 7, -1) == -1, "empty get gives the default");
    CHECK(fpmap_take(m, 7, -2) == -2, "empty take gives the default");
    fpmap_put(m, 7, 3);
    fpmap_put(m, 0, 9); /* the zero fingerprint is a key too */
    CHECK(fpmap_get(m, 7, -1) == 3 && fpmap_get(m, 0, -1) == 9, "put, get");
    fpmap_lower(m, 7, 5);
    CHECK(fpmap_get(m, 7, -1) == 3, "lower keeps the smaller");
    fpmap_lower(m, 7, 1);
    CHECK(fpmap_get(m, 7, -1) == 1, "lower sets a smaller number");
    fpmap_lower(m, 8, 4);
    CHECK(fpmap_get(m, 8, -1) == 4, "lower adds an absent key");
    fpmap_put(m, 7, 6);
    CHECK(fpmap_get(m, 7, -1) == 6, "put replaces");
    fpmap_put(m, 9, 300);
    fpmap_put(m, 10, -4);
    CHECK(fpmap_get(m, 9, -1) == 255 && fpmap_get(m, 10, -1) == 0,
          "numbers clamped to 0..255");
    CHECK(fpmap_count(m) == 5, "count %zu", fpmap_count(m));
    CHECK(fpmap_take(m, 7, -1) == 6 && fpmap_get(m, 7, -1) == -1 &&
              fpmap_count(m) == 4, "take removes");
    fpmap_free(&m);
    CHECK(m == NULL && fpmap_count(NULL) == 0, "free clears the pointer");
}

static void test_bound(void)
{
    struct fpmap *m = fpmap_new(10);
    for (uint64_t k = 1; k <= 20; k++)
        fpmap_put(m, k * 0x9e3779b97f4a7c15ull, (int)k);
    CHECK(fpmap_count(m) == 10, "at most max entries: %zu", fpmap_count(m));
    fpmap_put(m, 1 * 0x9e3779b97f4a7c15ull, 77);
    CHECK(fpmap_get(m, 0x9e3779b97f4a7c15ull, -1) == 77,
          "a full table still updates a present key");
    CHECK(fpmap_get(m, 20 * 0x9e3779b97f4a7c15ull, -1) == -1,
          "a put past the bound is dropped");
    fpmap_free(&m);
}

/* Keys whose hash has the same low bits (fpmap.c hashes k ^ k >> 29):
 * three homes, one long probe run; removing any key must leave every
 * other findable. */
static uint64_t key(int i)
{
    return (uint64_t)(i + 1) << 50 | (uint64_t)(i % 3);
}

static void test_runs(void)
{
    enum { N = 3000 };
    static int want[N];
    struct fpmap *m = fpmap_new(N);
    uint64_t x = 88172645463325252ull;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        want[i] = i % 200;
        fpmap_put(m, key(i), want[i]);
    }
    for (int r = 0; r < 2 * N; r++) { /* xorshift: take and put back */
        int i;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        i = (int)(x % N);
        if (want[i] >= 0) {
            bad += fpmap_take(m, key(i), -1) != want[i];
            want[i] = -1;
        } else {
            want[i] = r % 250;
            fpmap_put(m, key(i), want[i]);
        }
    }
    for (int i = 0; i < N; i++)
        bad += fpmap_get(m, key(i), -1) != want[i];
    CHECK(bad == 0, "%d keys lost or wrong after takes in shared runs", bad);
    fpmap_free(&m);
}

int main(void)
{
    test_basic();
    test_bound();
    test_runs();
    return t_done("u-fpmap");
}
