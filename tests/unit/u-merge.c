/*
 * u-merge.c: the merge module: merge_run over per-node output written
 * through warc/ (URL duplicates, torn records, ranges copied as raw bytes
 * and lines located by inflating), content duplicate policies, the CDXJ
 * index checked by lookup, and the conformance samples through adds.
 *
 * DC_WARC_KEEP=DIR keeps the merged files under DIR/merged (for the
 * third-party check tests/e2e/warc-check.mjs); the merge input holds a torn
 * file on purpose and is always written to a temporary directory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "dedup.h"
#include "merge.h"
#include "warc.h"
#include "t.h"
#include "t-warc.h"

/* The node output merged here is written as u-warc.c writes it. */
static const char req_a[] = "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n";
static const struct warc_writer_opts wopts = {
    "dcrawl/0.1", "depth=2\r\nuser-agent: dcrawl test\n\x01x: y", 0, 6
};

static void write_node(const char *dir, int depth, const char *node,
                       struct warc_page *p, size_t n)
{
    struct warc_writer *w;
    struct warc_built b;

    if (warc_writer_open(&w, dir, depth, node, &wopts) != DC_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        CHECK(warc_record_build(&p[i], 6, &b) == DC_OK, "build");
        CHECK(warc_writer_append(w, &p[i], &b, node) == DC_OK, "append");
        warc_built_release(&b);
    }
    warc_writer_close(&w);
}

static struct warc_page mpage(const char *url, int64_t ms, int depth,
                               const char *body)
{
    struct warc_page p = { 0 };

    p.url = url;
    p.fetched_ms = ms;
    p.depth = depth;
    p.status = body ? 200 : 0;
    p.error = body ? NULL : "refused";
    p.resp_head = "HTTP/1.1 200 OK\r\n\r\n";
    p.resp_head_len = strlen(p.resp_head);
    p.body = body;
    p.body_len = body ? strlen(body) : 0;
    p.request = req_a;
    p.request_len = strlen(req_a);
    return p;
}

struct mline {
    char url[128], body_digest[64], file[128], id[64];
    double off, len;
};

static int read_pages(const char *path, struct mline *ml, int max)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    int n = 0;

    while (f && n < max && fgets(buf, sizeof(buf), f)) {
        struct warc_jobj o;
        const struct warc_jkv *kv;
        memset(&ml[n], 0, sizeof(ml[n]));
        ml[n].off = ml[n].len = -1;
        if (warc_json_parse(buf, strlen(buf), &o) == DC_OK) {
            if ((kv = warc_jobj_get(&o, "url")) && kv->type == WARC_JSTR)
                snprintf(ml[n].url, 128, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "digest")) && kv->type == WARC_JSTR)
                snprintf(ml[n].body_digest, 64, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "warc_file")) && kv->type == WARC_JSTR)
                snprintf(ml[n].file, 128, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "warc_record_id")) &&
                kv->type == WARC_JSTR)
                snprintf(ml[n].id, 64, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "warc_offset")) && kv->type == WARC_JNUM)
                ml[n].off = kv->num;
            if ((kv = warc_jobj_get(&o, "warc_length")) && kv->type == WARC_JNUM)
                ml[n].len = kv->num;
        }
        warc_jobj_release(&o);
        n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* Read a merged file; every response must match a pages.jsonl line. */
static void check_merged(const char *path, struct mline *ml, int n,
                         int want_responses)
{
    struct warc_reader *r;
    struct warc_record rec;
    char last_resp[64] = "";
    int rc, resp = 0, req = 0, k = 0;

    CHECK(warc_reader_open(&r, path) == DC_OK, "open %s", path);
    if (!r)
        return;
    while ((rc = warc_reader_next(r, &rec)) == DC_OK && k < 1000) {
        CHECK(k > 0 || strcmp(rec.type, "warcinfo") == 0, "warcinfo first");
        CHECK(warc_record_verify(&rec) == DC_OK, "merged verify");
        if (strcmp(rec.type, "response") == 0) {
            int found = 0;
            resp++;
            snprintf(last_resp, sizeof(last_resp), "%s", rec.record_id);
            for (int i = 0; i < n; i++)
                if (strcmp(ml[i].id, rec.record_id) == 0 &&
                    ml[i].off == (double)rec.offset &&
                    strcmp(ml[i].body_digest, rec.payload_digest) == 0 &&
                    strstr(path, ml[i].file))
                    found++;
            CHECK(found == 1, "response %s in pages.jsonl at %llu",
                  rec.target_uri, (unsigned long long)rec.offset);
        } else if (strcmp(rec.type, "request") == 0) {
            req++;
            CHECK(rec.concurrent_to &&
                      strcmp(rec.concurrent_to, last_resp) == 0,
                  "request follows its response");
        }
        k++;
    }
    CHECK(rc == DC_ENOTFOUND, "merged end %d", rc);
    CHECK(resp == want_responses && req == want_responses,
          "%s: %d responses %d requests", path, resp, req);
    warc_reader_close(&r);
}

