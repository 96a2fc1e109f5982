/*
 * sort.c: the external sort every pass of the merge goes through, so that
 * memory stays bounded whatever the size of the crawl.
 *
 * Records are appended to a buffer of at most `budget` bytes; when it is
 * full, pointers to its records are sorted (qsort on the key bytes) and the
 * buffer is written out as a run file in tmpdir. Finishing either sorts
 * what is in memory (nothing spilled: no file is written) or spills the
 * rest and opens every run; reading then k-way merges the runs with a
 * binary heap keyed on each run's current record. Equal keys come out in
 * an unspecified order, so callers put a tie-breaker (e.g. read order)
 * into their keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "merge-internal.h"

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

/* Note why a run file failed (errno) in s->why, the first time; rc. */
static int xs_failed(struct xsort *s, int rc, const char *path)
{
    if (!s->why[0])
        snprintf(s->why, sizeof(s->why), "%s: %s", path,
                 errno ? strerror(errno) : "write failed");
    return rc;
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
        return xs_failed(s, DC_EOUTPUT, path);
    for (size_t i = 0; i < s->n && !bad; i++)
        bad = fwrite(s->ptr[i], 1, rec_size(s->ptr[i]), f) !=
              rec_size(s->ptr[i]);
    if (bad)
        xs_failed(s, DC_EOUTPUT, path);
    if (fclose(f) != 0 || bad) {
        xs_failed(s, DC_EOUTPUT, path);
        remove(path);
        return DC_EOUTPUT;
    }
    s->paths = xrealloc(s->paths, (s->nruns + 1) * sizeof(*s->paths));
    s->paths[s->nruns++] = xstrdup(path);
    if (s->spills)
        (*s->spills)++;
    s->len = s->n = 0;
    return DC_OK;
}

int merge__xs_add(struct xsort *s, const void *k, size_t kl, const void *v,
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
int merge__xs_finish(struct xsort *s)
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
            return xs_failed(s, DC_EIO, s->paths[i]);
        setvbuf(s->runs[i].f, NULL, _IOFBF, 1 << 16);
        if (run_read(&s->runs[i]))
            s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap; i-- > 0;)
        heap_down(s, i);
    return DC_OK;
}


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

int merge__xs_next(struct xcursor *c, struct xrec *x)
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

void merge__xs_free(struct xsort *s)
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

void merge__put_be(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}
