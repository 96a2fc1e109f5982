/*
 * merge.c: merging every node's per-depth output into one copy per URL.
 *
 * Input: DIR/depth-D/NAME.jsonl (one JSON object per fetched URL) and the
 * WARC files those lines point to (warc_file, warc_offset, warc_length,
 * warc_record_id).
 * Output, in outdir (DIR/merged by default):
 *   depth-D.warc.gz  a new warcinfo record, then for each kept page its
 *                    response record and the request record concurrent to
 *                    it, copied as the original gzip members (no
 *                    recompression)
 *   pages.jsonl      the kept lines, ordered by depth and offset, with
 *                    warc_file / warc_offset / warc_length pointing into
 *                    the merged files
 *
 * Passes:
 *  1. Read every .jsonl line (depth directories in numeric order, files in
 *     name order). Per URL keep the line with the latest fetched_at; on a
 *     tie the one read later wins. Malformed lines are skipped with a
 *     warning "FILE:LINE: ...".
 *  2a. Fast path: a line with warc_file, warc_offset and warc_length names
 *     the byte range of its gzip members (response, then request; see
 *     warc-write.c). Those pages are sorted by (file, offset) and each range
 *     is copied as is, every source file opened once and read front to
 *     back, nothing inflated. The only checks: the range lies inside the
 *     file and starts with a gzip member header (1f 8b 08). A range that
 *     runs past the end of the file is a torn record (the node was killed
 *     while writing it): warned about, counted in st->torn, skipped. A
 *     range failing the magic check goes to the slow path.
 *  2b. Slow path, for the rest (lines written before warc_length existed,
 *     or failing the check): index those pages by response record id and
 *     read each WARC file they name once, sequentially, inflating it. A
 *     response whose id is indexed is copied to its depth's output; a
 *     request whose WARC-Concurrent-To names such a response follows it (if
 *     the request comes first in the source it is held in memory until its
 *     response has been written).
 *  3. Write pages.jsonl. A page whose response was not found (torn record,
 *     missing file) keeps its line with warc_file/offset/length/record id
 *     null. warc_length is null too when the slow path could not place the
 *     request right after its response.
 *
 * The fast path trusts the writer's order (WARC bytes flushed before the
 * JSON line), so a line's range is on disk unless the file was cut
 * afterwards; the range check catches that. Records inside a range are not
 * parsed, so st->records counts a range as two records (the response and
 * its request, as the writer builds them).
 *
 * Outputs are written under temporary names and renamed at the end, so a
 * failed merge never leaves half a file under the final name.
 * Memory: one entry (the JSON line) per URL, one copy buffer, one record at
 * a time on the slow path.
 * Not thread safe; warnings go to the caller's FILE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "conf.h"
#include "merge-internal.h"

#define LINE_MAX_BYTES (1u << 20)
#define COPY_CHUNK ((size_t)1 << 20)
#define RANGE_MAX ((int64_t)1 << 53) /* exact in a JSON number (double) */

struct page {
    char *url;
    char *line;          /* the JSON line, without newline */
    int64_t at_ms;
    uint64_t order;
    int depth;
    char *warc_file;     /* source WARC relative to dir, or NULL */
    char *record_id;     /* response record id, or NULL */
    int64_t src_off;     /* warc_offset / warc_length, -1 if absent */
    int64_t src_len;
    int64_t out_off;     /* offset in the merged file, -1 if none */
    int64_t out_len;     /* bytes of its members there, -1 if unknown */
    int torn;            /* range past the end of its file: no records */
    int src_opened;      /* its file was opened by the fast path */
    int src_torn;        /* ... which found a torn range in it */
    int req_done;
    char *req_raw;       /* request member held until its response */
    size_t req_len;
};

struct out_file {
    int depth;
    FILE *f;
    int64_t pos;
    char tmp[PATH_MAX], final[PATH_MAX];
};