static size_t response_offset(const char *path)
{
    struct warc_reader *r;
    struct warc_record rec;
    size_t off = 0;

    if (warc_reader_open(&r, path) != DC_OK)
        return 0;
    for (int k = 0; k < 10 && warc_reader_next(r, &rec) == DC_OK; k++)
        if (strcmp(rec.type, "response") == 0)
            off = (size_t)rec.offset;
    warc_reader_close(&r);
    return off;
}

static void test_merge(const char *dir, const char *tmp)
{
    struct warc_page a[] = {
        mpage("http://m.test/1", 1000, 0, "old body"),
        mpage("http://m.test/2", 2000, 0, "two"),
    };
    struct warc_page b[] = {
        mpage("http://m.test/1", 5000, 0, "new body"),
        mpage("http://m.test/3", 3000, 0, "three"),
    };
    struct warc_page c[] = {
        mpage("http://m.test/4", 4000, 1, "four"),
        mpage("http://m.test/5", 4000, 1, NULL),
    };
    struct warc_page torn[] = {
        mpage("http://m.test/6", 6000, 1, "six"),
    };
    struct merge_stats st;
    struct mline ml[16];
    char err[256], path[4096], new_digest[64], *warn = NULL;
    size_t wlen = 0, n, cut;
    unsigned char *d;
    FILE *wf;
    int rc, k;

    write_node(dir, 0, "a", a, 2);
    write_node(dir, 0, "b", b, 2);
    write_node(dir, 1, "b", c, 2);
    write_node(tmp, 1, "c", torn, 1);
    /* node c was killed while writing its response record */
    snprintf(path, sizeof(path), "%s/depth-1/c-00000.warc.gz", tmp);
    cut = response_offset(path) + 30;
    d = (unsigned char *)t_slurp(path, &n);
    snprintf(path, sizeof(path), "%s/depth-1/c-00000.warc.gz", dir);
    if (d && cut < n)
        spit(path, d, cut);
    free(d);
    snprintf(path, sizeof(path), "%s/depth-1/c-00000.jsonl", tmp);
    d = (unsigned char *)t_slurp(path, &n);
    snprintf(path, sizeof(path), "%s/depth-1/c-00000.jsonl", dir);
    if (d) {
        spit(path, d, n);
        wf = fopen(path, "a");
        fputs("{\"url\": broken\n\n{\"url\":\"http://m.test/7\"}\n", wf);
        fclose(wf);
    }
    free(d);

    wf = open_memstream(&warn, &wlen);
    rc = merge_run(dir, NULL, &st, wf, err, sizeof(err));
    fclose(wf);
    CHECK(rc == DC_OK, "merge_run %d %s", rc, err);
    CHECK(warn && strstr(warn, "c-00000.jsonl:2:") &&
              strstr(warn, "c-00000.jsonl:4:"),
          "warnings name file:line: %s", warn ? warn : "");
    CHECK(warn && strstr(warn, "torn"), "torn warning");
    CHECK(st.pages == 6 && st.url_duplicates == 1 && st.torn == 1 &&
              st.depths == 2 && st.pages_per_depth[0] == 3 &&
              st.pages_per_depth[1] == 3 && st.records == 4,
          "stats pages %llu dups %llu torn %llu depths %llu records %llu",
          (unsigned long long)st.pages,
          (unsigned long long)st.url_duplicates,
          (unsigned long long)st.torn, (unsigned long long)st.depths,
          (unsigned long long)st.records);
    CHECK(st.ranges == 4 && st.inflated == 0,
          "all copied as ranges: %llu ranges %llu inflated",
          (unsigned long long)st.ranges, (unsigned long long)st.inflated);
    free(warn);

    snprintf(path, sizeof(path), "%s/merged/pages.jsonl", dir);
    k = read_pages(path, ml, 16);
    CHECK(k == 6, "pages.jsonl lines %d", k);
    sha1_expect("new body", 8, new_digest);
    for (int i = 0; i < k; i++) {
        int same = 0;
        for (int j = 0; j < k; j++)
            same += strcmp(ml[i].url, ml[j].url) == 0;
        CHECK(same == 1, "%s listed once", ml[i].url);
        if (strcmp(ml[i].url, "http://m.test/1") == 0)
            CHECK(strcmp(ml[i].body_digest, new_digest) == 0,
                  "the later fetch wins");
        if (strcmp(ml[i].url, "http://m.test/5") == 0 ||
            strcmp(ml[i].url, "http://m.test/6") == 0)
            CHECK(ml[i].off < 0 && ml[i].len < 0 && ml[i].file[0] == 0,
                  "%s without records", ml[i].url);
        else
            CHECK(ml[i].off > 0 && ml[i].len > 0, "%s has a range",
                  ml[i].url);
    }
    snprintf(path, sizeof(path), "%s/merged/depth-0.warc.gz", dir);
    check_merged(path, ml, k, 3);
    snprintf(path, sizeof(path), "%s/merged/depth-1.warc.gz", dir);
    check_merged(path, ml, k, 1);
    CHECK(merge_run("/nonexistent/x", NULL, &st, NULL, err, sizeof(err)) ==
              DC_EIO && err[0],
          "missing dir");
}

