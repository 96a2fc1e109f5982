/*
 * writer.c: the per-node, per-depth output files (WARC + JSON lines), with
 * rotation at max_bytes.
 *
 * A struct warc_writer belongs to one thread. Files are created with
 * exclusive create (O_EXCL), so two writers never share a file. Each append
 * hands the page's WARC bytes to the kernel first (write(2), no stdio
 * buffer), then its JSON line (line.c): a crash leaves at most a torn last
 * record (readers report it as truncated) or a whole record without its
 * line (an orphan merge_run ignores), never a line whose bytes are missing.
 *
 * A failed write (disk full, quota, I/O error) cuts both files back to
 * their length before the page (ftruncate), so they end with the last
 * complete record and line again; a new file pair whose warcinfo record
 * could not be written is removed. The error is sticky: the writer refuses
 * every later append, and warc_writer_errmsg names the file and the
 * system's reason.
 *
 * A buffered writer (warc_writer_opts.buffered: the node's) keeps what it
 * appends in memory until warc_writer_flush (or WARC_WRITER_BUF bytes):
 * then the records go out in one write(2), then the lines in one more,
 * the same order per batch as above per page; a failed flush cuts both
 * files back to the last flush. The node flushes before it completes the
 * batch's leases, so a page is on disk before its URL counts as done.
 *
 * The JSON line gives the page's records as a byte range of the WARC file:
 * warc_offset (its response member) and warc_length (the response, request
 * and metadata members, contiguous), so merge_run copies them without
 * inflating. The metadata record is built in warc_writer_append (the
 * writer's thread): its outlinks and noise counts are known only after the
 * page's links went through admission.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conf.h"
#include "warc-internal.h"

/* ------------------------------------------------------------- writer */

struct warc_writer {
    char *dir;          /* DIR */
    int depth;
    char *node;
    char *software, *settings;
    int64_t max_bytes;
    int level;
    int wfd, jfd;       /* the current WARC / JSON lines file, or -1 */
    char rel[PATH_MAX]; /* "depth-D/NODE-SSSSS.warc.gz" */
    char wpath[PATH_MAX], jpath[PATH_MAX]; /* their full paths */
    int64_t pos;        /* bytes in the current WARC file */
    int64_t jpos;       /* bytes in the current JSON lines file */
    int buffered;
    struct warc_buf wb, jb; /* buffered: appended, not written yet */
    int64_t wdone, jdone;   /* ... the files' lengths written */
    uint64_t total;     /* page bytes appended over the writer's life */
    int next_seq;
    int err;            /* first error, sticky */
    char errmsg[PATH_MAX + 192]; /* "PATH: reason" of err */
};

/* mkdir -p. */
int warc_mkdirs(const char *path)
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

/* The depth's directory is made with the first file (files_open), so a
 * failure there is reported like any other write error. */
int warc_writer_open(struct warc_writer **w, const char *dir, int depth,
                     const char *node_id, const struct warc_writer_opts *o)
{
    char sub[PATH_MAX];
    struct warc_writer *x;

    *w = NULL;
    if (!dir || !*dir || depth < 0 || !node_id || !*node_id ||
        strchr(node_id, '/') || node_id[0] == '.' ||
        strlen(node_id) > 200 || !o)
        return DC_EINVAL;
    if ((size_t)snprintf(sub, sizeof(sub), "%s/depth-%d", dir, depth) >=
        sizeof(sub) - 64)
        return DC_EINVAL;
    x = xcalloc(1, sizeof(*x));
    x->wfd = x->jfd = -1;
    x->dir = xstrdup(dir);
    x->depth = depth;
    x->node = xstrdup(node_id);
    x->software = xstrdup(o->software ? o->software : "dcrawl");
    x->settings = xstrdup(o->settings ? o->settings : "");
    x->max_bytes = o->max_bytes;
    x->level = o->gzip_level;
    x->buffered = o->buffered;
    *w = x;
    return DC_OK;
}

/* Record the first error: rc, and "path: reason" (errno e) as its
 * message. Returns the writer's (first) error. */
static int fail(struct warc_writer *w, int rc, const char *path, int e)
{
    if (!w->err) {
        w->err = rc;
        snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s", path,
                 e ? strerror(e) : "write failed");
    }
    return w->err;
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 || errno != ENOENT;
}

/* Create the pair for sequence number seq: 0, 1 if taken, or the error
 * (recorded) as a negative number. */
