/*
 * warc-write.c: turning a fetched page into WARC/1.1 records, and the
 * per-node, per-depth output files (WARC + JSON lines).
 *
 * merge_record_build() is reentrant (worker threads): it rewrites the
 * response head, computes the SHA-1 digests and deflates each record into
 * its own gzip member. The response record comes first (its offset is 0
 * within the built bytes), then the request record, which names the
 * response in WARC-Concurrent-To.
 *
 * Choices:
 * - WARC-Target-URI is final_url (the URL whose response is stored; after
 *   redirects it differs from the requested url), or url when final_url is
 *   unset. Both URLs go into the JSON line. Control characters, spaces and
 *   non-ASCII bytes in a URI are percent-encoded so a header line can never
 *   be broken by a URL.
 * - resp_head may hold several header blocks (redirects, 100 Continue):
 *   only the last one is the final response and only it is stored. Header
 *   lines are re-emitted with CRLF; "Transfer-Encoding: ...chunked" is
 *   dropped and Content-Length set to the stored body's length.
 * - WARC-Date has millisecond precision (fetched_ms), which WARC 1.1 allows.
 * - A truncated body (fetch.max_bytes) gets "WARC-Truncated: length".
 *
 * A struct merge_writer belongs to one thread. Files are created with
 * exclusive create ("x"), so two writers never share a file. Each append
 * writes and flushes the WARC bytes first, then the JSON line: a crash
 * leaves at most a torn last record (readers report it as truncated) or a
 * whole record without its line (an orphan merge_run ignores), never a line
 * whose bytes are missing.
 *
 * The JSON line gives the page's records as a byte range of the WARC file:
 * warc_offset (its response member) and warc_length (the response, request
 * and metadata members, contiguous), so merge_run copies them without
 * inflating. The metadata record is built in merge_writer_append (the
 * writer's thread): its outlinks and noise counts are known only after the
 * page's links went through admission.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <libdeflate.h>

#include "conf.h"
#include "dedup.h"
#include "merge-internal.h"

/* ------------------------------------------------------------ digests */

/* SHA-1 over two pieces (head + body) without joining them. */
static void sha1_two(const void *a, size_t alen, const void *b, size_t blen,
                     char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    if (!ctx) {
        fprintf(stderr, "dcrawl: out of memory (digest context)\n");
        abort();
    }
    EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
    EVP_DigestUpdate(ctx, a, alen);
    EVP_DigestUpdate(ctx, b, blen);
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    dedup_sha1_format(md, out);
}

/* ----------------------------------------------------- ids and times */

static void random_bytes(unsigned char *p, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < n) {
        /* no getrandom(2): the kernel's pool through the device file */
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(p + got, 1, n - got, f) != n - got) {
            fprintf(stderr, "dcrawl: no source of random bytes\n");
            abort();
        }
        fclose(f);
    }
}

void merge__record_id(char *out, size_t cap)
{
    unsigned char u[16];

    random_bytes(u, sizeof(u));
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, cap,
             "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x>",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
             u[10], u[11], u[12], u[13], u[14], u[15]);
}

void merge__iso_time(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;
    char tmp[96];
    int n;
    size_t k;

    if (!cap)
        return;
    gmtime_r(&secs, &tm);
    n = snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, frac);
    k = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    memcpy(out, tmp, k);
    out[k] = '\0';
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int num_field(const char **s, int digits, int *out)
{
    int v = 0;

    for (int i = 0; i < digits; i++) {
        if ((*s)[i] < '0' || (*s)[i] > '9')
            return -1;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += digits;
    *out = v;
    return 0;
}

int merge__parse_iso(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, se, frac = 0, scale = 1000;

    if (num_field(&s, 4, &y) || *s++ != '-' || num_field(&s, 2, &mo) ||
        *s++ != '-' || num_field(&s, 2, &d) || *s++ != 'T' ||
        num_field(&s, 2, &h) || *s++ != ':' || num_field(&s, 2, &mi) ||
        *s++ != ':' || num_field(&s, 2, &se))
        return DC_EPARSE;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return DC_EPARSE;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return DC_EPARSE;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (scale > 1) {
                scale /= 10;
                frac += (*s - '0') * scale;
            }
        }
    }
    if (s[0] != 'Z' || s[1] != '\0')
        return DC_EPARSE;
    *ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 +
          (int64_t)se * 1000 + frac;
    return DC_OK;
}