/* Rewrite line `lineno` (1-based) of the file at path with edit(). */
static void edit_line(const char *path, int lineno,
                      void (*edit)(char *line, size_t cap))
{
    char lines[16][4096];
    FILE *f = fopen(path, "r");
    int n = 0;

    while (f && n < 16 && fgets(lines[n], sizeof(lines[n]), f))
        n++;
    if (f)
        fclose(f);
    CHECK(n >= lineno, "%s has line %d", path, lineno);
    if (n < lineno)
        return;
    edit(lines[lineno - 1], sizeof(lines[0]));
    f = fopen(path, "w");
    for (int i = 0; f && i < n; i++)
        fputs(lines[i], f);
    if (f)
        fclose(f);
}

/* Older output: no warc_length. */
static void drop_length(char *line, size_t cap)
{
    char *k = strstr(line, ",\"warc_length\":");
    size_t skip;

    (void)cap;
    CHECK(k != NULL, "line has warc_length: %s", line);
    if (!k)
        return;
    skip = 15 + strspn(k + 15, "0123456789");
    memmove(k, k + skip, strlen(k + skip) + 1);
}

/* A range that does not start at a gzip member: warc_offset + 1. */
static void shift_offset(char *line, size_t cap)
{
    char *k = strstr(line, "\"warc_offset\":"), rest[4096];
    long long off;

    CHECK(k && sscanf(k + 14, "%lld", &off) == 1, "line has warc_offset");
    if (!k || sscanf(k + 14, "%lld", &off) != 1)
        return;
    snprintf(rest, sizeof(rest), "%s", k + 14 + strspn(k + 14, "0123456789"));
    snprintf(k, cap - (size_t)(k - line), "\"warc_offset\":%lld%s", off + 1,
             rest);
}

/* A range that ends inside a gzip member: warc_length - 1. */
static void shorten_length(char *line, size_t cap)
{
    char *k = strstr(line, "\"warc_length\":"), rest[4096];
    long long len;

    CHECK(k && sscanf(k + 14, "%lld", &len) == 1, "line has warc_length");
    if (!k || sscanf(k + 14, "%lld", &len) != 1)
        return;
    snprintf(rest, sizeof(rest), "%s", k + 14 + strspn(k + 14, "0123456789"));
    snprintf(k, cap - (size_t)(k - line), "\"warc_length\":%lld%s", len - 1,
             rest);
}

/* Bytes [off, off + len) of path equal those of path2 at off2. */
static int same_bytes(const char *path, double off, double len,
                      const char *path2, double off2)
{
    size_t n, n2;
    unsigned char *a = (unsigned char *)t_slurp(path, &n);
    unsigned char *b = (unsigned char *)t_slurp(path2, &n2);
    int ok = a && b && off >= 0 && len > 0 && off2 >= 0 &&
             off + len <= (double)n && off2 + len <= (double)n2 &&
             memcmp(a + (size_t)off, b + (size_t)off2, (size_t)len) == 0;

    free(a);
    free(b);
    return ok;
}

