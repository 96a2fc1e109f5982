/*
 * reader.c: reading WARC files record by record, and checking digests.
 *
 * Input is hostile: any file may be torn, corrupt or crafted. The reader
 * keeps a window of decompressed bytes (buf[pos..len)) and never holds more
 * than one record plus one gzip member's worth of data: a header block is
 * capped at WARC_HEADER_MAX, a record block at WARC_RECORD_MAX, and so is
 * what a single gzip member may inflate to (a "zip bomb" gives DC_ETOOBIG).
 *
 * Compressed files (.warc.gz, detected by the gzip magic) are inflated one
 * whole member at a time; for every member we remember its compressed range
 * (from zlib's total_in at Z_STREAM_END) and the range of decompressed bytes
 * it produced. A record is usually exactly one member (what this crawler
 * and most tools write) and then its offset and member_len describe that
 * member, which warc_reader_copy_raw() can copy unchanged. Foreign files
 * may put several records in one member, or split a record across members:
 * those records are still read, with offset/member_len of the member where
 * the record starts, but copy_raw refuses them (DC_EINVAL). Plain .warc
 * files are read the same way without inflating; offset and member_len then
 * give the record's raw byte range.
 *
 * Results: DC_ENOTFOUND at the clean end; DC_ETRUNCATED when the data ends
 * inside a record (or the record's gzip member is cut short); DC_EPARSE for
 * bytes that are not WARC or not gzip; DC_ETOOBIG past the limits. After
 * any of these the reader stays stopped and returns the same code.
 *
 * Leniency (as other readers): blank lines between records are skipped,
 * header lines may end in LF alone, a missing CRLF CRLF after a block is
 * accepted, and a WARC-Target-URI wrapped in <...> (a known wget bug) is
 * unwrapped.
 *
 * A struct warc_reader belongs to one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "conf.h"
#include "warc-internal.h"

#define IN_CHUNK 65536
#define WINDOW_MAX (WARC_HEADER_MAX + WARC_RECORD_MAX + 64)

struct member {
    uint64_t comp_start, comp_end;   /* compressed byte range in the file */
    uint64_t plain_start, plain_end; /* decompressed byte range */
    int torn;                        /* no end of stream before EOF */
};

struct warc_reader {
    int fd;
    int gz;
    z_stream zs;
    int zinit;
    unsigned char in[IN_CHUNK];
    uint64_t in_read;        /* bytes read from the file so far */
    unsigned char *buf;      /* decompressed window */
    size_t len, pos, cap;
    uint64_t base;           /* decompressed offset of buf[0] */
    struct member *mem;      /* members overlapping the window */
    size_t nmem, capmem;
    int done;                /* no more input */
    int torn;                /* the last member has no end */
    int stop;                /* sticky error code, 0 while reading */
    int have_rec, raw_ok;
    size_t next_pos;         /* window position after the current record */
    uint64_t rec_off, rec_len;
    char *fields[6];         /* the current record's owned strings */
};

/* ---------------------------------------------------------- low level */

