/*
 * u-warc.c: the warc module: building WARC records, writing per-node
 * files with rotation, reading them back (also foreign, torn and random
 * files), digests, JSON escaping and parsing, and SURT keys. Merging is
 * tested in u-merge.c.
 *
 * Expected values are written out by hand (rewritten response heads, JSON
 * escapes, time stamps) or computed independently (SHA-1 from libcrypto
 * with this file's own base32, itself checked against a published vector).
 *
 * DC_WARC_KEEP=DIR keeps the valid files this test writes under DIR (for
 * the third-party check tests/e2e/warc-check.mjs; u-merge.c adds the
 * merged ones); broken files are always written to a temporary directory
 * and removed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "dedup.h"
#include "warc.h"
#include "t.h"
#include "t-warc.h"

#define MS 1700000000123LL /* 2023-11-14T22:13:20.123Z */

/* ----------------------------------------------------- table of pages */

static unsigned char binary[300];

static const char req_a[] = "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n";
static const char *const plain_links[] = { "http://a.test/x",
                                           "http://a.test/y\n z" };

struct tpage {
    struct warc_page p;
    const char *head;   /* expected stored head, NULL: no records */
    const char *uri;    /* expected WARC-Target-URI */
};

static struct tpage pages[] = {
    { { .url = "http://a.test/plain", .status = 200, .ip = "127.0.0.1",
        .resp_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                     "Content-Length: 11\r\n\r\n",
        .body = "<p>hi</p>\n\n", .content_type = "text/html" },
      "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11"
      "\r\n\r\n", "http://a.test/plain" },
    { { .url = "http://a.test/chunked", .status = 200,
        .resp_head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Type: text/plain\r\n\r\n",
        .body = "hello" },
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5"
      "\r\n\r\n", "http://a.test/chunked" },
    { { .url = "http://a.test/r", .final_url = "http://a.test/b",
        .status = 200,
        .resp_head = "HTTP/1.1 301 Moved\r\nLocation: /b\r\n"
                     "Content-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n"
                     "Content-Length: 999\r\nServer: x\r\n\r\n",
        .body = "abc" },
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nServer: x\r\n\r\n",
      "http://a.test/b" },
    { { .url = "http://a.test/empty", .status = 204,
        .resp_head = "HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n",
        .body = "" },
      "HTTP/1.1 204 No Content\r\nDate: x\r\nContent-Length: 0\r\n\r\n",
      "http://a.test/empty" },
    { { .url = "http://a.test/err", .status = 0,
        .error = "Connection refused" },
      NULL, NULL },
    { { .url = "http://a.test/bin", .status = 200, .truncated = 1,
        .resp_head = "HTTP/1.0 200 OK\nContent-Type: application/x\n\n" },
      "HTTP/1.0 200 OK\r\nContent-Type: application/x\r\n"
      "Content-Length: 300\r\n\r\n", "http://a.test/bin" },
    { { .url = "http://a.test/h2", .status = 200,
        .resp_head = "HTTP/1.1 100 Continue\r\n\r\nHTTP/2 200\r\n"
                     "content-length: 4\r\ntransfer-encoding: chunked\r\n"
                     "x-y: z\r\n\r\n",
        .body = "abcd" },
      "HTTP/2 200\r\nContent-Length: 4\r\nx-y: z\r\n\r\n",
      "http://a.test/h2" },
    { { .url = "http://a.test/sp ce\r\nX: y", .status = 200,
        .resp_head = "HTTP/1.1 200 OK\r\n\r\n", .body = "z" },
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n",
      "http://a.test/sp%20ce%0D%0AX:%20y" },
};
#define NPAGES (sizeof(pages) / sizeof(pages[0]))

static void pages_init(void)
{
    for (size_t i = 0; i < sizeof(binary); i++)
        binary[i] = (unsigned char)(i * 7);
    for (size_t i = 0; i < NPAGES; i++) {
        struct warc_page *p = &pages[i].p;
        if (strstr(p->url, "/bin"))
            p->body = (const char *)binary;
        p->body_len = p->body ? (strstr(p->url, "/bin") ? sizeof(binary)
                                                        : strlen(p->body))
                              : 0;
        p->resp_head_len = p->resp_head ? strlen(p->resp_head) : 0;
        p->request = req_a;
        p->request_len = strlen(req_a);
        p->fetched_ms = MS;
        p->depth = 1;
        p->decoded_len = p->body_len;
        p->links_found = 2;
        p->links_new = 1;
        p->noise_seen = 3;
        p->noise_block = 4;
        p->noise_cluster = 5;
        p->noise_budget = 6;
    }
    pages[0].p.outlinks = plain_links;
    pages[0].p.noutlinks = 2;
}

/* ---------------------------------------------------------- the tests */

