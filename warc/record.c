/*
 * record.c: the pieces every WARC record is made of: random record ids,
 * ISO 8601 time stamps, one gzip member per record (libdeflate, a
 * compressor cache per thread), the record header block, and the single
 * records that need no page: warcinfo (first record of each file), a
 * revisit built by merge, and a foreign record recompressed on its own.
 *
 * Choices:
 * - WARC-Date has millisecond precision, which WARC 1.1 allows.
 * - Control characters, spaces and non-ASCII bytes in a URI are
 *   percent-encoded so a header line can never be broken by a URL.
 * - Header fields with an empty value are left out.
 * Everything here is reentrant.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

#include "conf.h"
#include "dedup.h"
#include "warc-internal.h"

/* ----------------------------------------------------- ids and times */

static void random_fill(unsigned char *p, size_t n)
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

/* The kernel's random bytes, taken RANDOM_POOL at a time per thread (a
 * page's three record ids cost one getrandom call in 16 pages, not three
 * calls). Bytes are used once and wiped. */
#define RANDOM_POOL 768
static _Thread_local unsigned char pool[RANDOM_POOL];
static _Thread_local size_t pool_left;

static void random_bytes(unsigned char *p, size_t n)
{
    while (n > 0) {
        size_t k;
        if (pool_left == 0) {
            random_fill(pool, sizeof(pool));
            pool_left = sizeof(pool);
        }
        k = n < pool_left ? n : pool_left;
        memcpy(p, pool + sizeof(pool) - pool_left, k);
        memset(pool + sizeof(pool) - pool_left, 0, k);
        pool_left -= k;
        p += k;
        n -= k;
    }
}

void warc__record_id(char *out, size_t cap)
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

void warc_iso_time(int64_t ms, char *out, size_t cap)
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

int warc_parse_iso(const char *s, int64_t *ms)
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
 * Each record is one gzip member, compressed in one call. Level 1 (the
 * default output.gzip_level) is ISA-L's igzip level 1 (isal_deflate_
 * stateless): bench/gzip_bench measured it at 1.31-1.32 times libdeflate
 * level 1's speed on real documentation HTML, for output 6-7 % larger
 * (Python docs, 50.7 MB: 8.93 against 8.33 MB; PostgreSQL docs, 16.1 MB:
 * 4.68 against 4.42 MB), and 2.1 times on the bench site's generated
 * text, which compresses less (0.394 against 0.380). Levels 2-9 (smaller
 * archives for more CPU) and a member igzip cannot fit in its output
 * bound are libdeflate's (whole-buffer compression, about twice zlib's
 * speed at the same level).
 * Level 0 stores. Compressor state is expensive to set up, so each thread
 * keeps its own (igzip's stream and level buffer, a libdeflate compressor
 * per level) plus a scratch buffer, freed when the thread exits (pthread
 * key).
 */
#define GZ_IN_KEEP ((size_t)1 << 20) /* scratch kept between records */

struct gz_cache {
    struct libdeflate_compressor *c[10];
    struct isal_zstream *z;     /* igzip level 1 */
    unsigned char *zbuf;        /* its level buffer */
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
    free(gc->z);
    free(gc->zbuf);
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

/* gc->in[0..total) as one gzip member by igzip level 1 into out (room
 * for cap bytes); its length, or 0 when it did not fit (the caller then
 * uses libdeflate). */
static size_t igzip1(struct gz_cache *gc, size_t total, unsigned char *out,
                     size_t cap)
{
    struct isal_zstream *z;

    if (total > UINT32_MAX || cap > UINT32_MAX)
        return 0;
    if (!gc->z) {
        gc->z = xmalloc(sizeof(*gc->z));
        gc->zbuf = xmalloc(ISAL_DEF_LVL1_DEFAULT);
    }
    z = gc->z;
    isal_deflate_stateless_init(z);
    z->level = 1;
    z->level_buf = gc->zbuf;
    z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    z->gzip_flag = IGZIP_GZIP;
    z->end_of_stream = 1;
    z->flush = NO_FLUSH;
    z->next_in = gc->in;
    z->avail_in = (uint32_t)total;
    z->next_out = out;
    z->avail_out = (uint32_t)cap;
    if (isal_deflate_stateless(z) != COMP_OK || z->avail_in)
        return 0;
    return z->total_out;
}

int warc__gzip_member(struct warc_buf *out, int level,
                      const struct warc__part *parts, size_t nparts)
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
    n = level == 1 ? igzip1(gc, total, (unsigned char *)out->p + out->len,
                            bound)
                   : 0;
    if (!n)
        n = libdeflate_gzip_compress(gc->c[level], gc->in, total,
                                     (unsigned char *)out->p + out->len,
                                     bound);
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

/* "name: URI" with the URI made safe for a header line: controls, space,
 * DEL and non-ASCII bytes percent-encoded. Nothing for an empty URI. */
void warc__add_uri_field(struct warc_buf *h, const char *name, const char *u)
{
    if (!u || !*u)
        return;
    warc_buf_printf(h, "%s: ", name);
    for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7f)
            warc_buf_printf(h, "%%%02X", *p);
        else
            warc_buf_add(h, p, 1);
    }
    warc_buf_str(h, "\r\n");
}

