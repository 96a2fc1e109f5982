/*
 * u-noise.c: the noise module. Table driven:
 *  - block ratios of hand-written fragments (exactly 1/4 kept, just above
 *    dropped; no text = 1; script/style excluded; whitespace collapsed);
 *  - nearest-block assignment and subtree sums (parser_set_blocks);
 *  - bit-parallel LCS against the DP oracle on 100k random and URL-like
 *    pairs, lengths across word boundaries;
 *  - clustering: order independence for well-separated groups (checked to
 *    be separated with the oracle first), template drops, template_min,
 *    budgets, LRU bound, disabled mode;
 *  - the repeated block rule (noise_repeat) on hand-written pages of one
 *    host: a page's own table of contents is kept, a header repeated on
 *    the second page is dropped, a block with half its links seen is
 *    dropped, state is per host; the ratio rule drops every over-ratio
 *    block; the per-host fingerprint set stays within NOISE_SEEN_MAX and
 *    hosts beyond NOISE_MAX_HOSTS are dropped least recently used first;
 *  - the signals rule (the default): the truth table of R, S, M and P on
 *    one host's pages (a block needs NOISE_JUDGE_MIN links to be P, only
 *    links seen before are P, S links are not recorded for P), the page
 *    guard (kept only links R and P condemned, only with little text and
 *    nearly all links dropped), the contextual link of a recurring menu,
 *    which navigation links become noise samples, and the cluster stage's
 *    recurrence condition (a noise cluster drops look-alikes once it was
 *    fed on two pages); the same
 *    signals under the ratio rule give R alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"
#include "noise.h"
#include "parser.h"
#include "t.h"

#define TAGS "td th p div nav header footer aside section article main " \
             "table form"
#define PAGE "http://h.test/page.html"

/* -------------------------------------------------------------- blocks */

/* Block of link `url` in fragment html; *nav its verdict at ratio 0.25. */
static const struct parser_block *block_of(struct parser *p, const char *html,
                                           const char *url, uint32_t *idx,
                                           int *nav)
{
    const struct parser_result *r;
    size_t i;

    if (parser_parse_html(p, PAGE, html, strlen(html), &r) != DC_OK)
        return NULL;
    for (i = 0; i < r->nlinks; i++) {
        if (strcmp(r->links[i].url, url))
            continue;
        *idx = r->links[i].block;
        if (*idx >= r->nblocks)
            return NULL;
        *nav = noise_block_is_nav(0.25, r->blocks[*idx].text,
                                  r->blocks[*idx].link_text);
        return &r->blocks[*idx];
    }
    return NULL;
}

static void test_ratio(void)
{
    static const struct {
        const char *html;
        size_t text, link_text;
        int nav;
    } cases[] = {
        /* 4 / 16 = exactly 1/4: kept */
        {"<div>aaaaaaaaaaaa<a href=/x>bbbb</a></div>", 16, 4, 0},
        /* 5 / 17 > 1/4: dropped */
        {"<div>aaaaaaaaaaaa<a href=/x>bbbbb</a></div>", 17, 5, 1},
        /* 5 / 20 = 1/4 */
        {"<p>aaaaaaaaaaaaaaa<a href=/x>bbbbb</a></p>", 20, 5, 0},
        /* links and no text: ratio 1 */
        {"<div><a href=/x><img src=i.png></a></div>", 0, 0, 1},
        /* script, style, noscript text is not visible */
        {"<div>aaaaaaaaaaaa<script>var x = 'cccccccccccc';</script>"
         "<style>p{}</style><noscript>dddddddddddd</noscript>"
         "<a href=/x>bbbbb</a></div>", 17, 5, 1},
        /* whitespace: trimmed per text node, inner runs count one */
        {"<div>  aaaa  \n\t aaaa  <a href=/x> b  b </a></div>", 12, 3, 0},
        /* UTF-8 counts code points: 4 x e-acute + 12 = 16 chars */
        {"<div>\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 aaaaaaaaaaa<a href=/x>bbbb</a></div>",
         20, 4, 0},
        /* all link text */
        {"<nav><a href=/x>one</a> <a href=/y>two</a></nav>", 6, 6, 1},
        /* a nested block's text counts for the outer one */
        {"<div><a href=/x>bbbb</a><p>aaaaaaaaaaaa</p></div>", 16, 4, 0},
    };
    struct parser *p = parser_new(0, 0);
    size_t i;

    CHECK(parser_set_blocks(p, "div p nosuchtag") == DC_EINVAL, "bad tag");
    CHECK(parser_set_blocks(p, TAGS) == DC_OK, "tags");
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t idx = 0;
        int nav = -1;
        const struct parser_block *b =
            block_of(p, cases[i].html, "http://h.test/x", &idx, &nav);
        CHECK(b != NULL, "case %zu: link not found", i);
        if (!b)
            continue;
        CHECK(b->text == cases[i].text && b->link_text == cases[i].link_text,
              "case %zu: text %zu link %zu, want %zu %zu", i, b->text,
              b->link_text, cases[i].text, cases[i].link_text);
        CHECK(nav == cases[i].nav, "case %zu: nav %d", i, nav);
    }
    /* the ratio rule itself, at the boundary */
    CHECK(!noise_block_is_nav(0.25, 100, 25), "25/100 kept");
    CHECK(noise_block_is_nav(0.25, 100, 26), "26/100 dropped");
    CHECK(noise_block_is_nav(0.25, 0, 0), "no text");
    CHECK(!noise_block_is_nav(0.25, 10, 0), "no link text");
    parser_free(&p);
}

