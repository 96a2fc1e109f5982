/*
 * writer.c: the per-node, per-depth output files (WARC + JSON lines), with
 * rotation at max_bytes, and the JSON line of a page.
 *
 * A struct warc_writer belongs to one thread. Files are created with
 * exclusive create ("x"), so two writers never share a file. Each append
 * writes and flushes the WARC bytes first, then the JSON line: a crash
 * leaves at most a torn last record (readers report it as truncated) or a
 * whole record without its line (an orphan merge_run ignores), never a line
 * whose bytes are missing.
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
    FILE *warc, *jsonl;
    char rel[PATH_MAX]; /* "depth-D/NODE-SSSSS.warc.gz" */
    int64_t pos;        /* bytes in the current WARC file */
    uint64_t total;     /* page bytes appended over the writer's life */
    int next_seq;
    int err;            /* first write error */
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

int warc_writer_open(struct warc_writer **w, const char *dir, int depth,
                     const char *node_id, const struct warc_writer_opts *o)
{
    char sub[PATH_MAX];
    struct warc_writer *x;
    int rc;

    *w = NULL;
    if (!dir || !*dir || depth < 0 || !node_id || !*node_id ||
        strchr(node_id, '/') || node_id[0] == '.' ||
        strlen(node_id) > 200 || !o)
        return DC_EINVAL;
    if ((size_t)snprintf(sub, sizeof(sub), "%s/depth-%d", dir, depth) >=
        sizeof(sub) - 64)
        return DC_EINVAL;
    rc = warc_mkdirs(sub);
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
static int try_seq(struct warc_writer *w, int seq)
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

static int write_all(struct warc_writer *w, FILE *f, const void *d, size_t n)
{
    if (n && fwrite(d, 1, n, f) != n) {
        if (!w->err)
            w->err = DC_EIO;
        return DC_EIO;
    }
    return DC_OK;
}

static int files_open(struct warc_writer *w)
{
    struct warc_buf info = { 0 };
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
    rc = warc_warcinfo(&info, base, w->software, w->settings, w->level);
    if (rc == DC_OK)
        rc = write_all(w, w->warc, info.p, info.len);
    w->pos += (int64_t)info.len;
    free(info.p);
    return rc;
}

static int files_close(struct warc_writer *w)
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

static void json_key(struct warc_buf *j, const char *key)
{
    warc_buf_printf(j, "%s\"%s\":", j->len > 1 ? "," : "", key);
}

static void json_zu(struct warc_buf *j, const char *key, size_t v)
{
    json_key(j, key);
    warc_buf_printf(j, "%zu", v);
}

static void json_bool(struct warc_buf *j, const char *key, int v)
{
    json_key(j, key);
    warc_buf_str(j, v ? "true" : "false");
}

static void json_strval(struct warc_buf *j, const char *key, const char *v)
{
    json_key(j, key);
    if (v)
        warc_json_str(&j->p, &j->len, &j->cap, v);
    else
        warc_buf_str(j, "null");
}

/* The JSON line's fields about the fetch (everything up to warc_file). */
static void page_json_fetch(struct warc_buf *j, const struct warc_page *p,
                            const struct warc_built *b, const char *node)
{
    char at[40];
    int rec = b && b->len > 0;

    warc_iso_time(p->fetched_ms, at, sizeof(at));
    warc_buf_str(j, "{");
    json_strval(j, "url", p->url);
    json_strval(j, "final_url", p->final_url ? p->final_url : p->url);
    json_key(j, "depth");
    warc_buf_printf(j, "%d", p->depth);
    json_key(j, "status");
    warc_buf_printf(j, "%d", p->status);
    json_strval(j, "content_type", p->content_type);
    json_zu(j, "length", p->body_len);
    json_zu(j, "decoded_length", p->decoded_len);
    json_strval(j, "digest", rec ? b->digest : NULL);
    json_strval(j, "fetched_at", at);
    json_strval(j, "node", node);
    json_zu(j, "links_found", p->links_found);
    json_zu(j, "links_new", p->links_new);
    json_zu(j, "noise_seen", p->noise_seen);
    json_zu(j, "noise_dropped_block", p->noise_block);
    json_zu(j, "noise_dropped_cluster", p->noise_cluster);
    json_zu(j, "noise_refused_budget", p->noise_budget);
    json_strval(j, "ip", p->ip);
    json_strval(j, "error", p->error);
    json_strval(j, "skipped", p->skipped);
    json_strval(j, "duplicate_of", p->dup_of_uri);
    json_bool(j, "truncated", p->truncated);
    json_strval(j, "redirect_to", p->redirect_to);
    json_strval(j, "canonical", p->canonical);
    json_strval(j, "refresh", p->refresh);
    json_bool(j, "noindex", p->noindex);
}

/* The page's JSON line: the fetch, then where its records are, then its
 * outlinks. */
static void page_json(struct warc_buf *j, const struct warc_page *p,
                      const struct warc_built *b, const char *node,
                      const char *warc_file, int64_t off, size_t meta_len)
{
    int rec = b && b->len > 0;

    page_json_fetch(j, p, b, node);
    json_strval(j, "warc_file", warc_file);
    json_key(j, "warc_offset");
    if (rec)
        warc_buf_printf(j, "%lld", (long long)off);
    else
        warc_buf_str(j, "null");
    /* contiguous: response, request, then the metadata record */
    json_key(j, "warc_length");
    if (rec)
        warc_buf_printf(j, "%zu", b->len - b->response_off + meta_len);
    else
        warc_buf_str(j, "null");
    json_key(j, "warc_response_length");
    if (rec)
        warc_buf_printf(j, "%zu", b->response_len);
    else
        warc_buf_str(j, "null");
    json_strval(j, "warc_record_id", rec ? b->response_id : NULL);
    json_key(j, "outlinks");
    warc_buf_str(j, "[");
    for (size_t i = 0; i < p->noutlinks; i++) {
        if (i)
            warc_buf_str(j, ",");
        warc_json_str(&j->p, &j->len, &j->cap,
                      p->outlinks[i] ? p->outlinks[i] : "");
    }
    warc_buf_str(j, "]}\n");
}

static int append_page(struct warc_writer *w, const struct warc_page *p,
                       const struct warc_built *b, const char *node_id)
{
    struct warc_buf j = { 0 }, meta = { 0 };
    int64_t off = w->pos + (int64_t)(b ? b->response_off : 0);
    int rc = DC_OK;

    if (b && b->len && b->response_id[0])
        rc = warc__metadata_member(&meta, w->level, p, b);
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
        w->total += b->len;
    }
    if (rc == DC_OK && meta.len) {
        rc = write_all(w, w->warc, meta.p, meta.len);
        w->pos += (int64_t)meta.len;
        w->total += meta.len;
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

uint64_t warc_writer_bytes(const struct warc_writer *w)
{
    return w ? w->total : 0;
}

int warc_writer_append(struct warc_writer *w, const struct warc_page *p,
                       const struct warc_built *b, const char *node_id)
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

int warc_writer_close(struct warc_writer **w)
{
    struct warc_writer *x;
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