static int try_seq(struct warc_writer *w, int seq)
{
    int n1, n2, n3, e;

    n1 = snprintf(w->rel, sizeof(w->rel), "depth-%d/%s-%05d.warc.gz",
                  w->depth, w->node, seq);
    n2 = snprintf(w->wpath, sizeof(w->wpath), "%s/%s", w->dir, w->rel);
    n3 = snprintf(w->jpath, sizeof(w->jpath), "%s/depth-%d/%s-%05d.jsonl",
                  w->dir, w->depth, w->node, seq);
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= sizeof(w->rel) ||
        (size_t)n2 >= sizeof(w->wpath) || (size_t)n3 >= sizeof(w->jpath))
        return -fail(w, DC_EINVAL, w->dir, ENAMETOOLONG);
    if (file_exists(w->wpath) || file_exists(w->jpath))
        return 1;
    w->wfd = open(w->wpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w->wfd < 0)
        return errno == EEXIST ? 1 : -fail(w, DC_EIO, w->wpath, errno);
    w->jfd = open(w->jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w->jfd < 0) {
        e = errno;
        close(w->wfd);
        w->wfd = -1;
        unlink(w->wpath);
        return e == EEXIST ? 1 : -fail(w, DC_EIO, w->jpath, e);
    }
    return 0;
}

