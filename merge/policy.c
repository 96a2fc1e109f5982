/*
 * policy.c: passes 2 and 3 of the merge: which copy of a page is kept.
 *
 * Pass 2 walks U (lines by URL) and L (outlinks by target) together: the
 * first line of each URL is kept (the most recent fetch; on equal times
 * the one read later; a "skipped" line only when no line of the URL was
 * requested), and its score is the number of distinct source URLs linking
 * to it. Pages with a complete 2xx response and a payload digest go to the
 * sorter D (key: digest, full responses first, then the keep policy's
 * rank: highest score or shortest URL); the rest go straight to O.
 *
 * Pass 3 walks D: in each digest group the first entry stays a full
 * response when it is one (a revisit from the crawl has no body to keep)
 * and the others become revisits of it (F_MKREV). Everything goes to O
 * (key: depth, source file, source offset) for pass 4.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "merge-internal.h"

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
        merge__put_be(k + kl, ul, 4);
        merge__put_be(k + kl + 4, inv, 8);
    } else {
        merge__put_be(k + kl, inv, 8);
        merge__put_be(k + kl + 8, ul, 4);
    }
    kl += 12;
    memcpy(k + kl, url, ul);
    rc = merge__xs_add(&m->d, k, kl + ul, e, sizeof(*e));
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

    merge__put_be(k, (uint64_t)(uint32_t)e->depth, 4);
    k[4] = rec ? 0 : 1;
    merge__put_be(k + 5, rec ? e->warc : 0, 4);
    merge__put_be(k + 9, rec ? (uint64_t)e->src_off : 0, 8);
    merge__put_be(k + 17, e->order, 8);
    warc_buf_add(&v, e, sizeof(*e));
    warc_buf_add(&v, url, strlen(url) + 1);
    warc_buf_add(&v, ref_url ? ref_url : "",
                 strlen(ref_url ? ref_url : "") + 1);
    warc_buf_add(&v, ref_id ? ref_id : "", strlen(ref_id ? ref_id : "") + 1);
    rc = merge__xs_add(&m->out, k, 25, v.p, v.len);
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
    unsigned char prev[8];

    while (lc->have && strcmp(lc->x.k, url) < 0)
        lc->have = merge__xs_next(&lc->c, &lc->x);
    while (lc->have && strcmp(lc->x.k, url) == 0) {
        /* the source's fingerprint; sorted, so equal ones are adjacent */
        const char *src = lc->x.k + strlen(lc->x.k) + 1;
        if (!n || memcmp(prev, src, 8) != 0) {
            n++;
            memcpy(prev, src, 8);
        }
        lc->have = merge__xs_next(&lc->c, &lc->x);
    }
    return n;
}

int merge__pass_urls(struct merger *m)
{
    struct xcursor uc = { &m->u, NULL, 0 };
    struct lcur lc = { { &m->l, NULL, 0 }, { 0 }, 0 };
    struct xrec x;
    char *last = NULL;
    int rc = DC_OK;

    if (merge__xs_finish(&m->u) || merge__xs_finish(&m->l))
        return merge__sort_fail(m, DC_EIO);
    lc.have = merge__xs_next(&lc.c, &lc.x);
    while (rc == DC_OK && merge__xs_next(&uc, &x)) {
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
    merge__xs_free(&m->u);
    merge__xs_free(&m->l);
    return rc ? merge__sort_fail(m, rc) : DC_OK;
}

/* ----------------------------------------- pass 3: content duplicates */

/* The warc_record_id of a line, malloc'd, or NULL. */
static char *line_field(struct merger *m, const struct ent *e, const char *key)
{
    char *buf = xmalloc((size_t)e->line_len + 1), *v = NULL;
    struct warc_jobj o = { 0 };

    if (merge__read_line(m, e, buf) == DC_OK &&
        warc_json_parse(buf, e->line_len, &o) == DC_OK) {
        const char *s = merge__opt_s(&o, key);
        v = s ? xstrdup(s) : NULL;
    }
    warc_jobj_release(&o);
    free(buf);
    return v;
}

int merge__pass_content(struct merger *m)
{
    struct xcursor dc = { &m->d, NULL, 0 };
    struct xrec x;
    char *group = NULL, *kept_url = NULL, *kept_id = NULL;
    struct ent kept = { 0 }; /* the group's full response */
    int kept_read = 0; /* kept_id looked up */
    int rc = DC_OK;

    if (merge__xs_finish(&m->d))
        return merge__sort_fail(m, DC_EIO);
    while (rc == DC_OK && merge__xs_next(&dc, &x)) {
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
            kept_read = 0;
            if (!(e.flags & F_REVISIT)) { /* a full response: kept */
                kept_url = xstrdup(u);
                kept = e; /* its record id is read if a duplicate comes */
                rc = emit_o(m, &e, u, NULL, NULL);
                free(u);
                continue;
            }
        }
        m->st->content_duplicates++;
        if (kept_url && !kept_read) {
            kept_id = line_field(m, &kept, "warc_record_id");
            kept_read = 1;
        }
        if (kept_url && kept_id) {
            char *dup = (e.flags & F_REVISIT)
                            ? line_field(m, &e, "duplicate_of") : NULL;
            if (!dup || strcmp(dup, kept_url) != 0) {
                e.flags |= F_MKREV;
                e.refers_ms = kept.ms;
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
    merge__xs_free(&m->d);
    return rc ? merge__sort_fail(m, rc) : DC_OK;
}
