/*
 * u-noise-state.c: the noise filter's repetition state as a blob
 * (noise_state_*), no Redis:
 *  - round trip: a header learned by one struct noise is dropped on the
 *    next page by a fresh struct noise that imported the blob, and kept
 *    by one that did not; the page's own table of contents stays;
 *  - bounds: a host whose set overflowed exports NOISE_STATE_KEEP entries
 *    within NOISE_STATE_MAX_BYTES, the most recent ones (its menu);
 *  - refused blobs: every truncation, other magic or version, trailing
 *    bytes, a count over the bound, a zero fingerprint, and random and
 *    bit-flipped blobs never crash, and a refused one changes nothing;
 *  - merge into held state, dirty tracking (also of hosts the LRU drops),
 *    noise_state_has / noise_state_used, disabled noise;
 *  - the seen table grows from SEEN_START buckets and holds exactly what a
 *    table made whole (SEEN_BUCKETS x SEEN_WAYS, oldest sighting out)
 *    would, checked against such a table over puts and merges; a host
 *    known without saved state has no tables.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"
#include "t.h"

#define HOST "m.test"
#define NHEAD 6  /* header links, block 1 */
#define NTOC 64  /* the page's own links, block 2 */

/* Link i of page *ud of HOST: < NHEAD the header, else the page's TOC. */
static const char *page_url(void *ud, size_t i)
{
    static char buf[96];
    const size_t *k = ud;

    if (i < NHEAD)
        snprintf(buf, sizeof(buf), "http://" HOST "/menu/%zu.html", i);
    else
        snprintf(buf, sizeof(buf), "http://" HOST "/p%zu/t%zu.html", *k, i);
    return buf;
}

/* Judge page k of host under the repeated rule (both blocks over the
 * ratio); *head_nav / *toc_nav: header / TOC links left as navigation. */
static void judge_page(struct noise *nz, const char *host, size_t k,
                       size_t *head_nav, size_t *toc_nav)
{
    unsigned char nav[NHEAD + NTOC];
    uint32_t blk[NHEAD + NTOC];
    size_t i;

    for (i = 0; i < NHEAD + NTOC; i++) {
        nav[i] = NOISE_SIG_RATIO; /* over the ratio, not semantic */
        blk[i] = i < NHEAD ? 1 : 2;
    }
    /* plenty of other text: the signals rule's page guard stays out */
    noise_repeat(nz, host, strlen(host), NULL, 0, page_url, &k, NHEAD + NTOC, blk,
                 nav, 10000, NULL);
    *head_nav = *toc_nav = 0;
    for (i = 0; i < NHEAD + NTOC; i++)
        *(i < NHEAD ? head_nav : toc_nav) += nav[i] != 0;
}

static struct noise *fresh(int rule)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, rule};

    return noise_new(&nc);
}

static void test_round_trip(int rule)
{
    struct noise *a = fresh(rule), *b, *c;
    unsigned char blob[NOISE_STATE_MAX_BYTES];
    size_t len, head, toc;

    CHECK(!noise_state_has(a, HOST, strlen(HOST)), "nothing held yet");
    CHECK(noise_state_export(a, HOST, strlen(HOST), blob) == 0,
          "no state: empty export");
    judge_page(a, HOST, 0, &head, &toc);
    CHECK(head == 0 && toc == 0, "first page keeps all (%zu %zu)", head, toc);
    CHECK(noise_state_has(a, HOST, strlen(HOST)), "held after a page");
    len = noise_state_export(a, HOST, strlen(HOST), blob);
    CHECK(len > 3 && len <= NOISE_STATE_MAX_BYTES, "blob %zu bytes", len);
    /* 3 + pages + count + (8 + 1) per recorded link */
    CHECK(len == 3 + 1 + 1 + (NHEAD + NTOC) * 9, "blob %zu bytes", len);

    b = fresh(rule);
    CHECK(noise_state_import(b, HOST, strlen(HOST), blob, len) == DC_OK,
          "import");
    CHECK(noise_state_has(b, HOST, strlen(HOST)), "held after import");
    CHECK(noise__seen_count(b, HOST, strlen(HOST)) == NHEAD + NTOC,
          "imported %zu fingerprints",
          noise__seen_count(b, HOST, strlen(HOST)));
    judge_page(b, HOST, 1, &head, &toc);
    CHECK(head == NHEAD, "imported: header dropped on page 1 (%zu)", head);
    CHECK(toc == 0, "imported: page 1's own TOC kept (%zu)", toc);

    c = fresh(rule); /* the new owner without the blob */
    judge_page(c, HOST, 1, &head, &toc);
    CHECK(head == 0, "not imported: header kept on page 1 (%zu)", head);

    /* the same decisions as the node that never moved */
    judge_page(a, HOST, 1, &head, &toc);
    CHECK(head == NHEAD && toc == 0, "original: %zu %zu", head, toc);
    /* another host of b is untouched */
    CHECK(!noise_state_has(b, "other.test", 10), "other host not held");
    noise_free(&a);
    noise_free(&b);
    noise_free(&c);
}