static void test_nearest(void)
{
    /* pre-order blocks: 0 document, 1 div, 2 p, 3 td (table/tr: table is
     * a block too, so td's parent is it) */
    static const char html[] =
        "<div>intro text<p>para <a href=/a>A</a></p><a href=/b>B</a>"
        "<ul><li><a href=/c>C</a></li></ul></div>"
        "<a href=/d>D</a>"
        "<table><tr><td><a href=/e>E</a></td></tr></table>";
    static const struct {
        const char *url;
        uint32_t block;
    } want[] = {
        {"http://h.test/a", 2}, {"http://h.test/b", 1},
        {"http://h.test/c", 1}, {"http://h.test/d", 0},
        {"http://h.test/e", 4},
    };
    struct parser *p = parser_new(0, 0);
    const struct parser_result *r;
    size_t i, k;

    parser_set_blocks(p, TAGS);
    CHECK(parser_parse_html(p, PAGE, html, sizeof(html) - 1, &r) == DC_OK,
          "parse");
    CHECK(r->nblocks == 5, "nblocks %zu", r->nblocks);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        for (k = 0; k < r->nlinks && strcmp(r->links[k].url, want[i].url); k++)
            ;
        CHECK(k < r->nlinks && r->links[k].block == want[i].block,
              "%s: block %u, want %u", want[i].url,
              k < r->nlinks ? r->links[k].block : 99, want[i].block);
    }
    if (r->nblocks == 5) {
        CHECK(r->blocks[2].parent == 1 && r->blocks[4].parent == 3 &&
                  r->blocks[1].parent == 0,
              "parents");
        /* div: "intro text" 10 + "para " 4 + A B C 3 = 17, link 3 */
        CHECK(r->blocks[1].text == 17 && r->blocks[1].link_text == 3,
              "div sums %zu %zu", r->blocks[1].text, r->blocks[1].link_text);
        CHECK(r->blocks[0].text == 19, "document sum %zu", r->blocks[0].text);
        CHECK(r->blocks[1].nlinks == 2 && r->blocks[2].nlinks == 1,
              "nlinks");
    }
    /* a URL in a menu and in a paragraph takes the paragraph's block */
    {
        static const char h2[] =
            "<nav><a href=/m>menu</a></nav>"
            "<p>some long text here and <a href=/m>m</a> more text</p>";
        CHECK(parser_parse_html(p, PAGE, h2, sizeof(h2) - 1, &r) == DC_OK &&
                  r->nlinks == 1 && r->links[0].block == 2,
              "best occurrence");
    }
    /* nsect: hrefs naming a section of a page ("x.html#s"); a bare "#s",
     * an empty fragment or none do not count */
    {
        static const char h3[] =
            "<nav><a href=a.html#s1>1</a><a href=' b.html#s2'>2</a>"
            "<a href=a.html#s3>3</a><a href=#top>t</a><a href=c.html#>c</a>"
            "<a href=d.html>d</a></nav>";
        CHECK(parser_parse_html(p, PAGE, h3, sizeof(h3) - 1, &r) == DC_OK &&
                  r->nblocks == 2 && r->blocks[1].nsect == 3 &&
                  r->blocks[1].nlinks == 6,
              "nsect %u of %u", r->nblocks == 2 ? r->blocks[1].nsect : 99,
              r->nblocks == 2 ? r->blocks[1].nlinks : 99);
    }
    /* blocks off: no block data, old API unchanged */
    parser_set_blocks(p, NULL);
    CHECK(parser_parse_html(p, PAGE, html, sizeof(html) - 1, &r) == DC_OK &&
              r->blocks == NULL && r->nblocks == 0 && r->nlinks == 5,
          "blocks off");
    parser_free(&p);
}

/* ----------------------------------------------------------------- LCS */

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t rand_str(uint64_t *s, char *out, int urlish)
{
    static const char *const seg[] = {"news", "2024", "item", "list", "a",
                                      "page", "id", "?sort=", "-", ".html"};
    size_t n, len, i;

    len = rng(s) % 10 == 0 ? rng(s) % 300 : rng(s) % 70;
    if (!urlish) {
        int sigma = 2 + (int)(rng(s) % 30);
        for (i = 0; i < len; i++)
            out[i] = (char)(rng(s) % 4 == 0 ? 0x80 + rng(s) % 128
                                             : 'a' + rng(s) % (uint64_t)sigma);
        return len;
    }
    for (n = 0; n < len;) {
        const char *g = seg[rng(s) % 10];
        size_t k = strlen(g);
        out[n++] = '/';
        for (i = 0; i < k && n < 300; i++)
            out[n++] = g[i];
        if (n >= 300)
            break;
    }
    return n;
}

static void test_lcs(void)
{
    char a[320], b[320];
    uint64_t s = 7;
    size_t i, al, bl, bad = 0;
    struct lcs_pat pat;

    noise__pat_init(&pat);
    for (i = 0; i < 100000; i++) {
        size_t want, got, got2;
        al = rand_str(&s, a, (int)(i & 1));
        bl = i % 7 == 0 ? al : rand_str(&s, b, (int)(i & 1));
        if (i % 7 == 0)
            memcpy(b, a, al);
        want = noise__lcs_dp(a, al, b, bl);
        noise__pat_set(&pat, a, al);
        got = noise__pat_lcs(&pat, b, bl);
        got2 = i % 101 == 0 ? noise_lcs(b, bl, a, al) : want;
        if (got != want || got2 != want) {
            if (bad++ < 5)
                CHECK(0, "pair %zu (%zu, %zu): %zu / %zu, DP %zu", i, al, bl,
                      got, got2, want);
        }
    }
    CHECK(bad == 0, "%zu of 100000 pairs differ from the DP", bad);
    noise__pat_release(&pat);
    CHECK(noise_lcs("abcbdab", 7, "bdcaba", 6) == 4, "textbook LCS 4");
    CHECK(noise_lcs("", 0, "abc", 3) == 0, "empty");
    CHECK(noise_similarity("", 0, "", 0) == 1.0, "empty sim");
    CHECK(noise_similarity("/ab", 3, "/abcd", 5) == (1.0 + 0.6) / 2, "sim");
}

/* --------------------------------------------------------- clustering */

static const char *url_at(void *ud, size_t i)
{
    return ((const char *const *)ud)[i];
}

static const char *const groups[3][4] = {
    {"http://h.test/calendar?month=01", "http://h.test/calendar?month=02",
     "http://h.test/calendar?month=11", "http://h.test/calendar?month=12"},
    {"http://h.test/shop/item-1001.html", "http://h.test/shop/item-1002.html",
     "http://h.test/shop/item-2040.html", "http://h.test/shop/item-3999.html"},
    {"http://other.test/", "http://other.test/x", "http://other.test/y",
     "http://other.test/z"},
};

static int separated(double t)
{
    size_t g1, g2, i, j;
    char a[64], b[64];

    for (g1 = 0; g1 < 3; g1++)
        for (g2 = 0; g2 < 3; g2++)
            for (i = 0; i < 4; i++)
                for (j = 0; j < 4; j++) {
                    /* the compared keys: path+query on h.test, else
                     * without scheme */
                    const char *x = groups[g1][i] + 7, *y = groups[g2][j] + 7;
                    size_t xl, yl, l;
                    double sim;
                    if (!strncmp(x, "h.test", 6))
                        x += 6;
                    if (!strncmp(y, "h.test", 6))
                        y += 6;
                    xl = strlen(x);
                    yl = strlen(y);
                    memcpy(a, x, xl);
                    memcpy(b, y, yl);
                    l = noise__lcs_dp(a, xl, b, yl);
                    sim = ((double)l / (double)xl + (double)l / (double)yl) / 2;
                    if ((g1 == g2) != (sim >= t))
                        return 0;
                }
    return 1;
}