static void test_base(void)
{
    char out[64];

    b32((const unsigned char *)"\xa9\x99\x3e\x36\x47\x06\x81\x6a\xba\x3e"
                               "\x25\x71\x78\x50\xc2\x6c\x9c\xd0\xd8\x9d",
        20, out);
    CHECK(strcmp(out, "VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5") == 0, "%s", out);
    dedup_sha1_base32("abc", 3, out);
    CHECK(strcmp(out, "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5") == 0, "%s",
          out);
    dedup_sha1_base32("", 0, out);
    CHECK(strcmp(out, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ") == 0, "%s",
          out);
    warc_iso_time(MS, out, sizeof(out));
    CHECK(strcmp(out, "2023-11-14T22:13:20.123Z") == 0, "%s", out);
    warc_iso_time(0, out, sizeof(out));
    CHECK(strcmp(out, "1970-01-01T00:00:00.000Z") == 0, "%s", out);
}

static void test_iso_parse(void)
{
    static const struct {
        const char *s;
        int rc;
        int64_t ms;
    } t[] = {
        { "2023-11-14T22:13:20.123Z", DC_OK, MS },
        { "2023-11-14T22:13:20Z", DC_OK, MS - 123 },
        { "2023-11-14T22:13:20.1239Z", DC_OK, MS },
        { "1970-01-01T00:00:00.000Z", DC_OK, 0 },
        { "2000-02-29T00:00:00Z", DC_OK, 951782400000LL },
        { "2023-11-14 22:13:20Z", DC_EPARSE, 0 },
        { "2023-11-14T22:13:20", DC_EPARSE, 0 },
        { "2023-13-14T22:13:20Z", DC_EPARSE, 0 },
        { "", DC_EPARSE, 0 },
        { "2023-11-14T22:13:20.Z", DC_EPARSE, 0 },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int64_t ms = -1;
        int rc = warc_parse_iso(t[i].s, &ms);
        CHECK(rc == t[i].rc, "iso %s: rc %d", t[i].s, rc);
        if (rc == DC_OK)
            CHECK(ms == t[i].ms, "iso %s: %lld", t[i].s, (long long)ms);
    }
}

static void test_json_str(void)
{
    static const struct {
        const char *in, *out;
    } t[] = {
        { "plain", "\"plain\"" },
        { "", "\"\"" },
        { "q\"b\\s/", "\"q\\\"b\\\\s/\"" },
        { "\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"" },
        { "\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"" },
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 "
          "\xe2\x82\xac \xf0\x9f\x98\x80\"" },
        { "a\xff" "b", "\"a\\ufffdb\"" },
        { "\xc0\xaf", "\"\\ufffd\\ufffd\"" },          /* overlong */
        { "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" }, /* surrogate */
        { "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
        { "\xe2\x82", "\"\\ufffd\\ufffd\"" },          /* cut short */
        { "\x80x", "\"\\ufffdx\"" },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char *b = NULL;
        size_t len = 0, cap = 0;
        warc_json_str(&b, &len, &cap, t[i].in);
        CHECK(b && len == strlen(t[i].out) && strcmp(b, t[i].out) == 0,
              "json %zu: got %s want %s", i, b ? b : "(null)", t[i].out);
        free(b);
    }
}

static void test_json_parse(void)
{
    static const struct {
        const char *in;
        int rc;
        const char *key, *str; /* one string value to check */
        size_t n;
    } t[] = {
        { "{\"a\":\"b\"}", DC_OK, "a", "b", 1 },
        { " { \"a\" : 1 , \"b\":\"x\\u00e9\\ud83d\\ude00\\n\" } \n", DC_OK,
          "b", "x\xc3\xa9\xf0\x9f\x98\x80\n", 2 },
        { "{\"a\":null,\"b\":true,\"c\":false,\"d\":-1.5e3}", DC_OK, NULL,
          NULL, 4 },
        { "{}", DC_OK, NULL, NULL, 0 },
        { "{\"s\":\"\\ud800x\"}", DC_OK, "s", "\xef\xbf\xbdx", 1 },
        { "{\"a\":[1]}", DC_OK, NULL, NULL, 1 },
        { "{\"a\":[\"x\", null, \"y\\n\"],\"b\":\"c\"}", DC_OK, "b", "c",
          2 },
        { "{\"a\":[]}", DC_OK, NULL, NULL, 1 },
        { "{\"a\":[{}]}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":[[1]]}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":[1,]}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":[1}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":{}}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":1,}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":01}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":\"x}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":\"\\x\"}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":tru}", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":1} x", DC_EPARSE, NULL, NULL, 0 },
        { "[1]", DC_EPARSE, NULL, NULL, 0 },
        { "", DC_EPARSE, NULL, NULL, 0 },
        { "{\"a\":\"\x01\"}", DC_EPARSE, NULL, NULL, 0 },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct warc_jobj o;
        int rc = warc_json_parse(t[i].in, strlen(t[i].in), &o);
        CHECK(rc == t[i].rc, "parse %zu: rc %d", i, rc);
        if (rc == DC_OK) {
            CHECK(o.n == t[i].n, "parse %zu: n %zu", i, o.n);
            if (t[i].key) {
                const struct warc_jkv *kv = warc_jobj_get(&o, t[i].key);
                CHECK(kv && kv->type == WARC_JSTR &&
                          strcmp(kv->str, t[i].str) == 0,
                      "parse %zu: value", i);
            }
        }
        warc_jobj_release(&o);
    }
    /* the strings of an array, in order, other values skipped */
    {
        const char *line = "{\"a\":[\"x\", 1, \"y\\u00e9\"]}";
        const struct warc_jkv *kv;
        struct warc_jobj o;
        size_t pos = 0;
        char *v1 = NULL, *v2 = NULL, *v3 = NULL;
        int r1, r2, r3;
        CHECK(warc_json_parse(line, strlen(line), &o) == DC_OK, "array");
        kv = warc_jobj_get(&o, "a");
        CHECK(kv && kv->type == WARC_JARR, "array type");
        if (kv && kv->type == WARC_JARR) {
            r1 = warc_json_array_next(kv->raw, kv->raw_len, &pos, &v1);
            r2 = warc_json_array_next(kv->raw, kv->raw_len, &pos, &v2);
            r3 = warc_json_array_next(kv->raw, kv->raw_len, &pos, &v3);
            CHECK(r1 == DC_OK && r2 == DC_OK && r3 == DC_ENOTFOUND &&
                      strcmp(v1, "x") == 0 && strcmp(v2, "y\xc3\xa9") == 0,
                  "array strings %d %d %d", r1, r2, r3);
        }
        free(v1);
        free(v2);
        free(v3);
        warc_jobj_release(&o);
    }
}