static int read_in(struct warc_reader *r, void *dst, size_t cap, size_t *got)
{
    ssize_t n;

    *got = 0;
    do {
        n = read(r->fd, dst, cap);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return DC_EIO;
    *got = (size_t)n;
    r->in_read += (uint64_t)n;
    return DC_OK;
}

/* Drop consumed bytes from the window and members behind it. */
static void compact(struct warc_reader *r)
{
    size_t keep = 0;

    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->base += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    for (size_t i = 0; i < r->nmem; i++)
        if (r->mem[i].plain_end > r->base || r->mem[i].torn)
            r->mem[keep++] = r->mem[i];
    r->nmem = keep;
}

static int room(struct warc_reader *r, size_t want)
{
    void *t = r->buf;

    if (r->len - r->pos + want > WINDOW_MAX)
        return DC_ETOOBIG;
    if (r->len + want > r->cap) {
        xgrow(&t, &r->cap, r->len + want, 1);
        r->buf = t;
    }
    return DC_OK;
}

static void add_member(struct warc_reader *r, const struct member *m)
{
    if (r->nmem == r->capmem) {
        void *t = r->mem;
        xgrow(&t, &r->capmem, r->nmem + 1, sizeof(*r->mem));
        r->mem = t;
    }
    r->mem[r->nmem++] = *m;
}

/* Plain file: append the next chunk of the file to the window. */
static int load_plain(struct warc_reader *r)
{
    size_t got;
    int rc = room(r, IN_CHUNK);

    if (rc)
        return rc;
    rc = read_in(r, r->buf + r->len, IN_CHUNK, &got);
    if (rc)
        return rc;
    r->len += got;
    if (got == 0)
        r->done = 1;
    return DC_OK;
}

/* Feed more compressed input; 0 bytes means end of file. */
static int gz_feed(struct warc_reader *r, size_t *got)
{
    int rc = read_in(r, r->in, sizeof(r->in), got);

    r->zs.next_in = r->in;
    r->zs.avail_in = (uInt)*got;
    return rc;
}

/* Inflate one whole gzip member into the window. */
static int load_gz(struct warc_reader *r)
{
    struct member m = { 0 };
    size_t got = 0;
    int zr, rc;

    m.comp_start = r->in_read - r->zs.avail_in;
    m.plain_start = r->base + r->len;
    for (;;) {
        if (r->zs.avail_in == 0) {
            rc = gz_feed(r, &got);
            if (rc)
                return rc;
            if (got == 0) {
                r->done = 1;
                if (r->in_read == m.comp_start)
                    return DC_OK; /* clean end between members */
                m.torn = r->torn = 1;
                m.comp_end = r->in_read;
                m.plain_end = r->base + r->len;
                add_member(r, &m);
                return DC_OK;
            }
        }
        rc = room(r, IN_CHUNK);
        if (rc)
            return rc;
        r->zs.next_out = r->buf + r->len;
        r->zs.avail_out = IN_CHUNK;
        zr = inflate(&r->zs, Z_NO_FLUSH);
        r->len += IN_CHUNK - r->zs.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return zr == Z_MEM_ERROR ? DC_ENOMEM : DC_EPARSE;
    }
    m.comp_end = r->in_read - r->zs.avail_in;
    m.plain_end = r->base + r->len;
    add_member(r, &m);
    inflateReset(&r->zs);
    return DC_OK;
}

static int load_more(struct warc_reader *r)
{
    compact(r);
    return r->gz ? load_gz(r) : load_plain(r);
}

/* ---------------------------------------------------------- open/close */

int warc_reader_open(struct warc_reader **rp, const char *path)
{
    struct warc_reader *r;
    unsigned char magic[2];
    ssize_t n;

    *rp = NULL;
    if (!path)
        return DC_EINVAL;
    r = xcalloc(1, sizeof(*r));
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        free(r);
        return errno == ENOENT ? DC_ENOTFOUND : DC_EIO;
    }
    n = pread(r->fd, magic, 2, 0);
    r->gz = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (r->gz) {
        if (inflateInit2(&r->zs, 31) != Z_OK) {
            close(r->fd);
            free(r);
            return DC_ENOMEM;
        }
        r->zinit = 1;
    }
    *rp = r;
    return DC_OK;
}

static void rec_clear(struct warc_reader *r)
{
    for (size_t i = 0; i < sizeof(r->fields) / sizeof(r->fields[0]); i++) {
        free(r->fields[i]);
        r->fields[i] = NULL;
    }
    r->have_rec = 0;
}

void warc_reader_close(struct warc_reader **rp)
{
    struct warc_reader *r;

    if (!rp || !*rp)
        return;
    r = *rp;
    rec_clear(r);
    if (r->zinit)
        inflateEnd(&r->zs);
    close(r->fd);
    free(r->buf);
    free(r->mem);
    free(r);
    *rp = NULL;
}

/* ------------------------------------------------------------ parsing */

/* Length of the header block at p (through its blank line), or 0. */
static size_t head_end(const unsigned char *p, size_t n)
{
    const unsigned char *s = p, *end = p + n;

    while (s < end) {
        const unsigned char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            return 0;
        if (nl + 1 < end && nl[1] == '\n')
            return (size_t)(nl + 2 - p);
        if (nl + 2 < end && nl[1] == '\r' && nl[2] == '\n')
            return (size_t)(nl + 3 - p);
        s = nl + 1;
    }
    return 0;
}

/* Skip blank lines before a record; DC_ENOTFOUND at the end. */
static int skip_blank(struct warc_reader *r)
{
    for (int rounds = 0;; rounds++) {
        while (r->pos < r->len &&
               (r->buf[r->pos] == '\r' || r->buf[r->pos] == '\n'))
            r->pos++;
        if (r->pos < r->len)
            return DC_OK;
        if (r->done)
            return r->torn ? DC_ETRUNCATED : DC_ENOTFOUND;
        int rc = load_more(r);
        if (rc)
            return rc;
    }
}