static void test_order(void)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0};
    const char *list[12];
    size_t gof[12], i, j, r, perm[12];
    uint64_t s = 99;

    CHECK(separated(0.8), "groups are not separated at 0.8: test is void");
    for (r = 0; r < 50; r++) {
        struct noise *nz = noise_new(&nc);
        unsigned char verdict[12];
        uint64_t ticket[12];
        int ok = 1;
        for (i = 0; i < 12; i++)
            perm[i] = i;
        for (i = 11; i > 0; i--) { /* Fisher-Yates */
            size_t k = (size_t)(rng(&s) % (i + 1)), t = perm[i];
            perm[i] = perm[k];
            perm[k] = t;
        }
        for (i = 0; i < 12; i++) {
            list[i] = groups[perm[i] / 4][perm[i] % 4];
            gof[i] = perm[i] / 4;
        }
        noise_filter(nz, "h.test", 6, url_at, (void *)list, 12, NULL, verdict,
                     ticket, NULL);
        /* same cluster (ticket) exactly when same group */
        for (i = 0; i < 12; i++)
            for (j = 0; j < 12; j++)
                if ((ticket[i] == ticket[j]) != (gof[i] == gof[j]) ||
                    verdict[i] != NOISE_KEEP)
                    ok = 0;
        CHECK(ok, "order %zu: partition differs from the groups", r);
        noise_free(&nz);
    }
}

static void test_drop(void)
{
    static const char *const page1[] = {
        "http://h.test/calendar?month=01", "http://h.test/calendar?month=02",
        "http://h.test/about/team.html", "http://h.test/story/one.html"};
    static const unsigned char nav1[] = {1, 1, 1, 0};
    static const char *const page2[] = {
        "http://h.test/calendar?month=07", "http://h.test/about/team.html",
        "http://h.test/story/two.html"};
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0};
    unsigned char v[4];
    struct noise_stats st = {0};
    struct noise *nz;
    int tmin;

    for (tmin = 1; tmin <= 2; tmin++) {
        nc.template_min = (size_t)tmin;
        nz = noise_new(&nc);
        memset(&st, 0, sizeof(st));
        noise_filter(nz, "h.test", 6, url_at, (void *)page1, 4, nav1, v, NULL,
                     &st);
        CHECK(v[0] == NOISE_BLOCK && v[1] == NOISE_BLOCK && v[2] == NOISE_BLOCK
                  && v[3] == NOISE_KEEP, "page1 %d", tmin);
        noise_filter(nz, "h.test", 6, url_at, (void *)page2, 3, NULL, v, NULL,
                     &st);
        /* the calendar is a nav template of 2 URLs: dropped either way */
        CHECK(v[0] == NOISE_CLUSTER, "calendar look-alike, template_min %d",
              tmin);
        /* team.html was a single nav URL: dropped only with template_min 1 */
        CHECK(v[1] == (tmin == 1 ? NOISE_CLUSTER : NOISE_KEEP),
              "single nav URL, template_min %d: %d", tmin, v[1]);
        CHECK(v[2] == NOISE_KEEP, "story two");
        CHECK(st.seen == 7 && st.dropped_block == 3 &&
                  st.dropped_cluster == (size_t)(tmin == 1 ? 2 : 1),
              "stats %zu %zu %zu", st.seen, st.dropped_block,
              st.dropped_cluster);
        noise_free(&nz);
    }
}

static void test_budget_lru(void)
{
    struct noise_conf nc = {1, 0.25, 0.8, 2, 2, 3};
    static const char *const items[] = {
        "http://h.test/item?id=101", "http://h.test/item?id=102",
        "http://h.test/item?id=103", "http://h.test/item?id=104",
        "http://h.test/item?id=105"};
    static const char *const other[] = {"http://h.test/aaaaaaaaaaaa/",
                                        "http://h.test/zzzzzzzzz.txt"};
    struct noise_stats st = {0};
    unsigned char v[5];
    uint64_t t[5], first;
    struct noise *nz = noise_new(&nc);
    size_t i, kept = 0;

    for (i = 0; i < 5; i++) {
        noise_filter(nz, "h.test", 6, url_at, (void *)(items + i), 1, NULL, v,
                     t, &st);
        if (v[0] == NOISE_KEEP) {
            kept++;
            noise_admitted(nz, t[0]);
        }
    }
    CHECK(kept == 3 && st.refused_budget == 2, "budget: kept %zu refused %zu",
          kept, st.refused_budget);
    /* a kept but not admitted link does not use budget */
    nc.cluster_budget = 1;
    noise_free(&nz);
    nz = noise_new(&nc);
    noise_filter(nz, "h.test", 6, url_at, (void *)items, 2, NULL, v, t, NULL);
    CHECK(v[0] == NOISE_KEEP && v[1] == NOISE_KEEP, "nothing admitted yet");
    first = t[0];
    noise_admitted(nz, first);
    noise_filter(nz, "h.test", 6, url_at, (void *)(items + 2), 1, NULL, v, t,
                 NULL);
    CHECK(v[0] == NOISE_BUDGET, "budget of 1 used");
    /* LRU: two other clusters push the item cluster out (max 2) */
    noise_filter(nz, "h.test", 6, url_at, (void *)other, 2, NULL, v, t, NULL);
    noise_admitted(nz, first); /* stale ticket: ignored */
    noise_filter(nz, "h.test", 6, url_at, (void *)(items + 3), 1, NULL, v, t,
                 NULL);
    CHECK(v[0] == NOISE_KEEP, "evicted cluster starts afresh");
    noise_free(&nz);
    noise_free(&nz); /* NULL ok */

    nc.enabled = 0;
    nz = noise_new(&nc);
    memset(&st, 0, sizeof(st));
    {
        unsigned char nav[5] = {1, 1, 1, 1, 1};
        noise_filter(nz, "h.test", 6, url_at, (void *)items, 5, nav, v, t,
                     &st);
    }
    CHECK(!memchr(v, NOISE_BLOCK, 5) && st.seen == 5 && !st.dropped_block,
          "disabled keeps all");
    noise_free(&nz);
}

/* ------------------------------------------------------ repeated rule */

#define PROSE "<p>This paragraph is ordinary prose that talks about the " \
              "subject at some length, as a page body does.</p>"
#define HEADER "<header><a href=/>Home</a> <a href=/docs/>Docs</a> " \
               "<a href=/blog/>Blog</a> <a href=/about/>About</a></header>"

static const char *link_at(void *ud, size_t i)
{
    const struct parser_result *r = ud;

    return r->links[i].url;
}

/* Parse html as a page of host, run the block stage and noise_repeat;
 * the paths of the links left marked nav, space separated, into out. */
static void repeat_page(struct parser *p, struct noise *nz, const char *host,
                        const char *html, char *out, size_t cap,
                        struct noise_stats *st)
{
    const struct parser_result *r;
    unsigned char nav[64];
    uint32_t blk[64];
    char url[128];
    size_t i, len = 0;