/* --------------------------------------------------------------- gzip */

/*
 * Each record is one gzip member, compressed in one call by libdeflate
 * (whole-buffer compression, about twice zlib's speed at the same level).
 * Compressors are expensive to set up, so each thread keeps one per level
 * plus a scratch buffer, freed when the thread exits (pthread key).
 */
#define GZ_IN_KEEP ((size_t)1 << 20) /* scratch kept between records */

struct gz_cache {
    struct libdeflate_compressor *c[10];
    unsigned char *in;
    size_t incap;
};

static pthread_key_t gz_key;
static pthread_once_t gz_once = PTHREAD_ONCE_INIT;

static void gz_cache_free(void *p)
{
    struct gz_cache *gc = p;
    for (int i = 0; i < 10; i++)
        libdeflate_free_compressor(gc->c[i]);
    free(gc->in);
    free(gc);
}

static void gz_key_init(void)
{
    pthread_key_create(&gz_key, gz_cache_free);
}

static struct gz_cache *gz_cache_get(void)
{
    struct gz_cache *gc;
    pthread_once(&gz_once, gz_key_init);
    gc = pthread_getspecific(gz_key);
    if (!gc) {
        gc = xcalloc(1, sizeof(*gc));
        pthread_setspecific(gz_key, gc);
    }
    return gc;
}

int merge__gzip_member(struct merge__buf *out, int level,
                       const struct merge__part *parts, size_t nparts)
{
    struct gz_cache *gc = gz_cache_get();
    size_t total = 0, off = 0, bound, n;

    if (level < 0 || level > 9)
        level = 6;
    if (!gc->c[level]) {
        gc->c[level] = libdeflate_alloc_compressor(level);
        if (!gc->c[level])
            return DC_ENOMEM;
    }
    for (size_t i = 0; i < nparts; i++)
        total += parts[i].len;
    if (total > gc->incap) {
        void *t = gc->in;
        xgrow(&t, &gc->incap, total, 1);
        gc->in = t;
    }
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].len)
            memcpy(gc->in + off, parts[i].data, parts[i].len);
        off += parts[i].len;
    }
    bound = libdeflate_gzip_compress_bound(gc->c[level], total);
    if (out->cap - out->len < bound) {
        void *t = out->p;
        xgrow(&t, &out->cap, out->len + bound, 1);
        out->p = t;
    }
    n = libdeflate_gzip_compress(gc->c[level], gc->in, total,
                                 (unsigned char *)out->p + out->len, bound);
    if (gc->incap > GZ_IN_KEEP) { /* a big page: do not hold its copy */
        free(gc->in);
        gc->in = NULL;
        gc->incap = 0;
    }
    if (!n)
        return DC_EIO;
    out->len += n;
    return DC_OK;
}

/* ------------------------------------------------------ record headers */

/* What goes into one WARC record's header block. */
struct rec_head {
    const char *type, *id, *date, *uri, *ip, *concurrent, *ctype;
    const char *filename, *block_digest, *payload_digest;
    const char *profile, *refers_uri, *refers_date; /* revisit */
    const char *refers_id;  /* WARC-Refers-To */
    int truncated;
    size_t len;
};

/* A URI safe for a header line: controls, space, DEL and non-ASCII bytes
 * percent-encoded. */
static void add_uri(struct merge__buf *h, const char *u)
{
    for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7f)
            merge__buf_printf(h, "%%%02X", *p);
        else
            merge__buf_add(h, p, 1);
    }
}

static int ip_ok(const char *ip)
{
    if (!ip || !*ip || strlen(ip) > 64)
        return 0;
    return strspn(ip, "0123456789abcdefABCDEF:.") == strlen(ip);
}

static void add_field(struct merge__buf *h, const char *name, const char *v)
{
    if (!v || !*v)
        return;
    merge__buf_printf(h, "%s: %s\r\n", name, v);
}

