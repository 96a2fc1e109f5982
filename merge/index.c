/*
 * index.c: pass 5 of the merge: the CDXJ index and the summary.
 *
 * Pass 4 hands every written response or revisit to merge__cdx_add, which
 * puts its CDXJ line (pywb's form: SURT key, 14-digit time stamp, then a
 * JSON object with url, mime, status, digest, length, offset, filename)
 * into the sorter C; merge__write_index writes C in order as index.cdxj.
 * merge__write_summary writes summary.json from the merge's counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "merge-internal.h"

/* The CDXJ line of a page written at out_off, into the sorter C. */
int merge__cdx_add(struct merger *m, const struct warc_jobj *o,
                   const struct ent *e, int64_t out_off, const char *fname)
{
    struct warc_buf b = { 0 };
    const char *url = merge__opt_s(o, "final_url"),
               *ct = merge__opt_s(o, "content_type");
    const char *dig = e->digest;
    char key[4096], ts[40], mime[128] = "unk";
    int revisit = (e->flags & (F_MKREV | F_REVISIT)) != 0, rc;

    if (!url)
        url = merge__opt_s(o, "url");
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
    warc_buf_printf(&b,
                    ",\"length\":\"%lld\",\"offset\":\"%lld\","
                    "\"filename\":",
                    (long long)e->resp_len, (long long)out_off);
    warc_json_str(&b.p, &b.len, &b.cap, fname);
    warc_buf_str(&b, "}");
    rc = merge__xs_add(&m->cdx, b.p, b.len, NULL, 0);
    free(b.p);
    return rc ? merge__sort_fail(m, rc) : DC_OK;
}

int merge__write_index(struct merger *m)
{
    struct xcursor cc = { &m->cdx, NULL, 0 };
    struct xrec x;
    char tmp[PATH_MAX];
    FILE *f;
    int bad = 0;

    int rc = merge__xs_finish(&m->cdx);

    if (rc)
        return merge__sort_fail(m, rc);
    snprintf(tmp, sizeof(tmp), "%s/.index.cdxj.tmp", m->outdir);
    f = fopen(tmp, "w");
    if (!f)
        return merge__fail(m, DC_EOUTPUT, "%s: %s", tmp, strerror(errno));
    while (merge__xs_next(&cc, &x))
        bad |= fwrite(x.k, 1, x.kl, f) != x.kl || fputc('\n', f) == EOF;
    free(cc.hold);
    merge__xs_free(&m->cdx);
    if (fclose(f) != 0 || bad)
        return merge__write_fail(m, tmp);
    return DC_OK;
}

int merge__write_summary(struct merger *m)
{
    const struct merge_stats *s = m->st;
    char tmp[PATH_MAX];
    FILE *f;
    int first = 1;

    snprintf(tmp, sizeof(tmp), "%s/.summary.json.tmp", m->outdir);
    f = fopen(tmp, "w");
    if (!f)
        return merge__fail(m, DC_EOUTPUT, "%s: %s", tmp, strerror(errno));
    fprintf(f, "{\n  \"pages\": %llu,\n  \"skipped\": %llu,\n"
            "  \"pages_per_depth\": {",
            (unsigned long long)s->pages, (unsigned long long)s->skipped);
    for (int d = 0; d < DC_DEPTHS; d++) {
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
        return merge__write_fail(m, tmp);
    return DC_OK;
}