/* write(2) all n bytes of d to fd: 0, or the errno of the failure. */
static int write_full(int fd, const void *d, size_t n)
{
    const char *p = d;

    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Close the current pair, and remove it when drop is set. */
static void pair_close(struct warc_writer *w, int drop)
{
    if (w->wfd >= 0 && close(w->wfd) != 0)
        fail(w, DC_EIO, w->wpath, errno);
    if (w->jfd >= 0 && close(w->jfd) != 0)
        fail(w, DC_EIO, w->jpath, errno);
    if (drop && w->wfd >= 0) {
        unlink(w->wpath);
        unlink(w->jpath);
    }
    w->wfd = w->jfd = -1;
}

/* Open the next free pair (making the depth's directory) and write its
 * warcinfo record. A pair whose warcinfo could not be written is removed:
 * nothing else is in it. */
static int files_open(struct warc_writer *w)
{
    struct warc_buf info = { 0 };
    char sub[PATH_MAX];
    int rc = DC_OK, seq, e;

    snprintf(sub, sizeof(sub), "%s/depth-%d", w->dir, w->depth);
    if (warc_mkdirs(sub) != DC_OK)
        return fail(w, DC_EIO, sub, errno);
    for (seq = w->next_seq; seq < 10000000; seq++) {
        rc = try_seq(w, seq);
        if (rc <= 0)
            break;
    }
    if (rc < 0)
        return -rc;
    if (w->wfd < 0)
        return fail(w, DC_EIO, sub, EEXIST);
    w->next_seq = seq + 1;
    w->pos = w->jpos = 0;
    rc = warc_warcinfo(&info, strrchr(w->rel, '/') + 1, w->software,
                       w->settings, w->level);
    if (rc == DC_OK && (e = write_full(w->wfd, info.p, info.len)) != 0) {
        rc = fail(w, DC_EIO, w->wpath, e);
        pair_close(w, 1);
    }
    w->pos += (int64_t)info.len;
    w->wdone = w->pos;
    w->jdone = 0;
    free(info.p);
    return rc;
}

/* Cut both files back to their lengths before a failed page, so they end
 * with the last complete record and line again. A cut that fails is
 * added to the message (the reader still sees the torn end). */
static void cut_back(struct warc_writer *w, int64_t wlen, int64_t jlen)
{
    size_t n = strlen(w->errmsg);
    const char *path = NULL;

    if (ftruncate(w->wfd, (off_t)wlen) != 0)
        path = w->wpath;
    else if (ftruncate(w->jfd, (off_t)jlen) != 0)
        path = w->jpath;
    if (path)
        snprintf(w->errmsg + n, sizeof(w->errmsg) - n,
                 " (and %s could not be cut back: %s)", path,
                 strerror(errno));
}

/* writev(2) all of iov[0..n) to fd (iov is used up): 0, or the errno of
 * the failure. */
static int writev_full(int fd, struct iovec *iov, int n)
{
    size_t k = 0; /* bytes of iov[0] written */

    for (;;) {
        ssize_t got;
        while (n > 0 && k >= iov->iov_len) { /* empty or written */
            k -= iov->iov_len;
            iov++;
            n--;
        }
        if (n == 0)
            return 0;
        iov->iov_base = (char *)iov->iov_base + k;
        iov->iov_len -= k;
        got = writev(fd, iov, n);
        if (got < 0 && errno == EINTR)
            got = 0;
        else if (got <= 0)
            return got < 0 ? errno : EIO;
        k = (size_t)got;
    }
}

/* Write a page: its records (built, then metadata: one writev), then its
 * line. On a failure both files are cut back to where the page began. */
static int write_page(struct warc_writer *w, const void *rec, size_t rec_len,
                      const struct warc_buf *meta, const struct warc_buf *j)
{
    const char *path = w->wpath;
    struct iovec iov[2] = { { (void *)rec, rec_len }, { meta->p, meta->len } };
    int e = writev_full(w->wfd, iov, 2);

    if (!e) {
        path = w->jpath;
        e = write_full(w->jfd, j->p, j->len);
    }
    if (!e)
        return DC_OK;
    fail(w, DC_EIO, path, e);
    cut_back(w, w->pos, w->jpos);
    return w->err;
}

int warc_writer_flush(struct warc_writer *w)
{
    int e = 0;
    const char *path = NULL;

    if (!w || w->err || !w->buffered || w->wfd < 0)
        return w ? w->err : DC_OK;
    if (w->wb.len && (e = write_full(w->wfd, w->wb.p, w->wb.len)) != 0)
        path = w->wpath;
    else if (w->jb.len && (e = write_full(w->jfd, w->jb.p, w->jb.len)) != 0)
        path = w->jpath;
    w->wb.len = w->jb.len = 0;
    if (path) {
        fail(w, DC_EIO, path, e);
        cut_back(w, w->wdone, w->jdone);
        w->pos = w->wdone;
        w->jpos = w->jdone;
        return w->err;
    }
    w->wdone = w->pos;
    w->jdone = w->jpos;
    return DC_OK;
}

static int append_page(struct warc_writer *w, const struct warc_page *p,
                       const struct warc_built *b, const char *node_id)
{
    struct warc_buf j = { 0 }, meta = { 0 };
    size_t rec_len = b ? b->len : 0;
    int64_t off = w->pos + (int64_t)(b ? b->response_off : 0);
    int rc = DC_OK;

    if (b && b->len && b->response_id[0])
        rc = warc__metadata_member(&meta, w->level, p, b);
    if (rc)
        return rc;
    /*
     * Order matters for crash safety: the WARC bytes reach the kernel
     * before the JSON line that points at them is written. Killed between
     * the two, the file holds an orphan record without a line (merge skips
     * it); the other order could leave a line whose warc_offset/warc_length
     * range is not on disk.
     */
    warc__page_line(&j, p, b, node_id ? node_id : w->node, w->rel, off,
                    meta.len);
    if (w->buffered) {
        if (rec_len)
            warc_buf_add(&w->wb, b->data, rec_len);
        if (meta.len)
            warc_buf_add(&w->wb, meta.p, meta.len);
        warc_buf_add(&w->jb, j.p, j.len);
    } else {
        rc = write_page(w, rec_len ? b->data : NULL, rec_len, &meta, &j);
    }
    if (rc == DC_OK) {
        w->pos += (int64_t)(rec_len + meta.len);
        w->total += rec_len + meta.len;
        w->jpos += (int64_t)j.len;
    }
    free(meta.p);
    free(j.p);
    return rc;
}

uint64_t warc_writer_bytes(const struct warc_writer *w)
{
    return w ? w->total : 0;
}

const char *warc_writer_errmsg(const struct warc_writer *w)
{
    return w && w->err ? w->errmsg : "";
}

int warc_writer_append(struct warc_writer *w, const struct warc_page *p,
                       const struct warc_built *b, const char *node_id)
{
    int rc;

    if (!w || !p || !p->url)
        return DC_EINVAL;
    if (w->err)
        return w->err;
    if (w->wfd < 0) {
        rc = files_open(w);
        if (rc)
            return rc;
    }
    rc = append_page(w, p, b, node_id);
    if (rc)
        return rc;
    if (w->buffered && w->wb.len + w->jb.len >= WARC_WRITER_BUF &&
        (rc = warc_writer_flush(w)) != DC_OK)
        return rc;
    if (w->max_bytes > 0 && w->pos >= w->max_bytes) {
        /* the page is written; an error here is the next append's (or
         * flush's) */
        if (warc_writer_flush(w) == DC_OK)
            pair_close(w, 0);
    }
    return DC_OK;
}

int warc_writer_end(struct warc_writer *w)
{
    if (!w)
        return DC_OK;
    (void)warc_writer_flush(w);
    pair_close(w, 0);
    return w->err;
}

int warc_writer_close(struct warc_writer **w)
{
    struct warc_writer *x;
    int rc;

    if (!w || !*w)
        return DC_OK;
    x = *w;
    (void)warc_writer_flush(x);
    pair_close(x, 0);
    rc = x->err;
    free(x->wb.p);
    free(x->jb.p);
    free(x->dir);
    free(x->node);
    free(x->software);
    free(x->settings);
    free(x);
    *w = NULL;
    return rc;
}