static void rec_head_write(struct merge__buf *h, const struct rec_head *r)
{
    merge__buf_str(h, "WARC/1.1\r\n");
    add_field(h, "WARC-Type", r->type);
    add_field(h, "WARC-Record-ID", r->id);
    add_field(h, "WARC-Date", r->date);
    if (r->uri && *r->uri) {
        merge__buf_str(h, "WARC-Target-URI: ");
        add_uri(h, r->uri);
        merge__buf_str(h, "\r\n");
    }
    add_field(h, "WARC-Filename", r->filename);
    if (ip_ok(r->ip))
        add_field(h, "WARC-IP-Address", r->ip);
    add_field(h, "WARC-Concurrent-To", r->concurrent);
    add_field(h, "WARC-Refers-To", r->refers_id);
    add_field(h, "WARC-Profile", r->profile);
    if (r->refers_uri && *r->refers_uri) {
        merge__buf_str(h, "WARC-Refers-To-Target-URI: ");
        add_uri(h, r->refers_uri);
        merge__buf_str(h, "\r\n");
    }
    add_field(h, "WARC-Refers-To-Date", r->refers_date);
    if (r->truncated)
        add_field(h, "WARC-Truncated", "length");
    add_field(h, "Content-Type", r->ctype);
    add_field(h, "WARC-Block-Digest", r->block_digest);
    add_field(h, "WARC-Payload-Digest", r->payload_digest);
    merge__buf_printf(h, "Content-Length: %zu\r\n\r\n", r->len);
}

/* One record as one gzip member: header, block (two pieces), CRLF CRLF. */
static int rec_member(struct merge__buf *out, int level,
                      const struct rec_head *r, const void *b1, size_t n1,
                      const void *b2, size_t n2)
{
    struct merge__buf h = { 0 };
    struct merge__part parts[4];
    int rc;

    rec_head_write(&h, r);
    parts[0] = (struct merge__part){ h.p, h.len };
    parts[1] = (struct merge__part){ b1, n1 };
    parts[2] = (struct merge__part){ b2, n2 };
    parts[3] = (struct merge__part){ "\r\n\r\n", 4 };
    rc = merge__gzip_member(out, level, parts, 4);
    free(h.p);
    return rc;
}

/* Header values from free text: one line, no control characters. */
static void add_text_field(struct merge__buf *b, const char *name,
                           const char *v)
{
    merge__buf_printf(b, "%s: ", name);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        unsigned char c = *p < 0x20 || *p == 0x7f ? ' ' : *p;
        merge__buf_add(b, &c, 1);
    }
    merge__buf_str(b, "\r\n");
}

/* Settings text, one warc-fields line per line of text: "name: value"
 * lines are kept as fields, other lines become "settings: <line>". */
static int token(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return n > 0;
}

static void add_settings(struct merge__buf *b, const char *text)
{
    const char *p = text;

    while (*p) {
        size_t n = strcspn(p, "\r\n"), name = strcspn(p, ": \t\r\n");
        char *line = xstrndup(p, n);
        if (name < n && p[name] == ':' && token(p, name)) {
            line[name] = '\0';
            add_text_field(b, line, line + name + 1 + strspn(line + name + 1,
                                                           " \t"));
        } else if (n) {
            add_text_field(b, "settings", line);
        }
        free(line);
        p += n;
        p += strspn(p, "\r\n");
    }
}