/* The metadata block expected for t, written out by hand. */
static void meta_expect(const struct tpage *t, char *out, size_t cap)
{
    size_t n = 0;

    out[0] = '\0';
    if (t->p.noutlinks)
        n += (size_t)snprintf(out + n, cap - n,
                              "outlink: http://a.test/x\r\n"
                              "outlink: http://a.test/y%%0A%%20z\r\n");
    snprintf(out + n, cap - n, "links-found: 2\r\nlinks-new: 1\r\n"
             "noise-links-seen: 3\r\nnoise-dropped-block: 4\r\n"
             "noise-dropped-cluster: 5\r\nnoise-refused-budget: 6\r\n");
}

/* Check the built bytes of one page independently of the reader. */
static void check_built(const struct tpage *t, const struct warc_built *b)
{
    char want[64], *plain = NULL;
    size_t n = 0;
    char path[] = "/tmp/u-warc-gzXXXXXX";
    int fd;

    if (!t->head) {
        CHECK(b->len == 0 && b->digest[0] == 0, "%s: records for an error",
              t->p.url);
        return;
    }
    sha1_expect(t->p.body, t->p.body_len, want);
    CHECK(strcmp(b->digest, want) == 0, "%s: digest %s", t->p.url,
          b->digest);
    CHECK(b->response_off == 0 && b->len > 0, "%s: layout", t->p.url);
    CHECK(strncmp(b->response_id, "<urn:uuid:", 10) == 0 &&
              strlen(b->response_id) == 47 && b->response_id[24] == '4',
          "%s: id %s", t->p.url, b->response_id);
    fd = mkstemp(path);
    if (fd < 0)
        return;
    close(fd);
    spit(path, b->data, b->len);
    plain = gunzip_file(path, &n);
    unlink(path);
    CHECK(plain && count_str(plain, n, "WARC/1.1\r\n") == 2,
          "%s: two WARC/1.1 records", t->p.url);
    CHECK(plain && count_str(plain, n, "\r\nWARC-Type: response\r\n") == 1 &&
              count_str(plain, n, "\r\nWARC-Type: request\r\n") == 1,
          "%s: types", t->p.url);
    CHECK(plain && count_str(plain, n, t->head) == 1, "%s: head", t->p.url);
    CHECK(plain && count_str(plain, n, "WARC-Date: 2023-11-14T22:13:20.123Z"
                                       "\r\n") == 2,
          "%s: date", t->p.url);
    CHECK(plain && (t->p.truncated ==
                    (count_str(plain, n, "WARC-Truncated: length\r\n") == 1)),
          "%s: truncated", t->p.url);
    free(plain);
}

static void build_all(struct warc_built *b, int level)
{
    for (size_t i = 0; i < NPAGES; i++) {
        int rc = warc_record_build(&pages[i].p, level, &b[i]);
        CHECK(rc == DC_OK, "build %s: %d", pages[i].p.url, rc);
        check_built(&pages[i], &b[i]);
    }
}

