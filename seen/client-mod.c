/*
 * client-mod.c: the client side of the seen-set in layout "mod-u64", used
 * when the server has the dcrawl-seen module (seen/module/seen-module.c):
 * one module key "<prefix>:{p}:S" per partition (its hash tag keeps it in the partition's
 * Redis Cluster slot, with the partition's queues), holding the whole
 * 64-bit fingerprints.
 *
 * seen__mod_batch groups a batch by partition (a counting sort) and
 * sends, in one pipeline, one DCSEEN.ADD (or DCSEEN.CHECK) per partition
 * touched with the fingerprints as one binary blob (8 little-endian bytes
 * each, no decimal formatting); each reply is one bulk string of '1'/'0'
 * flags in blob order. The module answers a repeat inside one blob "not
 * new", so the batch is sent as is. The admit script
 * (frontier/lua/admit-mod.lua) calls DCSEEN.ADD on the same key with the
 * same blob format, so a URL marked by one is "seen" to the other.
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "seen.h"
#include "seen-internal.h"


/* Which of the module's commands the server has: DCSEEN.ADD (have_module),
 * DCFRONT.POP, .COMPLETE and .ADMIT (native, unless DCRAWL_LUA_FRONTIER
 * is set in the environment: a switch for benchmarks and tests to run the
 * Lua scripts on the same server) and the native queue layout's
 * DCFRONT.QPOP, .QCOMPLETE, .QADMIT (have_qlayout). A module of an older
 * build has only the first ones. */
int seen__probe_module(struct frontier *f)
{
    redisReply *r = NULL;
    int rc = frontier__command(f, &r, "COMMAND", "INFO", "dcseen.add",
                               "dcfront.pop", "dcfront.complete",
                               "dcfront.admit", "dcfront.qpop",
                               "dcfront.qcomplete", "dcfront.qadmit",
                               (char *)NULL);

    if (rc)
        return rc;
    f->have_module = r->type == REDIS_REPLY_ARRAY && r->elements == 7 &&
                     r->element[0]->type == REDIS_REPLY_ARRAY;
    f->native = f->have_module && !getenv("DCRAWL_LUA_FRONTIER");
    for (size_t i = 1; f->native && i < 4; i++)
        f->native = r->element[i]->type == REDIS_REPLY_ARRAY;
    f->have_qlayout = f->have_module;
    for (size_t i = 4; f->have_qlayout && i < 7; i++)
        f->have_qlayout = r->element[i]->type == REDIS_REPLY_ARRAY;
    freeReplyObject(r);
    return DC_OK;
}

int seen__modkey(const struct frontier *f, int p, char *out,
                          size_t cap)
{
    int n = snprintf(out, cap, "%s:{%d}:S", f->prefix, p);

    return n < 0 || (size_t)n >= cap ? DC_ETOOBIG : DC_OK;
}

void seen__put_le64(unsigned char *out, uint64_t fp)
{
    for (int i = 0; i < 8; i++, fp >>= 8)
        out[i] = (unsigned char)fp;
}

struct buf {
    char *b;
    size_t len, cap;
};

static void buf_add(struct buf *r, const void *s, size_t n)
{
    if (r->len + n > r->cap)
        xgrow((void **)&r->b, &r->cap, r->len + n, 1);
    memcpy(r->b + r->len, s, n);
    r->len += n;
}

static void buf_head(struct buf *r, char c, size_t n)
{
    char tmp[32];
    int k = snprintf(tmp, sizeof(tmp), "%c%zu\r\n", c, n);

    buf_add(r, tmp, (size_t)k);
}

static void buf_bulk(struct buf *r, const void *s, size_t n)
{
    buf_head(r, '$', n);
    buf_add(r, s, n);
    buf_add(r, "\r\n", 2);
}

