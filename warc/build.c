/*
 * build.c: turning a fetched page into its WARC/1.1 records.
 *
 * warc_record_build() is reentrant (worker threads): it rewrites the
 * response head, computes the SHA-1 digests and deflates each record into
 * its own gzip member. The response record comes first (its offset is 0
 * within the built bytes), then the request record, which names the
 * response in WARC-Concurrent-To. The metadata record (warc__metadata_member)
 * is built later, on the writer's thread: its outlinks and noise counts are
 * known only after the page's links went through admission.
 *
 * Choices:
 * - WARC-Target-URI is final_url (the URL whose response is stored; after
 *   redirects it differs from the requested url), or url when final_url is
 *   unset. Both URLs go into the JSON line.
 * - resp_head may hold several header blocks (redirects, 100 Continue):
 *   only the last one is the final response and only it is stored. Header
 *   lines are re-emitted with CRLF; "Transfer-Encoding: ...chunked" is
 *   dropped and Content-Length set to the stored body's length.
 * - A truncated body (fetch.max_bytes) gets "WARC-Truncated: length".
 * - A content duplicate (dup_of_uri) gets a revisit record instead of the
 *   response: profile identical-payload-digest, block = the HTTP head only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "dedup.h"
#include "warc-internal.h"

/* Unused capacity a built page may keep (warc_record_build). */
#define BUILT_SLACK 4096

/* ------------------------------------------------ response head rewrite */

/* Next line of h[*pos..n): its start and length without CR/LF. */
static int next_line(const char *h, size_t n, size_t *pos, const char **line,
                     size_t *len)
{
    const char *nl;
    size_t l;

    if (*pos >= n)
        return 0;
    *line = h + *pos;
    nl = memchr(*line, '\n', n - *pos);
    l = nl ? (size_t)(nl - *line) : n - *pos;
    *pos += nl ? l + 1 : l;
    if (l > 0 && (*line)[l - 1] == '\r')
        l--;
    *len = l;
    return 1;
}

/* Start and end of the last non-empty header block in h. */
static void last_block(const char *h, size_t n, size_t *bs, size_t *be)
{
    size_t pos = 0, cur = 0, len;
    const char *line;
    int in_block = 0;

    *bs = *be = 0;
    while (1) {
        size_t before = pos;
        if (!next_line(h, n, &pos, &line, &len))
            break;
        if (len == 0) {
            if (in_block)
                *bs = cur, *be = before;
            in_block = 0;
        } else if (!in_block) {
            in_block = 1;
            cur = before;
        }
    }
    if (in_block)
        *bs = cur, *be = n;
}

static int name_is(const char *line, size_t len, const char *name)
{
    size_t nl = strlen(name);

    return len > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0;
}

static int has_chunked(const char *line, size_t len)
{
    for (size_t i = 0; i + 7 <= len; i++)
        if (strncasecmp(line + i, "chunked", 7) == 0)
            return 1;
    return 0;
}

/* The final response's header block, transfer coding removed. */
static void rewrite_head(const struct warc_page *p, struct warc_buf *o)
{
    size_t bs, be, pos, len;
    const char *line;
    int first = 1, dropping = 0, have_cl = 0;

    last_block(p->resp_head ? p->resp_head : "", p->resp_head_len, &bs, &be);
    if (be == bs)
        warc_buf_printf(o, "HTTP/1.1 %d \r\n", p->status);
    pos = bs;
    while (next_line(p->resp_head, be, &pos, &line, &len)) {
        if (first) {
            first = 0;
        } else if (line[0] == ' ' || line[0] == '\t') {
            if (dropping)
                continue;
        } else if (name_is(line, len, "transfer-encoding") &&
                   has_chunked(line, len)) {
            dropping = 1;
            continue;
        } else if (name_is(line, len, "content-length")) {
            dropping = 1;
            if (have_cl++)
                continue;
            warc_buf_printf(o, "Content-Length: %zu\r\n", p->body_len);
            continue;
        } else {
            dropping = 0;
        }
        warc_buf_add(o, line, len);
        warc_buf_str(o, "\r\n");
    }
    if (!have_cl)
        warc_buf_printf(o, "Content-Length: %zu\r\n", p->body_len);
    warc_buf_str(o, "\r\n");
}

/* ---------------------------------------------------------- the records */

static int build_records(const struct warc_page *p, int level,
                         struct warc_buf *out, struct warc_built *b)
{
    struct warc_buf head = { 0 };
    struct warc__rec_head r = { 0 };
    char date[40], odate[40], bdig[DEDUP_SHA1_STRLEN + 8];
    char rdig[DEDUP_SHA1_STRLEN + 8];
    char req_id[64];
    int rc;