int merge__warcinfo(struct merge__buf *out, const char *filename,
                    const char *software, const char *settings, int level)
{
    struct merge__buf blk = { 0 };
    struct rec_head r = { 0 };
    char id[64], date[40], digest[DEDUP_SHA1_STRLEN + 8];
    int rc;

    add_text_field(&blk, "software", software && *software ? software
                                                            : "dcrawl");
    add_text_field(&blk, "format", "WARC File Format 1.1");
    add_text_field(&blk, "conformsTo",
                   "https://iipc.github.io/warc-specifications/"
                   "specifications/warc-format/warc-1.1/");
    if (settings)
        add_settings(&blk, settings);
    merge__record_id(id, sizeof(id));
    merge__iso_time(dc_now_ms(), date, sizeof(date));
    dedup_sha1_base32(blk.p, blk.len, digest);
    r.type = "warcinfo";
    r.id = id;
    r.date = date;
    r.filename = filename;
    r.ctype = "application/warc-fields";
    r.block_digest = digest;
    r.len = blk.len;
    rc = rec_member(out, level, &r, blk.p, blk.len, NULL, 0);
    free(blk.p);
    return rc;
}

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
static void rewrite_head(const struct merge_page *p, struct merge__buf *o)
{
    size_t bs, be, pos, len;
    const char *line;
    int first = 1, dropping = 0, have_cl = 0;

    last_block(p->resp_head ? p->resp_head : "", p->resp_head_len, &bs, &be);
    if (be == bs)
        merge__buf_printf(o, "HTTP/1.1 %d \r\n", p->status);
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
            merge__buf_printf(o, "Content-Length: %zu\r\n", p->body_len);
            continue;
        } else {
            dropping = 0;
        }
        merge__buf_add(o, line, len);
        merge__buf_str(o, "\r\n");
    }
    if (!have_cl)
        merge__buf_printf(o, "Content-Length: %zu\r\n", p->body_len);
    merge__buf_str(o, "\r\n");
}

/* ---------------------------------------------------------- the records */

static int build_records(const struct merge_page *p, int level,
                         struct merge__buf *out, struct merge_built *b)
{
    struct merge__buf head = { 0 };
    struct rec_head r = { 0 };
    char date[40], odate[40], bdig[DEDUP_SHA1_STRLEN + 8];
    char rdig[DEDUP_SHA1_STRLEN + 8];
    char req_id[64];
    int rc;

    const int revisit = p->dup_of_uri && *p->dup_of_uri;
    const char *body = revisit ? NULL : p->body;
    size_t body_len = revisit ? 0 : p->body_len;

    rewrite_head(p, &head);
    merge__iso_time(p->fetched_ms, date, sizeof(date));
    merge__record_id(b->response_id, sizeof(b->response_id));
    dedup_sha1_base32(p->body ? p->body : "", p->body_len, b->digest);
    sha1_two(head.p, head.len, body ? body : "", body_len, bdig);
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
        r.profile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
        merge__iso_time(p->dup_of_ms, odate, sizeof(odate));
        r.refers_uri = p->dup_of_uri;
        r.refers_date = odate;
    }
    r.len = head.len + body_len;
    b->response_off = out->len;
    rc = rec_member(out, level, &r, head.p, head.len, body, body_len);
    b->response_len = out->len - b->response_off;
    free(head.p);
    if (rc || !p->request || !p->request_len)
        return rc;
    merge__record_id(req_id, sizeof(req_id));
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
    return rec_member(out, level, &r, p->request, p->request_len, NULL, 0);
}

int merge__revisit_member(struct merge__buf *out, int level,
                          const struct merge__revisit *v)
{
    struct rec_head r = { 0 };
    char bdig[DEDUP_SHA1_STRLEN + 8];

    dedup_sha1_base32(v->head, v->head_len, bdig);
    r.type = "revisit";
    r.id = v->id;
    r.date = v->date;
    r.uri = v->uri;
    r.ip = v->ip;
    r.ctype = "application/http;msgtype=response";
    r.block_digest = bdig;
    r.payload_digest = v->payload_digest;
    r.profile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
    r.refers_uri = v->refers_uri;
    r.refers_date = v->refers_date;
    r.refers_id = v->refers_id;
    r.len = v->head_len;
    return rec_member(out, level, &r, v->head, v->head_len, NULL, 0);
}

int merge__record_member(struct merge__buf *out, int level,
                         const void *head, size_t head_len,
                         const void *block, size_t block_len)
{
    struct merge__part parts[3];

    parts[0] = (struct merge__part){ head, head_len };
    parts[1] = (struct merge__part){ block, block_len };
    parts[2] = (struct merge__part){ "\r\n\r\n", 4 };
    return merge__gzip_member(out, level, parts, 3);
}

/* The metadata record of a page whose response is b->response_id. */
static void meta_field_uri(struct merge__buf *blk, const char *name,
                           const char *u)
{
    merge__buf_printf(blk, "%s: ", name);
    add_uri(blk, u);
    merge__buf_str(blk, "\r\n");
}