/* Read one response (and its request) and check them against t. */
static void check_pair(const struct tpage *t, const struct warc_built *b,
                       struct warc_reader *r, uint64_t *resp_off,
                       uint64_t *req_end)
{
    struct warc_record rec;
    size_t hl = strlen(t->head);
    int rc = warc_reader_next(r, &rec);

    CHECK(rc == DC_OK && strcmp(rec.type, "response") == 0, "%s: response",
          t->p.url);
    if (rc)
        return;
    *resp_off = rec.offset;
    CHECK(rec.target_uri && strcmp(rec.target_uri, t->uri) == 0,
          "%s: uri %s", t->p.url, rec.target_uri);
    CHECK(strcmp(rec.record_id, b->response_id) == 0, "%s: id", t->p.url);
    CHECK(rec.block_len == hl + t->p.body_len &&
              memcmp(rec.block, t->head, hl) == 0 &&
              memcmp(rec.block + hl, t->p.body, t->p.body_len) == 0,
          "%s: block", t->p.url);
    CHECK(warc_record_verify(&rec) == DC_OK, "%s: verify", t->p.url);
    CHECK(rec.payload_digest && strcmp(rec.payload_digest, b->digest) == 0,
          "%s: payload digest", t->p.url);
    rc = warc_reader_next(r, &rec);
    CHECK(rc == DC_OK && strcmp(rec.type, "request") == 0 &&
              rec.concurrent_to &&
              strcmp(rec.concurrent_to, b->response_id) == 0,
          "%s: request", t->p.url);
    CHECK(rc == DC_OK && rec.block_len == strlen(req_a) &&
              memcmp(rec.block, req_a, rec.block_len) == 0 &&
              warc_record_verify(&rec) == DC_OK,
          "%s: request block", t->p.url);
    rc = warc_reader_next(r, &rec);
    {
        char want[512];
        meta_expect(t, want, sizeof(want));
        CHECK(rc == DC_OK && strcmp(rec.type, "metadata") == 0 &&
                  rec.concurrent_to &&
                  strcmp(rec.concurrent_to, b->response_id) == 0 &&
                  rec.block_len == strlen(want) &&
                  memcmp(rec.block, want, rec.block_len) == 0 &&
                  warc_record_verify(&rec) == DC_OK,
              "%s: metadata %.*s", t->p.url, rc ? 0 : (int)rec.block_len,
              rc ? "" : (const char *)rec.block);
    }
    if (rc == DC_OK)
        *req_end = rec.offset + rec.member_len;
}

/* The JSON line of page i. */
static void check_line(const struct tpage *t, const struct warc_built *b,
                       const char *line, uint64_t off, uint64_t len)
{
    struct warc_jobj o;
    const struct warc_jkv *kv;
    int rc = warc_json_parse(line, strlen(line), &o);

    CHECK(rc == DC_OK, "%s: json line %s", t->p.url, line);
    kv = warc_jobj_get(&o, "url");
    CHECK(kv && kv->type == WARC_JSTR && strcmp(kv->str, t->p.url) == 0,
          "%s: url", t->p.url);
    kv = warc_jobj_get(&o, "fetched_at");
    CHECK(kv && kv->type == WARC_JSTR &&
              strcmp(kv->str, "2023-11-14T22:13:20.123Z") == 0,
          "%s: fetched_at", t->p.url);
    kv = warc_jobj_get(&o, "warc_offset");
    CHECK(kv && (t->head ? kv->type == WARC_JNUM && kv->num == (double)off
                         : kv->type == WARC_JNULL),
          "%s: warc_offset", t->p.url);
    kv = warc_jobj_get(&o, "warc_length");
    CHECK(kv && (t->head ? kv->type == WARC_JNUM && kv->num == (double)len &&
                               len > b->len
                         : kv->type == WARC_JNULL),
          "%s: warc_length %g want %llu", t->p.url, kv ? kv->num : -1.0,
          (unsigned long long)len);
    kv = warc_jobj_get(&o, "warc_response_length");
    CHECK(kv && (t->head ? kv->type == WARC_JNUM &&
                               kv->num == (double)b->response_len &&
                               b->response_len > 0
                         : kv->type == WARC_JNULL),
          "%s: warc_response_length", t->p.url);
    kv = warc_jobj_get(&o, "outlinks");
    {
        char *v = NULL;
        size_t pos = 0;
        int r1 = kv && kv->type == WARC_JARR
                     ? warc_json_array_next(kv->raw, kv->raw_len, &pos, &v)
                     : -1;
        CHECK(t->p.noutlinks ? r1 == DC_OK && strcmp(v, "http://a.test/x") == 0
                             : r1 == DC_ENOTFOUND,
              "%s: outlinks", t->p.url);
        free(v);
    }
    kv = warc_jobj_get(&o, "error");
    CHECK(kv && (t->p.error ? kv->type == WARC_JSTR : kv->type == WARC_JNULL),
          "%s: error", t->p.url);
    kv = warc_jobj_get(&o, "digest");
    CHECK(kv && (t->head ? kv->type == WARC_JSTR &&
                               strcmp(kv->str, b->digest) == 0
                         : kv->type == WARC_JNULL),
          "%s: digest", t->p.url);
    kv = warc_jobj_get(&o, "truncated");
    CHECK(kv && kv->type == WARC_JBOOL && kv->boolean == t->p.truncated,
          "%s: truncated", t->p.url);
    kv = warc_jobj_get(&o, "length");
    CHECK(kv && kv->type == WARC_JNUM && kv->num == (double)t->p.body_len,
          "%s: length", t->p.url);
    kv = warc_jobj_get(&o, "warc_file");
    CHECK(kv && kv->type == WARC_JSTR &&
              strcmp(kv->str, "depth-1/n1-00000.warc.gz") == 0,
          "%s: warc_file", t->p.url);
    CHECK(warc_jobj_get(&o, "node") && warc_jobj_get(&o, "ip") &&
              warc_jobj_get(&o, "links_found") &&
              warc_jobj_get(&o, "links_new") &&
              warc_jobj_get(&o, "decoded_length") &&
              warc_jobj_get(&o, "content_type") &&
              warc_jobj_get(&o, "status") && warc_jobj_get(&o, "depth") &&
              warc_jobj_get(&o, "final_url") &&
              warc_jobj_get(&o, "warc_record_id"),
          "%s: all keys", t->p.url);
    warc_jobj_release(&o);
}