    const int revisit = p->dup_of_uri && *p->dup_of_uri;
    const char *body = revisit ? NULL : p->body;
    size_t body_len = revisit ? 0 : p->body_len;

    rewrite_head(p, &head);
    warc_iso_time(p->fetched_ms, date, sizeof(date));
    warc__record_id(b->response_id, sizeof(b->response_id));
    if (revisit && p->payload_digest && *p->payload_digest)
        snprintf(b->digest, sizeof(b->digest), "%s", p->payload_digest);
    else
        dedup_sha1_base32(p->body ? p->body : "", p->body_len, b->digest);
    dedup_sha1_two(head.p, head.len, body ? body : "", body_len, bdig);
    r.type = revisit ? "revisit" : "response";
    r.id = b->response_id;
    r.date = date;
    r.uri = p->final_url && *p->final_url ? p->final_url : p->url;
    r.ip = p->ip;
    r.ctype = "application/http;msgtype=response";
    r.block_digest = bdig;
    r.payload_digest = b->digest;
    r.truncated = revisit ? 0 : p->truncated;
    if (revisit) {
        r.profile =
            "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
        warc_iso_time(p->dup_of_ms, odate, sizeof(odate));
        r.refers_uri = p->dup_of_uri;
        r.refers_date = odate;
    }
    r.len = head.len + body_len;
    b->response_off = out->len;
    rc = warc__rec_member(out, level, &r, head.p, head.len, body, body_len);
    b->response_len = out->len - b->response_off;
    free(head.p);
    if (rc || !p->request || !p->request_len)
        return rc;
    warc__record_id(req_id, sizeof(req_id));
    dedup_sha1_base32(p->request, p->request_len, rdig);
    r.type = "request";
    r.profile = r.refers_uri = r.refers_date = NULL;
    r.id = req_id;
    r.concurrent = b->response_id;
    r.ctype = "application/http;msgtype=request";
    r.block_digest = rdig;
    r.payload_digest = NULL;
    r.truncated = 0;
    r.len = p->request_len;
    return warc__rec_member(out, level, &r, p->request, p->request_len, NULL,
                            0);
}

int warc__metadata_member(struct warc_buf *out, int level,
                          const struct warc_page *p, const struct warc_built *b)
{
    struct warc_buf blk = { 0 };
    struct warc__rec_head r = { 0 };
    char id[64], date[40];

    for (size_t i = 0; i < p->noutlinks; i++)
        if (p->outlinks[i] && p->outlinks[i][0])
            warc__add_uri_field(&blk, "outlink", p->outlinks[i]);
    warc_buf_printf(&blk, "links-found: %zu\r\nlinks-new: %zu\r\n",
                    p->links_found, p->links_new);
    warc_buf_printf(&blk,
                    "noise-links-seen: %zu\r\n"
                    "noise-dropped-block: %zu\r\n"
                    "noise-dropped-cluster: %zu\r\n"
                    "noise-refused-budget: %zu\r\n",
                    p->noise_seen, p->noise_block, p->noise_cluster,
                    p->noise_budget);
    warc__record_id(id, sizeof(id));
    warc_iso_time(p->fetched_ms, date, sizeof(date));
    r.type = "metadata";
    r.id = id;
    r.date = date;
    r.uri = p->final_url && *p->final_url ? p->final_url : p->url;
    r.concurrent = b->response_id;
    r.refers_id = b->response_id;
    return warc__fields_member(out, level, &r, &blk);
}

int warc_record_build(const struct warc_page *p, int gzip_level,
                      struct warc_built *out)
{
    struct warc_buf data = { 0 };
    int rc;

    memset(out, 0, sizeof(*out));
    if (!p || !p->url || !*p->url)
        return DC_EINVAL;
    if (p->status == 0 || p->error || p->skipped)
        return DC_OK;
    rc = build_records(p, gzip_level, &data, out);
    if (rc) {
        free(data.p);
        memset(out, 0, sizeof(*out));
        return rc;
    }
    /* Each member's buffer grew by its compression bound (its input's
     * size and more) and doubling; the records compress to about a third
     * of that and wait for the writer with every page finished before
     * them (the 40 x 500 bench crawl's peak held 18 MB of such buffers),
     * so only what they use is kept. */
    if (data.len && data.cap - data.len >= BUILT_SLACK)
        data.p = xrealloc(data.p, data.len);
    out->data = (unsigned char *)data.p;
    out->len = data.len;
    return DC_OK;
}

void warc_built_release(struct warc_built *b)
{
    if (!b)
        return;
    free(b->data);
    memset(b, 0, sizeof(*b));
}

