/*
 * output.c: pass 4 of the merge: writing the merged WARC files and
 * pages.jsonl, and publishing every output at the end.
 *
 * Walking O (depth, source file, source offset), each kept page's records
 * are copied as their original gzip members (a byte range, copied by the
 * kernel with copy_file_range, else read and written), or,
 * for a page that became a content duplicate here, a revisit record is
 * built from its response's HTTP header block (same WARC-Record-ID, so its
 * request and metadata records still point at it). Its line is rewritten:
 * warc_* fields pointing into the merged file, "outlinks" replaced by
 * "score", duplicate_of set. Each output depth-D.warc.gz starts with a new
 * warcinfo record. Everything is written under a temporary name and
 * renamed into place only when every pass succeeded (merge__publish), so a
 * failed or killed merge leaves the old output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <zlib.h>

#include "conf.h"
#include "merge-internal.h"

static int copy_flush(struct merger *m, struct pass4 *p4);

static int out_close(struct merger *m, struct pass4 *p4)
{
    struct outw *o = &p4->cur;
    char *pair;
    int rc;

    if (!o->f)
        return DC_OK;
    if ((rc = copy_flush(m, p4)) != DC_OK)
        return rc;
    if (fclose(o->f) != 0) {
        o->f = NULL;
        return merge__write_fail(m, o->tmp);
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
        return merge__write_fail(m, o->tmp);
    if (!p4->wbuf)
        p4->wbuf = xmalloc(OUT_BUF);
    setvbuf(o->f, p4->wbuf, _IOFBF, OUT_BUF);
    rc = warc_warcinfo(&info, o->name, "dcrawl merge",
                       "merged output: one copy per URL, content "
                       "duplicates as revisits",
                       6);
    if (rc == DC_OK && fwrite(info.p, 1, info.len, o->f) != info.len)
        rc = merge__write_fail(m, o->tmp);
    o->pos = (int64_t)info.len;
    m->st->bytes_out += info.len;
    free(info.p);
    m->st->depths++;
    return rc;
}

/* Copy [off, off+len) of file w to the output's end: in the kernel while
 * copy_file_range works between the two files (not across file systems
 * on older kernels, nor on some file systems), then through p4->buf. */
static int copy_now(struct merger *m, struct pass4 *p4, uint32_t w,
                    int64_t off, int64_t len)
{
    int fd = merge__file_fd(m, w);

    if (fd < 0)
        return merge__fail(m, DC_EIO, "%s: %s", m->files[w].path,
                           strerror(errno));
    if (len > 0 && !p4->no_kcopy && fflush(p4->cur.f) != 0)
        return merge__write_fail(m, p4->cur.tmp);
    while (len > 0 && !p4->no_kcopy) {
        off_t in = (off_t)off;
        ssize_t k = copy_file_range(fd, &in, fileno(p4->cur.f), NULL,
                                    (size_t)len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                      errno == EOPNOTSUPP || errno == EBADF)) {
            p4->no_kcopy = 1; /* the output's file offset did not move */
            break;
        }
        if (k < 0)
            return merge__write_fail(m, p4->cur.tmp);
        if (k == 0)
            return merge__fail(m, DC_EIO, "%s: read failed at %lld",
                               m->files[w].path, (long long)off);
        off += k;
        len -= k;
        m->st->bytes_out += (uint64_t)k;
        m->st->bytes_in += (uint64_t)k;
    }
    while (len > 0) {
        size_t want = len < (int64_t)COPY_CHUNK ? (size_t)len : COPY_CHUNK;
        if (merge__pread_all(fd, p4->buf, want, off))
            return merge__fail(m, DC_EIO, "%s: read failed at %lld",
                               m->files[w].path, (long long)off);
        if (fwrite(p4->buf, 1, want, p4->cur.f) != want)
            return merge__write_fail(m, p4->cur.tmp);
        off += (int64_t)want;
        len -= (int64_t)want;
        m->st->bytes_out += want;
        m->st->bytes_in += want;
    }
    return DC_OK;
}

/* Copy what copy_bytes has queued. */
static int copy_flush(struct merger *m, struct pass4 *p4)
{
    int64_t len = p4->pend_len;

    if (len <= 0)
        return DC_OK;
    p4->pend_len = 0;
    return copy_now(m, p4, p4->pend_w, p4->pend_off, len);
}

/* Append [off, off+len) of file w to the output. The copy is queued:
 * ranges that continue the queued one are joined, so a depth whose pages
 * are kept in file order is one copy_file_range per source file instead of
 * one per page (three system calls per page before, with the flush).
 * p4->cur.pos counts the queued bytes; copy_flush runs before anything
 * else is written and when the output is closed. */
