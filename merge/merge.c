/*
 * merge.c: merging every node's per-depth output into one copy per URL and
 * one full copy per payload, in bounded memory.
 *
 * Input: DIR/depth-D/NAME.jsonl (one JSON object per fetched URL) and the
 * WARC byte ranges those lines name (warc_file, warc_offset, warc_length,
 * warc_response_length, warc_record_id), plus foreign WARC files (adds).
 * Output, in outdir (DIR/merged by default), all under temporary names
 * renamed at the end (a failed or killed merge leaves the old output):
 *   depth-D.warc.gz  a new warcinfo record, then per kept page its records
 *                    (response or revisit, request, metadata) copied as the
 *                    original gzip members; a page that became a content
 *                    duplicate here gets a revisit record built from its
 *                    response's HTTP header block (same WARC-Record-ID, so
 *                    its request and metadata records still point at it)
 *   pages.jsonl      the kept lines, by depth and offset, warc_* fields
 *                    pointing into the merged files, "outlinks" replaced by
 *                    "score", duplicate_of set for content duplicates
 *   index.cdxj       one line per response/revisit (pywb's CDXJ: SURT key,
 *                    14-digit time stamp, JSON url, mime, status, digest,
 *                    length, offset, filename), sorted
 *   summary.json     pages per depth (lines kept), of which skipped (never
 *                    requested), duplicates by kind, bytes, statuses
 *
 * Everything that grows with the input goes through an external sort
 * (struct xsort: records appended to a buffer of at most mem_bytes / 2,
 * sorted and spilled as a run file when full, then k-way merged with a
 * heap). In memory: the file table, the sort buffers, one line, one copy
 * buffer. Passes:
 *  1. Scan every .jsonl line. Key U = url, requested before skipped,
 *     newest fetch first; value: where the line is and what the later
 *     passes need (struct ent). Key L = outlink target + source URL, for
 *     every outlink of every line. A line without a usable range (older
 *     output without warc_length, or a range not starting with a gzip
 *     member) is located by inflating its WARC file and matching
 *     warc_record_id (per .jsonl file, after reading it).
 *  2. Walk U and L together (both sorted by URL). The first line of each URL
 *     is kept (URL duplicates: the most recent wins; on equal times the one
 *     read later; a "skipped" line, for a URL never requested, only when
 *     no line of the URL was requested); score = distinct source URLs
 *     linking to it. Pages with a complete 2xx response and a payload
 *     digest go to key D = digest, then "is a full response" first, then
 *     the policy's rank; the rest straight to key O.
 *  3. Walk D. In each digest group the first entry is kept if it is a full
 *     response (a revisit from the crawl has no body to keep); the others
 *     become revisits of it. Everything goes to key O = depth, source file,
 *     source offset.
 *  4. Walk O, copying each page's range (or building its revisit) into the
 *     depth's output, writing pages.jsonl and the CDXJ key sorter C.
 *  5. Walk C into index.cdxj; write summary.json.
 *
 * Score: in-links seen during the crawl, counted as distinct crawled pages
 * (every fetched copy's "outlinks") that link to the URL. Content
 * duplicates, whose links were not extracted, contribute none.
 *
 * Foreign files (adds): read record by record (every digest verified);
 * each response or revisit record, with the records right after it that
 * are WARC-Concurrent-To it, is a page at depth 0. Their members go to a
 * temporary WARC in outdir (recompressed when the file is a plain .warc),
 * with a synthetic .jsonl line each, and then through the passes above. A
 * file that cannot be read to its end, or whose records share gzip
 * members (not one member per record), is reported and skipped entirely;
 * a record failing its digest check is reported and skipped.
 *
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
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <zlib.h>

#include "conf.h"
#include "dedup.h"
#include "merge-internal.h"

#define LINE_MAX_BYTES (1u << 24)
#define COPY_CHUNK ((size_t)1 << 20)
#define RANGE_MAX ((int64_t)1 << 53) /* exact in a JSON number (double) */
#define NOFILE UINT32_MAX
#define MEM_DEFAULT ((size_t)64 << 20)
#define HEAD_MAX ((size_t)256 << 10) /* WARC + HTTP head of a response */

/* ------------------------------------------------------- external sort */

/*
 * Records are [u32 klen][u32 vlen][key][value], compared by memcmp of the
 * keys (shorter first on a tie). Keys here are built so that this order is
 * the wanted one (big-endian numbers, NUL after strings).
 */
struct run {
    FILE *f;
    char *rec;   /* current record */
    size_t cap;
    uint32_t klen, vlen;
};

struct xsort {
    const char *tmpdir;
    const char *tag;
    size_t budget;
    char *buf;
    size_t len, cap;
    char **ptr;        /* records of buf, sorted */
    size_t n, capptr;
    char **paths;      /* spilled runs */
    size_t nruns;
    struct run *runs;  /* reading */
    size_t *heap, nheap;
    size_t mem_next;   /* next in-memory record when nothing spilled */
    int reading;
    uint64_t *spills;
};

static int rec_cmp(const char *a, const char *b)
{
    uint32_t ka, kb;
    int c;

    memcpy(&ka, a, 4);
    memcpy(&kb, b, 4);
    c = memcmp(a + 8, b + 8, ka < kb ? ka : kb);
    return c ? c : (ka > kb) - (ka < kb);
}

static int cmp_ptr(const void *a, const void *b)
{
    return rec_cmp(*(char *const *)a, *(char *const *)b);
}

static size_t rec_size(const char *r)
{
    uint32_t k, v;

    memcpy(&k, r, 4);
    memcpy(&v, r + 4, 4);
    return 8 + (size_t)k + v;
}

static void xs_index(struct xsort *s)
{
    size_t off = 0;

    s->n = 0;
    while (off < s->len) {
        if (s->n == s->capptr) {
            void *t = s->ptr;
            xgrow(&t, &s->capptr, s->n + 1, sizeof(*s->ptr));
            s->ptr = t;
        }
        s->ptr[s->n++] = s->buf + off;
        off += rec_size(s->buf + off);
    }
    if (s->n)
        qsort(s->ptr, s->n, sizeof(*s->ptr), cmp_ptr);
}

static int xs_spill(struct xsort *s)
{
    char path[PATH_MAX];
    FILE *f;
    int bad = 0;

    xs_index(s);
    snprintf(path, sizeof(path), "%s/.sort-%ld-%s-%zu.run", s->tmpdir,
             (long)getpid(), s->tag, s->nruns);
    f = fopen(path, "wb");
    if (!f)
        return DC_EIO;
    for (size_t i = 0; i < s->n && !bad; i++)
        bad = fwrite(s->ptr[i], 1, rec_size(s->ptr[i]), f) !=
              rec_size(s->ptr[i]);
    if (fclose(f) != 0 || bad) {
        remove(path);
        return DC_EIO;
    }
    s->paths = xrealloc(s->paths, (s->nruns + 1) * sizeof(*s->paths));
    s->paths[s->nruns++] = xstrdup(path);
    if (s->spills)
        (*s->spills)++;
    s->len = s->n = 0;
    return DC_OK;
}

static int xs_add(struct xsort *s, const void *k, size_t kl, const void *v,
                  size_t vl)
{
    uint32_t k32 = (uint32_t)kl, v32 = (uint32_t)vl;
    size_t need = 8 + kl + vl;

    if (kl > UINT32_MAX / 2 || vl > UINT32_MAX / 2)
        return DC_ETOOBIG;
    if (s->len && s->len + need + (s->n + 1) * sizeof(char *) > s->budget) {
        int rc = xs_spill(s);
        if (rc)
            return rc;
    }
    if (s->cap - s->len < need) {
        void *t = s->buf;
        xgrow(&t, &s->cap, s->len + need, 1);
        s->buf = t;
    }
    memcpy(s->buf + s->len, &k32, 4);
    memcpy(s->buf + s->len + 4, &v32, 4);
    memcpy(s->buf + s->len + 8, k, kl);
    if (vl)
        memcpy(s->buf + s->len + 8 + kl, v, vl);
    s->len += need;
    s->n++; /* counted for the budget; rebuilt by xs_index */
    return DC_OK;
}

/* Read the next record of run i; 0 at its end. */
static int run_read(struct run *r)
{
    uint32_t h[2];
    size_t need;

    if (fread(h, 4, 2, r->f) != 2)
        return 0;
    need = 8 + (size_t)h[0] + h[1];
    if (need > r->cap) {
        r->rec = xrealloc(r->rec, need);
        r->cap = need;
    }
    memcpy(r->rec, h, 8);
    if (fread(r->rec + 8, 1, need - 8, r->f) != need - 8)
        return 0;
    r->klen = h[0];
    r->vlen = h[1];
    return 1;
}