    out[0] = '\0';
    snprintf(url, sizeof(url), "http://%s/page.html", host);
    if (parser_parse_html(p, url, html, strlen(html), &r) != DC_OK ||
        r->nlinks > 64)
        return;
    for (i = 0; i < r->nlinks; i++) {
        const struct parser_block *b = &r->blocks[r->links[i].block];
        nav[i] = (unsigned char)noise_block_is_nav(0.25, b->text,
                                                   b->link_text);
        blk[i] = r->links[i].block;
    }
    noise_repeat(nz, host, strlen(host), NULL, 0, link_at, (void *)r, r->nlinks,
                 blk, nav, 0, st);
    for (i = 0; i < r->nlinks && len + 1 < cap; i++) {
        const char *path;
        if (!nav[i])
            continue;
        path = parser_url_path(r->links[i].url);
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? " " : "",
                                path ? path : "?");
    }
}

static void test_repeated(void)
{
    /* one host's pages in crawl order; nav: the links judged navigation */
    static const struct {
        const char *host, *html, *nav_ratio, *nav_repeated;
    } pages[] = {
        /* first page: header and table of contents both over the ratio;
         * nothing is known to repeat yet: all kept */
        {"h.test",
         HEADER "<div><a href=/toc/alpha.html>Alpha</a> "
                "<a href=/toc/beta.html>Beta</a> "
                "<a href=/toc/gamma.html>Gamma</a></div>" PROSE,
         "/ /docs/ /blog/ /about/ /toc/alpha.html /toc/beta.html "
         "/toc/gamma.html",
         ""},
        /* second page: the header repeats (dropped), its own table of
         * contents is new (kept), a text link stays content */
        {"h.test",
         HEADER "<div><a href=/toc/one.html>One</a> "
                "<a href=/toc/two.html>Two</a></div>"
                "<p>Some prose with a <a href=/text.html>link</a> inside "
                "a long enough sentence of ordinary words.</p>",
         "/ /docs/ /blog/ /about/ /toc/one.html /toc/two.html",
         "/ /docs/ /blog/ /about/"},
        /* the first page's contents now recur as a sidebar: dropped; a
         * block with one of three links seen stays */
        {"h.test",
         HEADER "<aside><a href=/toc/alpha.html>Alpha</a> "
                "<a href=/toc/beta.html>Beta</a> "
                "<a href=/toc/gamma.html>Gamma</a></aside>"
                "<div><a href=/toc/one.html>One</a> "
                "<a href=/new/x.html>X</a> <a href=/new/y.html>Y</a></div>"
                PROSE,
         "/ /docs/ /blog/ /about/ /toc/alpha.html /toc/beta.html "
         "/toc/gamma.html /toc/one.html /new/x.html /new/y.html",
         "/ /docs/ /blog/ /about/ /toc/alpha.html /toc/beta.html "
         "/toc/gamma.html"},
        /* exactly half seen (2 of 4): repeated */
        {"h.test",
         "<nav><a href=/>Home</a> <a href=/docs/>Docs</a> "
         "<a href=/fresh/1.html>F1</a> <a href=/fresh/2.html>F2</a></nav>"
         PROSE,
         "/ /docs/ /fresh/1.html /fresh/2.html",
         "/ /docs/ /fresh/1.html /fresh/2.html"},
        /* one-link cells (an index table) are judged but not recorded:
         * a later block of the same links is still new */
        {"h.test",
         "<table><tr><td><a href=/m/a.html>a</a></td>"
         "<td><a href=/m/b.html>b</a></td></tr></table>" PROSE,
         "/m/a.html /m/b.html", ""},
        {"h.test",
         "<div><a href=/m/a.html>A</a> <a href=/m/b.html>B</a></div>" PROSE,
         "/m/a.html /m/b.html", ""},
        /* another host has its own state: its first page keeps all */
        {"other.test", HEADER PROSE, "/ /docs/ /blog/ /about/", ""},
        /* a block below the ratio is content under both rules */
        {"h.test", "<div>" PROSE "<a href=/>Home</a></div>", "", ""},
    };
    struct parser *p = parser_new(0, 0);
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_RATIO};
    struct noise_stats st;
    struct noise *nz;
    char got[1024];
    int rule;
    size_t i;

    CHECK(parser_set_blocks(p, TAGS) == DC_OK, "blocks on");
    for (rule = NOISE_RULE_RATIO; rule <= NOISE_RULE_REPEATED; rule++) {
        nc.block_rule = rule;
        nz = noise_new(&nc);
        memset(&st, 0, sizeof(st));
        for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
            const char *want = rule == NOISE_RULE_RATIO
                                   ? pages[i].nav_ratio
                                   : pages[i].nav_repeated;
            repeat_page(p, nz, pages[i].host, pages[i].html, got,
                        sizeof(got), &st);
            CHECK(strcmp(got, want) == 0, "rule %d page %zu: nav \"%s\", "
                  "want \"%s\"", rule, i, got, want);
        }
        /* kept as not repeated: 7 + 2 + 3 + 2 + 2 + 4 on the pages above */
        CHECK(st.kept_unrepeated == (rule == NOISE_RULE_RATIO ? 0u : 20u),
              "rule %d: kept_unrepeated %zu", rule, st.kept_unrepeated);
        noise_free(&nz);
    }
    parser_free(&p);
}

/* page k of a host: a fixed header (4 links) and a 64-link table of
 * contents of its own, as link indices: < 4 header, else TOC. */
static const char *mem_url(void *ud, size_t i)
{
    static char buf[96];
    const size_t *k = ud;

    if (i < 4)
        snprintf(buf, sizeof(buf), "http://m.test/menu/%zu.html", i);
    else
        snprintf(buf, sizeof(buf), "http://m.test/p%zu/t%zu.html", *k, i);
    return buf;
}

static void test_repeated_memory(void)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_REPEATED};
    struct noise *nz = noise_new(&nc);
    unsigned char nav[68];
    uint32_t blk[68];
    size_t k, i, most = 0, bad_header = 0, bad_toc = 0;
    char host[32];

    CHECK(NOISE_SEEN_MAX < 200 * 64, "the test must overflow the set");
    for (k = 0; k < 200; k++) {
        for (i = 0; i < 68; i++) {
            nav[i] = 1;
            blk[i] = i < 4 ? 1 : 2;
        }
        noise_repeat(nz, "m.test", 6, NULL, 0, mem_url, &k, 68, blk, nav, 0,
                     NULL);
        if (k > 0 && (nav[0] | nav[1] | nav[2] | nav[3]) != 1)
            bad_header++;
        for (i = 4; i < 68; i++)
            bad_toc += nav[i] != 0;
        i = noise__seen_count(nz, "m.test", 6);
        most = i > most ? i : most;
    }
    CHECK(most <= NOISE_SEEN_MAX && most >= NOISE_SEEN_MAX * 9 / 10,
          "seen set holds %zu (bound %d)", most, NOISE_SEEN_MAX);
    CHECK(!bad_header, "header not dropped on %zu pages", bad_header);
    CHECK(!bad_toc, "%zu TOC links dropped", bad_toc);
    /* hosts beyond NOISE_MAX_HOSTS: the least recently used goes */
    for (k = 0; k <= NOISE_MAX_HOSTS; k++) {
        size_t zero = 0;
        snprintf(host, sizeof(host), "x%zu.test", k);
        nav[0] = nav[1] = 1;
        blk[0] = blk[1] = 1;
        noise_repeat(nz, host, strlen(host), NULL, 0, mem_url, &zero, 2, blk, nav,
                     0, NULL);
    }
    CHECK(noise__seen_count(nz, "m.test", 6) == 0, "m.test still held");
    CHECK(noise__seen_count(nz, host, strlen(host)) == 2, "newest host");
    noise_free(&nz);
}

