/*
 * lines.c: pass 1 of the merge: reading every node's .jsonl lines.
 *
 * Each line becomes a struct ent in the sorter U (key: URL, requested
 * before skipped, newest fetch first) and one record per outlink in the
 * sorter L (key: target URL + the source URL's 64-bit fingerprint), for
 * the scores of pass 2. The line's records are located by its byte range
 * (warc_offset, warc_length), checked to start and end at gzip member
 * boundaries (a member starts at both ends, or the file ends); a line
 * without a usable range (older output) waits in a pending list and is
 * located after the file is read by inflating its WARC file and matching
 * warc_record_id. Bad lines are reported through merge__warn and skipped;
 * only I/O errors are fatal.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "conf.h"
#include "dedup.h"
#include "merge-internal.h"

const char *merge__opt_s(const struct warc_jobj *o, const char *key)
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

/* Does file w hold a gzip member at off? Lines come in file order, so
 * the checks move forward through a read-ahead window. */
static int magic_at(struct merger *m, uint32_t w, int64_t off)
{
    const unsigned char *b = merge__win_at(m, &m->magic, w, (uint64_t)off, 3);

    return b && b[0] == 0x1f && b[1] == 0x8b && b[2] == 0x08;
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

/* The key of U, then one of L per outlink: the target URL, then the
 * source's fingerprint (8 bytes: scores count distinct sources, and
 * half of L's bytes were source URLs), built in m->key. */
static int emit_u(struct merger *m, const struct ent *e, const char *url,
                  char *const *links, size_t nlinks)
{
    size_t ul = strlen(url);
    unsigned char fp[8];
    char *k;
    int rc;

    xgrow((void **)&m->key, &m->capkey, ul + 18, 1);
    k = m->key;
    memcpy(k, url, ul + 1);
    /* lines of a request before "skipped" lines, whatever their times */
    k[ul + 1] = (e->flags & F_SKIP) ? 1 : 0;
    merge__put_be((unsigned char *)k + ul + 2,
                  ~(uint64_t)(e->ms + (INT64_C(1) << 62)), 8);
    merge__put_be((unsigned char *)k + ul + 10, ~e->order, 8);
    rc = merge__xs_add(&m->u, k, ul + 18, e, sizeof(*e));
    merge__put_be(fp, dedup_fingerprint(url, ul), 8);
    for (size_t i = 0; i < nlinks && rc == DC_OK; i++) {
        size_t tl = strlen(links[i]);
        xgrow((void **)&m->key, &m->capkey, tl + 9, 1);
        memcpy(m->key, links[i], tl + 1);
        memcpy(m->key + tl + 1, fp, 8);
        rc = merge__xs_add(&m->l, m->key, tl + 9, NULL, 0);
    }
    return rc ? merge__sort_fail(m, rc) : DC_OK;
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
    const char *wf = merge__opt_s(o, "warc_file"),
               *id = merge__opt_s(o, "warc_record_id");
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
    e->warc = merge__file_add(m, path, 0);
    size = merge__file_size(m, e->warc);
    if (size < 0)
        return 0;
    if (e->src_off < 0 || e->src_len < 0)
        return 1;
    if (e->src_off > size || e->src_len > size - e->src_off) {
        e->flags |= F_TORN;
        return 0;
    }
    /* a range must hold whole members: a gzip member starts where it
     * starts and where it ends (or the file ends there) */
    if (!magic_at(m, e->warc, e->src_off) ||
        (e->src_len < size - e->src_off &&
         !magic_at(m, e->warc, e->src_off + e->src_len)))
        return 1;
    if (e->resp_len > e->src_len ||
        (e->resp_len > 0 && e->resp_len < e->src_len &&
         !magic_at(m, e->warc, e->src_off + e->resp_len)))
        e->resp_len = -1;
    e->flags |= F_REC;
    return 0;
}

/* The line's fields the later passes need, into e (depth defaults to
 * dir_depth, the depth of the folder the line was read from). */
static void line_fields(const struct warc_jobj *o, int dir_depth,
                        struct ent *e)
{
    const struct warc_jkv *depth, *st, *tr;
    const char *dig;

    e->depth = dir_depth;
    depth = warc_jobj_get(o, "depth");
    if (depth && depth->type == WARC_JNUM && depth->num >= 0 &&
        depth->num <= 1e6)
        e->depth = (int32_t)depth->num;
    st = warc_jobj_get(o, "status");
    if (st && st->type == WARC_JNUM && st->num >= 0 && st->num < 1000)
        e->status = (int32_t)st->num;
    tr = warc_jobj_get(o, "truncated");
    if (tr && tr->type == WARC_JBOOL && tr->boolean)
        e->flags |= F_TRUNC;
    if (merge__opt_s(o, "duplicate_of"))
        e->flags |= F_REVISIT;
    if (merge__opt_s(o, "skipped"))
        e->flags |= F_SKIP;
    dig = merge__opt_s(o, "digest");
    if (dig && strlen(dig) < sizeof(e->digest))
        memcpy(e->digest, dig, strlen(dig) + 1);
}

/* Keep a line to be located by inflating; takes links. */
static void pend_add(struct scan *sc, const struct ent *e, const char *url,
                     const char *id, char **links, size_t nlinks)
{
    struct pending *p;

    if (sc->npend == sc->cappend) {
        void *t = sc->pend;
        xgrow(&t, &sc->cappend, sc->npend + 1, sizeof(*sc->pend));
        sc->pend = t;
    }
    p = &sc->pend[sc->npend++];
    p->e = *e;
    p->url = xstrdup(url);
    p->id = xstrdup(id);
    p->links = links;
    p->nlinks = nlinks;
}

static int line_scan(struct merger *m, struct scan *sc, const char *line,
                     size_t len, uint64_t off, const char **why)
{
    struct warc_jobj o;
    const char *url, *at;
    struct ent e;
    char **links = NULL;
    size_t nlinks = 0;
    int rc = DC_EPARSE, locate;

    memset(&e, 0, sizeof(e));
    *why = "not a flat JSON object";
    if (warc_json_parse(line, len, &o))
        goto out;
    url = merge__opt_s(&o, "url");
    at = merge__opt_s(&o, "fetched_at");
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
    line_fields(&o, sc->dir_depth, &e);
    links = parse_links(&o, &nlinks);
    locate = line_range(m, sc, &o, &e);
    rc = DC_OK;
    if (locate) {
        pend_add(sc, &e, url, merge__opt_s(&o, "warc_record_id"), links,
                 nlinks);
        links = NULL; /* the pending entry owns them now */
        nlinks = 0;
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
        merge__warn(m, "%s: cannot open, its pages lose their records",
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
        merge__warn(m, "%s: torn record at the end, skipped", m->files[w].path);
        m->st->torn++;
    } else if (rc != DC_ENOTFOUND) {
        merge__warn(m, "%s: %s, rest of the file skipped", m->files[w].path,
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
            merge__warn(m,
                        "%s: response %s not found in %s, page kept without "
                        "records",
                        p->url, p->id, m->files[p->e.warc].path);
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

int merge__read_jsonl(struct merger *m, const char *path, int dir_depth,
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
        return merge__fail(m, DC_EIO, "%s: %s", path, strerror(errno));
    sc.jsonl = merge__file_add(m, path, foreign);
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
            merge__warn(m, "%s:%llu: %s, line skipped", path,
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
        rc = merge__read_jsonl(m, path, depth, 0);
    }
    free_list(files, n);
    return rc;
}

static int cmp_depth_name(const void *a, const void *b)
{
    long x = atol(*(char *const *)a + 6), y = atol(*(char *const *)b + 6);

    return x < y ? -1 : x > y;
}

int merge__read_lines(struct merger *m)
{
    size_t n;
    char **depths;
    int rc = DC_OK;
    DIR *d = opendir(m->dir);

    if (!d)
        return merge__fail(m, DC_EIO, "%s: %s", m->dir, strerror(errno));
    closedir(d);
    depths = list_dir(m->dir, NULL, &n);
    if (n)
        qsort(depths, n, sizeof(*depths), cmp_depth_name);
    for (size_t i = 0; i < n && rc == DC_OK; i++)
        rc = read_depth(m, depths[i]);
    free_list(depths, n);
    return rc;
}