static int heap_less(struct xsort *s, size_t a, size_t b)
{
    return rec_cmp(s->runs[s->heap[a]].rec, s->runs[s->heap[b]].rec) < 0;
}

static void heap_down(struct xsort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < s->nheap && heap_less(s, l, m))
            m = l;
        if (r < s->nheap && heap_less(s, r, m))
            m = r;
        if (m == i)
            return;
        t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Done adding: sort what is in memory, or spill it and open every run. */
static int xs_finish(struct xsort *s)
{
    int rc;

    s->reading = 1;
    if (!s->nruns) {
        xs_index(s);
        s->mem_next = 0;
        return DC_OK;
    }
    if (s->len && (rc = xs_spill(s)) != DC_OK)
        return rc;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
    s->runs = xcalloc(s->nruns, sizeof(*s->runs));
    s->heap = xmalloc(s->nruns * sizeof(*s->heap));
    for (size_t i = 0; i < s->nruns; i++) {
        s->runs[i].f = fopen(s->paths[i], "rb");
        if (!s->runs[i].f)
            return DC_EIO;
        setvbuf(s->runs[i].f, NULL, _IOFBF, 1 << 16);
        if (run_read(&s->runs[i]))
            s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap; i-- > 0;)
        heap_down(s, i);
    return DC_OK;
}

struct xrec {
    const char *k, *v;
    size_t kl, vl;
};

static void xrec_of(const char *r, struct xrec *x)
{
    uint32_t k, v;

    memcpy(&k, r, 4);
    memcpy(&v, r + 4, 4);
    x->k = r + 8;
    x->kl = k;
    x->v = r + 8 + k;
    x->vl = v;
}

/*
 * The next record in order into *x, valid until the next call (the run's
 * buffer is copied to `hold` first, so x survives the refill). 1, or 0 at
 * the end.
 */
struct xcursor {
    struct xsort *s;
    char *hold;
    size_t cap;
};

static int xs_next(struct xcursor *c, struct xrec *x)
{
    struct xsort *s = c->s;
    struct run *r;
    size_t sz;

    if (!s->nruns) {
        if (s->mem_next >= s->n)
            return 0;
        xrec_of(s->ptr[s->mem_next++], x);
        return 1;
    }
    if (!s->nheap)
        return 0;
    r = &s->runs[s->heap[0]];
    sz = rec_size(r->rec);
    if (sz > c->cap) {
        c->hold = xrealloc(c->hold, sz);
        c->cap = sz;
    }
    memcpy(c->hold, r->rec, sz);
    xrec_of(c->hold, x);
    if (!run_read(r))
        s->heap[0] = s->heap[--s->nheap];
    heap_down(s, 0);
    return 1;
}

static void xs_free(struct xsort *s)
{
    for (size_t i = 0; i < s->nruns; i++) {
        if (s->runs && s->runs[i].f)
            fclose(s->runs[i].f);
        if (s->runs)
            free(s->runs[i].rec);
        remove(s->paths[i]);
        free(s->paths[i]);
    }
    free(s->paths);
    free(s->runs);
    free(s->heap);
    free(s->buf);
    free(s->ptr);
    memset(s, 0, sizeof(*s));
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

/* ----------------------------------------------------------- the state */

enum {
    F_REC = 1,      /* has a record range */
    F_TORN = 2,     /* range past the end of its file */
    F_REVISIT = 4,  /* the line is a content duplicate already */
    F_TRUNC = 8,    /* truncated body */
    F_MKREV = 16,   /* decision: write as a revisit of refers_* */
    F_INFL = 32,    /* located by inflating */
    F_SKIP = 64     /* never requested: a "skipped" line (robots.txt) */
};

/* What the passes carry per line (the sort values). */
struct ent {
    uint32_t jsonl, warc;
    uint32_t line_len, flags;
    int32_t depth, status;
    uint64_t line_off, order, score;
    int64_t src_off, src_len, resp_len; /* -1: unknown */
    int64_t ms, refers_ms;
    char digest[48];
};

struct file {
    char *path;
    int foreign;        /* a synthetic .jsonl: warc_file is under outdir */
    int64_t size;       /* -1 until stat'ed; -2 missing */
};

struct merger {
    const char *dir, *outdir;
    const struct merge_opts *o;
    FILE *warn;
    struct merge_stats *st;
    struct file *files;
    size_t nfiles, capfiles;
    struct xsort u, l, d, out, cdx;
    uint64_t order;
    char *err;
    size_t errlen;
    int fatal;
    int cache_fd;       /* one open file for preads */
    uint32_t cache_idx;
    uint32_t last_file;  /* file_add's last answer */
    char **temps;       /* synthetic files under outdir, removed at the end */
    size_t ntemps;
};

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

static uint32_t file_add(struct merger *m, const char *path, int foreign)
{
    if (m->last_file < m->nfiles &&
        strcmp(m->files[m->last_file].path, path) == 0)
        return m->last_file;
    for (size_t i = m->nfiles; i-- > 0;)
        if (strcmp(m->files[i].path, path) == 0)
            return m->last_file = (uint32_t)i;
    if (m->nfiles == m->capfiles) {
        void *t = m->files;
        xgrow(&t, &m->capfiles, m->nfiles + 1, sizeof(*m->files));
        m->files = t;
    }
    m->files[m->nfiles].path = xstrdup(path);
    m->files[m->nfiles].foreign = foreign;
    m->files[m->nfiles].size = -1;
    m->st->files++;
    return m->last_file = (uint32_t)m->nfiles++;
}

static int64_t file_size(struct merger *m, uint32_t i)
{
    struct stat sb;

    if (m->files[i].size == -1)
        m->files[i].size = stat(m->files[i].path, &sb) == 0 &&
                                   S_ISREG(sb.st_mode)
                               ? (int64_t)sb.st_size
                               : -2;
    return m->files[i].size;
}

/* An fd for file i (one kept open at a time). */
static int file_fd(struct merger *m, uint32_t i)
{
    if (m->cache_fd >= 0 && m->cache_idx == i)
        return m->cache_fd;
    if (m->cache_fd >= 0)
        close(m->cache_fd);
    m->cache_fd = open(m->files[i].path, O_RDONLY | O_CLOEXEC);
    m->cache_idx = i;
    return m->cache_fd;
}

static int pread_all(int fd, void *buf, size_t n, int64_t off)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return DC_EIO;
        got += (size_t)r;
    }
    return DC_OK;
}

/* --------------------------------------------------- pass 1: the lines */

static const char *opt_s(const struct warc_jobj *o, const char *key)
{
    const struct warc_jkv *kv = warc_jobj_get(o, key);

    return kv && kv->type == WARC_JSTR && kv->str[0] ? kv->str : NULL;
}

/* A whole number in [min, RANGE_MAX), or -1. */
static int64_t opt_count(const struct warc_jobj *o, const char *key,
                         int64_t min)
{
    const struct warc_jkv *kv = warc_jobj_get(o, key);

    if (!kv || kv->type != WARC_JNUM || !(kv->num >= (double)min) ||
        !(kv->num < (double)RANGE_MAX) ||
        (double)(int64_t)kv->num != kv->num)
        return -1;
    return (int64_t)kv->num;
}

/* A warc_file value that stays inside its directory. */
static int file_ok(const char *file)
{
    return file[0] != '/' && !strstr(file, "..");
}

/* Does file w hold a gzip member at off? */
static int magic_at(struct merger *m, uint32_t w, int64_t off)
{
    unsigned char b[3];
    int fd = file_fd(m, w);

    return fd >= 0 && pread_all(fd, b, 3, off) == DC_OK && b[0] == 0x1f &&
           b[1] == 0x8b && b[2] == 0x08;
}

/* One line waiting to be located by inflating (older output). */
struct pending {
    struct ent e;
    char *url, *id, **links;
    size_t nlinks;
};

struct scan {
    uint32_t jsonl;
    const char *path;
    int dir_depth;
    struct pending *pend;
    size_t npend, cappend;
};