/* ------------------------------------------------------- signals rule */

#define R NOISE_SIG_RATIO
#define S NOISE_SIG_NAV
#define M NOISE_SIG_MAIN
#define O NOISE_SIG_OUTLINE
#define Q NOISE_NAV_QUIET
#define C NOISE_SIG_MIRROR

struct sig_link {
    const char *path;
    uint32_t block;
    unsigned char sig, want; /* want: noise_repeat's verdict */
};

static const char *sig_url(void *ud, size_t i)
{
    static char buf[128];
    const struct sig_link *l = ud;

    snprintf(buf, sizeof(buf), "http://s.test%s", l[i].path);
    return buf;
}

/* As sig_url, but a path that starts with "//" is a URL of that host. */
static const char *dead_url(void *ud, size_t i)
{
    static char buf[128];
    const struct sig_link *l = ud;

    if (!strncmp(l[i].path, "//", 2))
        snprintf(buf, sizeof(buf), "http:%s", l[i].path);
    else
        snprintf(buf, sizeof(buf), "http://s.test%s", l[i].path);
    return buf;
}

/* One page of s.test through noise_repeat; checks every verdict. */
static void sig_page(struct noise *nz, const char *name,
                     const struct sig_link *l, size_t n, size_t text,
                     int ratio_rule, struct noise_stats *st)
{
    unsigned char nav[64];
    uint32_t blk[64];
    size_t i;

    CHECK(n <= 64, "%s: %zu links", name, n);
    for (i = 0; i < n && i < 64; i++) {
        nav[i] = l[i].sig;
        blk[i] = l[i].block;
    }
    noise_repeat(nz, "s.test", 6, NULL, 0, sig_url, (void *)l, n, blk, nav, text,
                 st);
    for (i = 0; i < n; i++) {
        unsigned want = ratio_rule ? (l[i].sig & R) != 0 : l[i].want;
        CHECK(nav[i] == want, "%s %s: %s (sig %u): verdict %u, want %u",
              ratio_rule ? "ratio" : "signals", name, l[i].path, l[i].sig,
              nav[i], want);
    }
}

static void test_signals(void)
{
    /* first page of the host: only S (outside M) is navigation; its links
     * are not noise samples yet (seen on no earlier page) */
    static const struct sig_link p1[] = {
        {"/a1", 1, R, 0},         {"/a2", 1, R, 0},
        {"/a3", 1, R, 0},         {"/s1", 2, R | S, Q},
        {"/s2", 2, R | S, Q},     {"/s3", 2, R | S, Q},
        {"/m1", 3, R | M, 0},     {"/m2", 3, R | M, 0},
        {"/m3", 3, R | M, 0},     {"/n1", 4, R | S | M, 0},
        {"/t1", 5, S, 0},         {"/c1", 6, 0, 0},
        {"/e1", 7, R, 0},         {"/e2", 7, R, 0},
    };
    /* second page: the plain and main blocks repeat (P): their links seen
     * before are dropped, new ones kept; S links seen before are samples;
     * a 2-link block of seen links is never P (next / previous); a block
     * of S links seen only in S blocks is not P for a plain block */
    static const struct sig_link p2[] = {
        {"/a1", 1, R, Q},         {"/a2", 1, R, Q},
        {"/a3", 1, R, Q},         {"/a4", 1, R, 0},
        {"/s1", 2, R | S, 1},     {"/s2", 2, R | S, 1},
        {"/s9", 2, R | S, Q},     {"/m1", 3, R | M, Q},
        {"/m2", 3, R | M, Q},     {"/m4", 3, R | M, 0},
        {"/e1", 4, R, 0},         {"/e2", 4, R, 0},
    };
    static const struct sig_link p3[] = {
        {"/s1", 1, R, 0}, {"/s2", 1, R, 0}, {"/s3", 1, R, 0},
        {"/x", 2, 0, 0},
    };
    /* page guard: little text and everything dropped: R+P links kept, S
     * links still dropped */
    static const struct sig_link guard[] = {
        {"/a1", 1, R, 0}, {"/a2", 1, R, 0}, {"/a3", 1, R, 0},
        {"/a4", 1, R, 0}, {"/s1", 2, R | S, 1},
    };
    /* the same page with enough text: no guard */
    static const struct sig_link noguard[] = {
        {"/a1", 1, R, Q}, {"/a2", 1, R, Q}, {"/a3", 1, R, Q},
        {"/a4", 1, R, Q}, {"/s1", 2, R | S, 1},
    };
    /* little text, but a content link left: 4 of 5 dropped < 0.9 */
    static const struct sig_link some[] = {
        {"/a1", 1, R, Q}, {"/a2", 1, R, Q}, {"/a3", 1, R, Q},
        {"/s1", 2, R | S, 1}, {"/z", 3, 0, 0},
    };
    /* a host with NOISE_CONTEXT_PAGES+ pages: in a menu whose links are
     * mostly known to its navigation, a new link is per-page (a Javadoc
     * "Use" link) and kept; in a mostly new menu it is dropped */
    static const struct sig_link ctx[] = {
        {"/s1", 1, R | S, 1}, {"/s2", 1, R | S, 1}, {"/s9", 1, R | S, 1},
        {"/use", 1, R | S, 0}, {"/s3", 2, R | S, 1}, {"/n1", 2, R | S, Q},
        {"/n2", 2, R | S, Q},  {"/n3", 2, R | S, Q},
    };
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise_stats st = {0};
    struct noise *nz;
    int r;

    CHECK(NOISE_GUARD_TEXT > 10 && NOISE_GUARD_TEXT <= 5000, "guard text");
    for (r = 0; r < 2; r++) {
        nc.block_rule = r ? NOISE_RULE_RATIO : NOISE_RULE_SIGNALS;
        nz = noise_new(&nc);
        memset(&st, 0, sizeof(st));
        sig_page(nz, "p1", p1, sizeof(p1) / sizeof(p1[0]), 1000, r, &st);
        sig_page(nz, "p2", p2, sizeof(p2) / sizeof(p2[0]), 1000, r, &st);
        sig_page(nz, "p3", p3, sizeof(p3) / sizeof(p3[0]), 1000, r, &st);
        sig_page(nz, "guard", guard, 5, 10, r, &st);
        sig_page(nz, "noguard", noguard, 5, NOISE_GUARD_TEXT, r, &st);
        sig_page(nz, "some", some, 5, 10, r, &st);
        CHECK(NOISE_CONTEXT_PAGES <= 6, "context after %d pages",
              NOISE_CONTEXT_PAGES);
        sig_page(nz, "context", ctx, 8, 1000, r, &st);
        if (!r)
            CHECK(st.kept_guard == 4, "kept by the guard: %zu",
                  st.kept_guard);
        else
            CHECK(st.kept_guard == 0 && st.kept_unrepeated == 0,
                  "ratio rule keeps none: %zu %zu", st.kept_guard,
                  st.kept_unrepeated);
        noise_free(&nz);
    }
}