/*
 * The fast path (raw ranges) and its fallbacks: node f (depth 0) merges by
 * ranges; node g (depth 1) has a line without warc_length (with outlinks),
 * one whose offset is off by one and one whose length is one short (all
 * three found by inflating); node h (depth 1) was cut
 * inside its last page's request member (torn: skipped). Every copied
 * range must be byte-identical to its source range as the writer recorded
 * it (warc_length itself is checked against the reader in test_write_read).
 */
static void test_merge_fast(const char *dir)
{
    struct warc_page f[] = {
        mpage("http://f.test/1", 1000, 0, "one"),
        mpage("http://f.test/2", 1001, 0, "two two"),
        mpage("http://f.test/3", 1002, 0, "three"),
        mpage("http://f.test/4", 1003, 0, "four"),
    };
    struct warc_page g[] = {
        mpage("http://f.test/g1", 2000, 1, "g one"),
        mpage("http://f.test/g2", 2001, 1, "g two"),
        mpage("http://f.test/g3", 2002, 1, "g three"),
    };
    struct warc_page h[] = {
        mpage("http://f.test/h1", 3000, 1, "h one"),
        mpage("http://f.test/h2", 3001, 1, "h two"),
    };
    struct mline src[16], ml[16];
    struct merge_stats st;
    char path[4096], spath[4096], err[256], *warn = NULL;
    const char *const jl[] = { "depth-0/f-00000.jsonl", "depth-1/g-00000.jsonl",
                               "depth-1/h-00000.jsonl" };
    size_t wlen = 0, n;
    unsigned char *d;
    int ns = 0, k, rc;
    FILE *wf;

    static const char *const g_links[] = { "http://f.test/1",
                                           "http://f.test/g2" };

    g[0].outlinks = g_links; /* a pending line owns its links */
    g[0].noutlinks = 2;
    write_node(dir, 0, "f", f, 4);
    write_node(dir, 1, "g", g, 3);
    write_node(dir, 1, "h", h, 2);
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, jl[i]);
        ns += read_pages(path, src + ns, 16 - ns);
    }
    CHECK(ns == 9, "source lines %d", ns);
    for (int i = 0; i < ns; i++)
        CHECK(src[i].off > 0 && src[i].len > 0, "%s: source range",
              src[i].url);
    snprintf(path, sizeof(path), "%s/depth-1/g-00000.jsonl", dir);
    edit_line(path, 1, drop_length);
    edit_line(path, 2, shift_offset);
    edit_line(path, 3, shorten_length);
    snprintf(path, sizeof(path), "%s/depth-1/h-00000.warc.gz", dir);
    d = (unsigned char *)t_slurp(path, &n);
    if (d && n > 10)
        spit(path, d, n - 10);
    free(d);

    wf = open_memstream(&warn, &wlen);
    rc = merge_run(dir, NULL, &st, wf, err, sizeof(err));
    fclose(wf);
    CHECK(rc == DC_OK, "merge_run %d %s", rc, err);
    CHECK(st.pages == 9 && st.ranges == 5 && st.inflated == 3 &&
              st.torn == 1 && st.records == 8 && st.files == 3 + 3,
          "fast stats: pages %llu ranges %llu inflated %llu torn %llu "
          "records %llu files %llu",
          (unsigned long long)st.pages, (unsigned long long)st.ranges,
          (unsigned long long)st.inflated, (unsigned long long)st.torn,
          (unsigned long long)st.records, (unsigned long long)st.files);
    CHECK(warn && strstr(warn, "h-00000.warc.gz") &&
              strstr(warn, "http://f.test/h2") && strstr(warn, "torn"),
          "torn range warning: %s", warn ? warn : "");
    free(warn);

    snprintf(path, sizeof(path), "%s/merged/pages.jsonl", dir);
    k = read_pages(path, ml, 16);
    CHECK(k == 9, "merged lines %d", k);
    for (int i = 0; i < k; i++) {
        const struct mline *s = NULL;
        for (int j = 0; j < ns; j++)
            if (strcmp(src[j].url, ml[i].url) == 0)
                s = &src[j];
        CHECK(s != NULL, "%s from a source line", ml[i].url);
        if (!s)
            continue;
        if (strcmp(ml[i].url, "http://f.test/h2") == 0) {
            CHECK(ml[i].off < 0 && ml[i].len < 0 && ml[i].file[0] == 0 &&
                      ml[i].id[0] == 0,
                  "torn page kept without records");
            continue;
        }
        snprintf(path, sizeof(path), "%s/merged/%s", dir, ml[i].file);
        snprintf(spath, sizeof(spath), "%s/%s", dir, s->file);
        CHECK(ml[i].len == s->len && strcmp(ml[i].id, s->id) == 0 &&
                  same_bytes(path, ml[i].off, ml[i].len, spath, s->off),
              "%s: merged range %g+%g equals source %s %g+%g", ml[i].url,
              ml[i].off, ml[i].len, s->file, s->off, s->len);
    }
    snprintf(path, sizeof(path), "%s/merged/depth-0.warc.gz", dir);
    check_merged(path, ml, k, 4);
    snprintf(path, sizeof(path), "%s/merged/depth-1.warc.gz", dir);
    check_merged(path, ml, k, 4);
}