static void test_bounds(void)
{
    struct noise *a = fresh(NOISE_RULE_REPEATED), *b;
    unsigned char blob[NOISE_STATE_MAX_BYTES];
    size_t len, k, head, toc;

    CHECK(NOISE_SEEN_MAX > NOISE_STATE_KEEP, "the blob must be a subset");
    for (k = 0; k < 200; k++) /* 200 * 70 links: the set overflows */
        judge_page(a, HOST, k, &head, &toc);
    CHECK(noise__seen_count(a, HOST, strlen(HOST)) > NOISE_STATE_KEEP,
          "set holds %zu", noise__seen_count(a, HOST, strlen(HOST)));
    len = noise_state_export(a, HOST, strlen(HOST), blob);
    CHECK(len <= NOISE_STATE_MAX_BYTES, "blob %zu > %d", len,
          NOISE_STATE_MAX_BYTES);
    CHECK(len >= 3 + 2 + 2 + NOISE_STATE_KEEP * 9, "blob %zu bytes", len);
    printf("u-noise-state: blob of a host with an overflowed set: %zu bytes "
           "(bound %d, %d entries)\n", len, NOISE_STATE_MAX_BYTES,
           NOISE_STATE_KEEP);
    b = fresh(NOISE_RULE_REPEATED);
    CHECK(noise_state_import(b, HOST, strlen(HOST), blob, len) == DC_OK,
          "import");
    CHECK(noise__seen_count(b, HOST, strlen(HOST)) == NOISE_STATE_KEEP,
          "imported %zu", noise__seen_count(b, HOST, strlen(HOST)));
    /* the most recent entries were kept: the menu, and page 199's TOC */
    judge_page(b, HOST, 200, &head, &toc);
    CHECK(head == NHEAD && toc == 0, "after import: %zu %zu", head, toc);
    noise_free(&a);
    noise_free(&b);
}

/* Import blob into a fresh noise: its return, and that a refused blob
 * left the host empty. */
static int import_fresh(const unsigned char *blob, size_t len, int *clean)
{
    struct noise *nz = fresh(NOISE_RULE_REPEATED);
    int rc = noise_state_import(nz, HOST, strlen(HOST), blob, len);

    *clean = noise__seen_count(nz, HOST, strlen(HOST)) == 0;
    noise_free(&nz);
    return rc;
}

static void test_refused(void)
{
    struct noise *a = fresh(NOISE_RULE_REPEATED);
    unsigned char blob[NOISE_STATE_MAX_BYTES], bad[NOISE_STATE_MAX_BYTES + 16];
    size_t len, i, head, toc, bad_trunc = 0, ok_mut = 0, bad_mut = 0;
    int clean, rc;
    unsigned seed = 12345;

    judge_page(a, HOST, 0, &head, &toc);
    judge_page(a, HOST, 1, &head, &toc);
    len = noise_state_export(a, HOST, strlen(HOST), blob);
    CHECK(import_fresh(blob, len, &clean) == DC_OK && !clean, "valid blob");
    CHECK(import_fresh(NULL, 0, &clean) == DC_OK && clean, "no blob");
    /* every truncation: a malloc'd copy of exactly that size, for ASan */
    for (i = 1; i < len; i++) {
        unsigned char *t = malloc(i);
        memcpy(t, blob, i);
        rc = import_fresh(t, i, &clean);
        bad_trunc += rc != DC_EINVAL || !clean;
        free(t);
    }
    CHECK(!bad_trunc, "%zu truncations accepted or applied", bad_trunc);
    {
        static const struct {
            const char *what;
            size_t at;
            unsigned char v;
        } cases[] = {
            {"magic", 0, 'x'}, {"magic 2", 1, 'N'}, {"version 0", 2, 0},
            {"version 2", 2, 2}, {"version 255", 2, 255},
        };
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            memcpy(bad, blob, len);
            bad[cases[i].at] = cases[i].v;
            CHECK(import_fresh(bad, len, &clean) == DC_EINVAL && clean, "%s",
                  cases[i].what);
        }
    }
    memcpy(bad, blob, len);
    bad[len] = 0;
    CHECK(import_fresh(bad, len + 1, &clean) == DC_EINVAL && clean,
          "trailing byte");
    /* count over the bound: 'd' 'n' 1, pages 1, count KEEP + 1 (2 bytes) */
    memset(bad, 1, sizeof(bad));
    bad[0] = 'd', bad[1] = 'n', bad[2] = 1, bad[3] = 1;
    bad[4] = (unsigned char)(((NOISE_STATE_KEEP + 1) & 0x7f) | 0x80);
    bad[5] = (unsigned char)((NOISE_STATE_KEEP + 1) >> 7);
    CHECK(import_fresh(bad, 6 + (NOISE_STATE_KEEP + 1) * 9, &clean) ==
              DC_EINVAL && clean, "count over the bound");
    /* a zero fingerprint (the empty-slot mark) */
    memcpy(bad, "dn\001\001\001\0\0\0\0\0\0\0\0\0", 14);
    CHECK(import_fresh(bad, 14, &clean) == DC_EINVAL && clean, "zero fp");
    /* a varint that never ends */
    memcpy(bad, "dn\001", 3);
    memset(bad + 3, 0xff, 20);
    CHECK(import_fresh(bad, 23, &clean) == DC_EINVAL && clean,
          "endless varint");
    /* random bytes and bit flips: never a crash; refused ones change
     * nothing */
    for (i = 0; i < 3000; i++) {
        size_t n = (size_t)rand_r(&seed) % 64, j;
        for (j = 0; j < n; j++)
            bad[j] = (unsigned char)rand_r(&seed);
        if (i % 2 == 0 && n >= 3)
            bad[0] = 'd', bad[1] = 'n', bad[2] = 1;
        rc = import_fresh(bad, n, &clean);
        bad_mut += rc != DC_OK && !clean;
    }
    for (i = 0; i < 3000; i++) {
        size_t at = (size_t)rand_r(&seed) % len;
        memcpy(bad, blob, len);
        bad[at] ^= (unsigned char)(1u << (rand_r(&seed) % 8));
        rc = import_fresh(bad, len, &clean);
        ok_mut += rc == DC_OK;
        bad_mut += rc != DC_OK && !clean;
    }
    CHECK(!bad_mut, "%zu refused blobs changed the state", bad_mut);
    printf("u-noise-state: 3000 bit flips of a valid blob: %zu still valid "
           "(a flipped fingerprint or age), the rest refused\n", ok_mut);
    noise_free(&a);
}