static int ip_ok(const char *ip)
{
    if (!ip || !*ip || strlen(ip) > 64)
        return 0;
    return strspn(ip, "0123456789abcdefABCDEF:.") == strlen(ip);
}

static void add_field(struct warc_buf *h, const char *name, const char *v)
{
    if (!v || !*v)
        return;
    warc_buf_printf(h, "%s: %s\r\n", name, v);
}

static void rec_head_write(struct warc_buf *h, const struct warc__rec_head *r)
{
    warc_buf_str(h, "WARC/1.1\r\n");
    add_field(h, "WARC-Type", r->type);
    add_field(h, "WARC-Record-ID", r->id);
    add_field(h, "WARC-Date", r->date);
    warc__add_uri_field(h, "WARC-Target-URI", r->uri);
    add_field(h, "WARC-Filename", r->filename);
    if (ip_ok(r->ip))
        add_field(h, "WARC-IP-Address", r->ip);
    add_field(h, "WARC-Concurrent-To", r->concurrent);
    add_field(h, "WARC-Refers-To", r->refers_id);
    add_field(h, "WARC-Profile", r->profile);
    warc__add_uri_field(h, "WARC-Refers-To-Target-URI", r->refers_uri);
    add_field(h, "WARC-Refers-To-Date", r->refers_date);
    if (r->truncated)
        add_field(h, "WARC-Truncated", "length");
    add_field(h, "Content-Type", r->ctype);
    add_field(h, "WARC-Block-Digest", r->block_digest);
    add_field(h, "WARC-Payload-Digest", r->payload_digest);
    warc_buf_printf(h, "Content-Length: %zu\r\n\r\n", r->len);
}

/* One record as one gzip member: header, block (two pieces), CRLF CRLF. */
int warc__rec_member(struct warc_buf *out, int level,
                     const struct warc__rec_head *r, const void *b1, size_t n1,
                     const void *b2, size_t n2)
{
    struct warc_buf h = { 0 };
    struct warc__part parts[4];
    int rc;

    rec_head_write(&h, r);
    parts[0] = (struct warc__part){ h.p, h.len };
    parts[1] = (struct warc__part){ b1, n1 };
    parts[2] = (struct warc__part){ b2, n2 };
    parts[3] = (struct warc__part){ "\r\n\r\n", 4 };
    rc = warc__gzip_member(out, level, parts, 4);
    free(h.p);
    return rc;
}

/* Header values from free text: one line, no control characters. */
static void add_text_field(struct warc_buf *b, const char *name, const char *v)
{
    warc_buf_printf(b, "%s: ", name);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        unsigned char c = *p < 0x20 || *p == 0x7f ? ' ' : *p;
        warc_buf_add(b, &c, 1);
    }
    warc_buf_str(b, "\r\n");
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

static void add_settings(struct warc_buf *b, const char *text)
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

int warc__fields_member(struct warc_buf *out, int level,
                        struct warc__rec_head *r, struct warc_buf *blk)
{
    char dig[DEDUP_SHA1_STRLEN + 8];
    int rc;

    dedup_sha1_base32(blk->p ? blk->p : "", blk->len, dig);
    r->ctype = "application/warc-fields";
    r->block_digest = dig;
    r->len = blk->len;
    rc = warc__rec_member(out, level, r, blk->p, blk->len, NULL, 0);
    free(blk->p);
    memset(blk, 0, sizeof(*blk));
    return rc;
}

int warc_warcinfo(struct warc_buf *out, const char *filename,
                  const char *software, const char *settings, int level)
{
    struct warc_buf blk = { 0 };
    struct warc__rec_head r = { 0 };
    char id[64], date[40];

    add_text_field(&blk, "software", software && *software ? software
                                                            : "dcrawl");
    add_text_field(&blk, "format", "WARC File Format 1.1");
    add_text_field(&blk, "conformsTo",
                   "https://iipc.github.io/warc-specifications/"
                   "specifications/warc-format/warc-1.1/");
    if (settings)
        add_settings(&blk, settings);
    warc__record_id(id, sizeof(id));
    warc_iso_time(dc_now_ms(), date, sizeof(date));
    r.type = "warcinfo";
    r.id = id;
    r.date = date;
    r.filename = filename;
    return warc__fields_member(out, level, &r, &blk);
}

int warc_revisit_member(struct warc_buf *out, int level,
                        const struct warc_revisit *v)
{
    struct warc__rec_head r = { 0 };
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
    r.profile =
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
    r.refers_uri = v->refers_uri;
    r.refers_date = v->refers_date;
    r.refers_id = v->refers_id;
    r.len = v->head_len;
    return warc__rec_member(out, level, &r, v->head, v->head_len, NULL, 0);
}

int warc_record_member(struct warc_buf *out, int level, const void *head,
                       size_t head_len, const void *block, size_t block_len)
{
    struct warc__part parts[3];

    parts[0] = (struct warc__part){ head, head_len };
    parts[1] = (struct warc__part){ block, block_len };
    parts[2] = (struct warc__part){ "\r\n\r\n", 4 };
    return warc__gzip_member(out, level, parts, 3);
}