/* ----------------------------------------------- merge policies, CDXJ */

struct pline {
    char url[128], digest[64], dup[128];
    double score;
};

/* url -> (digest, duplicate_of, score) of a merged pages.jsonl */
static int read_plines(const char *path, struct pline *pl, int max)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    int n = 0;

    while (f && n < max && fgets(buf, sizeof(buf), f)) {
        struct warc_jobj o;
        const struct warc_jkv *kv;
        memset(&pl[n], 0, sizeof(pl[n]));
        pl[n].score = -1;
        if (warc_json_parse(buf, strlen(buf), &o) == DC_OK) {
            if ((kv = warc_jobj_get(&o, "url")) && kv->type == WARC_JSTR)
                snprintf(pl[n].url, 128, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "digest")) && kv->type == WARC_JSTR)
                snprintf(pl[n].digest, 64, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "duplicate_of")) &&
                kv->type == WARC_JSTR)
                snprintf(pl[n].dup, 128, "%s", kv->str);
            if ((kv = warc_jobj_get(&o, "score")) && kv->type == WARC_JNUM)
                pl[n].score = kv->num;
        }
        warc_jobj_release(&o);
        n++;
    }
    if (f)
        fclose(f);
    return n;
}

static const struct pline *pline_get(const struct pline *pl, int n,
                                     const char *url)
{
    for (int i = 0; i < n; i++)
        if (strcmp(pl[i].url, url) == 0)
            return &pl[i];
    return NULL;
}

/*
 * Every index.cdxj line: sorted, its key is the SURT of its url, and the
 * member at offset/length in filename inflates to a response or revisit
 * record of that url. Returns the number of lines.
 */
static int check_cdxj(const char *mdir)
{
    char path[4096], prev[8192] = "", line[8192];
    FILE *f;
    int n = 0;

    snprintf(path, sizeof(path), "%s/index.cdxj", mdir);
    f = fopen(path, "r");
    CHECK(f != NULL, "open %s", path);
    while (f && fgets(line, sizeof(line), f) && n < 10000) {
        char key[2048], ts[32], surt[2048], wpath[4096], rec[4096];
        const char *js = strchr(line, '{');
        struct warc_jobj o;
        const struct warc_jkv *url, *off, *len, *fn;
        n++;
        CHECK(strcmp(prev, line) <= 0, "cdxj sorted at line %d", n);
        snprintf(prev, sizeof(prev), "%s", line);
        CHECK(js && sscanf(line, "%2047s %31s", key, ts) == 2 &&
                  strlen(ts) == 14 && strspn(ts, "0123456789") == 14,
              "cdxj line %d: %s", n, line);
        if (!js || warc_json_parse(js, strlen(js), &o) != DC_OK) {
            CHECK(0, "cdxj json %d", n);
            continue;
        }
        url = warc_jobj_get(&o, "url");
        off = warc_jobj_get(&o, "offset");
        len = warc_jobj_get(&o, "length");
        fn = warc_jobj_get(&o, "filename");
        CHECK(url && off && len && fn && url->type == WARC_JSTR &&
                  off->type == WARC_JSTR && len->type == WARC_JSTR &&
                  fn->type == WARC_JSTR && warc_jobj_get(&o, "mime") &&
                  warc_jobj_get(&o, "status") &&
                  warc_jobj_get(&o, "digest"),
              "cdxj fields %d", n);
        if (url && off && len && fn && url->type == WARC_JSTR &&
            off->type == WARC_JSTR && len->type == WARC_JSTR &&
            fn->type == WARC_JSTR) {
            size_t total, plen;
            unsigned char *d;
            long o0 = atol(off->str), l0 = atol(len->str);
            warc_surt(url->str, surt, sizeof(surt));
            CHECK(strcmp(surt, key) == 0, "cdxj key %s for %s", key,
                  url->str);
            snprintf(wpath, sizeof(wpath), "%s/%s", mdir, fn->str);
            d = (unsigned char *)t_slurp(wpath, &total);
            snprintf(rec, sizeof(rec), "%s/.cdxj-member.gz", mdir);
            if (d && o0 >= 0 && l0 > 0 && (size_t)(o0 + l0) <= total) {
                char *plain, want[600], wget[600];
                spit(rec, d + o0, (size_t)l0);
                plain = gunzip_file(rec, &plen);
                snprintf(want, sizeof(want), "\r\nWARC-Target-URI: %s\r\n",
                         url->str);
                /* wget's known <...> around the URI, unwrapped by readers */
                snprintf(wget, sizeof(wget), "\r\nWARC-Target-URI: <%s>\r\n",
                         url->str);
                CHECK(plain && count_str(plain, plen, "WARC/1.") == 1 &&
                          count_str(plain, plen, want) +
                                  count_str(plain, plen, wget) == 1 &&
                          (count_str(plain, plen, "WARC-Type: response\r\n") +
                           count_str(plain, plen, "WARC-Type: revisit\r\n")) ==
                              1,
                      "cdxj %s: one record of its url at %ld+%ld", url->str,
                      o0, l0);
                free(plain);
                unlink(rec);
            } else {
                CHECK(0, "cdxj %s: range %ld+%ld outside %s", url->str, o0,
                      l0, fn->str);
            }
            free(d);
        }
        warc_jobj_release(&o);
    }
    if (f)
        fclose(f);
    return n;
}