static const struct warc_writer_opts wopts = {
    "dcrawl/0.1", "depth=2\r\nuser-agent: dcrawl test\n\x01x: y", 0, 6
};

static const char info_settings[] =
    "\r\nsettings: depth=2\r\nuser-agent: dcrawl test\r\nsettings:  x: y\r\n";

/* The bytes [off, off + len) of path, on their own, are a WARC file of
 * exactly the response `id`, its request and its metadata. */
static void check_range(const char *path, uint64_t off, uint64_t len,
                        const char *id)
{
    char tmp[] = "/tmp/u-warc-rangeXXXXXX";
    struct warc_reader *r;
    struct warc_record rec;
    unsigned char *d;
    size_t n;
    int fd, rc;

    d = (unsigned char *)t_slurp(path, &n);
    CHECK(d && off + len <= n, "range %llu+%llu inside %zu bytes",
          (unsigned long long)off, (unsigned long long)len, n);
    fd = mkstemp(tmp);
    if (!d || off + len > n || fd < 0) {
        free(d);
        return;
    }
    close(fd);
    spit(tmp, d + off, (size_t)len);
    free(d);
    CHECK(warc_reader_open(&r, tmp) == DC_OK, "open range");
    if (r) {
        rc = warc_reader_next(r, &rec);
        CHECK(rc == DC_OK && strcmp(rec.type, "response") == 0 &&
                  rec.offset == 0 && strcmp(rec.record_id, id) == 0 &&
                  warc_record_verify(&rec) == DC_OK,
              "range starts with response %s", id);
        rc = warc_reader_next(r, &rec);
        CHECK(rc == DC_OK && strcmp(rec.type, "request") == 0 &&
                  rec.concurrent_to && strcmp(rec.concurrent_to, id) == 0,
              "range: its request");
        rc = warc_reader_next(r, &rec);
        CHECK(rc == DC_OK && strcmp(rec.type, "metadata") == 0 &&
                  rec.concurrent_to && strcmp(rec.concurrent_to, id) == 0 &&
                  rec.offset + rec.member_len == len,
              "range ends with its metadata");
        CHECK(warc_reader_next(r, &rec) == DC_ENOTFOUND, "range: nothing else");
    }
    warc_reader_close(&r);
    unlink(tmp);
}

/* Write all pages to DIR/depth-1/n1-00000.*, read them back. */
static void test_write_read(const char *dir)
{
    struct warc_built b[NPAGES];
    struct warc_writer *w;
    struct warc_reader *r;
    struct warc_record rec;
    uint64_t offs[NPAGES] = { 0 }, ends[NPAGES] = { 0 }, end = 0,
             prev_end = 0;
    char path[4096], *lines, *line, *save = NULL;
    size_t n, total;
    int rc;

    build_all(b, 6);
    rc = warc_writer_open(&w, dir, 1, "n1", &wopts);
    CHECK(rc == DC_OK, "writer open %d", rc);
    for (size_t i = 0; i < NPAGES && w; i++)
        CHECK(warc_writer_append(w, &pages[i].p, &b[i], "n1") == DC_OK,
              "append %zu", i);
    CHECK(warc_writer_close(&w) == DC_OK && w == NULL, "close");
    snprintf(path, sizeof(path), "%s/depth-1/n1-00000.warc.gz", dir);
    CHECK(warc_reader_open(&r, path) == DC_OK, "open %s", path);
    if (!r)
        return;
    rc = warc_reader_next(r, &rec);
    CHECK(rc == DC_OK && strcmp(rec.type, "warcinfo") == 0 &&
              rec.offset == 0 && warc_record_verify(&rec) == DC_OK &&
              memmem(rec.block, rec.block_len, "WARC File Format 1.1", 20),
          "warcinfo first");
    CHECK(rc == DC_OK && memmem(rec.block, rec.block_len, info_settings,
                                strlen(info_settings)),
          "warcinfo settings: %.*s", (int)rec.block_len, rec.block);
    prev_end = rec.member_len;
    for (size_t i = 0; i < NPAGES; i++)
        if (pages[i].head)
            check_pair(&pages[i], &b[i], r, &offs[i], &ends[i]);
    CHECK(warc_reader_next(r, &rec) == DC_ENOTFOUND, "clean end");
    warc_reader_close(&r);
    CHECK(r == NULL, "close NULLs");
    warc_reader_close(NULL);

    /* members are contiguous: response offsets match the built layout */
    for (size_t i = 0; i < NPAGES; i++) {
        if (!pages[i].head)
            continue;
        CHECK(offs[i] == prev_end, "%s: offset %llu want %llu",
              pages[i].p.url, (unsigned long long)offs[i],
              (unsigned long long)prev_end);
        CHECK(ends[i] > offs[i] + b[i].len, "%s: metadata after the built "
              "records", pages[i].p.url);
        prev_end = ends[i];
    }
    free(t_slurp(path, &total));
    end = prev_end;
    CHECK(end == total, "file size %zu, members end at %llu", total,
          (unsigned long long)end);

    snprintf(path, sizeof(path), "%s/depth-1/n1-00000.jsonl", dir);
    lines = t_slurp(path, &n);
    line = lines ? strtok_r(lines, "\n", &save) : NULL;
    for (size_t i = 0; i < NPAGES; i++) {
        CHECK(line != NULL, "line %zu present", i);
        if (!line)
            break;
        check_line(&pages[i], &b[i], line, offs[i], ends[i] - offs[i]);
        line = strtok_r(NULL, "\n", &save);
    }
    CHECK(line == NULL, "one line per page");
    free(lines);
    snprintf(path, sizeof(path), "%s/depth-1/n1-00000.warc.gz", dir);
    for (size_t i = 0; i < NPAGES; i++)
        if (pages[i].head)
            check_range(path, offs[i], ends[i] - offs[i], b[i].response_id);
    for (size_t i = 0; i < NPAGES; i++)
        warc_built_release(&b[i]);
    warc_built_release(NULL);
}