static int copy_bytes(struct merger *m, struct pass4 *p4, uint32_t w,
                      int64_t off, int64_t len)
{
    int rc;

    if (len <= 0)
        return DC_OK;
    if (p4->pend_len > 0 && p4->pend_w == w &&
        p4->pend_off + p4->pend_len == off) {
        p4->pend_len += len;
    } else {
        if ((rc = copy_flush(m, p4)) != DC_OK)
            return rc;
        p4->pend_w = w;
        p4->pend_off = off;
        p4->pend_len = len;
    }
    p4->cur.pos += len;
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
    int fd = merge__file_fd(m, w), zr = Z_OK;
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

    wl = rc ? 0 : merge__http_head_len(h, hl);
    httpl = wl ? merge__http_head_len(h + wl, hl - wl) : 0;
    if (!httpl) {
        free(h);
        return DC_EPARSE;
    }
    id = merge__head_get(h, wl, "WARC-Record-ID");
    date = merge__head_get(h, wl, "WARC-Date");
    uri = merge__head_get(h, wl, "WARC-Target-URI");
    ip = merge__head_get(h, wl, "WARC-IP-Address");
    warc_iso_time(e->refers_ms, rdate, sizeof(rdate));
    v = (struct warc_revisit){ id, date, uri, ip, e->digest, ref_url,
                               rdate, ref_id, h + wl, httpl };
    rc = id && date && uri ? warc_revisit_member(&out, 6, &v) : DC_EPARSE;
    if (rc == DC_OK)
        rc = copy_flush(m, p4);
    if (rc == DC_OK && fwrite(out.p, 1, out.len, p4->cur.f) != out.len)
        rc = merge__write_fail(m, p4->cur.tmp);
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
            merge__warn(m, "%s: response at %lld unreadable, page copied as is",
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
    return kv->key[0] == key[0] && strcmp(kv->key, key) == 0;
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
        warc_buf_add(b, kv->raw_key, kv->raw_key_len);
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

static void count_page(struct merger *m, const struct ent *e,
                       const char *url)
{
    m->st->pages++;
    if (e->flags & F_SKIP)
        m->st->skipped++;
    if (e->depth >= 0 && e->depth < DC_DEPTHS)
        m->st->pages_per_depth[e->depth]++;
    if (e->status >= 100 && e->status < 600)
        m->st->status[e->status / 100]++;
    else
        m->st->status[0]++;
    if (e->flags & F_TORN) {
        m->st->torn++;
        merge__warn(m,
                    "%s: %s: records at %lld, %lld bytes, run past the end of "
                    "%s: torn record, skipped",
                    m->files[e->jsonl].path, url, (long long)e->src_off,
                    (long long)e->src_len,
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
    int rc;

    memcpy(&e, x->v, sizeof(e));
    url = x->v + sizeof(e);
    ref_url = url + strlen(url) + 1;
    ref_id = ref_url + strlen(ref_url) + 1;
    rc = put_records(m, p4, &e, ref_url, ref_id, &out_off);
    if (rc)
        return rc;
    line = xmalloc((size_t)e.line_len + 1);
    if (merge__read_line(m, &e, line) ||
        warc_json_parse(line, e.line_len, &o) != DC_OK) {
        warc_jobj_release(&o);
        free(line);
        return merge__fail(
            m, DC_EIO, "%s: line at %llu changed during the merge",
            m->files[e.jsonl].path, (unsigned long long)e.line_off);
    }
    rewrite_line(&o, &e, out_off, p4->cur.name, ref_url, &b);
    if (fwrite(b.p, 1, b.len, p4->pages) != b.len)
        rc = merge__write_fail(m, p4->ptmp);
    if (rc == DC_OK && out_off >= 0)
        rc = merge__cdx_add(m, &o, &e, out_off, p4->cur.name);
    count_page(m, &e, url);
    warc_jobj_release(&o);
    free(b.p);
    free(line);
    return rc;
}

int merge__pass_output(struct merger *m, struct pass4 *p4)
{
    struct xcursor oc = { &m->out, NULL, 0 };
    struct xrec x;
    int rc = DC_OK;

    if ((rc = merge__xs_finish(&m->out)) != DC_OK)
        return merge__sort_fail(m, rc);
    snprintf(p4->ptmp, sizeof(p4->ptmp), "%s/.pages.jsonl.tmp", m->outdir);
    p4->pages = fopen(p4->ptmp, "w");
    if (!p4->pages)
        return merge__write_fail(m, p4->ptmp);
    p4->pbuf = xmalloc(OUT_BUF);
    setvbuf(p4->pages, p4->pbuf, _IOFBF, OUT_BUF);
    p4->buf = xmalloc(COPY_CHUNK);
    while (rc == DC_OK && merge__xs_next(&oc, &x))
        rc = one_page(m, p4, &x);
    free(oc.hold);
    if (rc == DC_OK)
        rc = out_close(m, p4); /* its queued copy may need p4->buf */
    free(p4->buf);
    p4->buf = NULL;
    merge__xs_free(&m->out);
    if (fclose(p4->pages) != 0 && rc == DC_OK)
        rc = merge__write_fail(m, p4->ptmp);
    p4->pages = NULL;
    free(p4->pbuf);
    p4->pbuf = NULL;
    return rc;
}

/* Rename every output into place (only when everything succeeded). */
int merge__publish(struct merger *m, struct pass4 *p4, int ok)
{
    static const char *const names[] = { "pages.jsonl", "index.cdxj",
                                         "summary.json" };
    char tmp[PATH_MAX], final[PATH_MAX];
    int rc = DC_OK;

    for (size_t i = 0; i < p4->ndone; i++) {
        const char *t = p4->done[i], *fn = t + strlen(t) + 1;
        if (ok && rc == DC_OK && rename(t, fn) != 0)
            rc = merge__write_fail(m, fn);
        if (!ok || rc)
            remove(t);
        free(p4->done[i]);
    }
    free(p4->done);
    if (p4->cur.f) {
        fclose(p4->cur.f);
        remove(p4->cur.tmp);
    }
    free(p4->wbuf); /* after the last fclose that used it */
    p4->wbuf = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", m->outdir, names[i]);
        snprintf(final, sizeof(final), "%s/%s", m->outdir, names[i]);
        if (ok && rc == DC_OK && rename(tmp, final) != 0)
            rc = merge__write_fail(m, final);
        if (!ok || rc)
            remove(tmp);
    }
    return rc;
}