static void with_links(struct warc_page *p, const char *const *l, size_t n)
{
    p->outlinks = l;
    p->noutlinks = n;
}

/*
 * Content duplicates: the same payload under four URLs, with in-links
 * counted from the other pages' outlinks; one of them already a revisit
 * from the crawl. URL duplicates: /n fetched three times, the newest wins.
 */
static void test_policies(const char *base)
{
    static const char *const to_long[] = { "http://p.test/a-long-path" };
    static const char *const to_long_s[] = { "http://p.test/a-long-path",
                                             "http://p.test/s" };
    static const char *const to_mid[] = { "http://p.test/mid",
                                          "http://p.test/mid" };
    static const struct {
        enum merge_keep keep;
        const char *kept;
        double long_score;
    } t[] = {
        { MERGE_KEEP_SCORE, "http://p.test/a-long-path", 3 },
        { MERGE_KEEP_SHORTEST, "http://p.test/s", 3 },
    };
    static const char *const dups[] = { "http://p.test/a-long-path",
        "http://p.test/s", "http://p.test/mid", "http://p.test/r" };
    const char *same = "the very same payload";
    char new_digest[64], same_digest[64];

    sha1_expect("n new", 5, new_digest);
    sha1_expect(same, strlen(same), same_digest);
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char dir[4200], mdir[4300], path[4400], err[256];
        struct merge_opts o = { 0 };
        struct merge_stats st;
        struct pline pl[32];
        struct warc_page x[] = {
            mpage("http://p.test/x1", 1000, 0, "x1"),
            mpage("http://p.test/x2", 1000, 0, "x2"),
            mpage("http://p.test/x3", 1000, 0, "x3"),
            mpage("http://p.test/x1", 1500, 0, "x1"), /* URL duplicate */
            mpage("http://p.test/n", 1000, 0, "n old"),
        };
        struct warc_page y[] = {
            mpage("http://p.test/a-long-path", 2000, 1, same),
            mpage("http://p.test/s", 2100, 1, same),
            mpage("http://p.test/mid", 2200, 1, same),
            mpage("http://p.test/r", 2300, 1, same),
            mpage("http://p.test/n", 3000, 1, "n new"),
        };
        struct warc_page z[] = {
            mpage("http://p.test/n", 2000, 1, "n mid"),
            mpage("http://p.test/y", 2000, 1, "y"),
        };
        int n, ncdx, nrev = 0, nresp = 0;
        with_links(&x[0], to_long_s, 2);
        with_links(&x[1], to_long, 1);
        with_links(&x[2], to_long, 1);
        with_links(&x[3], to_long_s, 2);
        with_links(&z[1], to_mid, 2);
        y[3].dup_of_uri = "http://p.test/mid"; /* a revisit from the crawl */
        y[3].dup_of_ms = 2200;
        snprintf(dir, sizeof(dir), "%s/pol-%zu", base, i);
        snprintf(mdir, sizeof(mdir), "%s/merged", dir);
        write_node(dir, 0, "a", x, 5);
        write_node(dir, 1, "b", y, 5);
        write_node(dir, 1, "c", z, 2);
        o.keep = t[i].keep;
        o.mem_bytes = 1024; /* tiny: every sorter spills runs */
        CHECK(merge_run_opts(dir, &o, &st, NULL, err, sizeof(err)) == DC_OK,
              "policy %zu: merge %s", i, err);
        CHECK(st.runs > 4, "policy %zu: %llu sort runs", i,
              (unsigned long long)st.runs);
        CHECK(st.url_duplicates == 3 && st.content_duplicates == 3 &&
                  st.pages == 9,
              "policy %zu: %llu url dups, %llu content dups, %llu pages", i,
              (unsigned long long)st.url_duplicates,
              (unsigned long long)st.content_duplicates,
              (unsigned long long)st.pages);
        snprintf(path, sizeof(path), "%s/pages.jsonl", mdir);
        n = read_plines(path, pl, 32);
        CHECK(n == 9, "policy %zu: %d lines", i, n);
        {
            const struct pline *p = pline_get(pl, n, "http://p.test/n");
            CHECK(p && strcmp(p->digest, new_digest) == 0,
                  "policy %zu: newest fetch of /n wins", i);
            p = pline_get(pl, n, "http://p.test/a-long-path");
            CHECK(p && p->score == t[i].long_score, "policy %zu: score %g",
                  i, p ? p->score : -1);
            p = pline_get(pl, n, "http://p.test/s");
            CHECK(p && p->score == 1, "policy %zu: /s score", i);
            p = pline_get(pl, n, "http://p.test/mid");
            CHECK(p && p->score == 1, "policy %zu: /mid score (one source "
                  "linking twice)", i);
        }
        for (size_t k = 0; k < sizeof(dups) / sizeof(dups[0]); k++) {
            const struct pline *p = pline_get(pl, n, dups[k]);
            int kept = strcmp(dups[k], t[i].kept) == 0;
            CHECK(p && strcmp(p->digest, same_digest) == 0 &&
                      (kept ? p->dup[0] == 0
                            : strcmp(p->dup, t[i].kept) == 0),
                  "policy %zu: %s %s (duplicate_of %s)", i, dups[k],
                  kept ? "kept" : "a revisit of the kept one",
                  p ? p->dup : "?");
        }
        /* the merged WARC: one response, three revisits of it */
        snprintf(path, sizeof(path), "%s/depth-1.warc.gz", mdir);
        {
            struct warc_reader *r;
            struct warc_record rec;
            int k = 0;
            if (warc_reader_open(&r, path) == DC_OK) {
                while (warc_reader_next(r, &rec) == DC_OK && k++ < 1000) {
                    int is_dup = rec.payload_digest &&
                                 strcmp(rec.payload_digest, same_digest) == 0;
                    CHECK(warc_record_verify(&rec) == DC_OK,
                          "policy %zu: merged record verifies", i);
                    if (is_dup && strcmp(rec.type, "revisit") == 0) {
                        const unsigned char *h;
                        size_t hl;
                        char want[200];
                        nrev++;
                        warc_reader_head(r, &rec, &h, &hl);
                        snprintf(want, sizeof(want),
                                 "WARC-Refers-To-Target-URI: %s\r\n",
                                 t[i].kept);
                        CHECK(memmem(h, hl, want, strlen(want)) != NULL,
                              "policy %zu: revisit %s refers to %s", i,
                              rec.target_uri, t[i].kept);
                    } else if (is_dup && strcmp(rec.type, "response") == 0) {
                        nresp++;
                        CHECK(strcmp(rec.target_uri, t[i].kept) == 0,
                              "policy %zu: the response is %s", i,
                              rec.target_uri);
                    }
                }
                warc_reader_close(&r);
            }
        }
        CHECK(nresp == 1 && nrev == 3, "policy %zu: %d responses %d revisits",
              i, nresp, nrev);
        ncdx = check_cdxj(mdir);
        CHECK(ncdx == 9, "policy %zu: %d cdxj lines", i, ncdx);
    }
}