/* O (an outline: links to sections of pages) and T (a big menu on the
 * host's first page), signals rule. */
static void test_outline_toc(void)
{
    enum { N = NOISE_TOC_MIN };
    static struct sig_link big[N + 3], big2[N + 3], small[N], other[N],
        facets[N + 1];
    static char paths[N + 3][16], opaths[N][16], fpaths[N][24];
    /* an outline is content in navigation and in main content alike, and
     * is not recorded: the plain block of page 2 is new, not P */
    static const struct sig_link o1[] = {
        {"/o1", 1, R | M | NOISE_SIG_OUTLINE, 0},
        {"/o2", 1, R | M | NOISE_SIG_OUTLINE, 0},
        {"/o3", 1, R | M | NOISE_SIG_OUTLINE, 0},
        {"/o4", 2, R | S | NOISE_SIG_OUTLINE, 0},
        {"/x1", 3, R | S, Q},
        {"/x2", 3, R | S, Q},
        {"/x3", 3, R | S, Q},
    };
    static const struct sig_link o2[] = {
        {"/o1", 1, R, 0}, {"/o2", 1, R, 0}, {"/o3", 1, R, 0},
        {"/p", 1, R, 0},  {"/x1", 2, R | S, 1},
    };
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz;
    size_t i;

    /* the block signals */
    CHECK(noise_block_signals(0.25, 100, 10, 1, 0, 12, 3, 0, 0) ==
              (NOISE_SIG_NAV | NOISE_SIG_OUTLINE),
          "3 of 12 section links: an outline");
    CHECK(noise_block_signals(0.25, 100, 10, 1, 0, 12, 2, 0, 0) ==
              NOISE_SIG_NAV,
          "2 section links: none");
    CHECK(noise_block_signals(0.25, 100, 10, 0, 1, 13, 3, 0, 0) ==
              NOISE_SIG_MAIN,
          "3 of 13: under the share");
    CHECK(noise_block_signals(0.25, 0, 0, 0, 0, 4, 0, 0, 0) == NOISE_SIG_RATIO,
          "no text: over the ratio");
    CHECK(noise_block_signals(0.25, 0, 0, 1, 0, 1, 0, 5, 3) ==
              (NOISE_SIG_RATIO | NOISE_SIG_NAV | NOISE_SIG_MIRROR),
          "a block of a menu with 3 of its 5 links in the content: a copy");
    CHECK(noise_block_signals(0.25, 0, 0, 1, 0, 1, 0, 5, 2) ==
              (NOISE_SIG_RATIO | NOISE_SIG_NAV),
          "2 of 5: it does not");
    CHECK(noise_block_signals(0.25, 0, 0, 1, 0, 1, 0, 2, 2) ==
              (NOISE_SIG_RATIO | NOISE_SIG_NAV),
          "2 links: too few to tell");
    CHECK(noise_block_signals(0.25, 0, 0, 0, 0, 5, 0, 5, 5) == NOISE_SIG_RATIO,
          "not navigation: no copy");

    nz = noise_new(&nc);
    sig_page(nz, "outline 1", o1, sizeof(o1) / sizeof(o1[0]), 1000, 0, NULL);
    sig_page(nz, "outline 2", o2, sizeof(o2) / sizeof(o2[0]), 1000, 0, NULL);
    noise_free(&nz);

    /* T: the first page's menu of N links is kept, a 3-link one is not;
     * on the next page both are known navigation; on a third page a new
     * menu of N links (another book's chapters) is kept again */
    for (i = 0; i < N + 3; i++) {
        snprintf(paths[i], sizeof(paths[i]), "/t%zu", i);
        big[i].path = big2[i].path = paths[i];
        big[i].block = big2[i].block = i < N ? 1 : 2;
        big[i].sig = big2[i].sig = R | S;
        big[i].want = i < N ? 0 : Q;
        big2[i].want = 1;
    }
    nz = noise_new(&nc);
    sig_page(nz, "toc page 1", big, N + 3, 1000, 0, NULL);
    sig_page(nz, "toc page 2", big2, N + 3, 1000, 0, NULL);
    for (i = 0; i < N; i++) {
        snprintf(opaths[i], sizeof(opaths[i]), "/book/%zu", i);
        /* a few links it shares with the first menu do not make it known */
        other[i] = (struct sig_link){i < N / 4 ? paths[i] : opaths[i], 3,
                                     R | S, 0};
    }
    sig_page(nz, "another toc", other, N, 1000, 0, NULL);
    noise_free(&nz);
    /* a menu of N - 1 links on the first page is navigation (beside a
     * text link into the host: the page is no dead end) */
    for (i = 0; i < N - 1; i++)
        small[i] = (struct sig_link){paths[i], 1, R | S, Q};
    small[N - 1] = (struct sig_link){"/article", 9, 0, 0};
    nz = noise_new(&nc);
    sig_page(nz, "small menu", small, N, 1000, 0, NULL);
    noise_free(&nz);
    /* so is a big new menu of queries (facets): a quarter of them make
     * it variations of a page, not a table of contents */
    for (i = 0; i < N; i++) {
        snprintf(fpaths[i], sizeof(fpaths[i]),
                 i < N / 4 ? "/shop?color=%zu" : "/shop/item-%zu", i);
        facets[i] = (struct sig_link){fpaths[i], 1, R | S, Q};
    }
    facets[N] = (struct sig_link){"/article", 9, 0, 0};
    nz = noise_new(&nc);
    sig_page(nz, "facets", facets, N + 1, 1000, 0, NULL);
    noise_free(&nz);
}

/* The cluster stage under the signals rule: a noise cluster drops
 * look-alikes only once it was fed on two pages of the host. */