/* Make the window hold a whole header block; sets *hlen. */
static int want_head(struct warc_reader *r, size_t *hlen)
{
    for (;;) {
        size_t avail = r->len - r->pos;
        size_t n = avail < WARC_HEADER_MAX ? avail : WARC_HEADER_MAX;
        *hlen = head_end(r->buf + r->pos, n);
        if (*hlen)
            return DC_OK;
        if (avail >= WARC_HEADER_MAX)
            return DC_EPARSE;
        if (r->done) {
            int warc = avail >= 5 && memcmp(r->buf + r->pos, "WARC/", 5) == 0;
            return warc || (avail < 5 && memcmp(r->buf + r->pos, "WARC/",
                                                avail) == 0)
                       ? DC_ETRUNCATED
                       : DC_EPARSE;
        }
        int rc = load_more(r);
        if (rc)
            return rc;
    }
}

/* Make the window hold n bytes from pos. */
static int want_bytes(struct warc_reader *r, uint64_t n, int strict)
{
    while (r->len - r->pos < n) {
        if (r->done)
            return strict ? DC_ETRUNCATED : DC_OK;
        int rc = load_more(r);
        if (rc)
            return rc;
    }
    return DC_OK;
}

enum { F_URI, F_ID, F_DATE, F_CONC, F_PAY, F_BLOCK };

static const char *const field_names[] = {
    "WARC-Target-URI", "WARC-Record-ID", "WARC-Date",
    "WARC-Concurrent-To", "WARC-Payload-Digest", "WARC-Block-Digest",
};

static char *trimmed(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return xstrndup(s, n);
}

/* One "Name: value" line. */
static int head_field(struct warc_reader *r, struct warc_record *rec,
                      const char *line, size_t n, uint64_t *clen, int *has_cl)
{
    const char *colon = memchr(line, ':', n);
    size_t nl;
    char *v;

    if (!colon || colon == line)
        return DC_EPARSE;
    nl = (size_t)(colon - line);
    v = trimmed(colon + 1, n - nl - 1);
    if (nl == 9 && strncasecmp(line, "WARC-Type", 9) == 0) {
        snprintf(rec->type, sizeof(rec->type), "%s", v);
    } else if (nl == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
        char *e;
        unsigned long long x = strtoull(v, &e, 10);
        if (!*v || *e || v[0] == '-' || v[0] == '+' || x > WARC_RECORD_MAX) {
            int rc = x > WARC_RECORD_MAX && !*e ? DC_ETOOBIG : DC_EPARSE;
            free(v); /* e points into v */
            return rc;
        }
        *clen = x;
        *has_cl = 1;
    } else {
        for (size_t i = 0; i < sizeof(field_names) / sizeof(*field_names);
             i++) {
            if (strlen(field_names[i]) == nl &&
                strncasecmp(line, field_names[i], nl) == 0) {
                free(r->fields[i]);
                r->fields[i] = v;
                return DC_OK;
            }
        }
    }
    free(v);
    return DC_OK;
}

/* Parse the header block at buf[pos..pos+hlen). */
static int parse_head(struct warc_reader *r, struct warc_record *rec,
                      size_t hlen, uint64_t *clen)
{
    const char *p = (const char *)r->buf + r->pos, *end = p + hlen;
    int has_cl = 0, first = 1;

    if (hlen < 6 || memcmp(p, "WARC/", 5) != 0)
        return DC_EPARSE;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)(nl - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (first || n == 0 || p[0] == ' ' || p[0] == '\t') {
            /* version line, end, or a folded line (values we keep are
             * never folded by writers; folded parts are ignored) */
            first = 0;
        } else {
            int rc = head_field(r, rec, p, n, clen, &has_cl);
            if (rc)
                return rc;
        }
        p = nl + 1;
    }
    return has_cl ? DC_OK : DC_EPARSE;
}

/* A wget bug wraps the target URI in <...>: unwrap it. */
static void fix_uri(char *u)
{
    size_t n = u ? strlen(u) : 0;

    if (n >= 2 && u[0] == '<' && u[n - 1] == '>') {
        memmove(u, u + 1, n - 2);
        u[n - 2] = '\0';
    }
}

/* Consume up to two line ends after a block. */
static size_t trailer(const unsigned char *p, size_t n)
{
    size_t i = 0;

    for (int k = 0; k < 2; k++) {
        if (i + 1 < n && p[i] == '\r' && p[i + 1] == '\n')
            i += 2;
        else if (i < n && p[i] == '\n')
            i += 1;
        else
            break;
    }
    return i;
}