/* The conformance samples through --add: valid files merge, broken ones
 * are reported and skipped (status per the samples' manifest.json). */
static void test_add_samples(const char *base)
{
    static const struct {
        const char *file;
        int ok;
    } t[] = {
        { "example.warc", 1 },
        { "example.warc.gz", 1 },
        { "example-digest.warc", 1 },
        { "example-iana.org-chunked.warc", 1 },
        { "example-resource.warc.gz", 1 },
        { "example-space-in-target-uri.warc.gz", 1 },
        { "example-wget-bad-target-uri.warc.gz", 1 },
        { "post-test.warc.gz", 1 },
        { "example-bad-non-chunked.warc.gz", 0 },
        { "example-bad.warc.gz.bad", 0 },
        { "example-trunc.warc", 0 },
        { "example-wrong-chunks.warc.gz", 0 },
    };
    enum { N = sizeof(t) / sizeof(t[0]) };
    char paths[N][4096], dir[4200], mdir[4300], path[4400], err[256];
    char *warn = NULL;
    const char *adds[N];
    struct merge_opts o = { 0 };
    struct merge_stats st;
    size_t wlen = 0, ok = 0;
    FILE *wf;
    int rc;

    for (size_t i = 0; i < N; i++) {
        snprintf(paths[i], sizeof(paths[i]), "%s/conformance/warc/samples/%s",
                 DC_SHARED_DIR, t[i].file);
        adds[i] = paths[i];
        ok += (size_t)t[i].ok;
    }
    snprintf(dir, sizeof(dir), "%s/add", base);
    snprintf(mdir, sizeof(mdir), "%s/merged", dir);
    warc_mkdirs(dir);
    o.adds = adds;
    o.nadds = N;
    wf = open_memstream(&warn, &wlen);
    rc = merge_run_opts(dir, &o, &st, wf, err, sizeof(err));
    fclose(wf);
    CHECK(rc == DC_OK, "add: merge %d %s", rc, err);
    CHECK(st.added_files == ok && st.added_bad == N - ok,
          "add: %llu files merged, %llu skipped",
          (unsigned long long)st.added_files,
          (unsigned long long)st.added_bad);
    for (size_t i = 0; i < N; i++) {
        char want[4200];
        int w = snprintf(want, sizeof(want), "%s: ", paths[i]);
        if (!t[i].ok && w > 0 && (size_t)w < sizeof(want))
            CHECK(warn && strstr(warn, want) && strstr(warn, "file skipped"),
                  "add: %s reported", t[i].file);
    }
    CHECK(st.pages >= 4 && check_cdxj(mdir) == (int)st.pages,
          "add: %llu pages, all in index.cdxj", (unsigned long long)st.pages);
    snprintf(path, sizeof(path), "%s/depth-0.warc.gz", mdir);
    {
        int end, bad = 0, k = read_count(path, &end, &bad);
        CHECK(k > 4 && end == DC_ENOTFOUND && bad == 0,
              "add: merged file reads back: %d records, %d bad", k, bad);
    }
    free(warn);
}