static void test_signals_recurrence(void)
{
    static const char *const page1[] = {
        "http://h.test/calendar?month=01", "http://h.test/calendar?month=02",
        "http://h.test/calendar?month=03"};
    static const char *const page2[] = {
        "http://h.test/calendar?month=02", "http://h.test/calendar?month=04"};
    static const char *const page3[] = {"http://h.test/calendar?month=05"};
    static const unsigned char nav1[] = {1, 1, 0}, nav2[] = {1, 0};
    static const unsigned char quiet[] = {Q, Q, 0};
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    unsigned char v[3];
    struct noise *nz;
    int rule;

    for (rule = 0; rule < 2; rule++) {
        nc.block_rule = rule ? NOISE_RULE_RATIO : NOISE_RULE_SIGNALS;
        nz = noise_new(&nc);
        noise_filter(nz, "h.test", 6, url_at, (void *)page1, 3, nav1, v, NULL,
                     NULL);
        CHECK(v[0] == NOISE_BLOCK && v[1] == NOISE_BLOCK, "page1 nav");
        /* one page's navigation: a template only for the literal rule */
        CHECK(v[2] == (rule ? NOISE_CLUSTER : NOISE_KEEP),
              "rule %d: look-alike on the first page: %d", rule, v[2]);
        noise_filter(nz, "h.test", 6, url_at, (void *)page2, 2, nav2, v, NULL,
                     NULL);
        CHECK(v[0] == NOISE_BLOCK && v[1] == NOISE_CLUSTER,
              "rule %d: recurring template drops its look-alike: %d", rule,
              v[1]);
        noise_free(&nz);
    }
    /* quiet navigation (NOISE_NAV_QUIET) is dropped but never a sample */
    nc.block_rule = NOISE_RULE_SIGNALS;
    nz = noise_new(&nc);
    noise_filter(nz, "h.test", 6, url_at, (void *)page1, 3, quiet, v, NULL,
                 NULL);
    CHECK(v[0] == NOISE_BLOCK && v[1] == NOISE_BLOCK && v[2] == NOISE_KEEP,
          "quiet page 1");
    noise_filter(nz, "h.test", 6, url_at, (void *)page2, 2, quiet, v, NULL,
                 NULL);
    noise_filter(nz, "h.test", 6, url_at, (void *)page3, 1, NULL, v, NULL,
                 NULL);
    CHECK(v[0] == NOISE_KEEP, "no samples from quiet navigation: %d", v[0]);
    noise_free(&nz);
}

/* A link of an outline (O) is kept by the cluster stage even when it
 * looks like the host's recurring menu (the Linux kernel's ABI pages, in
 * a table of contents of sections and in the sidebar), and so is a link
 * in main content (pandas' and SciPy's tables of methods, whose URLs share
 * a long prefix with the sidebar's); a plain content link just as alike
 * outside main is still dropped as a look-alike. */
static void test_outline_lookalike(void)
{
    static const struct sig_link side[] = {
        {"/guide/abi-1.html", 1, R | S, 0}, {"/guide/abi-2.html", 1, R | S, 0},
        {"/guide/abi-3.html", 1, R | S, 0}, {"/guide/abi-4.html", 1, R | S, 0},
    };
    static const struct sig_link last[] = {
        {"/guide/abi-1.html", 1, R | S, 0}, {"/guide/abi-2.html", 1, R | S, 0},
        {"/guide/abi-3.html", 1, R | S, 0}, {"/guide/abi-4.html", 1, R | S, 0},
        {"/guide/abi-6.html", 2, R | O, 0}, {"/guide/abi-6.html#a", 2, R | O, 0},
        {"/guide/abi-6.html#b", 2, R | O, 0}, {"/guide/abi-7.html", 3, 0, 0},
        {"/guide/abi-8.html", 4, M, 0},       {"/guide/abi-9.html", 5, R | M, 0},
    };
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz = noise_new(&nc);
    unsigned char nav[10], v[10];
    uint32_t blk[10];
    size_t i, page;

    for (page = 0; page < 4; page++) {
        const struct sig_link *l = page < 3 ? side : last;
        size_t n = page < 3 ? 4 : 10;
        for (i = 0; i < n; i++) {
            nav[i] = l[i].sig;
            blk[i] = l[i].block;
        }
        noise_repeat(nz, "s.test", 6, NULL, 0, sig_url, (void *)l, n, blk, nav, 0,
                     NULL);
        noise_filter(nz, "s.test", 6, sig_url, (void *)l, n, nav, v, NULL,
                     NULL);
    }
    CHECK(v[0] == NOISE_BLOCK && v[3] == NOISE_BLOCK, "the menu: %d %d", v[0],
          v[3]);
    CHECK(v[4] == NOISE_KEEP && v[5] == NOISE_KEEP,
          "outline look-alike kept: %d %d", v[4], v[5]);
    CHECK(v[7] == NOISE_CLUSTER, "plain look-alike dropped: %d", v[7]);
    /* in main content only repetition makes noise: a look-alike in main,
     * under the ratio or over it (a list of methods, a table of members),
     * is kept */
    CHECK(v[8] == NOISE_KEEP && v[9] == NOISE_KEEP,
          "look-alikes in main kept: %d %d", v[8], v[9]);
    noise_free(&nz);
}

/* C: a menu that copies the page's content links (a documentation home
 * page's top bar, whose sections the main content shows as cards) keeps
 * the links the host's navigation has not shown, on any page; the ones it
 * has shown stay navigation; a menu that copies nothing keeps nothing. */
static void test_mirror(void)
{
    static const struct sig_link home[] = {
        {"/release.html", 1, R | S | C, 0}, /* the bar's one link not in main */
        {"/guide.html", 2, R | M, 0},       /* the cards */
        {"/about.html", 3, R | S, Q},       /* a footer copying nothing */
    };
    static const struct sig_link next[] = {
        {"/release.html", 1, R | S | C, 1}, /* known now: navigation */
        {"/news.html", 1, R | S | C, 0},    /* new in a copying menu */
        {"/terms.html", 3, R | S, Q},       /* new in a plain one */
    };
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz = noise_new(&nc);

    sig_page(nz, "mirror home", home, 3, 1000, 0, NULL);
    sig_page(nz, "mirror next", next, 3, 1000, 0, NULL);
    noise_free(&nz);
}

/* Dead end: a page whose only ways on into its host are navigation (a
 * home page of external links beside a side menu, the whole table of
 * contents of xarray's documentation) follows that navigation where the
 * host's history has not shown it; links to the page itself, to the
 * host's root and to other hosts do not lead on; a page with one text
 * link into the host drops its menu as usual. */