/* Open addressing: string -> page index. */
struct index {
    int64_t *slot;
    size_t cap, n;
};

struct merger {
    const char *dir, *outdir;
    FILE *warn;
    struct merge_stats *st;
    struct page *pages;
    size_t npages, cappages;
    struct index by_url, by_id;
    struct out_file *outs;
    size_t nouts, capouts;
    uint64_t order;
    char *err;
    size_t errlen;
    int fatal;           /* first error from fail() */
};

/* ------------------------------------------------------------ helpers */

static void warnf(struct merger *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warnf(struct merger *m, const char *fmt, ...)
{
    va_list ap;

    if (!m->warn)
        return;
    va_start(ap, fmt);
    fputs("merge: warning: ", m->warn);
    vfprintf(m->warn, fmt, ap);
    fputc('\n', m->warn);
    va_end(ap);
}

static int fail(struct merger *m, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct merger *m, int rc, const char *fmt, ...)
{
    va_list ap;

    if (!m->fatal)
        m->fatal = rc;
    if (m->err && m->errlen && !m->err[0]) {
        va_start(ap, fmt);
        vsnprintf(m->err, m->errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

typedef const char *(*key_fn)(const struct page *);

static const char *key_url(const struct page *p) { return p->url; }
static const char *key_id(const struct page *p) { return p->record_id; }

/* Slot of key: holds its page index, or -1 where it would go. */
static size_t index_find(const struct merger *m, const struct index *ix,
                         key_fn key, const char *k)
{
    size_t i = hash_str(k) & (ix->cap - 1);

    while (ix->slot[i] >= 0 && strcmp(key(&m->pages[ix->slot[i]]), k) != 0)
        i = (i + 1) & (ix->cap - 1);
    return i;
}

static void index_grow(struct merger *m, struct index *ix, key_fn key)
{
    struct index old = *ix;

    ix->cap = old.cap ? old.cap * 2 : 1024;
    ix->slot = xmalloc(ix->cap * sizeof(*ix->slot));
    for (size_t i = 0; i < ix->cap; i++)
        ix->slot[i] = -1;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slot[i] >= 0)
            ix->slot[index_find(m, ix, key, key(&m->pages[old.slot[i]]))] =
                old.slot[i];
    free(old.slot);
}

/* Page index of key, or -1. */
static int64_t index_get(const struct merger *m, const struct index *ix,
                         key_fn key, const char *k)
{
    if (!ix->cap || !k)
        return -1;
    return ix->slot[index_find(m, ix, key, k)];
}

static void index_put(struct merger *m, struct index *ix, key_fn key,
                      int64_t page)
{
    if ((ix->n + 1) * 2 > ix->cap)
        index_grow(m, ix, key);
    ix->slot[index_find(m, ix, key, key(&m->pages[page]))] = page;
    ix->n++;
}

static void page_clear(struct page *p)
{
    free(p->url);
    free(p->line);
    free(p->warc_file);
    free(p->record_id);
    free(p->req_raw);
    memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------- pass 1: the lines */

static char *opt_str(const struct merge__jobj *o, const char *key)
{
    const struct merge__jkv *kv = merge__jobj_get(o, key);

    return kv && kv->type == MJ_STR && kv->str[0] ? xstrdup(kv->str) : NULL;
}

/* A whole number in [min, RANGE_MAX), or -1. */
static int64_t opt_count(const struct merge__jobj *o, const char *key,
                         int64_t min)
{
    const struct merge__jkv *kv = merge__jobj_get(o, key);

    if (!kv || kv->type != MJ_NUM || !(kv->num >= (double)min) ||
        !(kv->num < (double)RANGE_MAX) ||
        (double)(int64_t)kv->num != kv->num)
        return -1;
    return (int64_t)kv->num;
}

/* Fill p from one line; DC_EPARSE with a reason in *why. */
static int page_parse(struct page *p, const char *line, size_t len,
                      int dir_depth, const char **why)
{
    struct merge__jobj o;
    const struct merge__jkv *url, *at, *depth;
    int rc = DC_EPARSE;

    *why = "not a flat JSON object";
    if (merge__json_parse(line, len, &o))
        goto out;
    url = merge__jobj_get(&o, "url");
    at = merge__jobj_get(&o, "fetched_at");
    depth = merge__jobj_get(&o, "depth");
    *why = "no url";
    if (!url || url->type != MJ_STR || !url->str[0])
        goto out;
    *why = "bad fetched_at";
    if (!at || at->type != MJ_STR || merge__parse_iso(at->str, &p->at_ms))
        goto out;
    p->depth = dir_depth;
    if (depth && depth->type == MJ_NUM && depth->num >= 0 &&
        depth->num <= 1e6)
        p->depth = (int)depth->num;
    p->url = xstrdup(url->str);
    p->line = xstrndup(line, len);
    p->warc_file = opt_str(&o, "warc_file");
    p->record_id = opt_str(&o, "warc_record_id");
    p->src_off = opt_count(&o, "warc_offset", 0);
    p->src_len = opt_count(&o, "warc_length", 1);
    if (p->src_off < 0 || p->src_len < 0)
        p->src_off = p->src_len = -1;
    p->out_off = p->out_len = -1;
    rc = DC_OK;
out:
    merge__jobj_release(&o);
    return rc;
}

static void page_keep(struct merger *m, struct page *np)
{
    int64_t i = index_get(m, &m->by_url, key_url, np->url);

    np->order = m->order++;
    if (i >= 0) {
        struct page *old = &m->pages[i];
        m->st->url_duplicates++;
        if (np->at_ms < old->at_ms) {
            page_clear(np);
            return;
        }
        page_clear(old);
        *old = *np;
        return;
    }
    if (m->npages == m->cappages) {
        void *t = m->pages;
        xgrow(&t, &m->cappages, m->npages + 1, sizeof(*m->pages));
        m->pages = t;
    }
    m->pages[m->npages] = *np;
    index_put(m, &m->by_url, key_url, (int64_t)m->npages++);
}

static int read_jsonl(struct merger *m, const char *path, int dir_depth)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;

    if (!f)
        return fail(m, DC_EIO, "%s: %s", path, strerror(errno));
    m->st->files++;
    while ((n = getline(&line, &cap, f)) >= 0) {
        struct page p = { 0 };
        const char *why = "line too long";
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n == 0)
            continue;
        if ((size_t)n > LINE_MAX_BYTES ||
            page_parse(&p, line, (size_t)n, dir_depth, &why)) {
            page_clear(&p);
            warnf(m, "%s:%llu: %s, line skipped", path,
                  (unsigned long long)lineno, why);
            continue;
        }
        page_keep(m, &p);
    }
    free(line);
    fclose(f);
    return DC_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir that end with suffix (or, with suffix NULL, are
 * "depth-<digits>" directories). */
static char **list_dir(const char *dir, const char *suffix, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t cap = 0;

    *n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (suffix ? (l <= strlen(suffix) ||
                      strcmp(e->d_name + l - strlen(suffix), suffix) != 0)
                   : (strncmp(e->d_name, "depth-", 6) != 0 || l == 6 ||
                      l > 14 || strspn(e->d_name + 6, "0123456789") != l - 6))
            continue;
        if (*n == cap) {
            void *t = v;
            xgrow(&t, &cap, *n + 1, sizeof(*v));
            v = t;
        }
        v[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof(*v), cmp_str);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int read_depth(struct merger *m, const char *name)
{
    char sub[PATH_MAX], path[PATH_MAX];
    size_t n;
    char **files;
    int depth = atoi(name + 6), rc = DC_OK;

    snprintf(sub, sizeof(sub), "%s/%s", m->dir, name);
    files = list_dir(sub, ".jsonl", &n);
    for (size_t i = 0; i < n && rc == DC_OK; i++) {
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", sub, files[i]) >=
            sizeof(path))
            continue;
        rc = read_jsonl(m, path, depth);
    }
    free_list(files, n);
    return rc;
}

static int cmp_depth_name(const void *a, const void *b)
{
    long x = atol(*(char *const *)a + 6), y = atol(*(char *const *)b + 6);

    return x < y ? -1 : x > y;
}

static int read_lines(struct merger *m)
{
    size_t n;
    char **depths;
    int rc = DC_OK;
    DIR *d = opendir(m->dir);

    if (!d)
        return fail(m, DC_EIO, "%s: %s", m->dir, strerror(errno));
    closedir(d);
    depths = list_dir(m->dir, NULL, &n);
    if (n)
        qsort(depths, n, sizeof(*depths), cmp_depth_name);
    for (size_t i = 0; i < n && rc == DC_OK; i++)
        rc = read_depth(m, depths[i]);
    free_list(depths, n);
    return rc;
}

/* ------------------------------------------------- pass 2: the records */

static struct out_file *out_get(struct merger *m, int depth)
{
    for (size_t i = 0; i < m->nouts; i++)
        if (m->outs[i].depth == depth)
            return &m->outs[i];
    return NULL;
}

static int out_open(struct merger *m, int depth)
{
    struct out_file *o;
    struct merge__buf info = { 0 };
    char name[64];
    int rc;

    if (out_get(m, depth))
        return DC_OK;
    if (m->nouts == m->capouts) {
        void *t = m->outs;
        xgrow(&t, &m->capouts, m->nouts + 1, sizeof(*m->outs));
        m->outs = t;
    }
    o = &m->outs[m->nouts++];
    memset(o, 0, sizeof(*o));
    o->depth = depth;
    snprintf(name, sizeof(name), "depth-%d.warc.gz", depth);
    snprintf(o->final, sizeof(o->final), "%s/%s", m->outdir, name);
    snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.tmp", m->outdir, name);
    o->f = fopen(o->tmp, "wb");
    if (!o->f)
        return fail(m, DC_EIO, "%s: %s", o->tmp, strerror(errno));
    rc = merge__warcinfo(&info, name, "dcrawl merge",
                         "merged output: one copy per URL", 6);
    if (rc == DC_OK && fwrite(info.p, 1, info.len, o->f) != info.len)
        rc = fail(m, DC_EIO, "%s: write failed", o->tmp);
    o->pos = (int64_t)info.len;
    free(info.p);
    return rc;
}

/* Copy the current record's member to depth's output; *at gets its offset
 * there. */
static int copy_record(struct merger *m, struct merge_reader *r,
                       const struct merge_record *rec, int depth,
                       int64_t *at)
{
    struct out_file *o = out_get(m, depth);
    int rc;

    *at = o->pos;
    rc = merge_reader_copy_raw(r, o->f);
    if (rc == DC_EINVAL) {
        warnf(m, "record %s is not a gzip member of its own, skipped",
              rec->record_id);
        return DC_EINVAL;
    }
    if (rc)
        return fail(m, rc, "%s: write failed", o->tmp);
    o->pos += (int64_t)rec->member_len;
    m->st->records++;
    return DC_OK;
}

/* The request member of p was written at `at`, len bytes: p's range in the
 * output grows when it follows the response directly. */
static void request_placed(struct page *p, int64_t at, int64_t len)
{
    if (p->out_len >= 0 && at == p->out_off + p->out_len)
        p->out_len += len;
    else
        p->out_len = -1;
    p->req_done = 1;
}

static int held_request(struct merger *m, struct page *p)
{
    struct out_file *o = out_get(m, p->depth);

    if (!p->req_raw)
        return DC_OK;
    if (fwrite(p->req_raw, 1, p->req_len, o->f) != p->req_len)
        return fail(m, DC_EIO, "%s: write failed", o->tmp);
    request_placed(p, o->pos, (int64_t)p->req_len);
    o->pos += (int64_t)p->req_len;
    m->st->records++;
    free(p->req_raw);
    p->req_raw = NULL;
    return DC_OK;
}

static int on_response(struct merger *m, struct merge_reader *r,
                       const struct merge_record *rec, const char *file)
{
    int64_t i = index_get(m, &m->by_id, key_id, rec->record_id);
    struct page *p;
    int rc;

    if (i < 0)
        return DC_OK;
    p = &m->pages[i];
    if (p->out_off >= 0 || strcmp(p->warc_file, file) != 0)
        return DC_OK;
    rc = copy_record(m, r, rec, p->depth, &p->out_off);
    if (rc == DC_EINVAL) {
        p->out_off = -1;
        return DC_OK;
    }
    if (rc)
        return rc;
    p->out_len = (int64_t)rec->member_len;
    m->st->inflated++;
    return held_request(m, p);
}

static int on_request(struct merger *m, struct merge_reader *r,
                      const struct merge_record *rec)
{
    int64_t i = index_get(m, &m->by_id, key_id, rec->concurrent_to);
    struct page *p;
    char *raw = NULL;
    size_t len = 0;
    int64_t at;
    FILE *mf;
    int rc;

    if (i < 0 || m->pages[i].req_done || m->pages[i].req_raw)
        return DC_OK;
    p = &m->pages[i];
    if (p->out_off >= 0) {
        rc = copy_record(m, r, rec, p->depth, &at);
        if (rc == DC_OK)
            request_placed(p, at, (int64_t)rec->member_len);
        return rc == DC_EINVAL ? DC_OK : rc;
    }
    mf = open_memstream(&raw, &len);
    if (!mf)
        return fail(m, DC_ENOMEM, "open_memstream failed");
    rc = merge_reader_copy_raw(r, mf);
    fclose(mf);
    if (rc == DC_OK && len) {
        p->req_raw = raw;
        p->req_len = len;
        return DC_OK;
    }
    free(raw);
    return DC_OK;
}

/* A warc_file value that stays inside DIR. */
static int file_ok(const char *file)
{
    return file[0] != '/' && !strstr(file, "..");
}

/* Read one file on the slow path. counted: the fast path already counted
 * the file in st->files; torn_seen: and reported a torn range in it. */
static int read_warc(struct merger *m, const char *file, int counted,
                     int torn_seen)
{
    char path[PATH_MAX];
    struct merge_reader *r;
    struct merge_record rec;
    int rc;

    snprintf(path, sizeof(path), "%s/%s", m->dir, file);
    if (!file_ok(file) || merge_reader_open(&r, path) != DC_OK) {
        warnf(m, "%s: cannot open, its pages lose their records", path);
        return DC_OK;
    }
    if (!counted)
        m->st->files++;
    while ((rc = merge_reader_next(r, &rec)) == DC_OK) {
        if (strcmp(rec.type, "response") == 0 ||
            strcmp(rec.type, "revisit") == 0)
            rc = on_response(m, r, &rec, file);
        else if (strcmp(rec.type, "request") == 0)
            rc = on_request(m, r, &rec);
        if (rc)
            break;
    }
    if (rc == DC_ETRUNCATED && !torn_seen) {
        warnf(m, "%s: torn record at the end, skipped", path);
        m->st->torn++;
    } else if (rc != DC_ENOTFOUND && rc != DC_OK && !m->fatal) {
        warnf(m, "%s: %s, rest of the file skipped", path, dc_strerror(rc));
    }
    merge_reader_close(&r);
    return m->fatal;
}

/* ------------------------------------------ pass 2a: raw byte ranges */

/* Pages by source file, then offset, then reading order. */
static int cmp_src(const void *a, const void *b)
{
    const struct page *x = *(struct page *const *)a;
    const struct page *y = *(struct page *const *)b;
    int c = strcmp(x->warc_file, y->warc_file);

    if (c)
        return c;
    if (x->src_off != y->src_off)
        return x->src_off < y->src_off ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* One source file, opened once. */
struct src {
    int fd;
    int64_t size;
    char path[PATH_MAX];
};

static int range_torn(struct merger *m, struct page *p, const struct src *s)
{
    warnf(m, "%s: %s: records at %lld, %lld bytes, run past the end of the "
          "file (%lld bytes): torn record, skipped", s->path, p->url,
          (long long)p->src_off, (long long)p->src_len, (long long)s->size);
    m->st->torn++;
    p->torn = 1;
    return DC_OK;
}

/*
 * Copy p's range from s to its depth's output, unchanged. Leaves p as it
 * was (for the slow path) when the range does not start with a gzip
 * member; marks it torn when the range is past the end of the file.
 */
static int range_copy(struct merger *m, struct page *p, const struct src *s,
                      unsigned char *buf)
{
    struct out_file *o = out_get(m, p->depth);
    int64_t off = p->src_off, left = p->src_len;

    if (p->src_off > s->size || p->src_len > s->size - p->src_off)
        return range_torn(m, p, s);
    while (left > 0) {
        size_t want = left < (int64_t)COPY_CHUNK ? (size_t)left : COPY_CHUNK;
        ssize_t n = pread(s->fd, buf, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(m, DC_EIO, "%s: read failed at %lld", s->path,
                        (long long)off);
        if (off == p->src_off &&
            (n < 3 || buf[0] != 0x1f || buf[1] != 0x8b || buf[2] != 0x08))
            return DC_OK; /* nothing written: the slow path looks for it */
        if (fwrite(buf, 1, (size_t)n, o->f) != (size_t)n)
            return fail(m, DC_EIO, "%s: write failed", o->tmp);
        off += n;
        left -= n;
    }
    p->out_off = o->pos;
    p->out_len = p->src_len;
    o->pos += p->src_len;
    m->st->records += 2;
    m->st->ranges++;
    return DC_OK;
}

/* Copy the ranges of v[0..n) (sorted by cmp_src, one file). A file that
 * cannot be opened leaves its pages to the slow path, which warns. */
static int ranges_of_file(struct merger *m, struct page **v, size_t n,
                          unsigned char *buf)
{
    struct src s;
    struct stat st;
    uint64_t torn = m->st->torn;
    int rc = DC_OK;

    if (!file_ok(v[0]->warc_file) ||
        (size_t)snprintf(s.path, sizeof(s.path), "%s/%s", m->dir,
                         v[0]->warc_file) >= sizeof(s.path))
        return DC_OK;
    s.fd = open(s.path, O_RDONLY | O_CLOEXEC);
    if (s.fd < 0)
        return DC_OK;
    if (fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(s.fd);
        return DC_OK;
    }
    s.size = (int64_t)st.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(s.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    m->st->files++;
    for (size_t i = 0; i < n && rc == DC_OK; i++) {
        v[i]->src_opened = 1;
        rc = range_copy(m, v[i], &s, buf);
    }
    close(s.fd);
    for (size_t i = 0; i < n && m->st->torn != torn; i++)
        v[i]->src_torn = 1;
    return rc;
}

static int copy_ranges(struct merger *m, struct page **v, size_t n)
{
    unsigned char *buf;
    int rc = DC_OK;
    size_t i, j;

    if (!n)
        return DC_OK;
    qsort(v, n, sizeof(*v), cmp_src);
    buf = xmalloc(COPY_CHUNK);
    for (i = 0; i < n && rc == DC_OK; i = j) {
        for (j = i + 1; j < n && strcmp(v[j]->warc_file, v[i]->warc_file) == 0;
             j++)
            ;
        rc = ranges_of_file(m, v + i, j - i, buf);
    }
    free(buf);
    return rc;
}

/* ------------------------------------------------ pass 2b: inflating */

static int cmp_file(const void *a, const void *b)
{
    return strcmp((*(struct page *const *)a)->warc_file,
                  (*(struct page *const *)b)->warc_file);
}

/* Read each file named by the pages v[0..n) once, finding them by id. */
static int copy_slow(struct merger *m, struct page **v, size_t n)
{
    int rc = DC_OK;
    size_t i, j;

    for (i = 0; i < n; i++) {
        int64_t k = v[i] - m->pages;
        if (index_get(m, &m->by_id, key_id, v[i]->record_id) < 0)
            index_put(m, &m->by_id, key_id, k);
    }
    if (n)
        qsort(v, n, sizeof(*v), cmp_file);
    for (i = 0; i < n && rc == DC_OK; i = j) {
        int counted = v[i]->src_opened, torn = v[i]->src_torn;
        for (j = i + 1; j < n && strcmp(v[j]->warc_file, v[i]->warc_file) == 0;
             j++) {
            counted |= v[j]->src_opened;
            torn |= v[j]->src_torn;
        }
        rc = read_warc(m, v[i]->warc_file, counted, torn);
    }
    return rc;
}

static int copy_records(struct merger *m)
{
    struct page **v = xmalloc((m->npages + 1) * sizeof(*v));
    size_t n = 0;
    int rc = DC_OK;

    for (size_t i = 0; i < m->npages && rc == DC_OK; i++) {
        struct page *p = &m->pages[i];
        rc = out_open(m, p->depth);
        if (p->warc_file && p->src_off >= 0)
            v[n++] = p;
    }
    if (rc == DC_OK)
        rc = copy_ranges(m, v, n);
    n = 0;
    for (size_t i = 0; i < m->npages && rc == DC_OK; i++) {
        struct page *p = &m->pages[i];
        if (p->record_id && p->warc_file && p->out_off < 0 && !p->torn)
            v[n++] = p;
    }
    if (rc == DC_OK)
        rc = copy_slow(m, v, n);
    free(v);
    return rc;
}

/* ---------------------------------------------------- pass 3: the lines */

static int is_key(const struct merge__jkv *kv, const char *key)
{
    return strcmp(kv->key, key) == 0;
}

static void put_count(struct merge__buf *b, int64_t v)
{
    if (v >= 0)
        merge__buf_printf(b, "%lld", (long long)v);
    else
        merge__buf_str(b, "null");
}

/* p's line with its warc_* values pointing into the merged file (or null);
 * warc_length goes right after warc_offset, added if the line had none. */
static void rewrite_line(const struct page *p, struct merge__buf *b)
{
    struct merge__jobj o;
    char name[64];
    int rec = p->out_off >= 0, first = 1;

    snprintf(name, sizeof(name), "depth-%d.warc.gz", p->depth);
    merge__json_parse(p->line, strlen(p->line), &o);
    merge__buf_str(b, "{");
    for (size_t i = 0; i < o.n; i++) {
        const struct merge__jkv *kv = &o.kv[i];
        if (is_key(kv, "warc_length"))
            continue;
        if (!first)
            merge__buf_str(b, ",");
        first = 0;
        merge_json_str(&b->p, &b->len, &b->cap, kv->key);
        merge__buf_str(b, ":");
        if (is_key(kv, "warc_file") && rec) {
            merge_json_str(&b->p, &b->len, &b->cap, name);
        } else if (is_key(kv, "warc_offset")) {
            put_count(b, rec ? p->out_off : -1);
            merge__buf_str(b, ",\"warc_length\":");
            put_count(b, rec ? p->out_len : -1);
        } else if ((is_key(kv, "warc_file") ||
                    is_key(kv, "warc_record_id")) && !rec) {
            merge__buf_str(b, "null");
        } else {
            merge__buf_add(b, kv->raw, kv->raw_len);
        }
    }
    merge__buf_str(b, "}\n");
    merge__jobj_release(&o);
}

static int cmp_page(const void *a, const void *b)
{
    const struct page *x = a, *y = b;
    uint64_t ox = (uint64_t)x->out_off, oy = (uint64_t)y->out_off;

    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (ox != oy) /* -1 (no record) sorts last */
        return ox < oy ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int write_pages(struct merger *m)
{
    char tmp[PATH_MAX], final[PATH_MAX];
    struct merge__buf b = { 0 };
    FILE *f;
    int rc = DC_OK;

    snprintf(tmp, sizeof(tmp), "%s/.pages.jsonl.tmp", m->outdir);
    snprintf(final, sizeof(final), "%s/pages.jsonl", m->outdir);
    if (m->npages)
        qsort(m->pages, m->npages, sizeof(*m->pages), cmp_page);
    f = fopen(tmp, "w");
    if (!f)
        return fail(m, DC_EIO, "%s: %s", tmp, strerror(errno));
    for (size_t i = 0; i < m->npages; i++) {
        struct page *p = &m->pages[i];
        if (p->record_id && p->out_off < 0)
            warnf(m, "%s: response %s not found in %s, page kept without "
                  "records", p->url, p->record_id, p->warc_file);
        b.len = 0;
        rewrite_line(p, &b);
        if (fwrite(b.p, 1, b.len, f) != b.len)
            rc = DC_EIO;
        m->st->pages++;
        if (p->depth < 64)
            m->st->pages_per_depth[p->depth]++;
    }
    free(b.p);
    if (fclose(f) != 0 || rc)
        return fail(m, DC_EIO, "%s: write failed", tmp);
    if (rename(tmp, final) != 0)
        return fail(m, DC_EIO, "%s: %s", final, strerror(errno));
    return DC_OK;
}

static int close_outs(struct merger *m, int ok)
{
    int rc = DC_OK;

    for (size_t i = 0; i < m->nouts; i++) {
        struct out_file *o = &m->outs[i];
        if (o->f && fclose(o->f) != 0)
            rc = fail(m, DC_EIO, "%s: write failed", o->tmp);
        o->f = NULL;
        if (ok && rc == DC_OK && rename(o->tmp, o->final) != 0)
            rc = fail(m, DC_EIO, "%s: %s", o->final, strerror(errno));
        if (!ok || rc)
            remove(o->tmp);
        else
            m->st->depths++;
    }
    return rc;
}

static void merger_free(struct merger *m)
{
    for (size_t i = 0; i < m->npages; i++)
        page_clear(&m->pages[i]);
    free(m->pages);
    free(m->by_url.slot);
    free(m->by_id.slot);
    free(m->outs);
}

int merge_run(const char *dir, const char *outdir, struct merge_stats *st,
              FILE *warn, char *err, size_t errlen)
{
    struct merger m = { 0 };
    struct merge_stats local;
    char def[PATH_MAX];
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!dir || !*dir)
        return DC_EINVAL;
    if (!outdir) {
        snprintf(def, sizeof(def), "%s/merged", dir);
        outdir = def;
    }
    m.dir = dir;
    m.outdir = outdir;
    m.warn = warn;
    m.st = st ? st : &local;
    m.err = err;
    m.errlen = errlen;
    memset(m.st, 0, sizeof(*m.st));
    rc = read_lines(&m);
    if (rc == DC_OK && merge__mkdirs(outdir) != DC_OK)
        rc = fail(&m, DC_EIO, "%s: cannot create", outdir);
    if (rc == DC_OK)
        rc = copy_records(&m);
    rc = close_outs(&m, rc == DC_OK) ? (rc ? rc : DC_EIO) : rc;
    if (rc == DC_OK)
        rc = write_pages(&m);
    merger_free(&m);
    return rc;
}
