/*
 * merge.c: the merge driver: merging every node's per-depth output into one
 * copy per URL and one full copy per payload, in bounded memory.
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
 * buffer, two 64 KB windows read ahead (merge__win_at: lines, which passes
 * 3 and 4 read back in about the order they were written, and the WARC
 * bytes where pass 1 checks each range's gzip magic). Passes:
 *  1. Scan every .jsonl line. Key U = url, requested before skipped,
 *     newest fetch first; value: where the line is and what the later
 *     passes need (struct ent). Key L = outlink target + the source URL's
 *     64-bit fingerprint, for every outlink of every line. A line without
 *     a usable range (older output without warc_length, or a range not
 *     starting with a gzip member) is located by inflating its WARC file
 *     and matching warc_record_id (per .jsonl file, after reading it).
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
 * (every fetched copy's "outlinks") that link to the URL. A content
 * duplicate in its first copy's directory, whose links were not extracted
 * (crawler/node-admit.c), contributes none.
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
 * Files: merge.c (this driver: the merger's state, the passes in order,
 * publishing), sort.c (the external sort), lines.c (pass 1), foreign.c
 * (adds), policy.c (passes 2 and 3), output.c (pass 4), index.c (pass 5);
 * merge-internal.h holds what they share. Records, JSON lines and SURT keys
 * come from warc/ (warc.h).
 *
 * Not thread safe; warnings go to the caller's FILE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "conf.h"
#include "merge-internal.h"

#define MEM_DEFAULT ((size_t)64 << 20)

/* ----------------------------------------------------------- the state */

void merge__warn(struct merger *m, const char *fmt, ...)
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

int merge__fail(struct merger *m, int rc, const char *fmt, ...)
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

int merge__write_fail(struct merger *m, const char *path)
{
    return merge__fail(m, DC_EOUTPUT, "%s: %s", path,
                       errno ? strerror(errno) : "write failed");
}

int merge__sort_fail(struct merger *m, int rc)
{
    const struct xsort *s[] = { &m->u, &m->l, &m->d, &m->out, &m->cdx };

    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        if (s[i]->why[0])
            return merge__fail(m, rc, "sort run %s", s[i]->why);
    return merge__fail(m, rc, "sort: %s", dc_strerror(rc));
}

uint32_t merge__file_add(struct merger *m, const char *path, int foreign)
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

int64_t merge__file_size(struct merger *m, uint32_t i)
{
    struct stat sb;

    if (m->files[i].size == -1)
        m->files[i].size = stat(m->files[i].path, &sb) == 0 &&
                                   S_ISREG(sb.st_mode)
                               ? (int64_t)sb.st_size
                               : -2;
    return m->files[i].size;
}

/* An fd for file i: one of MERGE_OPEN_FILES kept open, the least recently
 * used closed to make room. -1 when the file cannot be opened. */
int merge__file_fd(struct merger *m, uint32_t i)
{
    struct merge_fd *slot = &m->fds[0];

    for (size_t k = 0; k < MERGE_OPEN_FILES; k++) {
        struct merge_fd *f = &m->fds[k];
        if (f->fd >= 0 && f->idx == i) {
            f->used = ++m->fd_clock;
            return f->fd;
        }
        if (slot->fd >= 0 && (f->fd < 0 || f->used < slot->used))
            slot = f;
    }
    if (slot->fd >= 0)
        close(slot->fd);
    slot->fd = open(m->files[i].path, O_RDONLY | O_CLOEXEC);
    slot->idx = i;
    slot->used = ++m->fd_clock;
    return slot->fd;
}

/* Up to n bytes at off (fewer only at the file's end) into buf: how many,
 * or -1 on an error. */