static void test_dead_end(void)
{
    static const struct sig_link home[] = {
        {"/", 1, R | M, 0},                       /* the logo */
        {"/index.html", 1, R | M, 0},             /* itself */
        {"//github.test/x", 1, R | M, 0},         /* elsewhere */
        {"/guide.html", 2, R | S, 0},             /* the menu */
        {"/api.html", 2, R | S, 0},
        {"/faq.html", 2, R | S, 0},
        {"//github.test/y", 2, R | S, Q},         /* not into the host */
    };
    static const struct sig_link next[] = {
        {"/guide.html", 2, R | S, 1},             /* known: navigation */
        {"/api.html", 2, R | S, 1},
        {"/news.html", 2, R | S, 0},              /* new, still a dead end */
    };
    static const struct sig_link text[] = {
        {"/guide.html", 2, R | S, 1},
        {"/blog.html", 2, R | S, Q},              /* new, but ... */
        {"/guide2.html", 3, 0, 0},                /* ... the text leads on */
    };
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz = noise_new(&nc);
    unsigned char nav[8], v[8];
    uint32_t blk[8];
    size_t i;

    /* the home page through dead_url, with its own URL */
    for (i = 0; i < 7; i++) {
        nav[i] = home[i].sig;
        blk[i] = home[i].block;
    }
    noise_repeat(nz, "s.test", 6, "http://s.test/index.html", 0, dead_url,
                 (void *)home, 7, blk, nav, 0, NULL);
    for (i = 0; i < 7; i++)
        CHECK(nav[i] == home[i].want, "dead end home %s: %u, want %u",
              home[i].path, nav[i], home[i].want);
    noise_filter(nz, "s.test", 6, dead_url, (void *)home, 7, nav, v, NULL,
                 NULL);
    CHECK(v[3] == NOISE_KEEP && v[4] == NOISE_KEEP, "dead end kept: %u %u",
          v[3], v[4]);
    sig_page(nz, "dead end next", next, 3, 1000, 0, NULL);
    sig_page(nz, "not a dead end", text, 3, 1000, 0, NULL);
    noise_free(&nz);
}

/* Entry page (a seed): one whose content leads on to fewer than
 * NOISE_ENTRY_LEADS pages of its host and whose menus show more new ones
 * is a dead end (IPython's home page: prose, the index and the search
 * page, beside the side menu of the site's sections); not when it is no
 * entry, not when its menu shows no more pages than its content leads to
 * (a header of About and Contact), not when its content leads on to
 * NOISE_ENTRY_LEADS pages. */
static void entry_case(const char *name, const struct sig_link *l, size_t n,
                       int entry)
{
    struct noise_conf nc = {1, 0.25, 0.8, 64, 2, 0, NOISE_RULE_SIGNALS};
    struct noise *nz = noise_new(&nc);
    unsigned char nav[16];
    uint32_t blk[16];
    size_t i;

    for (i = 0; i < n; i++) {
        nav[i] = l[i].sig;
        blk[i] = l[i].block;
    }
    noise_repeat(nz, "s.test", 6, "http://s.test/", entry, dead_url,
                 (void *)l, n, blk, nav, 0, NULL);
    for (i = 0; i < n; i++)
        CHECK(nav[i] == l[i].want, "%s %s: %u, want %u", name, l[i].path,
              nav[i], l[i].want);
    noise_free(&nz);
}

static void test_entry(void)
{
    static const struct sig_link home[] = {
        {"/genindex.html", 1, 0, 0},               /* the text's links */
        {"/search.html", 1, 0, 0},
        {"/genindex.html", 1, 0, 0},               /* counted once */
        {"/install/", 2, R | S, 0},                /* the side menu */
        {"/config/", 2, R | S, 0},
        {"/api/", 2, R | S, 0},
        {"//github.test/y", 2, R | S, Q},          /* not into the host */
    };
    static const struct sig_link inner[] = {       /* the same, no entry */
        {"/genindex.html", 1, 0, 0},
        {"/search.html", 1, 0, 0},
        {"/genindex.html", 1, 0, 0},
        {"/install/", 2, R | S, Q},
        {"/config/", 2, R | S, Q},
        {"/api/", 2, R | S, Q},
        {"//github.test/y", 2, R | S, Q},
    };
    static const struct sig_link header[] = {
        {"/book/", 1, 0, 0},
        {"/docs/", 1, 0, 0},
        {"/about.html", 2, R | S, Q},              /* 2 new, 2 led to */
        {"/contact.html", 2, R | S, Q},
    };
    static const struct sig_link listing[] = {
        {"/a.html", 1, 0, 0}, {"/b.html", 1, 0, 0}, {"/c.html", 1, 0, 0},
        {"/d.html", 1, 0, 0}, {"/e.html", 1, 0, 0},
        {"/news/", 2, R | S, Q}, {"/blog/", 2, R | S, Q},
        {"/docs/", 2, R | S, Q}, {"/wiki/", 2, R | S, Q},
        {"/forum/", 2, R | S, Q}, {"/shop/", 2, R | S, Q},
    };

    entry_case("entry", home, 7, 1);
    entry_case("no entry", inner, 7, 0);
    entry_case("entry, small header", header, 4, 1);
    entry_case("entry, listing", listing, 11, 1);
}

#undef R
#undef S
#undef M
#undef O
#undef Q
#undef C

/* noise.log's names: verdicts and signal letters */
static void test_names(void)
{
    char b[NOISE_SIG_LETTERS];

    CHECK(!strcmp(noise_verdict_name(NOISE_KEEP), "kept"), "kept");
    CHECK(!strcmp(noise_verdict_name(NOISE_BLOCK), "block"), "block");
    CHECK(!strcmp(noise_verdict_name(NOISE_CLUSTER), "cluster"), "cluster");
    CHECK(!strcmp(noise_verdict_name(NOISE_BUDGET), "budget"), "budget");
    CHECK(noise_verdict_name(4) == NULL, "unknown verdict: NULL");
    noise_sig_letters(0, b);
    CHECK(!strcmp(b, "-"), "no signal: %s", b);
    noise_sig_letters(NOISE_SIG_RATIO | NOISE_SIG_NAV, b);
    CHECK(!strcmp(b, "RS"), "R|S: %s", b);
    noise_sig_letters(NOISE_SIG_RATIO | NOISE_SIG_NAV | NOISE_SIG_MAIN |
                          NOISE_SIG_OUTLINE | NOISE_SIG_MIRROR | 0x80u,
                      b);
    CHECK(!strcmp(b, "RSMOC"), "all: %s", b);
}

static void test_rule_parse(void)
{
    static const struct {
        const char *s;
        int rc, rule;
    } cases[] = {
        {"ratio", DC_OK, NOISE_RULE_RATIO},
        {"repeated", DC_OK, NOISE_RULE_REPEATED},
        {"signals", DC_OK, NOISE_RULE_SIGNALS},
        {"Ratio", DC_EINVAL, -1},
        {"", DC_EINVAL, -1},
        {NULL, DC_EINVAL, -1},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rule = -1, rc = noise_rule_parse(cases[i].s, &rule);
        CHECK(rc == cases[i].rc && rule == cases[i].rule,
              "rule \"%s\": rc %d rule %d", cases[i].s ? cases[i].s : "(null)",
              rc, rule);
    }
}

int main(void)
{
    test_ratio();
    test_nearest();
    test_lcs();
    test_order();
    test_drop();
    test_budget_lru();
    test_repeated();
    test_repeated_memory();
    test_signals();
    test_outline_toc();
    test_signals_recurrence();
    test_outline_lookalike();
    test_mirror();
    test_dead_end();
    test_entry();
    test_names();
    test_rule_parse();
    return t_done("u-noise");
}