static int emit_u(struct merger *m, const struct ent *e, const char *url,
                  char *const *links, size_t nlinks)
{
    size_t ul = strlen(url);
    char *k = xmalloc(ul + 18);
    int rc;

    memcpy(k, url, ul + 1);
    /* lines of a request before "skipped" lines, whatever their times */
    k[ul + 1] = (e->flags & F_SKIP) ? 1 : 0;
    put_be((unsigned char *)k + ul + 2, ~(uint64_t)(e->ms + (INT64_C(1) << 62)),
           8);
    put_be((unsigned char *)k + ul + 10, ~e->order, 8);
    rc = xs_add(&m->u, k, ul + 18, e, sizeof(*e));
    free(k);
    for (size_t i = 0; i < nlinks && rc == DC_OK; i++) {
        size_t tl = strlen(links[i]);
        char *lk = xmalloc(tl + ul + 2);
        memcpy(lk, links[i], tl + 1);
        memcpy(lk + tl + 1, url, ul + 1);
        rc = xs_add(&m->l, lk, tl + ul + 2, NULL, 0);
        free(lk);
    }
    return rc ? fail(m, rc, "sort: cannot write a run in %s",
                     m->u.tmpdir) : DC_OK;
}

static char **parse_links(const struct warc_jobj *o, size_t *n)
{
    const struct warc_jkv *kv = warc_jobj_get(o, "outlinks");
    char **v = NULL, *s;
    size_t pos = 0, cap = 0;

    *n = 0;
    if (!kv || kv->type != WARC_JARR)
        return NULL;
    while (warc_json_array_next(kv->raw, kv->raw_len, &pos, &s) == DC_OK) {
        if (!s[0]) {
            free(s);
            continue;
        }
        if (*n == cap) {
            void *t = v;
            xgrow(&t, &cap, *n + 1, sizeof(*v));
            v = t;
        }
        v[(*n)++] = s;
    }
    return v;
}

static void free_links(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The range part of e from the line; 1 if it must be located by id. */
static int line_range(struct merger *m, struct scan *sc,
                      const struct warc_jobj *o, struct ent *e)
{
    const char *wf = opt_s(o, "warc_file"), *id = opt_s(o, "warc_record_id");
    char path[PATH_MAX];
    int64_t size;

    e->warc = NOFILE;
    e->src_off = opt_count(o, "warc_offset", 0);
    e->src_len = opt_count(o, "warc_length", 1);
    e->resp_len = opt_count(o, "warc_response_length", 1);
    if (!wf || !id || !file_ok(wf))
        return 0;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s",
                         m->files[sc->jsonl].foreign ? m->outdir : m->dir,
                         wf) >= sizeof(path))
        return 0;
    e->warc = file_add(m, path, 0);
    size = file_size(m, e->warc);
    if (size < 0)
        return 0;
    if (e->src_off < 0 || e->src_len < 0)
        return 1;
    if (e->src_off > size || e->src_len > size - e->src_off) {
        e->flags |= F_TORN;
        return 0;
    }
    if (!magic_at(m, e->warc, e->src_off))
        return 1;
    if (e->resp_len > e->src_len)
        e->resp_len = -1;
    e->flags |= F_REC;
    return 0;
}

static int line_scan(struct merger *m, struct scan *sc, const char *line,
                     size_t len, uint64_t off, const char **why)
{
    struct warc_jobj o;
    const struct warc_jkv *depth, *st, *tr;
    const char *url, *at, *dig;
    struct ent e;
    char **links = NULL;
    size_t nlinks = 0;
    int rc = DC_EPARSE, locate;

    memset(&e, 0, sizeof(e));
    *why = "not a flat JSON object";
    if (warc_json_parse(line, len, &o))
        goto out;
    url = opt_s(&o, "url");
    at = opt_s(&o, "fetched_at");
    *why = "no url";
    if (!url)
        goto out;
    *why = "bad fetched_at";
    if (!at || warc_parse_iso(at, &e.ms))
        goto out;
    e.jsonl = sc->jsonl;
    e.line_off = off;
    e.line_len = (uint32_t)len;
    e.order = m->order++;
    e.depth = sc->dir_depth;
    depth = warc_jobj_get(&o, "depth");
    if (depth && depth->type == WARC_JNUM && depth->num >= 0 && depth->num <= 1e6)
        e.depth = (int32_t)depth->num;
    st = warc_jobj_get(&o, "status");
    if (st && st->type == WARC_JNUM && st->num >= 0 && st->num < 1000)
        e.status = (int32_t)st->num;
    tr = warc_jobj_get(&o, "truncated");
    if (tr && tr->type == WARC_JBOOL && tr->boolean)
        e.flags |= F_TRUNC;
    if (opt_s(&o, "duplicate_of"))
        e.flags |= F_REVISIT;
    if (opt_s(&o, "skipped"))
        e.flags |= F_SKIP;
    dig = opt_s(&o, "digest");
    if (dig && strlen(dig) < sizeof(e.digest))
        memcpy(e.digest, dig, strlen(dig) + 1);
    links = parse_links(&o, &nlinks);
    locate = line_range(m, sc, &o, &e);
    rc = DC_OK;
    if (locate) {
        struct pending *p;
        if (sc->npend == sc->cappend) {
            void *t = sc->pend;
            xgrow(&t, &sc->cappend, sc->npend + 1, sizeof(*sc->pend));
            sc->pend = t;
        }
        p = &sc->pend[sc->npend++];
        p->e = e;
        p->url = xstrdup(url);
        p->id = xstrdup(opt_s(&o, "warc_record_id"));
        p->links = links;
        p->nlinks = nlinks;
        links = NULL;
    } else {
        rc = emit_u(m, &e, url, links, nlinks);
        if (rc)
            *why = NULL;
    }
out:
    free_links(links, nlinks);
    warc_jobj_release(&o);
    return rc;
}

/* Locate the pending lines of one WARC file by inflating it. */
static void locate_in(struct merger *m, struct scan *sc, uint32_t w)
{
    struct warc_reader *r;
    struct warc_record rec;
    struct pending *cur = NULL;
    int rc;

    if (warc_reader_open(&r, m->files[w].path) != DC_OK) {
        warnf(m, "%s: cannot open, its pages lose their records",
              m->files[w].path);
        return;
    }
    while ((rc = warc_reader_next(r, &rec)) == DC_OK) {
        int raw = warc_reader_raw_ok(r) && rec.offset + rec.member_len > 0;
        if (cur && raw && rec.concurrent_to &&
            strcmp(rec.concurrent_to, cur->id) == 0 &&
            (int64_t)rec.offset == cur->e.src_off + cur->e.src_len) {
            cur->e.src_len += (int64_t)rec.member_len;
            continue;
        }
        cur = NULL;
        if (!rec.record_id || !raw)
            continue;
        for (size_t i = 0; i < sc->npend; i++) {
            struct pending *p = &sc->pend[i];
            if (p->e.warc != w || (p->e.flags & F_REC) ||
                strcmp(p->id, rec.record_id) != 0)
                continue;
            p->e.src_off = (int64_t)rec.offset;
            p->e.src_len = p->e.resp_len = (int64_t)rec.member_len;
            p->e.flags |= F_REC | F_INFL;
            m->st->inflated++;
            cur = p;
            break;
        }
    }
    if (rc == DC_ETRUNCATED) {
        warnf(m, "%s: torn record at the end, skipped", m->files[w].path);
        m->st->torn++;
    } else if (rc != DC_ENOTFOUND) {
        warnf(m, "%s: %s, rest of the file skipped", m->files[w].path,
              dc_strerror(rc));
    }
    warc_reader_close(&r);
}

static int flush_pending(struct merger *m, struct scan *sc)
{
    int rc = DC_OK;

    for (size_t i = 0; i < sc->npend; i++) {
        uint32_t w = sc->pend[i].e.warc;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = sc->pend[k].e.warc == w;
        if (!seen)
            locate_in(m, sc, w);
    }
    for (size_t i = 0; i < sc->npend; i++) {
        struct pending *p = &sc->pend[i];
        if (!(p->e.flags & F_REC))
            warnf(m, "%s: response %s not found in %s, page kept without "
                  "records", p->url, p->id, m->files[p->e.warc].path);
        if (rc == DC_OK)
            rc = emit_u(m, &p->e, p->url, p->links, p->nlinks);
        free(p->url);
        free(p->id);
        free_links(p->links, p->nlinks);
    }
    free(sc->pend);
    sc->pend = NULL;
    sc->npend = sc->cappend = 0;
    return rc;
}

