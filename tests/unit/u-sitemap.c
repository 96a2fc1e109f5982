/*
 * u-sitemap.c: sitemap parsing (parser/sitemap.c).
 *
 *  - the crawler-commons sitemap samples, driven by their manifest.json:
 *    URL counts, listed URLs, sitemap-index entries, gzip, BOM;
 *  - XXE: an external entity naming do-not-visit.txt is never read;
 *  - caps: max_urls and max_bytes cut the result and say so; a gzip bomb
 *    inflates to the cap and no further;
 *  - robustness: random mutations of every sample (bounded count and
 *    time) never crash and keep the caps.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "conf.h"
#include "parser.h"
#include "t.h"
#include "tjson.h"

#define SM_DIR DC_SHARED_DIR "/conformance/sitemaps/"

static int has(char **list, size_t n, const char *url)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!strcmp(list[i], url))
            return 1;
    return 0;
}

static const struct tj *num_or_obj(const struct tj *exp, const char *key)
{
    const struct tj *v = tj_get(exp, key);
    if (v && v->type == TJ_OBJ)
        v = tj_get(v, "url_count");
    return v && v->type == TJ_NUM ? v : NULL;
}

/* Every manifest entry with a count or URL list is checked. */
static void test_manifest(void)
{
    struct tj *m = tj_load_file(SM_DIR "manifest.json");
    size_t i, checked = 0;

    CHECK(m && m->type == TJ_ARR && m->n >= 15, "manifest loaded");
    for (i = 0; m && i < m->n; i++) {
        const struct tj *e = m->items[i], *exp = tj_get(e, "expected");
        const char *file = tj_str(tj_get(e, "file"));
        const struct tj *count = num_or_obj(exp, "url_count");
        const struct tj *smc = tj_get(exp, "sitemap_count");
        const struct tj *urls = tj_get(exp, "urls");
        const char *contains = tj_str(tj_get(exp, "contains"));
        const char *note = tj_str(tj_get(exp, "note"));
        const char *fmt = tj_str(tj_get(e, "format"));
        struct parser_sitemap sm;
        char path[512];
        size_t len = 0, k;
        char *body;

        if (!count)
            count = num_or_obj(exp, "lenient_namespace");
        snprintf(path, sizeof path, SM_DIR "%s", file ? file : "");
        body = t_slurp(path, &len);
        CHECK(body != NULL, "read %s", path);
        if (!body)
            continue;
        CHECK(parser_sitemap_parse(body, len, 1 << 24, 100000, &sm) == DC_OK,
              "%s parses", file);
        if (count) {
            CHECK(sm.nurls == (size_t)count->num, "%s: %zu URLs, want %g", file,
                  sm.nurls, count->num);
            checked++;
        }
        if (smc && smc->type == TJ_NUM) {
            CHECK(sm.kind == PARSER_SITEMAP_INDEX && sm.nsitemaps == (size_t)smc->num,
                  "%s: %zu sitemaps, want %g", file, sm.nsitemaps, smc->num);
            checked++;
        }
        for (k = 0; urls && urls->type == TJ_ARR && k < urls->n; k++)
            CHECK(has(sm.urls, sm.nurls, tj_str(urls->items[k])), "%s lists %s",
                  file, tj_str(urls->items[k]));
        if (urls && urls->type == TJ_ARR && urls->n && tj_str(urls->items[0]))
            CHECK(sm.nurls && !strcmp(sm.urls[0], tj_str(urls->items[0])),
                  "%s: first URL in order", file);
        if (contains) {
            CHECK(has(sm.sitemaps, sm.nsitemaps, contains), "%s has %s", file,
                  contains);
            checked++;
        }
        if (fmt && !strncmp(fmt, "text", 4) && note && strstr(note, "two URL")) {
            CHECK(sm.kind == PARSER_SITEMAP_TEXT && sm.nurls == 2,
                  "%s: %zu text URLs", file, sm.nurls);
            checked++;
        }
        if (fmt && !strncmp(fmt, "gzip", 4))
            CHECK(sm.gzip, "%s was gzipped", file);
        CHECK(!sm.truncated, "%s not truncated", file);
        parser_sitemap_release(&sm);
        free(body);
    }
    printf("sitemap manifest: %zu assertions from %zu files\n", checked,
           m ? m->n : 0);
    CHECK(checked >= 15, "most manifest entries checked (%zu)", checked);
    tj_free(m);
}

static void test_xxe(void)
{
    static const char xml[] =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file://" SM_DIR
        "do-not-visit.txt\"> <!ENTITY % p SYSTEM \"http://127.0.0.1:9/x\"> %p;]>\n"
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
        "<url><loc>http://example.com/&xxe;</loc></url>"
        "<url><loc>http://example.com/a&amp;b&#x41;&#66;</loc></url></urlset>";
    struct parser_sitemap sm;
    size_t len = 0;
    char *secret = t_slurp(SM_DIR "do-not-visit.txt", &len);

    CHECK(parser_sitemap_parse(xml, sizeof xml - 1, 1 << 20, 100, &sm) == DC_OK,
          "xxe parses");
    CHECK(sm.nurls == 2, "xxe: %zu urls", sm.nurls);
    CHECK(sm.nurls == 2 && !strcmp(sm.urls[0], "http://example.com/&xxe;"),
          "entity left as written: %s", sm.nurls ? sm.urls[0] : "");
    CHECK(sm.nurls == 2 && !strcmp(sm.urls[1], "http://example.com/a&bAB"),
          "predefined and numeric entities decoded: %s",
          sm.nurls > 1 ? sm.urls[1] : "");
    if (secret && len > 4) {
        size_t i;
        secret[len > 20 ? 20 : len] = '\0';
        for (i = 0; i < sm.nurls; i++)
            CHECK(!strstr(sm.urls[i], secret), "file content leaked");
    }
    parser_sitemap_release(&sm);
    free(secret);
}

