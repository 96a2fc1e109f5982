/*
 * foreign.c: WARC files from elsewhere (merge_opts.adds) turned into input
 * that pass 1 reads like a node's output.
 *
 * A foreign file is read record by record (every digest verified); each
 * response or revisit record, with the records right after it that are
 * WARC-Concurrent-To it, is a page at depth 0. Its members go to a
 * temporary WARC in outdir (recompressed when the file is a plain .warc),
 * with a synthetic .jsonl line each, removed when the merge ends. A file
 * that cannot be read to its end, or whose records share gzip members, is
 * reported and skipped entirely; a record failing its digest check is
 * reported and skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf.h"
#include "dedup.h"
#include "merge-internal.h"

/* The value of header `name` in a header block (CRLF or LF lines), or
 * NULL; malloc'd. */
char *merge__head_get(const unsigned char *h, size_t n, const char *name)
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

size_t merge__http_head_len(const unsigned char *b, size_t n)
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
    struct warc_buf page;    /* the current page's members */
    struct warc_buf line;    /* its JSON line, without range fields */
    char *id;                /* its response id */
    int64_t resp_len;
    size_t pages;
};

static int add_flush(struct addf *a)
{
    if (!a->id)
        return DC_OK;
    warc_buf_printf(&a->line,
                    ",\"warc_file\":\"%s\",\"warc_offset\":%lld,"
                    "\"warc_length\":%zu,\"warc_response_length\":%lld,"
                    "\"warc_record_id\":",
                    a->warc_rel, (long long)a->pos, a->page.len,
                    (long long)a->resp_len);
    warc_json_str(&a->line.p, &a->line.len, &a->line.cap, a->id);
    warc_buf_str(&a->line, ",\"outlinks\":[]}\n");
    if (fwrite(a->page.p, 1, a->page.len, a->warc) != a->page.len ||
        fwrite(a->line.p, 1, a->line.len, a->jsonl) != a->line.len)
        return DC_EOUTPUT;
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
    refers = merge__head_get(h, hl, "WARC-Refers-To-Target-URI");
    http = merge__http_head_len(rec->block, rec->block_len);
    if (rec->block_len > 12 && !memcmp(rec->block, "HTTP/", 5)) {
        const char *sp = memchr(rec->block, ' ', 12);
        if (sp)
            status = atoi(sp + 1);
        ctype = merge__head_get(rec->block, http ? http : rec->block_len,
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
    warc_buf_printf(&a->line,
                    ",\"depth\":0,\"status\":%d,"
                    "\"content_type\":",
                    status);
    if (ctype)
        warc_json_str(&a->line.p, &a->line.len, &a->line.cap, ctype);
    else
        warc_buf_str(&a->line, "null");
    warc_buf_printf(&a->line,
                    ",\"length\":%zu,\"digest\":\"%s\","
                    "\"fetched_at\":",
                    plen, dig);
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
        merge__warn(m, "%s: record %s (%s) fails its digest check, skipped",
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
int merge__add_file(struct merger *m, size_t k)
{
    struct addf a = { 0 };
    struct warc_reader *r;
    struct warc_record rec;
    char wpath[PATH_MAX], jpath[PATH_MAX], name[64];
    int rc, bad = 0;

    a.src = m->o->adds[k];
    if (warc_reader_open(&r, a.src) != DC_OK) {
        merge__warn(m, "%s: cannot open, skipped", a.src);
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
        rc = merge__write_fail(m, a.warc ? jpath : wpath);
    else
        while ((rc = warc_reader_next(r, &rec)) == DC_OK &&
               (rc = add_record(m, &a, r, &rec)) == DC_OK)
            ;
    if (rc == DC_ENOTFOUND)
        rc = add_flush(&a);
    if (rc == DC_EOUTPUT) /* the disk, not the file: fatal */
        rc = merge__write_fail(m, wpath);
    else if (rc && !m->fatal) {
        merge__warn(m, "%s: %s, file skipped", a.src,
                    rc == DC_EPARSE && a.gz
                        ? "not a WARC with one gzip member per record"
                        : dc_strerror(rc));
        bad = 1;
        rc = DC_OK;
    }
    warc_reader_close(&r);
    if (a.warc && fclose(a.warc) != 0)
        rc = merge__write_fail(m, wpath);
    if (a.jsonl && fclose(a.jsonl) != 0)
        rc = merge__write_fail(m, jpath);
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
    return merge__read_jsonl(m, jpath, 0, 1);
}
