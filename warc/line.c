/*
 * line.c: the JSON line of a page (one object per line of a node's
 * .jsonl file; the fields are listed in warc.h). The writer (writer.c)
 * builds it before writing the page, so the line is complete in memory
 * when the page's bytes go out.
 *
 * Reentrant; nothing prints.
 */
#include <stdint.h>
#include <stdio.h>

#include "warc-internal.h"

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
void warc__page_line(struct warc_buf *j, const struct warc_page *p,
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