static ssize_t pread_upto(int fd, void *buf, size_t n, int64_t off)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r =
            pread(fd, (char *)buf + got, n - got, (off_t)off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int merge__pread_all(int fd, void *buf, size_t n, int64_t off)
{
    return pread_upto(fd, buf, n, off) == (ssize_t)n ? DC_OK : DC_EIO;
}

/* Windows of MERGE_WIN bytes read ahead: passes 3 and 4 read lines back
 * in nearly the order they were written, ~1 KB apart, and pass 1 checks
 * the gzip magic where each line's records start and end, a few KB apart
 * in a WARC file (one pread per window instead of two per line). */
const void *merge__win_at(struct merger *m, struct merge_win *w,
                          uint32_t idx, uint64_t off, size_t n)
{
    int fd;
    ssize_t got;

    if (w->p && w->idx == idx && off >= w->off && off + n <= w->off + w->len)
        return w->p + (off - w->off);
    if (n > MERGE_WIN / 2 || (fd = merge__file_fd(m, idx)) < 0)
        return NULL;
    if (!w->p)
        w->p = xmalloc(MERGE_WIN);
    got = pread_upto(fd, w->p, MERGE_WIN, (int64_t)off);
    w->idx = idx;
    w->off = off;
    w->len = got < 0 ? 0 : (size_t)got;
    return w->len >= n ? w->p : NULL;
}

int merge__read_line(struct merger *m, const struct ent *e, char *buf)
{
    const void *p;
    int fd;

    if (e->line_len <= MERGE_WIN / 2) {
        p = merge__win_at(m, &m->win, e->jsonl, e->line_off, e->line_len);
        if (!p)
            return DC_EIO;
        memcpy(buf, p, e->line_len);
        return DC_OK;
    }
    fd = merge__file_fd(m, e->jsonl);
    if (fd < 0)
        return DC_EIO;
    return merge__pread_all(fd, buf, e->line_len, (int64_t)e->line_off);
}

/* ---------------------------------------------------------- the driver */

static void merger_free(struct merger *m)
{
    merge__xs_free(&m->u);
    merge__xs_free(&m->l);
    merge__xs_free(&m->d);
    merge__xs_free(&m->out);
    merge__xs_free(&m->cdx);
    free(m->win.p);
    free(m->magic.p);
    free(m->key);
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i].path);
    free(m->files);
    for (size_t i = 0; i < m->ntemps; i++) {
        remove(m->temps[i]);
        free(m->temps[i]);
    }
    free(m->temps);
    for (size_t k = 0; k < MERGE_OPEN_FILES; k++)
        if (m->fds[k].fd >= 0)
            close(m->fds[k].fd);
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
        rc = merge__add_file(m, k);
    if (rc == DC_OK)
        rc = merge__read_lines(m);
    if (rc == DC_OK)
        rc = merge__pass_urls(m);
    if (rc == DC_OK)
        rc = merge__pass_content(m);
    if (rc == DC_OK)
        rc = merge__pass_output(m, p4);
    if (rc == DC_OK)
        rc = merge__write_index(m);
    if (rc == DC_OK)
        rc = merge__write_summary(m);
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
    for (size_t k = 0; k < MERGE_OPEN_FILES; k++)
        m.fds[k].fd = -1;
    memset(m.st, 0, sizeof(*m.st));
    sorters_init(&m, o->tmpdir ? o->tmpdir : m.outdir,
                 o->mem_bytes ? o->mem_bytes : MEM_DEFAULT);
    {
        DIR *d = opendir(dir);
        if (!d)
            rc = merge__fail(&m, DC_EIO, "%s: %s", dir, strerror(errno));
        else {
            closedir(d);
            rc = warc_mkdirs(m.outdir) != DC_OK
                     ? merge__fail(&m, DC_EOUTPUT, "%s: %s", m.outdir,
                                   strerror(errno))
                     : DC_OK;
        }
    }
    if (rc == DC_OK)
        rc = run_passes(&m, &p4);
    rc = merge__publish(&m, &p4, rc == DC_OK) ? (rc ? rc : DC_EOUTPUT) : rc;
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