static void test_merge_dirty(void)
{
    struct noise *a = fresh(NOISE_RULE_REPEATED), *b = fresh(NOISE_RULE_REPEATED);
    unsigned char blob[NOISE_STATE_MAX_BYTES];
    struct noise_state *s;
    size_t len, n, head, toc, k, i;
    char host[32];
    int found;

    judge_page(a, HOST, 0, &head, &toc);
    len = noise_state_export(a, HOST, strlen(HOST), blob);
    judge_page(b, HOST, 7, &head, &toc); /* b learned page 7's TOC */
    n = noise_state_take_dirty(b, &s);
    CHECK(n == 1, "one dirty host (%zu)", n);
    noise_state_free(s, n);
    CHECK(noise_state_import(b, HOST, strlen(HOST), blob, len) == DC_OK,
          "merge");
    CHECK(noise__seen_count(b, HOST, strlen(HOST)) == NHEAD + 2 * NTOC,
          "merged %zu", noise__seen_count(b, HOST, strlen(HOST)));
    CHECK(noise_state_take_dirty(b, &s) == 0 && !s, "clean after import");
    judge_page(b, HOST, 8, &head, &toc);
    CHECK(head == NHEAD && toc == 0, "merged state judges: %zu %zu", head,
          toc);
    n = noise_state_take_dirty(b, &s);
    CHECK(n == 1 && s && s[0].hostlen == strlen(HOST) &&
              !strcmp(s[0].host, HOST) && s[0].len > 3,
          "dirty after a page: %zu", n);
    noise_state_free(s, n);
    CHECK(noise_state_take_dirty(b, &s) == 0, "taken: clean");
    /* hosts the LRU drops while dirty are still handed over */
    for (k = 0; k <= NOISE_MAX_HOSTS; k++) {
        snprintf(host, sizeof(host), "x%zu.test", k);
        judge_page(b, host, 0, &head, &toc);
    }
    n = noise_state_take_dirty(b, &s);
    found = 0;
    for (i = 0; i < n; i++)
        found += !strcmp(s[i].host, "x0.test") || !strcmp(s[i].host, HOST);
    CHECK(n == NOISE_MAX_HOSTS + 1, "%zu dirty hosts (want %d)", n,
          NOISE_MAX_HOSTS + 1);
    CHECK(found == 1, "the dropped x0.test is among them (%d)", found);
    CHECK(!noise_state_has(b, HOST, strlen(HOST)), HOST " dropped (LRU)");
    noise_state_free(s, n);
    noise_free(&a);
    noise_free(&b);
}