/* order[] = URL indexes sorted (stably) by partition; part[i] = URL i's. */
static void by_partition(struct frontier *f, const struct frontier_url *u,
                         size_t n, size_t *order, int *part)
{
    size_t *cnt = xcalloc((size_t)f->nparts + 1, sizeof(*cnt));

    for (size_t i = 0; i < n; i++) {
        part[i] = frontier_partition(f, u[i].host, u[i].hostlen);
        cnt[part[i] + 1]++;
    }
    for (int p = 0; p < f->nparts; p++)
        cnt[p + 1] += cnt[p];
    for (size_t i = 0; i < n; i++)
        order[cnt[part[i]]++] = i;
    free(cnt);
}

/* Append "DCSEEN.ADD|CHECK key blob" for URLs order[a .. b); returns
 * the key's slot. */
static int append_call(struct frontier *f, const struct frontier_url *u,
                       const size_t *order, size_t a, size_t b, int p,
                       int check_only, struct buf *r)
{
    char key[512];
    unsigned char le[8];

    seen__modkey(f, p, key, sizeof(key));
    buf_head(r, '*', 3);
    buf_bulk(r, check_only ? "DCSEEN.CHECK" : "DCSEEN.ADD",
             check_only ? 12 : 10);
    buf_bulk(r, key, strlen(key));
    buf_head(r, '$', (b - a) * 8);
    for (size_t j = a; j < b; j++) {
        seen__put_le64(le, u[order[j]].fp);
        buf_add(r, le, 8);
    }
    buf_add(r, "\r\n", 2);
    return frontier__key_slot(key, strlen(key));
}

/* The flags of the call for URLs order[a .. b) into isnew. */
static int read_call(struct frontier *f, const size_t *order, size_t a,
                     size_t b, unsigned char *isnew, const redisReply *rep)
{
    if (rep->type == REDIS_REPLY_ERROR)
        return frontier__seterr(f, DC_EREDIS, "redis: %s", rep->str);
    if (rep->type != REDIS_REPLY_STRING || (size_t)rep->len != b - a)
        return frontier__seterr(f, DC_EREDIS, "seen: bad reply");
    for (size_t j = a; j < b; j++)
        isnew[order[j]] = rep->str[j - a] == '1';
    return DC_OK;
}

int seen__mod_batch(struct frontier *f, const struct frontier_url *u,
                       size_t n, int check_only, unsigned char *isnew)
{
    size_t *order = xmalloc(n * sizeof(*order)), *off, *from, nc = 0;
    int *part = xmalloc(n * sizeof(*part)), rc;
    struct buf r = {NULL, 0, 0};
    struct frontier_raw *raw;
    redisReply **rep;

    by_partition(f, u, n, order, part);
    off = xmalloc((n + 1) * sizeof(*off));
    from = xmalloc((n + 1) * sizeof(*from));
    raw = xmalloc(n * sizeof(*raw));
    for (size_t a = 0, b; a < n; a = b, nc++) {
        for (b = a + 1; b < n && part[order[b]] == part[order[a]]; b++)
            ;
        from[nc] = a;
        off[nc] = r.len;
        raw[nc].slot = append_call(f, u, order, a, b, part[order[a]],
                                   check_only, &r);
    }
    from[nc] = n;
    off[nc] = r.len;
    for (size_t k = 0; k < nc; k++) {
        raw[k].cmd = r.b + off[k];
        raw[k].len = off[k + 1] - off[k];
    }
    rep = xcalloc(nc, sizeof(*rep));
    rc = frontier__pipe(f, raw, nc, rep);
    for (size_t k = 0; !rc && k < nc; k++)
        rc = read_call(f, order, from[k], from[k + 1], isnew, rep[k]);
    frontier__replies_free(rep, nc);
    free(rep);
    free(raw);
    free(off);
    free(from);
    free(r.b);
    free(order);
    free(part);
    return rc;
}

/* ---- layout and usage ---- */

void seen__mod_layout(const struct frontier *f, char *out, size_t cap)
{
    snprintf(out, cap,
             "seen-set layout %s: %d partitions, one dcrawl-seen module key "
             "per partition (256 sorted arrays of 64-bit fingerprints), "
             "fingerprint %s",
             SEEN_LAYOUT_MOD, f->nparts,
             dedup_fp_algo_name(dedup_fingerprint_algo()));
}