/* Where the record [start, end) sits in the file. */
static int locate(struct warc_reader *r, uint64_t start, uint64_t end)
{
    const struct member *m = NULL;

    if (!r->gz) {
        r->rec_off = start;
        r->rec_len = end - start;
        r->raw_ok = 1;
        return DC_OK;
    }
    for (size_t i = 0; i < r->nmem; i++) {
        if (r->mem[i].plain_start < end && r->mem[i].plain_end > start &&
            r->mem[i].torn)
            return DC_ETRUNCATED;
        if (!m && r->mem[i].plain_start <= start &&
            start < r->mem[i].plain_end)
            m = &r->mem[i];
    }
    if (!m)
        return DC_EPARSE;
    r->rec_off = m->comp_start;
    r->rec_len = m->comp_end - m->comp_start;
    r->raw_ok = m->plain_start == start && m->plain_end == end;
    return DC_OK;
}

static void fill_record(struct warc_reader *r, struct warc_record *rec,
                        size_t hlen, uint64_t clen)
{
    fix_uri(r->fields[F_URI]);
    rec->target_uri = r->fields[F_URI];
    rec->record_id = r->fields[F_ID];
    rec->date = r->fields[F_DATE];
    rec->concurrent_to = r->fields[F_CONC];
    rec->payload_digest = r->fields[F_PAY];
    rec->block_digest = r->fields[F_BLOCK];
    rec->block = r->buf + r->pos + hlen;
    rec->block_len = (size_t)clen;
    rec->offset = r->rec_off;
    rec->member_len = r->rec_len;
}

static int read_record(struct warc_reader *r, struct warc_record *rec)
{
    size_t hlen, tail;
    uint64_t clen = 0, start, end;
    int rc;

    rc = skip_blank(r);
    if (!rc)
        rc = want_head(r, &hlen);
    if (!rc)
        rc = parse_head(r, rec, hlen, &clen);
    if (!rc)
        rc = want_bytes(r, hlen + clen, 1);
    if (!rc && !r->gz)
        rc = want_bytes(r, hlen + clen + 4, 0);
    if (rc)
        return rc;
    tail = trailer(r->buf + r->pos + hlen + clen,
                   r->len - r->pos - hlen - (size_t)clen);
    start = r->base + r->pos;
    end = start + hlen + clen + tail;
    rc = locate(r, start, end);
    if (rc)
        return rc;
    fill_record(r, rec, hlen, clen);
    r->next_pos = r->pos + hlen + (size_t)clen + tail;
    r->have_rec = 1;
    return DC_OK;
}

int warc_reader_next(struct warc_reader *r, struct warc_record *rec)
{
    int rc;

    if (!r || !rec)
        return DC_EINVAL;
    if (r->stop)
        return r->stop;
    if (r->have_rec)
        r->pos = r->next_pos; /* step over the previous record */
    rec_clear(r);
    memset(rec, 0, sizeof(*rec));
    rc = read_record(r, rec);
    if (rc) {
        rec_clear(r);
        memset(rec, 0, sizeof(*rec));
        r->stop = rc;
    }
    return rc;
}

int warc_reader_copy_raw(struct warc_reader *r, FILE *f)
{
    unsigned char chunk[IN_CHUNK];
    uint64_t off, left;

    if (!r || !f || !r->have_rec || !r->raw_ok)
        return DC_EINVAL;
    off = r->rec_off;
    left = r->rec_len;
    while (left > 0) {
        size_t want = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);
        ssize_t n = pread(r->fd, chunk, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return DC_EIO;
        if (fwrite(chunk, 1, (size_t)n, f) != (size_t)n)
            return DC_EIO;
        off += (uint64_t)n;
        left -= (uint64_t)n;
    }
    return DC_OK;
}

/* ------------------------------------------------------------ digests */

/* The value of digit c in alphabet (its index), or -1. Hex and base32 are
 * case-insensitive (fold); base64url's '-' and '_' stand for '+' and '/'. */