static void test_build_errors(void)
{
    struct warc_page p = { 0 };
    struct warc_built b;

    CHECK(warc_record_build(&p, 6, &b) == DC_EINVAL && b.len == 0,
          "no url");
    p.url = "http://x.test/";
    p.status = 500;
    p.error = "timeout";
    CHECK(warc_record_build(&p, 6, &b) == DC_OK && b.len == 0 && !b.data,
          "error page");
    p.error = NULL;
    for (int level = 0; level <= 9; level += 9) {
        CHECK(warc_record_build(&p, level, &b) == DC_OK && b.len > 0,
              "no head, level %d", level);
        warc_built_release(&b);
    }
}

static int count_files(const char *dir, const char *suffix)
{
    char path[4096];
    int n = 0;

    for (int i = 0; i < 100; i++) {
        snprintf(path, sizeof(path), "%s/depth-0/rot-%05d%s", dir, i, suffix);
        if (access(path, F_OK) == 0)
            n++;
    }
    return n;
}

static void test_rotation(const char *dir)
{
    struct warc_writer_opts o = wopts;
    struct warc_built b;
    struct warc_writer *w;

    o.max_bytes = 1500;
    for (int round = 0; round < 2; round++) {
        CHECK(warc_writer_open(&w, dir, 0, "rot", &o) == DC_OK, "open");
        for (int i = 0; i < 4 && w; i++) {
            CHECK(warc_record_build(&pages[0].p, 6, &b) == DC_OK, "build");
            CHECK(warc_writer_append(w, &pages[0].p, &b, NULL) == DC_OK,
                  "append");
            warc_built_release(&b);
        }
        warc_writer_close(&w);
    }
    /* each file passes 1500 bytes after its second page: 2 pages a file */
    CHECK(count_files(dir, ".warc.gz") == 4 && count_files(dir, ".jsonl") == 4,
          "rotated into %d files", count_files(dir, ".warc.gz"));
    for (int i = 0; i < 4; i++) {
        char path[4096];
        struct warc_reader *r;
        struct warc_record rec;
        int k = 0, rc;
        snprintf(path, sizeof(path), "%s/depth-0/rot-%05d.warc.gz", dir, i);
        if (warc_reader_open(&r, path) != DC_OK)
            continue;
        while ((rc = warc_reader_next(r, &rec)) == DC_OK && k < 100) {
            CHECK(k != 0 || strcmp(rec.type, "warcinfo") == 0, "info first");
            k++;
        }
        CHECK(rc == DC_ENOTFOUND && k == 7, "%s: %d records", path, k);
        warc_reader_close(&r);
    }
    CHECK(warc_writer_open(&w, dir, 0, "a/b", &o) == DC_EINVAL, "bad node");
    CHECK(warc_writer_close(&w) == DC_OK, "close NULL");
}

/* Records read until the first non-OK code; the code in *end. */