static int metadata_member(struct merge__buf *out, int level,
                           const struct merge_page *p,
                           const struct merge_built *b)
{
    struct merge__buf blk = { 0 };
    struct rec_head r = { 0 };
    char id[64], date[40], dig[DEDUP_SHA1_STRLEN + 8];
    int rc;

    for (size_t i = 0; i < p->noutlinks; i++)
        if (p->outlinks[i] && p->outlinks[i][0])
            meta_field_uri(&blk, "outlink", p->outlinks[i]);
    merge__buf_printf(&blk, "links-found: %zu\r\nlinks-new: %zu\r\n",
                      p->links_found, p->links_new);
    merge__buf_printf(&blk, "noise-links-seen: %zu\r\n"
                      "noise-dropped-block: %zu\r\n"
                      "noise-dropped-cluster: %zu\r\n"
                      "noise-refused-budget: %zu\r\n",
                      p->noise_seen, p->noise_block, p->noise_cluster,
                      p->noise_budget);
    merge__record_id(id, sizeof(id));
    merge__iso_time(p->fetched_ms, date, sizeof(date));
    dedup_sha1_base32(blk.p, blk.len, dig);
    r.type = "metadata";
    r.id = id;
    r.date = date;
    r.uri = p->final_url && *p->final_url ? p->final_url : p->url;
    r.concurrent = b->response_id;
    r.refers_id = b->response_id;
    r.ctype = "application/warc-fields";
    r.block_digest = dig;
    r.len = blk.len;
    rc = rec_member(out, level, &r, blk.p, blk.len, NULL, 0);
    free(blk.p);
    return rc;
}

int merge_record_build(const struct merge_page *p, int gzip_level,
                       struct merge_built *out)
{
    struct merge__buf data = { 0 };
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
    out->data = (unsigned char *)data.p;
    out->len = data.len;
    return DC_OK;
}

void merge_built_release(struct merge_built *b)
{
    if (!b)
        return;
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------- writer */

struct merge_writer {
    char *dir;          /* DIR */
    int depth;
    char *node;
    char *software, *settings;
    int64_t max_bytes;
    int level;
    FILE *warc, *jsonl;
    char rel[PATH_MAX]; /* "depth-D/NODE-SSSSS.warc.gz" */
    int64_t pos;        /* bytes in the current WARC file */
    int next_seq;
    int err;            /* first write error */
};

/* mkdir -p. */
int merge__mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof(tmp))
        return DC_EINVAL;
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0')
            continue;
        tmp[i] = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return DC_EIO;
        tmp[i] = path[i];
    }
    return DC_OK;
}

int merge_writer_open(struct merge_writer **w, const char *dir, int depth,
                      const char *node_id, const struct merge_writer_opts *o)
{
    char sub[PATH_MAX];
    struct merge_writer *x;
    int rc;

    *w = NULL;
    if (!dir || !*dir || depth < 0 || !node_id || !*node_id ||
        strchr(node_id, '/') || node_id[0] == '.' ||
        strlen(node_id) > 200 || !o)
        return DC_EINVAL;
    if ((size_t)snprintf(sub, sizeof(sub), "%s/depth-%d", dir, depth) >=
        sizeof(sub) - 64)
        return DC_EINVAL;
    rc = merge__mkdirs(sub);
    if (rc)
        return rc;
    x = xcalloc(1, sizeof(*x));
    x->dir = xstrdup(dir);
    x->depth = depth;
    x->node = xstrdup(node_id);
    x->software = xstrdup(o->software ? o->software : "dcrawl");
    x->settings = xstrdup(o->settings ? o->settings : "");
    x->max_bytes = o->max_bytes;
    x->level = o->gzip_level;
    *w = x;
    return DC_OK;
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 || errno != ENOENT;
}