static const char HEX_DIGITS[] = "0123456789abcdef";
static const char B32_DIGITS[] = "abcdefghijklmnopqrstuvwxyz234567";
static const char B64_DIGITS[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int digit_val(int c, const char *alphabet, int fold)
{
    const char *p;

    if (fold && c >= 'A' && c <= 'Z')
        c += 'a' - 'A';
    else if (c == '-')
        c = '+';
    else if (c == '_')
        c = '/';
    p = c ? strchr(alphabet, c) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

/* Decode len characters of base32 (bits 5) or base64 (bits 6) into
 * exactly n bytes; -1 if they do not make n bytes. */
static int radix_decode(const char *v, size_t len, int bits_per,
                        unsigned char *out, size_t n)
{
    uint32_t acc = 0;
    size_t o = 0;
    int bits = 0;

    for (size_t i = 0; i < len; i++) {
        int x = bits_per == 5 ? digit_val((unsigned char)v[i], B32_DIGITS, 1)
                              : digit_val((unsigned char)v[i], B64_DIGITS, 0);
        if (x < 0)
            return -1;
        acc = (acc << bits_per) | (uint32_t)x;
        bits += bits_per;
        if (bits >= 8) {
            if (o == n)
                return -1;
            out[o++] = (unsigned char)(acc >> (bits - 8));
            bits -= 8;
        }
        acc &= 0xff;
    }
    return o == n ? 0 : -1;
}

/* Decode a digest value into n bytes: hex (2n digits), base32 (as WARC
 * writers use) or base64 / base64url (some tools), padding optional. */
static int digest_decode(const char *v, unsigned char *out, size_t n)
{
    size_t len = strlen(v), i;

    if (len == 2 * n) {
        for (i = 0; i < n; i++) {
            int hi = digit_val((unsigned char)v[2 * i], HEX_DIGITS, 1);
            int lo = digit_val((unsigned char)v[2 * i + 1], HEX_DIGITS, 1);
            if (hi < 0 || lo < 0)
                break;
            out[i] = (unsigned char)(hi << 4 | lo);
        }
        if (i == n)
            return 0;
    }
    while (len && v[len - 1] == '=')
        len--;
    if (len == (n * 8 + 4) / 5 && radix_decode(v, len, 5, out, n) == 0)
        return 0;
    if (len == (n * 8 + 5) / 6)
        return radix_decode(v, len, 6, out, n);
    return -1;
}

/* Check "algorithm:value" against data; unknown algorithms pass. */
static int digest_check(const char *spec, const void *data, size_t len)
{
    char alg[32];
    const char *colon = strchr(spec, ':');
    unsigned char md[EVP_MAX_MD_SIZE], want[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    const EVP_MD *type;
    size_t a = 0;

    if (!colon || colon == spec)
        return DC_EDIGEST;
    for (const char *p = spec; p < colon && a + 1 < sizeof(alg); p++)
        if (*p != '-')
            alg[a++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    alg[a] = '\0';
    type = EVP_get_digestbyname(alg);
    if (!type)
        return DC_OK;
    if (!EVP_Digest(data, len, md, &mdlen, type, NULL))
        return DC_OK;
    if (digest_decode(colon + 1, want, mdlen))
        return DC_EDIGEST;
    return memcmp(md, want, mdlen) == 0 ? DC_OK : DC_EDIGEST;
}

/* Does the block start with an HTTP status or request line? */
void warc_reader_head(const struct warc_reader *r,
                      const struct warc_record *rec, const unsigned char **head,
                      size_t *len)
{
    *head = r->buf + r->pos;
    *len = rec->block ? (size_t)(rec->block - *head) : 0;
}

int warc_reader_raw_ok(const struct warc_reader *r)
{
    return r && r->have_rec && r->raw_ok;
}

static int looks_http(const unsigned char *b, size_t n)
{
    const unsigned char *nl = memchr(b, '\n', n);
    size_t l = nl ? (size_t)(nl - b) : n;

    if (l >= 5 && memcmp(b, "HTTP/", 5) == 0)
        return 1;
    if (l && b[l - 1] == '\r')
        l--;
    return l >= 9 && memcmp(b + l - 8, "HTTP/", 5) == 0 && b[l - 9] == ' ';
}

/* The payload: for HTTP messages what follows the header block. */
static void payload_of(const struct warc_record *rec, const unsigned char **p,
                       size_t *n)
{
    size_t h;

    *p = rec->block;
    *n = rec->block_len;
    if ((strcmp(rec->type, "response") != 0 &&
         strcmp(rec->type, "request") != 0) ||
        !looks_http(rec->block, rec->block_len))
        return;
    h = head_end(rec->block, rec->block_len);
    if (h == 0 && rec->block_len >= 2 && rec->block[0] == '\r' &&
        rec->block[1] == '\n')
        h = 2;
    *p = rec->block + (h ? h : rec->block_len);
    *n = h ? rec->block_len - h : 0;
}

int warc_record_verify(const struct warc_record *rec)
{
    const unsigned char *pay;
    size_t plen;
    int rc;

    if (!rec || (!rec->block && rec->block_len))
        return DC_EINVAL;
    if (rec->block_digest) {
        rc = digest_check(rec->block_digest,
                          rec->block ? (const void *)rec->block : "",
                          rec->block_len);
        if (rc)
            return rc;
    }
    /* a revisit's payload digest names the earlier record's payload */
    if (!rec->payload_digest || strcmp(rec->type, "revisit") == 0)
        return DC_OK;
    payload_of(rec, &pay, &plen);
    return digest_check(rec->payload_digest, plen ? (const void *)pay : "",
                        plen);
}