static int read_jsonl(struct merger *m, const char *path, int dir_depth,
                      int foreign)
{
    struct scan sc = { 0 };
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0, off = 0;
    int rc = DC_OK;

    if (!f)
        return fail(m, DC_EIO, "%s: %s", path, strerror(errno));
    sc.jsonl = file_add(m, path, foreign);
    sc.path = path;
    sc.dir_depth = dir_depth;
    while (rc == DC_OK && (n = getline(&line, &cap, f)) >= 0) {
        uint64_t at = off;
        const char *why = "line too long";
        size_t len = (size_t)n;
        off += (uint64_t)n;
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (len == 0)
            continue;
        if (len > LINE_MAX_BYTES ||
            (rc = line_scan(m, &sc, line, len, at, &why)) == DC_EPARSE) {
            warnf(m, "%s:%llu: %s, line skipped", path,
                  (unsigned long long)lineno, why);
            rc = DC_OK;
        }
    }
    free(line);
    fclose(f);
    if (rc == DC_OK)
        rc = flush_pending(m, &sc);
    else
        flush_pending(m, &sc);
    return rc ? rc : m->fatal;
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
        if (suffix ? (l <= strlen(suffix) || e->d_name[0] == '.' ||
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
        rc = read_jsonl(m, path, depth, 0);
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

/* ---------------------------------------------- foreign files (adds) */

/* The value of header `name` in a header block (CRLF or LF lines), or
 * NULL; malloc'd. */
static char *head_get(const unsigned char *h, size_t n, const char *name)
{
    size_t nl = strlen(name), pos = 0;

    while (pos < n) {
        const unsigned char *e = memchr(h + pos, '\n', n - pos);
        size_t l = e ? (size_t)(e - (h + pos)) : n - pos;
        if (l > nl && h[pos + nl] == ':' &&
            strncasecmp((const char *)h + pos, name, nl) == 0) {
            size_t s = pos + nl + 1, t = pos + l;
            while (s < t && (h[s] == ' ' || h[s] == '\t'))
                s++;
            while (t > s && (h[t - 1] == '\r' || h[t - 1] == ' '))
                t--;
            return xstrndup((const char *)h + s, t - s);
        }
        if (l == 0 || (l == 1 && h[pos] == '\r'))
            break;
        pos += l + 1;
    }
    return NULL;
}

static size_t http_head_len(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i + 3 < n; i++)
        if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' &&
            b[i + 3] == '\n')
            return i + 4;
    return 0;
}

/* A foreign file being turned into a synthetic page list. */
struct addf {
    const char *src;
    int gz;
    FILE *warc, *jsonl;
    char warc_rel[64];
    int64_t pos;
    struct warc_buf page;  /* the current page's members */
    struct warc_buf line;  /* its JSON line, without range fields */
    char *id;                /* its response id */
    int64_t resp_len;
    size_t pages;
};

static int add_flush(struct addf *a)
{
    if (!a->id)
        return DC_OK;
    warc_buf_printf(&a->line, ",\"warc_file\":\"%s\",\"warc_offset\":%lld,"
                      "\"warc_length\":%zu,\"warc_response_length\":%lld,"
                      "\"warc_record_id\":", a->warc_rel, (long long)a->pos,
                      a->page.len, (long long)a->resp_len);
    warc_json_str(&a->line.p, &a->line.len, &a->line.cap, a->id);
    warc_buf_str(&a->line, ",\"outlinks\":[]}\n");
    if (fwrite(a->page.p, 1, a->page.len, a->warc) != a->page.len ||
        fwrite(a->line.p, 1, a->line.len, a->jsonl) != a->line.len)
        return DC_EIO;
    a->pos += (int64_t)a->page.len;
    a->pages++;
    free(a->id);
    a->id = NULL;
    a->page.len = a->line.len = 0;
    return DC_OK;
}

/* This record's member (copied or recompressed) onto a->page. */
static int add_member(struct addf *a, struct warc_reader *r,
                      const struct warc_record *rec)
{
    const unsigned char *h;
    size_t hl;
    FILE *mf;
    char *raw = NULL;
    size_t rl = 0;
    int rc;

    if (!a->gz) {
        warc_reader_head(r, rec, &h, &hl);
        return warc_record_member(&a->page, 6, h, hl, rec->block,
                                    rec->block_len);
    }
    mf = open_memstream(&raw, &rl);
    if (!mf)
        return DC_ENOMEM;
    rc = warc_reader_copy_raw(r, mf);
    fclose(mf);
    if (rc == DC_OK)
        warc_buf_add(&a->page, raw, rl);
    free(raw);
    return rc;
}

/* A "sha1:<40 hex>" digest rewritten in base32 into dig (so equal
 * payloads group whatever the writer's notation); dig "" when it is not
 * hex. Returns 0. */
static int revisit_hex(const char *spec, char *dig)
{
    unsigned char md[20];
    const char *h = spec + 5;

    dig[0] = '\0';
    if (strlen(h) != 40 || strspn(h, "0123456789abcdefABCDEF") != 40)
        return 0;
    for (int i = 0; i < 20; i++) {
        char two[3] = { h[2 * i], h[2 * i + 1], 0 };
        md[i] = (unsigned char)strtoul(two, NULL, 16);
    }
    dedup_sha1_format(md, dig);
    return 0;
}

static void add_line(struct addf *a, struct warc_reader *r,
                     const struct warc_record *rec)
{
    const unsigned char *h, *pay;
    size_t hl, http, plen;
    char *refers, *ctype = NULL, dig[DEDUP_SHA1_STRLEN + 8];
    int64_t ms = 0;
    int status = 0, revisit = strcmp(rec->type, "revisit") == 0;

    warc_reader_head(r, rec, &h, &hl);
    refers = head_get(h, hl, "WARC-Refers-To-Target-URI");
    http = http_head_len(rec->block, rec->block_len);
    if (rec->block_len > 12 && !memcmp(rec->block, "HTTP/", 5)) {
        const char *sp = memchr(rec->block, ' ', 12);
        if (sp)
            status = atoi(sp + 1);
        ctype = head_get(rec->block, http ? http : rec->block_len,
                         "Content-Type");
    }
    pay = rec->block + http;
    plen = rec->block_len - http;
    if (!rec->payload_digest || strncasecmp(rec->payload_digest, "sha1:", 5) ||
        revisit_hex(rec->payload_digest, dig))
        dedup_sha1_base32(plen ? (const void *)pay : "", plen, dig);
    else if (!dig[0])
        snprintf(dig, sizeof(dig), "%s", rec->payload_digest);
    if (!rec->date || warc_parse_iso(rec->date, &ms))
        ms = 0;
    warc_buf_str(&a->line, "{\"url\":");
    warc_json_str(&a->line.p, &a->line.len, &a->line.cap, rec->target_uri);
    warc_buf_str(&a->line, ",\"final_url\":");
    warc_json_str(&a->line.p, &a->line.len, &a->line.cap, rec->target_uri);
    warc_buf_printf(&a->line, ",\"depth\":0,\"status\":%d,"
                      "\"content_type\":", status);
    if (ctype)
        warc_json_str(&a->line.p, &a->line.len, &a->line.cap, ctype);
    else
        warc_buf_str(&a->line, "null");
    warc_buf_printf(&a->line, ",\"length\":%zu,\"digest\":\"%s\","
                      "\"fetched_at\":", plen, dig);
    {
        char at[40];
        warc_iso_time(ms, at, sizeof(at));
        warc_json_str(&a->line.p, &a->line.len, &a->line.cap, at);
    }
    warc_buf_str(&a->line, ",\"node\":\"add\",\"source\":");
    warc_json_str(&a->line.p, &a->line.len, &a->line.cap, a->src);
    warc_buf_str(&a->line, ",\"duplicate_of\":");
    if (revisit)
        warc_json_str(&a->line.p, &a->line.len, &a->line.cap,
                       refers ? refers : rec->target_uri);
    else
        warc_buf_str(&a->line, "null");
    warc_buf_str(&a->line, ",\"truncated\":false");
    free(refers);
    free(ctype);
}

/* One record of a foreign file. DC_EDIGEST skips the record. */
static int add_record(struct merger *m, struct addf *a, struct warc_reader *r,
                      const struct warc_record *rec)
{
    int page = (strcmp(rec->type, "response") == 0 ||
                strcmp(rec->type, "revisit") == 0) &&
               rec->target_uri && rec->record_id;
    int rc;

    if (a->gz && !warc_reader_raw_ok(r))
        return DC_EPARSE;
    if (warc_record_verify(rec) != DC_OK) {
        warnf(m, "%s: record %s (%s) fails its digest check, skipped",
              a->src, rec->record_id ? rec->record_id : "?", rec->type);
        return DC_OK;
    }
    if (page) {
        size_t before;
        rc = add_flush(a);
        if (rc)
            return rc;
        a->id = xstrdup(rec->record_id);
        add_line(a, r, rec);
        before = a->page.len;
        rc = add_member(a, r, rec);
        a->resp_len = (int64_t)(a->page.len - before);
        return rc;
    }
    if (a->id && rec->concurrent_to && strcmp(rec->concurrent_to, a->id) == 0)
        return add_member(a, r, rec);
    return add_flush(a);
}

static int is_gzip_file(const char *path)
{
    unsigned char b[2] = { 0, 0 };
    FILE *f = fopen(path, "rb");
    int gz;

    if (!f)
        return 0;
    gz = fread(b, 1, 2, f) == 2 && b[0] == 0x1f && b[1] == 0x8b;
    fclose(f);
    return gz;
}

static int add_temp(struct merger *m, const char *name, char *path,
                    size_t cap)
{
    snprintf(path, cap, "%s/%s", m->outdir, name);
    m->temps = xrealloc(m->temps, (m->ntemps + 1) * sizeof(*m->temps));
    m->temps[m->ntemps++] = xstrdup(path);
    return DC_OK;
}

/* Read the foreign file k into synthetic files; a broken file is
 * reported and leaves nothing behind. */
static int add_file(struct merger *m, size_t k)
{
    struct addf a = { 0 };
    struct warc_reader *r;
    struct warc_record rec;
    char wpath[PATH_MAX], jpath[PATH_MAX], name[64];
    int rc, bad = 0;

    a.src = m->o->adds[k];
    if (warc_reader_open(&r, a.src) != DC_OK) {
        warnf(m, "%s: cannot open, skipped", a.src);
        m->st->added_bad++;
        return DC_OK;
    }
    a.gz = is_gzip_file(a.src);
    snprintf(a.warc_rel, sizeof(a.warc_rel), ".add-%zu.warc.gz", k);
    add_temp(m, a.warc_rel, wpath, sizeof(wpath));
    snprintf(name, sizeof(name), ".add-%zu.jsonl", k);
    add_temp(m, name, jpath, sizeof(jpath));
    a.warc = fopen(wpath, "wb");
    a.jsonl = fopen(jpath, "w");
    if (!a.warc || !a.jsonl)
        rc = fail(m, DC_EIO, "%s: cannot create", wpath);
    else
        while ((rc = warc_reader_next(r, &rec)) == DC_OK &&
               (rc = add_record(m, &a, r, &rec)) == DC_OK)
            ;
    if (rc == DC_ENOTFOUND)
        rc = add_flush(&a);
    else if (!m->fatal) {
        warnf(m, "%s: %s, file skipped", a.src,
              rc == DC_EPARSE && a.gz
                  ? "not a WARC with one gzip member per record"
                  : dc_strerror(rc));
        bad = 1;
        rc = DC_OK;
    }
    warc_reader_close(&r);
    if (a.warc && fclose(a.warc) != 0)
        rc = fail(m, DC_EIO, "%s: write failed", wpath);
    if (a.jsonl && fclose(a.jsonl) != 0)
        rc = fail(m, DC_EIO, "%s: write failed", jpath);
    free(a.page.p);
    free(a.line.p);
    free(a.id);
    if (bad) {
        m->st->added_bad++;
        return DC_OK;
    }
    if (rc)
        return rc;
    m->st->added_files++;
    m->st->added_pages += a.pages;
    return read_jsonl(m, jpath, 0, 1);
}

/* ------------------------------------------ pass 2: URLs and scores */

static int emit_d(struct merger *m, const struct ent *e, const char *url)
{
    size_t ul = strlen(url), dl = strlen(e->digest), kl;
    unsigned char *k = xmalloc(dl + ul + 16);
    uint64_t inv = ~e->score;
    int rc;

    memcpy(k, e->digest, dl + 1);
    k[dl + 1] = (e->flags & F_REVISIT) ? 1 : 0;
    kl = dl + 2;
    if (m->o->keep == MERGE_KEEP_SHORTEST) {
        put_be(k + kl, ul, 4);
        put_be(k + kl + 4, inv, 8);
    } else {
        put_be(k + kl, inv, 8);
        put_be(k + kl + 8, ul, 4);
    }
    kl += 12;
    memcpy(k + kl, url, ul);
    rc = xs_add(&m->d, k, kl + ul, e, sizeof(*e));
    free(k);
    return rc;
}

/* O: depth, records first, source file, offset, order. Value: ent, then
 * the URL, the refers-to URL and record id (NUL-terminated). */
static int emit_o(struct merger *m, const struct ent *e, const char *url,
                  const char *ref_url, const char *ref_id)
{
    unsigned char k[32];
    struct warc_buf v = { 0 };
    int rec = (e->flags & F_REC) != 0, rc;

    put_be(k, (uint64_t)(uint32_t)e->depth, 4);
    k[4] = rec ? 0 : 1;
    put_be(k + 5, rec ? e->warc : 0, 4);
    put_be(k + 9, rec ? (uint64_t)e->src_off : 0, 8);
    put_be(k + 17, e->order, 8);
    warc_buf_add(&v, e, sizeof(*e));
    warc_buf_add(&v, url, strlen(url) + 1);
    warc_buf_add(&v, ref_url ? ref_url : "", strlen(ref_url ? ref_url : "") + 1);
    warc_buf_add(&v, ref_id ? ref_id : "", strlen(ref_id ? ref_id : "") + 1);
    rc = xs_add(&m->out, k, 25, v.p, v.len);
    free(v.p);
    return rc;
}

static int content_candidate(const struct ent *e)
{
    return (e->flags & F_REC) && e->digest[0] && e->status >= 200 &&
           e->status <= 299 && !(e->flags & F_TRUNC);
}

/* Distinct sources of links to url in L, advancing the cursor. */
struct lcur {
    struct xcursor c;
    struct xrec x;
    int have;
};

static uint64_t score_of(struct lcur *lc, const char *url)
{
    uint64_t n = 0;
    char *prev = NULL;

    while (lc->have && strcmp(lc->x.k, url) < 0)
        lc->have = xs_next(&lc->c, &lc->x);
    while (lc->have && strcmp(lc->x.k, url) == 0) {
        const char *src = lc->x.k + strlen(lc->x.k) + 1;
        if (!prev || strcmp(prev, src) != 0) {
            n++;
            free(prev);
            prev = xstrdup(src);
        }
        lc->have = xs_next(&lc->c, &lc->x);
    }
    free(prev);
    return n;
}

static int pass_urls(struct merger *m)
{
    struct xcursor uc = { &m->u, NULL, 0 };
    struct lcur lc = { { &m->l, NULL, 0 }, { 0 }, 0 };
    struct xrec x;
    char *last = NULL;
    int rc = DC_OK;

    if (xs_finish(&m->u) || xs_finish(&m->l))
        return fail(m, DC_EIO, "sort: cannot read runs");
    lc.have = xs_next(&lc.c, &lc.x);
    while (rc == DC_OK && xs_next(&uc, &x)) {
        struct ent e;
        if (last && strcmp(last, x.k) == 0) {
            m->st->url_duplicates++;
            continue;
        }
        free(last);
        last = xstrdup(x.k);
        memcpy(&e, x.v, sizeof(e));
        e.score = score_of(&lc, last);
        rc = content_candidate(&e) ? emit_d(m, &e, last)
                                   : emit_o(m, &e, last, NULL, NULL);
    }
    free(last);
    free(uc.hold);
    free(lc.c.hold);
    xs_free(&m->u);
    xs_free(&m->l);
    return rc ? fail(m, rc, "sort: cannot write a run") : DC_OK;
}

/* ----------------------------------------- pass 3: content duplicates */

/* The warc_record_id of a line, malloc'd, or NULL. */
static char *line_field(struct merger *m, const struct ent *e, const char *key)
{
    char *buf = xmalloc((size_t)e->line_len + 1), *v = NULL;
    struct warc_jobj o = { 0 };
    int fd = file_fd(m, e->jsonl);

    if (fd >= 0 && pread_all(fd, buf, e->line_len, (int64_t)e->line_off) ==
                       DC_OK &&
        warc_json_parse(buf, e->line_len, &o) == DC_OK) {
        const char *s = opt_s(&o, key);
        v = s ? xstrdup(s) : NULL;
    }
    warc_jobj_release(&o);
    free(buf);
    return v;
}

static int pass_content(struct merger *m)
{
    struct xcursor dc = { &m->d, NULL, 0 };
    struct xrec x;
    char *group = NULL, *kept_url = NULL, *kept_id = NULL;
    int64_t kept_ms = 0;
    int rc = DC_OK;

    if (xs_finish(&m->d))
        return fail(m, DC_EIO, "sort: cannot read runs");
    while (rc == DC_OK && xs_next(&dc, &x)) {
        struct ent e;
        size_t at = strlen(x.k) + 14; /* digest, NUL, flag, rank */
        char *u = xstrndup(x.k + at, x.kl - at);
        memcpy(&e, x.v, sizeof(e));
        if (!group || strcmp(group, x.k) != 0) {
            free(group);
            free(kept_url);
            free(kept_id);
            group = xstrdup(x.k);
            kept_url = kept_id = NULL;
            if (!(e.flags & F_REVISIT)) { /* a full response: kept */
                kept_url = xstrdup(u);
                kept_id = line_field(m, &e, "warc_record_id");
                kept_ms = e.ms;
                rc = emit_o(m, &e, u, NULL, NULL);
                free(u);
                continue;
            }
        }
        m->st->content_duplicates++;
        if (kept_url && kept_id) {
            char *dup = (e.flags & F_REVISIT)
                            ? line_field(m, &e, "duplicate_of") : NULL;
            if (!dup || strcmp(dup, kept_url) != 0) {
                e.flags |= F_MKREV;
                e.refers_ms = kept_ms;
            }
            free(dup);
        }
        rc = emit_o(m, &e, u, (e.flags & F_MKREV) ? kept_url : NULL,
                    (e.flags & F_MKREV) ? kept_id : NULL);
        free(u);
    }
    free(group);
    free(kept_url);
    free(kept_id);
    free(dc.hold);
    xs_free(&m->d);
    return rc ? fail(m, rc, "sort: cannot write a run") : DC_OK;
}

/* ------------------------------------------------ pass 4: the output */

struct outw {
    int depth;
    FILE *f;
    int64_t pos;
    char name[64], tmp[PATH_MAX], final[PATH_MAX];
};

struct pass4 {
    struct outw cur;
    FILE *pages;
    char ptmp[PATH_MAX];
    unsigned char *buf;
    char **done;        /* finished outputs: "tmp\0final" pairs */
    size_t ndone;
};

static int out_close(struct merger *m, struct pass4 *p4)
{
    struct outw *o = &p4->cur;
    char *pair;

    if (!o->f)
        return DC_OK;
    if (fclose(o->f) != 0) {
        o->f = NULL;
        return fail(m, DC_EIO, "%s: write failed", o->tmp);
    }
    o->f = NULL;
    pair = xmalloc(strlen(o->tmp) + strlen(o->final) + 2);
    strcpy(pair, o->tmp);
    strcpy(pair + strlen(o->tmp) + 1, o->final);
    p4->done = xrealloc(p4->done, (p4->ndone + 1) * sizeof(*p4->done));
    p4->done[p4->ndone++] = pair;
    return DC_OK;
}

static int out_open(struct merger *m, struct pass4 *p4, int depth)
{
    struct outw *o = &p4->cur;
    struct warc_buf info = { 0 };
    int rc;

    if (o->f && o->depth == depth)
        return DC_OK;
    rc = out_close(m, p4);
    if (rc)
        return rc;
    o->depth = depth;
    snprintf(o->name, sizeof(o->name), "depth-%d.warc.gz", depth);
    snprintf(o->final, sizeof(o->final), "%s/%s", m->outdir, o->name);
    snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.tmp", m->outdir, o->name);
    o->f = fopen(o->tmp, "wb");
    if (!o->f)
        return fail(m, DC_EIO, "%s: %s", o->tmp, strerror(errno));
    rc = warc_warcinfo(&info, o->name, "dcrawl merge",
                         "merged output: one copy per URL, content "
                         "duplicates as revisits", 6);
    if (rc == DC_OK && fwrite(info.p, 1, info.len, o->f) != info.len)
        rc = fail(m, DC_EIO, "%s: write failed", o->tmp);
    o->pos = (int64_t)info.len;
    m->st->bytes_out += info.len;
    free(info.p);
    m->st->depths++;
    return rc;
}

/* Copy [off, off+len) of file w to the output. */
static int copy_bytes(struct merger *m, struct pass4 *p4, uint32_t w,
                      int64_t off, int64_t len)
{
    int fd = file_fd(m, w);

    if (fd < 0)
        return fail(m, DC_EIO, "%s: %s", m->files[w].path, strerror(errno));
    while (len > 0) {
        size_t want = len < (int64_t)COPY_CHUNK ? (size_t)len : COPY_CHUNK;
        if (pread_all(fd, p4->buf, want, off))
            return fail(m, DC_EIO, "%s: read failed at %lld",
                        m->files[w].path, (long long)off);
        if (fwrite(p4->buf, 1, want, p4->cur.f) != want)
            return fail(m, DC_EIO, "%s: write failed", p4->cur.tmp);
        off += (int64_t)want;
        len -= (int64_t)want;
        p4->cur.pos += (int64_t)want;
        m->st->bytes_out += want;
        m->st->bytes_in += want;
    }
    return DC_OK;
}

/*
 * Inflate the gzip member at off of file w: its compressed length into
 * *clen, and up to cap bytes of its start into out (*olen). DC_OK, or
 * DC_EPARSE when it is not one whole member.
 */
static int member_read(struct merger *m, uint32_t w, int64_t off,
                       unsigned char *out, size_t cap, size_t *olen,
                       int64_t *clen)
{
    z_stream zs;
    unsigned char in[65536], sink[65536];
    int fd = file_fd(m, w), zr = Z_OK;
    int64_t pos = off;

    memset(&zs, 0, sizeof(zs));
    *olen = 0;
    if (fd < 0 || inflateInit2(&zs, 31) != Z_OK)
        return DC_EIO;
    while (zr != Z_STREAM_END) {
        ssize_t n = pread(fd, in, sizeof(in), (off_t)pos);
        if (n <= 0)
            break;
        zs.next_in = in;
        zs.avail_in = (uInt)n;
        while (zs.avail_in && zr != Z_STREAM_END) {
            int into = *olen < cap;
            zs.next_out = into ? out + *olen : sink;
            zs.avail_out = into ? (uInt)(cap - *olen) : sizeof(sink);
            zr = inflate(&zs, Z_NO_FLUSH);
            if (into)
                *olen = cap - zs.avail_out;
            if (zr != Z_OK && zr != Z_STREAM_END)
                break;
        }
        if (zr != Z_OK && zr != Z_STREAM_END)
            break;
        pos += n - (ssize_t)zs.avail_in;
    }
    *clen = pos - off;
    inflateEnd(&zs);
    return zr == Z_STREAM_END ? DC_OK : DC_EPARSE;
}

/* Write e's revisit of ref_url/ref_id built from its response's head,
 * then the rest of its range. */
static int write_revisit(struct merger *m, struct pass4 *p4, struct ent *e,
                         const char *ref_url, const char *ref_id)
{
    unsigned char *h = xmalloc(HEAD_MAX);
    size_t hl, wl, httpl;
    int64_t clen;
    struct warc_revisit v = { 0 };
    struct warc_buf out = { 0 };
    char *id = NULL, *date = NULL, *uri = NULL, *ip = NULL, rdate[40];
    int rc = member_read(m, e->warc, e->src_off, h, HEAD_MAX, &hl, &clen);

    wl = rc ? 0 : http_head_len(h, hl);
    httpl = wl ? http_head_len(h + wl, hl - wl) : 0;
    if (!httpl) {
        free(h);
        return DC_EPARSE;
    }
    id = head_get(h, wl, "WARC-Record-ID");
    date = head_get(h, wl, "WARC-Date");
    uri = head_get(h, wl, "WARC-Target-URI");
    ip = head_get(h, wl, "WARC-IP-Address");
    warc_iso_time(e->refers_ms, rdate, sizeof(rdate));
    v = (struct warc_revisit){ id, date, uri, ip, e->digest, ref_url,
                                 rdate, ref_id, h + wl, httpl };
    rc = id && date && uri ? warc_revisit_member(&out, 6, &v) : DC_EPARSE;
    if (rc == DC_OK && fwrite(out.p, 1, out.len, p4->cur.f) != out.len)
        rc = fail(m, DC_EIO, "%s: write failed", p4->cur.tmp);
    if (rc == DC_OK) {
        p4->cur.pos += (int64_t)out.len;
        m->st->bytes_out += out.len;
        e->resp_len = (int64_t)out.len;
        if (clen < e->src_len)
            rc = copy_bytes(m, p4, e->warc, e->src_off + clen,
                            e->src_len - clen);
        e->src_len = (int64_t)out.len + (e->src_len - clen);
    }
    free(out.p);
    free(id);
    free(date);
    free(uri);
    free(ip);
    free(h);
    return rc;
}

/* The response member's compressed length when the line did not say. */
static int64_t resp_len_of(struct merger *m, const struct ent *e)
{
    unsigned char none[1];
    size_t ol;
    int64_t clen;

    if (e->resp_len > 0)
        return e->resp_len;
    if (member_read(m, e->warc, e->src_off, none, 0, &ol, &clen) != DC_OK)
        return e->src_len;
    return clen;
}

static int put_records(struct merger *m, struct pass4 *p4, struct ent *e,
                       const char *ref_url, const char *ref_id,
                       int64_t *out_off)
{
    int rc;

    *out_off = -1;
    if (!(e->flags & F_REC))
        return DC_OK;
    rc = out_open(m, p4, e->depth);
    if (rc)
        return rc;
    *out_off = p4->cur.pos;
    if (e->flags & F_MKREV) {
        rc = write_revisit(m, p4, e, ref_url, ref_id);
        if (rc == DC_EPARSE) {
            warnf(m, "%s: response at %lld unreadable, page copied as is",
                  m->files[e->warc].path, (long long)e->src_off);
            e->flags &= ~(uint32_t)F_MKREV;
        } else {
            if (rc == DC_OK)
                m->st->revisits_built++;
            m->st->records++;
            return rc;
        }
    }
    e->resp_len = resp_len_of(m, e);
    rc = copy_bytes(m, p4, e->warc, e->src_off, e->src_len);
    m->st->records++;
    if (!(e->flags & F_INFL))
        m->st->ranges++;
    return rc;
}

static int is_key(const struct warc_jkv *kv, const char *key)
{
    return strcmp(kv->key, key) == 0;
}

static void put_num(struct warc_buf *b, int rec, int64_t v)
{
    if (rec && v >= 0)
        warc_buf_printf(b, "%lld", (long long)v);
    else
        warc_buf_str(b, "null");
}

/* The page's line for pages.jsonl: warc_* fields point into the merged
 * file; "outlinks" becomes "score"; a new revisit gets duplicate_of. */
static void rewrite_line(const struct warc_jobj *o, const struct ent *e,
                         int64_t out_off, const char *fname,
                         const char *ref_url, struct warc_buf *b)
{
    int rec = out_off >= 0, first = 1;
    static const char *const drop[] = { "warc_file", "warc_offset",
        "warc_length", "warc_response_length", "warc_record_id", "outlinks",
        "score" };

    warc_buf_str(b, "{");
    for (size_t i = 0; i < o->n; i++) {
        const struct warc_jkv *kv = &o->kv[i];
        int skip = 0;
        for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
            skip |= is_key(kv, drop[k]);
        if (skip)
            continue;
        if (!first)
            warc_buf_str(b, ",");
        first = 0;
        warc_json_str(&b->p, &b->len, &b->cap, kv->key);
        warc_buf_str(b, ":");
        if (is_key(kv, "duplicate_of") && (e->flags & F_MKREV))
            warc_json_str(&b->p, &b->len, &b->cap, ref_url);
        else
            warc_buf_add(b, kv->raw, kv->raw_len);
    }
    warc_buf_str(b, first ? "\"warc_file\":" : ",\"warc_file\":");
    if (rec)
        warc_json_str(&b->p, &b->len, &b->cap, fname);
    else
        warc_buf_str(b, "null");
    warc_buf_str(b, ",\"warc_offset\":");
    put_num(b, rec, out_off);
    warc_buf_str(b, ",\"warc_length\":");
    put_num(b, rec, e->src_len);
    warc_buf_str(b, ",\"warc_response_length\":");
    put_num(b, rec, e->resp_len);
    warc_buf_str(b, ",\"warc_record_id\":");
    {
        const struct warc_jkv *id = warc_jobj_get(o, "warc_record_id");
        if (rec && id && id->type == WARC_JSTR)
            warc_buf_add(b, id->raw, id->raw_len);
        else
            warc_buf_str(b, "null");
    }
    warc_buf_printf(b, ",\"score\":%llu}\n", (unsigned long long)e->score);
}

/* The CDXJ line of a page written at out_off, into the sorter C. */
static int cdx_add(struct merger *m, const struct warc_jobj *o,
                   const struct ent *e, int64_t out_off, const char *fname)
{
    struct warc_buf b = { 0 };
    const char *url = opt_s(o, "final_url"), *ct = opt_s(o, "content_type");
    const char *dig = e->digest;
    char key[4096], ts[40], mime[128] = "unk";
    int revisit = (e->flags & (F_MKREV | F_REVISIT)) != 0, rc;

    if (!url)
        url = opt_s(o, "url");
    warc_surt(url, key, sizeof(key));
    warc_iso_time(e->ms, ts, sizeof(ts));
    if (revisit)
        snprintf(mime, sizeof(mime), "warc/revisit");
    else if (ct)
        snprintf(mime, sizeof(mime), "%.*s", (int)strcspn(ct, "; "), ct);
    if (!strncasecmp(dig, "sha1:", 5))
        dig += 5;
    warc_buf_printf(&b, "%s %.4s%.2s%.2s%.2s%.2s%.2s {\"url\":", key, ts,
                      ts + 5, ts + 8, ts + 11, ts + 14, ts + 17);
    warc_json_str(&b.p, &b.len, &b.cap, url);
    warc_buf_str(&b, ",\"mime\":");
    warc_json_str(&b.p, &b.len, &b.cap, mime);
    warc_buf_printf(&b, ",\"status\":\"%d\",\"digest\":", e->status);
    warc_json_str(&b.p, &b.len, &b.cap, dig);
    warc_buf_printf(&b, ",\"length\":\"%lld\",\"offset\":\"%lld\","
                      "\"filename\":", (long long)e->resp_len,
                      (long long)out_off);
    warc_json_str(&b.p, &b.len, &b.cap, fname);
    warc_buf_str(&b, "}");
    rc = xs_add(&m->cdx, b.p, b.len, NULL, 0);
    free(b.p);
    return rc ? fail(m, rc, "sort: cannot write a run") : DC_OK;
}

static void count_page(struct merger *m, const struct ent *e,
                       const char *url)
{
    m->st->pages++;
    if (e->flags & F_SKIP)
        m->st->skipped++;
    if (e->depth >= 0 && e->depth < 64)
        m->st->pages_per_depth[e->depth]++;
    if (e->status >= 100 && e->status < 600)
        m->st->status[e->status / 100]++;
    else
        m->st->status[0]++;
    if (e->flags & F_TORN) {
        m->st->torn++;
        warnf(m, "%s: %s: records at %lld, %lld bytes, run past the end of "
              "%s: torn record, skipped", m->files[e->jsonl].path, url,
              (long long)e->src_off, (long long)e->src_len,
              e->warc != NOFILE ? m->files[e->warc].path : "?");
    }
}

static int one_page(struct merger *m, struct pass4 *p4, const struct xrec *x)
{
    struct ent e;
    const char *url, *ref_url, *ref_id;
    struct warc_jobj o = { 0 };
    struct warc_buf b = { 0 };
    char *line = NULL;
    int64_t out_off = -1;
    int rc, fd;

    memcpy(&e, x->v, sizeof(e));
    url = x->v + sizeof(e);
    ref_url = url + strlen(url) + 1;
    ref_id = ref_url + strlen(ref_url) + 1;
    rc = put_records(m, p4, &e, ref_url, ref_id, &out_off);
    if (rc)
        return rc;
    line = xmalloc((size_t)e.line_len + 1);
    fd = file_fd(m, e.jsonl);
    if (fd < 0 || pread_all(fd, line, e.line_len, (int64_t)e.line_off) ||
        warc_json_parse(line, e.line_len, &o) != DC_OK) {
        warc_jobj_release(&o);
        free(line);
        return fail(m, DC_EIO, "%s: line at %llu changed during the merge",
                    m->files[e.jsonl].path, (unsigned long long)e.line_off);
    }
    rewrite_line(&o, &e, out_off, p4->cur.name, ref_url, &b);
    if (fwrite(b.p, 1, b.len, p4->pages) != b.len)
        rc = fail(m, DC_EIO, "%s: write failed", p4->ptmp);
    if (rc == DC_OK && out_off >= 0)
        rc = cdx_add(m, &o, &e, out_off, p4->cur.name);
    count_page(m, &e, url);
    warc_jobj_release(&o);
    free(b.p);
    free(line);
    return rc;
}

static int pass_output(struct merger *m, struct pass4 *p4)
{
    struct xcursor oc = { &m->out, NULL, 0 };
    struct xrec x;
    int rc = DC_OK;

    if (xs_finish(&m->out))
        return fail(m, DC_EIO, "sort: cannot read runs");
    snprintf(p4->ptmp, sizeof(p4->ptmp), "%s/.pages.jsonl.tmp", m->outdir);
    p4->pages = fopen(p4->ptmp, "w");
    if (!p4->pages)
        return fail(m, DC_EIO, "%s: %s", p4->ptmp, strerror(errno));
    p4->buf = xmalloc(COPY_CHUNK);
    while (rc == DC_OK && xs_next(&oc, &x))
        rc = one_page(m, p4, &x);
    free(oc.hold);
    free(p4->buf);
    p4->buf = NULL;
    xs_free(&m->out);
    if (rc == DC_OK)
        rc = out_close(m, p4);
    if (fclose(p4->pages) != 0 && rc == DC_OK)
        rc = fail(m, DC_EIO, "%s: write failed", p4->ptmp);
    p4->pages = NULL;
    return rc;
}

/* ------------------------------------------ pass 5: index and summary */

static int write_index(struct merger *m)
{
    struct xcursor cc = { &m->cdx, NULL, 0 };
    struct xrec x;
    char tmp[PATH_MAX];
    FILE *f;
    int bad = 0;

    if (xs_finish(&m->cdx))
        return fail(m, DC_EIO, "sort: cannot read runs");
    snprintf(tmp, sizeof(tmp), "%s/.index.cdxj.tmp", m->outdir);
    f = fopen(tmp, "w");
    if (!f)
        return fail(m, DC_EIO, "%s: %s", tmp, strerror(errno));
    while (xs_next(&cc, &x))
        bad |= fwrite(x.k, 1, x.kl, f) != x.kl || fputc('\n', f) == EOF;
    free(cc.hold);
    xs_free(&m->cdx);
    if (fclose(f) != 0 || bad)
        return fail(m, DC_EIO, "%s: write failed", tmp);
    return DC_OK;
}

static int write_summary(struct merger *m)
{
    const struct merge_stats *s = m->st;
    char tmp[PATH_MAX];
    FILE *f;
    int first = 1;

    snprintf(tmp, sizeof(tmp), "%s/.summary.json.tmp", m->outdir);
    f = fopen(tmp, "w");
    if (!f)
        return fail(m, DC_EIO, "%s: %s", tmp, strerror(errno));
    fprintf(f, "{\n  \"pages\": %llu,\n  \"skipped\": %llu,\n"
            "  \"pages_per_depth\": {",
            (unsigned long long)s->pages, (unsigned long long)s->skipped);
    for (int d = 0; d < 64; d++) {
        if (!s->pages_per_depth[d])
            continue;
        fprintf(f, "%s\"%d\": %llu", first ? "" : ", ", d,
                (unsigned long long)s->pages_per_depth[d]);
        first = 0;
    }
    fprintf(f, "},\n  \"duplicates\": {\"url\": %llu, \"content\": %llu, "
            "\"content_revisits_built\": %llu},\n",
            (unsigned long long)s->url_duplicates,
            (unsigned long long)s->content_duplicates,
            (unsigned long long)s->revisits_built);
    fprintf(f, "  \"keep\": \"%s\",\n",
            m->o->keep == MERGE_KEEP_SHORTEST ? "shortest-url"
                                              : "highest-score");
    fprintf(f, "  \"bytes\": {\"warc_in\": %llu, \"warc_out\": %llu},\n",
            (unsigned long long)s->bytes_in,
            (unsigned long long)s->bytes_out);
    fprintf(f, "  \"status\": {\"none\": %llu, \"1xx\": %llu, \"2xx\": %llu, "
            "\"3xx\": %llu, \"4xx\": %llu, \"5xx\": %llu},\n",
            (unsigned long long)s->status[0], (unsigned long long)s->status[1],
            (unsigned long long)s->status[2], (unsigned long long)s->status[3],
            (unsigned long long)s->status[4], (unsigned long long)s->status[5]);
    fprintf(f, "  \"torn\": %llu,\n  \"files\": %llu,\n  \"depth_files\": "
            "%llu,\n  \"added\": {\"files\": %llu, \"pages\": %llu, "
            "\"skipped\": %llu}\n}\n",
            (unsigned long long)s->torn, (unsigned long long)s->files,
            (unsigned long long)s->depths,
            (unsigned long long)s->added_files,
            (unsigned long long)s->added_pages,
            (unsigned long long)s->added_bad);
    if (fclose(f) != 0)
        return fail(m, DC_EIO, "%s: write failed", tmp);
    return DC_OK;
}

/* Rename every output into place (only when everything succeeded). */
static int publish(struct merger *m, struct pass4 *p4, int ok)
{
    static const char *const names[] = { "pages.jsonl", "index.cdxj",
                                         "summary.json" };
    char tmp[PATH_MAX], final[PATH_MAX];
    int rc = DC_OK;

    for (size_t i = 0; i < p4->ndone; i++) {
        const char *t = p4->done[i], *fn = t + strlen(t) + 1;
        if (ok && rc == DC_OK && rename(t, fn) != 0)
            rc = fail(m, DC_EIO, "%s: %s", fn, strerror(errno));
        if (!ok || rc)
            remove(t);
        free(p4->done[i]);
    }
    free(p4->done);
    if (p4->cur.f) {
        fclose(p4->cur.f);
        remove(p4->cur.tmp);
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", m->outdir, names[i]);
        snprintf(final, sizeof(final), "%s/%s", m->outdir, names[i]);
        if (ok && rc == DC_OK && rename(tmp, final) != 0)
            rc = fail(m, DC_EIO, "%s: %s", final, strerror(errno));
        if (!ok || rc)
            remove(tmp);
    }
    return rc;
}

static void merger_free(struct merger *m)
{
    xs_free(&m->u);
    xs_free(&m->l);
    xs_free(&m->d);
    xs_free(&m->out);
    xs_free(&m->cdx);
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i].path);
    free(m->files);
    for (size_t i = 0; i < m->ntemps; i++) {
        remove(m->temps[i]);
        free(m->temps[i]);
    }
    free(m->temps);
    if (m->cache_fd >= 0)
        close(m->cache_fd);
}