/* Cut a written file at several places inside its last member. */
static void test_truncate(const char *dir, const char *tmp)
{
    char src[4096], dst[512];
    unsigned char *d;
    size_t n, cuts[5];
    int end, k, nrec = 1; /* warcinfo + 3 per page with records */

    for (size_t i = 0; i < NPAGES; i++)
        nrec += pages[i].head ? 3 : 0;

    snprintf(src, sizeof(src), "%s/depth-1/n1-00000.warc.gz", dir);
    d = (unsigned char *)t_slurp(src, &n);
    if (!d)
        return;
    k = read_count(src, &end, NULL);
    CHECK(k == nrec && end == DC_ENOTFOUND, "whole file %d", k);
    cuts[0] = n - 1;
    cuts[1] = n - 8;
    cuts[2] = n - 30;
    cuts[3] = n - 60;
    cuts[4] = n - 75;
    snprintf(dst, sizeof(dst), "%s/cut.warc.gz", tmp);
    for (size_t i = 0; i < 5; i++) {
        spit(dst, d, cuts[i]);
        k = read_count(dst, &end, NULL);
        CHECK(k == nrec - 1 && end == DC_ETRUNCATED, "cut %zu: %d records, %d",
              cuts[i], k, end);
    }
    /* the same as plain WARC */
    {
        size_t pn;
        char *plain = gunzip_file(src, &pn);
        snprintf(dst, sizeof(dst), "%s/cut.warc", tmp);
        spit(dst, plain, pn);
        k = read_count(dst, &end, NULL);
        CHECK(k == nrec && end == DC_ENOTFOUND, "plain whole %d %d", k, end);
        spit(dst, plain, pn - 10);
        k = read_count(dst, &end, NULL);
        CHECK(k == nrec - 1 && end == DC_ETRUNCATED, "plain cut %d %d", k, end);
        spit(dst, plain, pn - 3); /* only the final CRLF CRLF cut: lenient */
        k = read_count(dst, &end, NULL);
        CHECK(k == nrec && end == DC_ENOTFOUND, "plain cut tail %d %d", k, end);
        free(plain);
    }
    /* garbage appended after intact members */
    snprintf(dst, sizeof(dst), "%s/junk.warc.gz", tmp);
    memcpy(d + n - 5, "junk!", 5);
    spit(dst, d, n);
    k = read_count(dst, &end, NULL);
    CHECK(k == nrec - 1 && end != DC_OK && end != DC_ENOTFOUND, "junk %d %d", k,
          end);
    free(d);
    /* a Content-Length past the record cap: too big; with junk after the
     * digits: malformed (the reader once read the junk after freeing it) */
    snprintf(dst, sizeof(dst), "%s/cl.warc", tmp);
    spit(dst, "WARC/1.0\r\nContent-Length: 99999999999\r\n\r\n", 41);
    k = read_count(dst, &end, NULL);
    CHECK(k == 0 && end == DC_ETOOBIG, "huge length %d %d", k, end);
    spit(dst, "WARC/1.0\r\nContent-Length: 99999999999x\r\n\r\n", 42);
    k = read_count(dst, &end, NULL);
    CHECK(k == 0 && end == DC_EPARSE, "huge length + junk %d %d", k, end);
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* How a read of hostile input may end (reader.c's documented codes). */
static int end_documented(int end)
{
    return end == DC_ENOTFOUND || end == DC_ETRUNCATED || end == DC_EPARSE ||
           end == DC_ETOOBIG;
}

/* Random and mutated input: every read ends with one of the documented
 * codes (never DC_OK, never a crash), and a mutated file that still reads
 * to its clean end has every record's digests intact (the gzip CRC or the
 * parser caught the damage). The generator's seed is fixed (rnd_state), so
 * a failure replays. */
static void test_random(const char *dir, const char *tmp)
{
    char src[4096], dst[512];
    size_t n;
    unsigned char *orig, buf[4096];
    int end, bad = 0, odd = 0, clean = 0;

    snprintf(src, sizeof(src), "%s/depth-1/n1-00000.warc.gz", dir);
    snprintf(dst, sizeof(dst), "%s/rand.warc.gz", tmp);
    orig = (unsigned char *)t_slurp(src, &n);
    CHECK(orig && n > 0, "source file for mutations");
    for (int it = 0; it < 300; it++) {
        size_t len = rnd() % sizeof(buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)rnd();
        if (it % 3 == 1 && len > 2)
            buf[0] = 0x1f, buf[1] = 0x8b;
        if (it % 3 == 2 && len > 20)
            memcpy(buf, "WARC/1.1\r\nContent-Length: 5\r\n", 20);
        spit(dst, buf, len);
        read_count(dst, &end, NULL);
        odd += !end_documented(end);
    }
    CHECK(odd == 0, "random input: %d reads ended without a documented code",
          odd);
    odd = 0;
    for (int it = 0; orig && it < 300; it++) {
        unsigned char *m = xmalloc(n);
        memcpy(m, orig, n);
        for (int k = 0; k < 1 + it % 4; k++)
            m[rnd() % n] ^= (unsigned char)(1 + rnd() % 255);
        spit(dst, m, n);
        read_count(dst, &end, &bad);
        odd += !end_documented(end) || (end == DC_ENOTFOUND && bad);
        clean += end == DC_ENOTFOUND;
        free(m);
    }
    CHECK(odd == 0, "mutated input: %d reads ended badly (%d read to the end)",
          odd, clean);
    free(orig);
}

/* The conformance samples (see their manifest.json). */
static void test_samples(void)
{
    static const struct {
        const char *file;
        const char *types; /* expected types, space separated */
        int end;           /* the reader's final code */
        int verify_fail;   /* records failing warc_record_verify */
        int shared;        /* records share gzip members (no raw copy) */
    } t[] = {
        { "example.warc", "warcinfo warcinfo response request revisit request",
          DC_ENOTFOUND, 0 },
        { "example.warc.gz",
          "warcinfo warcinfo response request revisit request",
          DC_ENOTFOUND, 0 },
        { "example-digest.warc", "request request request request",
          DC_ENOTFOUND, 1 },
        { "example-iana.org-chunked.warc", "warcinfo response request",
          DC_ENOTFOUND, 0 },
        { "example-resource.warc.gz", "warcinfo warcinfo resource",
          DC_ENOTFOUND, 0 },
        { "example-space-in-target-uri.warc.gz", "warcinfo resource",
          DC_ENOTFOUND, 0 },
        { "example-wget-bad-target-uri.warc.gz",
          "warcinfo request response metadata resource resource",
          DC_ENOTFOUND, 0 },
        { "post-test.warc.gz",
          "response request response request response request",
          DC_ENOTFOUND, 0 },
        /* one gzip member for the whole file: read leniently (warcio
         * refuses; its "recompress" finds the same records). The revisit's
         * block digest really does not match its block here. */
        { "example-bad-non-chunked.warc.gz",
          "warcinfo warcinfo response request revisit request",
          DC_ENOTFOUND, 1, 1 },
        { "example-bad.warc.gz.bad",
          "warcinfo response request revisit request response",
          DC_ENOTFOUND, -1, 1 },
        /* a response shorter than its Content-Length */
        { "example-trunc.warc", NULL, -1, -1, 0 },
        /* member and record boundaries differ: warcio's recompress
         * recovers response + request, and so does this reader */
        { "example-wrong-chunks.warc.gz", "response request", DC_ENOTFOUND,
          -1, 1 },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char path[4096], types[512] = "";
        struct warc_reader *r;
        struct warc_record rec;
        int rc, fails = 0, k = 0, raw_refused = 0;
        snprintf(path, sizeof(path), "%s/conformance/warc/samples/%s",
                 DC_SHARED_DIR, t[i].file);
        rc = warc_reader_open(&r, path);
        CHECK(rc == DC_OK, "open %s", path);
        if (rc)
            continue;
        while ((rc = warc_reader_next(r, &rec)) == DC_OK && k++ < 1000) {
            FILE *null = fopen("/dev/null", "wb");
            size_t l = strlen(types);
            snprintf(types + l, sizeof(types) - l, "%s%s", l ? " " : "",
                     rec.type);
            fails += warc_record_verify(&rec) != DC_OK;
            raw_refused += warc_reader_copy_raw(r, null) == DC_EINVAL;
            if (rec.target_uri && strstr(t[i].file, "wget"))
                CHECK(rec.target_uri[0] != '<', "wget uri %s",
                      rec.target_uri);
            fclose(null);
        }
        if (t[i].types)
            CHECK(strcmp(types, t[i].types) == 0, "%s: types %s", t[i].file,
                  types);
        if (t[i].end >= 0)
            CHECK(rc == t[i].end, "%s: end %d", t[i].file, rc);
        else
            CHECK(rc != DC_OK && rc != DC_ENOTFOUND, "%s: must fail, %d (%s)",
                  t[i].file, rc, types);
        if (t[i].verify_fail >= 0)
            CHECK(fails == t[i].verify_fail, "%s: %d digest failures",
                  t[i].file, fails);
        if (t[i].shared)
            CHECK(raw_refused == k && k > 0, "%s: shared member copy refused",
                  t[i].file);
        warc_reader_close(&r);
    }
}

/* -------------------------------------------------------------- SURT */

static void test_surt(void)
{
    static const struct {
        const char *url, *want;
    } t[] = {
        { "http://www.Example.com:80/a/B?z=1&a=2#frag",
          "com,example)/a/b?a=2&z=1" },
        { "https://example.com:443", "com,example)/" },
        { "https://example.com:8443/x", "com,example:8443)/x" },
        { "http://user:pw@a.b.example.org/", "org,example,b,a)/" },
        { "http://127.0.0.1:8080/p?", "127.0.0.1:8080)/p" },
        { "http://www2.example.com/", "com,example,www2)/" },
        { "dns:example.com", "dns:example.com" },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char out[256];
        size_t n = warc_surt(t[i].url, out, sizeof(out));
        CHECK(strcmp(out, t[i].want) == 0 && n == strlen(t[i].want),
              "surt %s: %s", t[i].url, out);
    }
}

int main(void)
{
    char tmpl[] = "/tmp/u-warc-XXXXXX", tmpl2[] = "/tmp/u-warc-bad-XXXXXX";
    char dir[256], rdir[300];
    const char *keep = getenv("DC_WARC_KEEP");
    char *tmp = mkdtemp(tmpl), *bad = mkdtemp(tmpl2);

    if (!tmp || !bad) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return t_done("u-warc");
    }
    snprintf(dir, sizeof(dir), "%s", keep && *keep ? keep : tmp);
    if (keep && *keep)
        warc_mkdirs(dir);
    snprintf(rdir, sizeof(rdir), "%s/rotate", dir);
    pages_init();
    test_base();
    test_iso_parse();
    test_json_str();
    test_json_parse();
    test_build_errors();
    test_write_read(dir);
    test_rotation(rdir);
    test_truncate(dir, bad);
    test_random(dir, bad);
    test_samples();
    test_surt();
    rm_rf(bad);
    rm_rf(tmp);
    return t_done("u-warc");
}