/* Create the pair for sequence number seq; 1 if taken, <0 on error. */
static int try_seq(struct merge_writer *w, int seq)
{
    char wp[PATH_MAX], jp[PATH_MAX];
    int n1, n2, n3;

    n1 = snprintf(w->rel, sizeof(w->rel), "depth-%d/%s-%05d.warc.gz",
                  w->depth, w->node, seq);
    n2 = snprintf(wp, sizeof(wp), "%s/%s", w->dir, w->rel);
    n3 = snprintf(jp, sizeof(jp), "%s/depth-%d/%s-%05d.jsonl", w->dir,
                  w->depth, w->node, seq);
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= sizeof(w->rel) ||
        (size_t)n2 >= sizeof(wp) || (size_t)n3 >= sizeof(jp))
        return -1;
    if (file_exists(wp) || file_exists(jp))
        return 1;
    w->warc = fopen(wp, "wbx");
    if (!w->warc)
        return errno == EEXIST ? 1 : -1;
    w->jsonl = fopen(jp, "wx");
    if (!w->jsonl) {
        int e = errno;
        fclose(w->warc);
        w->warc = NULL;
        unlink(wp);
        return e == EEXIST ? 1 : -1;
    }
    return 0;
}

static int write_all(struct merge_writer *w, FILE *f, const void *d, size_t n)
{
    if (n && fwrite(d, 1, n, f) != n) {
        if (!w->err)
            w->err = DC_EIO;
        return DC_EIO;
    }
    return DC_OK;
}

static int files_open(struct merge_writer *w)
{
    struct merge__buf info = { 0 };
    const char *base;
    int rc, seq;

    for (seq = w->next_seq; seq < 10000000; seq++) {
        rc = try_seq(w, seq);
        if (rc < 0)
            return w->err = DC_EIO;
        if (rc == 0)
            break;
    }
    if (!w->warc)
        return w->err = DC_EIO;
    w->next_seq = seq + 1;
    w->pos = 0;
    base = strrchr(w->rel, '/') + 1;
    rc = merge__warcinfo(&info, base, w->software, w->settings, w->level);
    if (rc == DC_OK)
        rc = write_all(w, w->warc, info.p, info.len);
    w->pos += (int64_t)info.len;
    free(info.p);
    return rc;
}

static int files_close(struct merge_writer *w)
{
    int rc = DC_OK;

    if (w->warc && fclose(w->warc) != 0)
        rc = DC_EIO;
    if (w->jsonl && fclose(w->jsonl) != 0)
        rc = DC_EIO;
    w->warc = w->jsonl = NULL;
    if (rc && !w->err)
        w->err = rc;
    return rc;
}

static void json_key(struct merge__buf *j, const char *key)
{
    merge__buf_printf(j, "%s\"%s\":", j->len > 1 ? "," : "", key);
}

static void json_strval(struct merge__buf *j, const char *key, const char *v)
{
    json_key(j, key);
    if (v)
        merge_json_str(&j->p, &j->len, &j->cap, v);
    else
        merge__buf_str(j, "null");
}