static void sorters_init(struct merger *m, const char *tmpdir, size_t mem)
{
    struct xsort *s[] = { &m->u, &m->l, &m->d, &m->out, &m->cdx };
    static const char *const tags[] = { "u", "l", "d", "o", "c" };

    for (size_t i = 0; i < 5; i++) {
        s[i]->tmpdir = tmpdir;
        s[i]->tag = tags[i];
        s[i]->budget = mem / 2;
        s[i]->spills = &m->st->runs;
    }
}

static int run_passes(struct merger *m, struct pass4 *p4)
{
    int rc = DC_OK;

    for (size_t k = 0; k < m->o->nadds && rc == DC_OK; k++)
        rc = add_file(m, k);
    if (rc == DC_OK)
        rc = read_lines(m);
    if (rc == DC_OK)
        rc = pass_urls(m);
    if (rc == DC_OK)
        rc = pass_content(m);
    if (rc == DC_OK)
        rc = pass_output(m, p4);
    if (rc == DC_OK)
        rc = write_index(m);
    if (rc == DC_OK)
        rc = write_summary(m);
    return rc;
}

int merge_run_opts(const char *dir, const struct merge_opts *o,
                   struct merge_stats *st, FILE *warn, char *err,
                   size_t errlen)
{
    struct merger m = { 0 };
    struct merge_stats local;
    struct merge_opts defaults = { 0 };
    struct pass4 p4 = { 0 };
    char def[PATH_MAX];
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!dir || !*dir)
        return DC_EINVAL;
    if (!o)
        o = &defaults;
    m.outdir = o->outdir;
    if (!m.outdir) {
        snprintf(def, sizeof(def), "%s/merged", dir);
        m.outdir = def;
    }
    m.dir = dir;
    m.o = o;
    m.warn = warn;
    m.st = st ? st : &local;
    m.err = err;
    m.errlen = errlen;
    m.cache_fd = -1;
    memset(m.st, 0, sizeof(*m.st));
    sorters_init(&m, o->tmpdir ? o->tmpdir : m.outdir,
                 o->mem_bytes ? o->mem_bytes : MEM_DEFAULT);
    {
        DIR *d = opendir(dir);
        if (!d)
            rc = fail(&m, DC_EIO, "%s: %s", dir, strerror(errno));
        else {
            closedir(d);
            rc = warc_mkdirs(m.outdir) != DC_OK
                     ? fail(&m, DC_EIO, "%s: cannot create", m.outdir)
                     : DC_OK;
        }
    }
    if (rc == DC_OK)
        rc = run_passes(&m, &p4);
    rc = publish(&m, &p4, rc == DC_OK) ? (rc ? rc : DC_EIO) : rc;
    merger_free(&m);
    return rc;
}

int merge_run(const char *dir, const char *outdir, struct merge_stats *st,
              FILE *warn, char *err, size_t errlen)
{
    struct merge_opts o = { 0 };

    o.outdir = outdir;
    return merge_run_opts(dir, &o, st, warn, err, errlen);
}