static void test_modes(void)
{
    struct noise_conf off = {0, 0.25, 0.8, 64, 2, 0, NOISE_RULE_REPEATED};
    struct noise *nz = noise_new(&off), *r = fresh(NOISE_RULE_RATIO);
    struct noise *a = fresh(NOISE_RULE_REPEATED);
    unsigned char blob[NOISE_STATE_MAX_BYTES];
    struct noise_state *s;
    size_t len, head, toc;

    judge_page(a, HOST, 0, &head, &toc);
    len = noise_state_export(a, HOST, strlen(HOST), blob);
    CHECK(!noise_state_used(nz), "disabled: not used");
    CHECK(!noise_state_used(r), "ratio rule: not used");
    CHECK(noise_state_used(a), "repeated rule: used");
    CHECK(noise_state_import(nz, HOST, strlen(HOST), blob, len) == DC_OK &&
              !noise_state_has(nz, HOST, strlen(HOST)),
          "disabled: import is a no-op");
    CHECK(noise_state_take_dirty(nz, &s) == 0, "disabled: nothing dirty");
    /* ratio: the table is there (another rule may use it), stays empty */
    judge_page(r, HOST, 0, &head, &toc);
    CHECK(head == NHEAD && toc == NTOC, "ratio drops all");
    CHECK(noise_state_take_dirty(r, &s) == 0, "ratio: nothing dirty");
    noise_free(&nz);
    noise_free(&r);
    noise_free(&a);
}

/* The seen table made whole, as noise-host.c had it: the model. */
static struct seen_ent model[SEEN_BUCKETS * SEEN_WAYS];

static void model_set(uint64_t fp, uint64_t page, int merge)
{
    struct seen_ent *b = &model[(fp & (SEEN_BUCKETS - 1)) * SEEN_WAYS];
    size_t w, old = 0;

    for (w = 0; w < SEEN_WAYS; w++) {
        if (b[w].fp == fp)
            break;
        if (b[w].page < b[old].page)
            old = w;
    }
    if (w == SEEN_WAYS)
        w = old;
    if (merge && b[w].fp == fp) {
        if (b[w].page < page)
            b[w].page = page;
        return;
    }
    if (merge && b[w].fp && b[w].page >= page)
        return;
    b[w].fp = fp;
    b[w].page = page;
}

static void test_seen_growth(void)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz = noise_new(&nc);
    struct host *h;
    uint64_t x = 0x9e3779b97f4a7c15ull, fps[6000];
    size_t i, bad = 0, held = 0;

    memset(model, 0, sizeof(model));
    (void)noise_state_import(nz, "e.test", 6, NULL, 0);
    h = noise__host_find(nz, "e.test", 6);
    CHECK(h && !h->seen && !h->memo, "a host known without state: no tables");
    h = noise__host_get(nz, "g.test", 6);
    CHECK(h->seen_nb == SEEN_START, "seen table starts at %zu buckets",
          h->seen_nb);
    for (i = 0; i < 6000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fps[i] = x | 1;
        h->pages = 1 + i / 7;
        if (i % 5 == 4) { /* a merge of an older sighting, or a re-sighting */
            uint64_t f = i % 10 == 4 ? fps[i / 2] : fps[i];
            noise__seen_merge(h, f, h->pages > 40 ? h->pages - 40 : 1);
            model_set(f, h->pages > 40 ? h->pages - 40 : 1, 1);
        } else {
            noise__seen_put(h, fps[i]);
            model_set(fps[i], h->pages, 0);
        }
        if (i == 40)
            CHECK(h->seen_nb < SEEN_BUCKETS, "40 entries: %zu buckets",
                  h->seen_nb);
    }
    for (i = 0; i < SEEN_BUCKETS * SEEN_WAYS; i++) {
        held += model[i].fp != 0;
        bad += model[i].fp && !noise__seen_has(h, model[i].fp);
    }
    for (i = 0; i < 6000; i++) { /* nothing the model dropped is held */
        struct seen_ent *b =
            &model[(fps[i] & (SEEN_BUCKETS - 1)) * SEEN_WAYS];
        int in = 0;
        for (size_t w = 0; w < SEEN_WAYS; w++)
            in |= b[w].fp == fps[i];
        bad += !in && noise__seen_has(h, fps[i]);
    }
    CHECK(bad == 0 && held == noise__seen_count(nz, "g.test", 6),
          "grown table differs from a whole one: %zu, held %zu vs %zu", bad,
          held, noise__seen_count(nz, "g.test", 6));
    CHECK(h->seen_nb == SEEN_BUCKETS, "whole at last: %zu", h->seen_nb);
    noise_free(&nz);
}

int main(void)
{
    test_round_trip(NOISE_RULE_REPEATED);
    test_round_trip(NOISE_RULE_SIGNALS); /* the default */
    test_bounds();
    test_refused();
    test_merge_dirty();
    test_modes();
    test_seen_growth();
    return t_done("u-noise-state");
}