static void page_json(struct merge__buf *j, const struct merge_page *p,
                      const struct merge_built *b, const char *node,
                      const char *warc_file, int64_t off, size_t meta_len)
{
    char at[40];
    int rec = b && b->len > 0;

    merge__iso_time(p->fetched_ms, at, sizeof(at));
    merge__buf_str(j, "{");
    json_strval(j, "url", p->url);
    json_strval(j, "final_url", p->final_url ? p->final_url : p->url);
    json_key(j, "depth");
    merge__buf_printf(j, "%d", p->depth);
    json_key(j, "status");
    merge__buf_printf(j, "%d", p->status);
    json_strval(j, "content_type", p->content_type);
    json_key(j, "length");
    merge__buf_printf(j, "%zu", p->body_len);
    json_key(j, "decoded_length");
    merge__buf_printf(j, "%zu", p->decoded_len);
    json_strval(j, "digest", rec ? b->digest : NULL);
    json_strval(j, "fetched_at", at);
    json_strval(j, "node", node);
    json_key(j, "links_found");
    merge__buf_printf(j, "%zu", p->links_found);
    json_key(j, "links_new");
    merge__buf_printf(j, "%zu", p->links_new);
    json_key(j, "noise_seen");
    merge__buf_printf(j, "%zu", p->noise_seen);
    json_key(j, "noise_dropped_block");
    merge__buf_printf(j, "%zu", p->noise_block);
    json_key(j, "noise_dropped_cluster");
    merge__buf_printf(j, "%zu", p->noise_cluster);
    json_key(j, "noise_refused_budget");
    merge__buf_printf(j, "%zu", p->noise_budget);
    json_strval(j, "ip", p->ip);
    json_strval(j, "error", p->error);
    json_strval(j, "skipped", p->skipped);
    json_strval(j, "duplicate_of", p->dup_of_uri);
    json_key(j, "truncated");
    merge__buf_str(j, p->truncated ? "true" : "false");
    json_strval(j, "redirect_to", p->redirect_to);
    json_strval(j, "canonical", p->canonical);
    json_strval(j, "refresh", p->refresh);
    json_key(j, "noindex");
    merge__buf_str(j, p->noindex ? "true" : "false");
    json_strval(j, "warc_file", warc_file);
    json_key(j, "warc_offset");
    if (rec)
        merge__buf_printf(j, "%lld", (long long)off);
    else
        merge__buf_str(j, "null");
    /* contiguous: response, request, then the metadata record */
    json_key(j, "warc_length");
    if (rec)
        merge__buf_printf(j, "%zu", b->len - b->response_off + meta_len);
    else
        merge__buf_str(j, "null");
    json_key(j, "warc_response_length");
    if (rec)
        merge__buf_printf(j, "%zu", b->response_len);
    else
        merge__buf_str(j, "null");
    json_strval(j, "warc_record_id", rec ? b->response_id : NULL);
    json_key(j, "outlinks");
    merge__buf_str(j, "[");
    for (size_t i = 0; i < p->noutlinks; i++) {
        if (i)
            merge__buf_str(j, ",");
        merge_json_str(&j->p, &j->len, &j->cap,
                       p->outlinks[i] ? p->outlinks[i] : "");
    }
    merge__buf_str(j, "]}\n");
}

static int append_page(struct merge_writer *w, const struct merge_page *p,
                       const struct merge_built *b, const char *node_id)
{
    struct merge__buf j = { 0 }, meta = { 0 };
    int64_t off = w->pos + (int64_t)(b ? b->response_off : 0);
    int rc = DC_OK;

    if (b && b->len && b->response_id[0])
        rc = metadata_member(&meta, w->level, p, b);
    if (rc)
        return rc;

    /*
     * Order matters for crash safety: the WARC bytes reach the file (fflush)
     * before the JSON line that points at them is written. Killed between
     * the two, the file holds an orphan record without a line (merge skips
     * it); the other order could leave a line whose warc_offset/warc_length
     * range is not on disk.
     */
    if (b && b->len) {
        rc = write_all(w, w->warc, b->data, b->len);
        w->pos += (int64_t)b->len;
    }
    if (rc == DC_OK && meta.len) {
        rc = write_all(w, w->warc, meta.p, meta.len);
        w->pos += (int64_t)meta.len;
    }
    if (rc == DC_OK && fflush(w->warc) != 0)
        rc = w->err = DC_EIO;
    if (rc) {
        free(meta.p);
        return rc;
    }
    page_json(&j, p, b, node_id ? node_id : w->node, w->rel, off, meta.len);
    free(meta.p);
    rc = write_all(w, w->jsonl, j.p, j.len);
    free(j.p);
    if (rc == DC_OK && fflush(w->jsonl) != 0)
        rc = w->err = DC_EIO;
    return rc;
}

int merge_writer_append(struct merge_writer *w, const struct merge_page *p,
                        const struct merge_built *b, const char *node_id)
{
    int rc;

    if (!w || !p || !p->url)
        return DC_EINVAL;
    if (w->err)
        return w->err;
    if (!w->warc) {
        rc = files_open(w);
        if (rc)
            return rc;
    }
    rc = append_page(w, p, b, node_id);
    if (rc)
        return rc;
    if (w->max_bytes > 0 && w->pos >= w->max_bytes)
        rc = files_close(w);
    return rc;
}

int merge_writer_close(struct merge_writer **w)
{
    struct merge_writer *x;
    int rc;

    if (!w || !*w)
        return DC_OK;
    x = *w;
    files_close(x);
    rc = x->err;
    free(x->dir);
    free(x->node);
    free(x->software);
    free(x->settings);
    free(x);
    *w = NULL;
    return rc;
}