static void keep_merged(const char *mdir, const char *keep)
{
    static const char *const names[] = { "depth-0.warc.gz", "depth-1.warc.gz",
                                         "pages.jsonl" };
    char src[4096], dst[700];

    snprintf(dst, sizeof(dst), "%s/merged", keep);
    warc_mkdirs(dst);
    for (size_t i = 0; i < 3; i++) {
        size_t n;
        unsigned char *d;
        snprintf(src, sizeof(src), "%s/merged/%s", mdir, names[i]);
        snprintf(dst, sizeof(dst), "%s/merged/%s", keep, names[i]);
        d = (unsigned char *)t_slurp(src, &n);
        if (d)
            spit(dst, d, n);
        free(d);
    }
}

int main(void)
{
    char tmpl[] = "/tmp/u-merge-XXXXXX", tmpl2[] = "/tmp/u-merge-bad-XXXXXX";
    char dir[256], mdir[300], fdir[300], pdir[300];
    const char *keep = getenv("DC_WARC_KEEP");
    char *tmp = mkdtemp(tmpl), *bad = mkdtemp(tmpl2);

    if (!tmp || !bad) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return t_done("u-merge");
    }
    snprintf(dir, sizeof(dir), "%s", keep && *keep ? keep : tmp);
    if (keep && *keep)
        warc_mkdirs(dir);
    /* the merge input holds a torn file on purpose: keep only the output */
    snprintf(mdir, sizeof(mdir), "%s/merge", bad);
    snprintf(fdir, sizeof(fdir), "%s/merge-fast", bad);
    test_merge(mdir, bad);
    test_merge_fast(fdir);
    snprintf(pdir, sizeof(pdir), "%s/policy", dir);
    test_policies(pdir);
    test_add_samples(pdir);
    if (keep && *keep)
        keep_merged(mdir, dir);
    rm_rf(bad);
    rm_rf(tmp);
    return t_done("u-merge");
}