static void test_caps(void)
{
    char *txt = malloc(1000 * 40), *p = txt;
    struct parser_sitemap sm;
    unsigned char *zeros, *gz;
    uLongf gzlen;
    char *out = NULL;
    size_t n = 0;
    int i, cut = 0;

    for (i = 0; i < 1000; i++)
        p += sprintf(p, "http://example.com/%d\n", i);
    CHECK(parser_sitemap_parse(txt, (size_t)(p - txt), 1 << 20, 10, &sm) == DC_OK,
          "text parses");
    CHECK(sm.nurls == 10 && sm.truncated, "max_urls: %zu", sm.nurls);
    parser_sitemap_release(&sm);
    CHECK(parser_sitemap_parse(txt, (size_t)(p - txt), 1024, 100000, &sm) == DC_OK,
          "text parses");
    CHECK(sm.truncated && sm.nurls > 20 && sm.nurls < 60, "max_bytes: %zu",
          sm.nurls);
    parser_sitemap_release(&sm);
    free(txt);

    /* a 64 MiB zero bomb (zlib stream) inflates only to the cap */
    zeros = calloc(64 << 20, 1);
    gzlen = compressBound(64 << 20);
    gz = malloc(gzlen);
    CHECK(compress2(gz, &gzlen, zeros, 64 << 20, 9) == Z_OK, "compress");
    CHECK(parser_inflate((char *)gz, gzlen, 0, 1 << 20, &out, &n, &cut) ==
                  DC_OK && n == 1 << 20 && cut,
          "bomb capped at 1 MiB: %zu", n);
    free(out);
    free(zeros);
    free(gz);
    CHECK(parser_inflate("not gzip", 8, 0, 100, &out, &n, NULL) == DC_EPARSE &&
              !out,
          "not a stream");
    CHECK(parser_sitemap_parse("\x1f\x8b garbage", 10, 100, 100, &sm) ==
              DC_EINVAL, "bad gzip is an error");
    parser_sitemap_release(&sm);
    CHECK(parser_sitemap_parse(NULL, 0, 100, 100, &sm) == DC_EINVAL, "NULL");
    parser_sitemap_release(&sm);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random byte edits, cuts and splices of every sample: no crash, caps
 * hold. Bounded by a count and by 20 s. */
static void test_fuzz(void)
{
    static const char *const files[] = {
        "sitemap.ns.xml", "sitemap.badns.xml", "sitemap.index.xml",
        "xmlSitemap.gz", "sitemap.txt.gz", "sitemap.txt", "atom.xml",
        "rss/feed.rss", "rss/xmlRss_pubDate.xml", "extension/sitemap-links.xml",
        "extension/sitemap-videos.xml", "extension/pagemaps-sitemap.xml"};
    static const char *const tokens[] = {"<", ">", "</", "/>", "<![CDATA[", "]]>",
                                         "<!--", "-->", "&", "&#x", ";", "\"",
                                         "<loc>", "</url>", "<url>", "<!DOCTYPE [",
                                         "\x1f\x8b", "\n", "http://"};
    time_t t0 = time(NULL);
    size_t it, bad = 0, runs = 0;

    for (it = 0; it < 3000 && time(NULL) - t0 < 20; it++) {
        const char *f = files[it % (sizeof files / sizeof files[0])];
        char path[512], *body, *buf;
        size_t len = 0, n, k, edits;
        struct parser_sitemap sm;
        snprintf(path, sizeof path, SM_DIR "%s", f);
        body = t_slurp(path, &len);
        if (!body)
            continue;
        buf = malloc(len * 2 + 256);
        memcpy(buf, body, len);
        n = len;
        edits = 1 + rnd() % 8;
        for (k = 0; k < edits && n > 0; k++) {
            size_t at = rnd() % n;
            switch (rnd() % 4) {
            case 0: buf[at] = (char)rnd(); break;
            case 1: n = at; break;
            case 2: {
                const char *tk = tokens[rnd() % (sizeof tokens / sizeof tokens[0])];
                size_t tl = strlen(tk);
                if (n + tl < len * 2 + 256) {
                    memmove(buf + at + tl, buf + at, n - at);
                    memcpy(buf + at, tk, tl);
                    n += tl;
                }
                break;
            }
            default: memmove(buf + at, buf + at + 1, n - at - 1); n--; break;
            }
        }
        if (parser_sitemap_parse(buf, n, 4096, 5, &sm) == DC_OK &&
            sm.nurls + sm.nsitemaps > 5)
            bad++;
        parser_sitemap_release(&sm);
        runs++;
        free(buf);
        free(body);
    }
    printf("sitemap fuzz: %zu mutated inputs\n", runs);
    CHECK(runs >= 100, "fuzz ran %zu inputs", runs);
    CHECK(bad == 0, "%zu results over the URL cap", bad);
}

int main(void)
{
    test_manifest();
    test_xxe();
    test_caps();
    test_fuzz();
    return t_done("u-sitemap");
}
