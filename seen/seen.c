/*
 * seen.c: the seen-set without the queues: batch dedup (seen_batch),
 * what layout is in use and whether Redis keeps it compact
 * (seen_layout), and how big it is (seen_usage).
 * Two layouts: with the dcrawl-seen module loaded, mod-u64 (client-mod.c;
 * these functions hand over to it); else b256-i64, described here.
 *
 * seen_batch sorts a batch by partition and bucket (two counting sorts)
 * and sends, in one pipeline, one call of the seen script per partition
 * touched, its members grouped by bucket as arguments; the script builds
 * the bucket keys from the partition's "<prefix>:{p}:s:" prefix (as the
 * pop script builds queue keys) and answers with one bulk string of '0' /
 * '1' flags, one reply object per partition, cheap to parse. Many small
 * buckets (DEDUP_SUBBUCKETS per partition) keep every set a small intset
 * even under host skew, and small intsets make each insert cheap (an
 * intset insert moves the members after it); routing members in the
 * script keeps the number of commands sent per partition, not per bucket.
 * Each call is atomic: what SMISMEMBER reports absent is what the SADD
 * after it inserts, and a fingerprint lives in one key of one partition,
 * so a member is "new" to one caller only, whoever else asks (other
 * batches, the admit script). A (key, fingerprint) twice in one batch is
 * sent once; its later copies are answered "not new". The keys and members
 * are those of the admit script (dedup.h), so a URL marked by one is
 * "seen" to the other. The RESP text is formatted here into one buffer.
 * (Every key a call touches carries its partition's hash tag, so it stays
 * in one Redis Cluster slot.)
 *
 * Thread rules: as struct frontier.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "seen.h"
#include "seen-internal.h"

/* Keys polled per pipeline by seen_usage. */
#define USAGE_BATCH 8192

/* CONFIG GET set-max-intset-entries; -1 when the server refuses (managed
 * Redis often disables CONFIG). */
void seen__probe_intset(struct frontier *f)
{
    redisReply *r = NULL;

    f->intset_entries = -1;
    if (frontier__command(f, &r, "CONFIG", "GET", "set-max-intset-entries",
                          (char *)NULL) == DC_OK) {
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[1]->type == REDIS_REPLY_STRING)
            f->intset_entries = strtoll(r->element[1]->str, NULL, 10);
        freeReplyObject(r);
    }
}

int seen_layout(const struct frontier *f, char *out, size_t cap)
{
    char have[32];

    if (f->seen_mod) {
        if (out && cap)
            seen__mod_layout(f, out, cap);
        return 0;
    }
    if (f->intset_entries < 0)
        snprintf(have, sizeof(have), "unknown");
    else
        snprintf(have, sizeof(have), "%" PRId64, f->intset_entries);
    if (out && cap)
        snprintf(out, cap,
                 "seen-set layout %s: %d partitions x %d buckets, 64-bit "
                 "integer members, fingerprint %s; compact while a bucket "
                 "holds <= set-max-intset-entries (this Redis: %s, layout "
                 "sized for %d)",
                 SEEN_LAYOUT_B256, f->nparts, DEDUP_SUBBUCKETS,
                 dedup_fp_algo_name(dedup_fingerprint_algo()), have,
                 DEDUP_INTSET_ENTRIES);
    return f->intset_entries < DEDUP_INTSET_ENTRIES;
}

const char *seen_layout_name(const struct frontier *f)
{
    return f->seen_mod ? SEEN_LAYOUT_MOD : SEEN_LAYOUT_B256;
}


/* ---- seen_batch ---- */

/* A batch sorted by bucket key: order[] lists URL indexes by partition,
 * then bucket; sent[i] = 0 for a repeat of an earlier (key, fp) of the
 * batch, which is answered "not new" without asking. */
struct seen_plan {
    size_t *order;
    uint32_t *keyid;    /* per URL: partition * DEDUP_SUBBUCKETS + bucket */
    unsigned char *sent;
};

/* One script call: the URLs order[from .. to) of one partition. */
struct seen_call {
    size_t from, to, members;
};

struct resp {
    char *b;
    size_t len, cap;
};

static void resp_room(struct resp *r, size_t n)
{
    if (r->len + n > r->cap)
        xgrow((void **)&r->b, &r->cap, r->len + n, 1);
}

static void resp_raw(struct resp *r, const char *s, size_t n)
{
    resp_room(r, n);
    memcpy(r->b + r->len, s, n);
    r->len += n;
}

/* Decimal digits of v, right-aligned ending at end; returns the start. */
static char *put_u64(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

/* "<c><n>\r\n" */
static void resp_head(struct resp *r, char c, size_t n)
{
    char tmp[24], *p = put_u64(tmp + sizeof(tmp), n);
    size_t k = (size_t)(tmp + sizeof(tmp) - p);

    resp_room(r, k + 3);
    r->b[r->len++] = c;
    memcpy(r->b + r->len, p, k);
    r->len += k;
    r->b[r->len++] = '\r';
    r->b[r->len++] = '\n';
}

static void resp_bulk(struct resp *r, const char *s, size_t n)
{
    resp_head(r, '$', n);
    resp_raw(r, s, n);
    resp_raw(r, "\r\n", 2);
}

static void resp_uint(struct resp *r, uint64_t v)
{
    char tmp[24], *p = put_u64(tmp + sizeof(tmp), v);

    resp_bulk(r, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* fp as a signed decimal (dedup_seen_member's format, without printf). */
static void resp_member(struct resp *r, uint64_t fp)
{
    char tmp[24], *p = put_u64(tmp + sizeof(tmp), fp >> 63 ? ~fp + 1 : fp);

    if (fp >> 63)
        *--p = '-';
    resp_bulk(r, p, (size_t)(tmp + sizeof(tmp) - p));
}

struct fp_idx {
    uint64_t fp;
    size_t i;
};

static int fp_idx_cmp(const void *a, const void *b)
{
    const struct fp_idx *x = a, *y = b;

    if (x->fp != y->fp)
        return x->fp < y->fp ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Repeats in the key run order[a .. b) (ascending URL index): sent[i] = 1
 * for the first URL of each fingerprint. Short runs compare pairwise
 * (no memory touched beyond the run), long ones sort. */
static void mark_run(const struct frontier_url *u, const size_t *order,
                     size_t a, size_t b, unsigned char *sent,
                     struct fp_idx **tmp, size_t *cap)
{
    if (b - a <= 32) {
        for (size_t j = a; j < b; j++) {
            sent[order[j]] = 1;
            for (size_t q = a; q < j; q++)
                if (u[order[q]].fp == u[order[j]].fp) {
                    sent[order[j]] = 0;
                    break;
                }
        }
        return;
    }
    if (b - a > *cap)
        xgrow((void **)tmp, cap, b - a, sizeof(**tmp));
    for (size_t j = a; j < b; j++)
        (*tmp)[j - a] = (struct fp_idx){u[order[j]].fp, order[j]};
    qsort(*tmp, b - a, sizeof(**tmp), fp_idx_cmp);
    for (size_t k = 0; k < b - a; k++)
        sent[(*tmp)[k].i] = k == 0 || (*tmp)[k].fp != (*tmp)[k - 1].fp;
}

/* sent[i] = 1 for the first URL of each (key, fingerprint) of the batch. */
static void mark_firsts(const struct frontier_url *u, struct seen_plan *pl,
                        size_t n)
{
    struct fp_idx *tmp = NULL;
    size_t cap = 0;

    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && pl->keyid[pl->order[b]] ==
                                     pl->keyid[pl->order[a]]; b++)
            ;
        mark_run(u, pl->order, a, b, pl->sent, &tmp, &cap);
    }
    free(tmp);
}

/* Counting sort by bucket, then a stable one by partition: O(n + keys). */
static void plan_make(struct frontier *f, const struct frontier_url *u,
                      size_t n, struct seen_plan *pl)
{
    size_t nb = DEDUP_SUBBUCKETS, np = (size_t)f->nparts;
    size_t *cnt = xcalloc((np > nb ? np : nb) + 1, sizeof(*cnt));
    size_t *tmp = xmalloc(n * sizeof(*tmp));

    pl->order = xmalloc(n * sizeof(*pl->order));
    pl->keyid = xmalloc(n * sizeof(*pl->keyid));
    pl->sent = xmalloc(n);
    for (size_t i = 0; i < n; i++) {
        int p = frontier_partition(f, u[i].host, u[i].hostlen);
        pl->keyid[i] = (uint32_t)p * DEDUP_SUBBUCKETS + dedup_seen_bucket(u[i].fp);
        cnt[(pl->keyid[i] % nb) + 1]++;
    }
    for (size_t k = 0; k < nb; k++)
        cnt[k + 1] += cnt[k];
    for (size_t i = 0; i < n; i++)
        tmp[cnt[pl->keyid[i] % nb]++] = i;
    memset(cnt, 0, ((np > nb ? np : nb) + 1) * sizeof(*cnt));
    for (size_t i = 0; i < n; i++)
        cnt[(pl->keyid[i] / nb) + 1]++;
    for (size_t k = 0; k < np; k++)
        cnt[k + 1] += cnt[k];
    for (size_t j = 0; j < n; j++)
        pl->order[cnt[pl->keyid[tmp[j]] / nb]++] = tmp[j];
    free(tmp);
    free(cnt);
    mark_firsts(u, pl, n);
}

static void plan_release(struct seen_plan *pl)
{
    free(pl->order);
    free(pl->keyid);
    free(pl->sent);
}

/* Split the sorted batch into one call per partition. */
static size_t plan_calls(const struct seen_plan *pl, size_t n,
                         struct seen_call **out)
{
    size_t nc = 0, cap = 0;
    struct seen_call *c = NULL;

    for (size_t j = 0; j < n; j++) {
        uint32_t p = pl->keyid[pl->order[j]] / DEDUP_SUBBUCKETS;
        if (j == 0 || p != pl->keyid[pl->order[j - 1]] / DEDUP_SUBBUCKETS) {
            if (nc == cap)
                xgrow((void **)&c, &cap, nc + 1, sizeof(*c));
            c[nc].from = j;
            c[nc].members = 0;
            nc++;
        }
        c[nc - 1].to = j + 1;
        c[nc - 1].members += pl->sent[pl->order[j]];
    }
    *out = c;
    return nc;
}

/*
 * Append one seen-script call (EVALSHA, or EVAL with the body) for the
 * URLs of c: KEYS[1] = "<prefix>:{p}:s:", ARGV = mode, then per bucket
 * (split at SEEN_GROUP_MAX) the bucket, a count and the members.
 * Returns the key's slot.
 */
static int build_call(struct frontier *f, const struct frontier_url *u,
                       const struct seen_plan *pl, const struct seen_call *c,
                       int check_only, int eval, struct resp *r)
{
    struct resp args = {NULL, 0, 0};
    size_t nargs = 1, j = c->from;
    char key[512];
    int n;

    resp_bulk(&args, check_only ? "1" : "0", 1);
    while (j < c->to) {
        uint32_t k = pl->keyid[pl->order[j]];
        size_t m = 0, e = j;
        while (e < c->to && pl->keyid[pl->order[e]] == k &&
               m + pl->sent[pl->order[e]] <= SEEN_GROUP_MAX)
            m += pl->sent[pl->order[e++]];
        if (m) {
            resp_uint(&args, k % DEDUP_SUBBUCKETS);
            resp_uint(&args, m);
            for (size_t x = j; x < e; x++)
                if (pl->sent[pl->order[x]])
                    resp_member(&args, u[pl->order[x]].fp);
            nargs += 2 + m;
        }
        j = e;
    }
    n = snprintf(key, sizeof(key), "%s:{%u}:s:", f->prefix,
                 (unsigned)(pl->keyid[pl->order[c->from]] / DEDUP_SUBBUCKETS));
    resp_head(r, '*', 4 + nargs);
    if (eval) {
        const char *body = frontier__script_body(FRONTIER_SCRIPT_SEEN);
        resp_bulk(r, "EVAL", 4);
        resp_bulk(r, body, strlen(body));
    } else {
        resp_bulk(r, "EVALSHA", 7);
        resp_bulk(r, f->sha[FRONTIER_SCRIPT_SEEN], 40);
    }
    resp_bulk(r, "1", 1);
    resp_bulk(r, key, n > 0 && (size_t)n < sizeof(key) ? (size_t)n : 0);
    resp_raw(r, args.b, args.len);
    free(args.b);
    return frontier__key_slot(key, n > 0 && (size_t)n < sizeof(key) ? (size_t)n
                                                                    : 0);
}

static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

/* The flags of call c into isnew. */
static int answer(struct frontier *f, const struct seen_plan *pl,
                  const struct seen_call *c, const redisReply *r,
                  unsigned char *isnew)
{
    size_t m = 0;

    if (r->type == REDIS_REPLY_ERROR)
        return frontier__seterr(f, DC_EREDIS, "redis: %s", r->str);
    if (r->type != REDIS_REPLY_STRING || (size_t)r->len != c->members)
        return frontier__seterr(f, DC_EREDIS, "seen: bad reply");
    for (size_t j = c->from; j < c->to; j++) {
        size_t i = pl->order[j];
        isnew[i] = pl->sent[i] && r->str[m++] == '1';
    }
    return DC_OK;
}

/*
 * Send calls (those with redo[k] set, when redo is given) in one pipeline
 * and answer them. A NOSCRIPT reply sets redo[k] (the script cache was
 * flushed): the caller sends those again with EVAL.
 */
static int send_calls(struct frontier *f, const struct frontier_url *u,
                      const struct seen_plan *pl, struct seen_call *c,
                      size_t nc, int check_only, unsigned char *redo,
                      int eval, unsigned char *isnew)
{
    struct resp r = {NULL, 0, 0};
    struct frontier_raw *raw = xmalloc(nc * sizeof(*raw));
    size_t *off = xmalloc((nc + 1) * sizeof(*off));
    size_t *which = xmalloc(nc * sizeof(*which)), sent = 0;
    redisReply **rep;
    int rc, callrc = DC_OK;

    for (size_t k = 0; k < nc; k++)
        if (!eval || redo[k]) {
            off[sent] = r.len;
            which[sent] = k;
            raw[sent++].slot = build_call(f, u, pl, &c[k], check_only, eval,
                                          &r);
        }
    off[sent] = r.len;
    for (size_t j = 0; j < sent; j++) {
        raw[j].cmd = r.b + off[j];
        raw[j].len = off[j + 1] - off[j];
    }
    rep = xcalloc(sent ? sent : 1, sizeof(*rep));
    rc = frontier__pipe(f, raw, sent, rep);
    for (size_t j = 0; !rc && j < sent; j++) {
        size_t k = which[j];
        redo[k] = !eval && is_noscript(rep[j]);
        if (!redo[k] && !callrc)
            callrc = answer(f, pl, &c[k], rep[j], isnew);
    }
    frontier__replies_free(rep, sent);
    free(rep);
    free(raw);
    free(off);
    free(which);
    free(r.b);
    return rc ? rc : callrc;
}

int seen_batch(struct frontier *f, const struct frontier_url *urls,
                  size_t n, int check_only, unsigned char *isnew)
{
    struct seen_plan pl;
    struct seen_call *c = NULL;
    unsigned char *redo;
    size_t nc, again = 0;
    int rc;

    if (n == 0)
        return DC_OK;
    if (n > UINT32_MAX - 1)
        return frontier__seterr(f, DC_EINVAL, "seen: batch too large");
    if (strlen(f->prefix) > 400)
        return frontier__seterr(f, DC_EINVAL, "seen key too long");
    for (size_t i = 0; i < n; i++)
        if (!urls[i].host || urls[i].hostlen == 0)
            return frontier__seterr(f, DC_EINVAL, "seen: bad URL entry");
    if (f->seen_mod)
        return seen__mod_batch(f, urls, n, check_only, isnew);
    plan_make(f, urls, n, &pl);
    nc = plan_calls(&pl, n, &c);
    redo = xcalloc(nc, 1);
    rc = send_calls(f, urls, &pl, c, nc, check_only, redo, 0, isnew);
    for (size_t k = 0; k < nc; k++)
        again += redo[k];
    if (!rc && again)
        rc = send_calls(f, urls, &pl, c, nc, check_only, redo, 1, isnew);
    free(redo);
    free(c);
    plan_release(&pl);
    return rc;
}

/* ---- seen_usage ---- */

/* What is asked of each key: its member count, then its memory, then (b256
 * only) its encoding. mod-u64 has one key per partition, b256-i64
 * DEDUP_SUBBUCKETS. */
static const char *const usage_cmds_b256[] = {
    "SCARD %s", "MEMORY USAGE %s SAMPLES 0", "OBJECT ENCODING %s"
};
static const char *const usage_cmds_mod[] = {
    "DCSEEN.CARD %s", "MEMORY USAGE %s SAMPLES 0"
};

/* Key number k of the layout in use. */
static int usage_key(struct frontier *f, size_t k, char *key, size_t cap)
{
    uint64_t fp;

    if (f->seen_mod)
        return seen__modkey(f, (int)k, key, cap);
    fp = (uint64_t)(k % DEDUP_SUBBUCKETS) << (64 - DEDUP_SUBBUCKET_BITS);
    return dedup_seen_key(f->prefix, (int)(k / DEDUP_SUBBUCKETS), fp, key, cap);
}

static void usage_add(struct seen_usage *u, redisReply **r, int nc)
{
    if (r[0]->type != REDIS_REPLY_INTEGER || r[0]->integer <= 0)
        return;
    u->keys++;
    u->members += (uint64_t)r[0]->integer;
    if (r[1]->type == REDIS_REPLY_INTEGER)
        u->bytes += (uint64_t)r[1]->integer;
    if (nc > 2 &&
        (r[2]->type == REDIS_REPLY_STATUS || r[2]->type == REDIS_REPLY_STRING))
        if (strcmp(r[2]->str, "intset") != 0)
            u->not_compact++;
}

/* Ask about keys idx[0 .. n) of the layout, one pipeline. */
static int usage_batch(struct frontier *f, const size_t *idx, size_t n,
                       struct seen_usage *u)
{
    const char *const *cmds = f->seen_mod ? usage_cmds_mod : usage_cmds_b256;
    size_t nc = f->seen_mod ? 2 : 3, m = 0;
    struct frontier_raw *raw = xcalloc(n * nc, sizeof(*raw));
    redisReply **r = xcalloc(n * nc, sizeof(*r));
    char key[512];
    int rc = DC_OK;

    for (size_t i = 0; !rc && i < n; i++) {
        if (usage_key(f, idx[i], key, sizeof(key))) {
            rc = frontier__seterr(f, DC_EINVAL, "seen key too long");
            break;
        }
        for (size_t c = 0; c < nc; c++, m++) {
            char *cmd = NULL;
            int len = redisFormatCommand(&cmd, cmds[c], key);
            if (len < 0 || !cmd) {
                fprintf(stderr, "dcrawl: out of memory\n");
                abort(); /* as xmalloc */
            }
            raw[m] = (struct frontier_raw){cmd, (size_t)len,
                                           frontier__key_slot(key, strlen(key))};
        }
    }
    if (!rc)
        rc = frontier__pipe(f, raw, m, r);
    for (size_t i = 0; !rc && i < n; i++)
        usage_add(u, r + i * nc, (int)nc);
    frontier__replies_free(r, rc ? 0 : m);
    for (size_t k = 0; k < m; k++)
        redisFreeCommand((char *)raw[k].cmd);
    free(raw);
    free(r);
    return rc;
}

int seen_usage(struct frontier *f, size_t sample,
                        struct seen_usage *u)
{
    size_t total, n = 0, stride, *idx;
    int rc = DC_OK;

    memset(u, 0, sizeof(*u));
    total = (size_t)f->nparts * (f->seen_mod ? 1 : DEDUP_SUBBUCKETS);
    stride = sample && sample < total ? total / sample : 1;
    idx = xmalloc(USAGE_BATCH * sizeof(*idx));
    for (size_t k = 0; !rc && k < total; k += stride) {
        idx[n++] = k;
        u->sampled++;
        if (n == USAGE_BATCH || k + stride >= total) {
            rc = usage_batch(f, idx, n, u);
            n = 0;
        }
    }
    free(idx);
    u->total = total;
    if (!rc && u->sampled && u->sampled < total) {
        double x = (double)total / (double)u->sampled;
        u->members = (uint64_t)((double)u->members * x);
        u->bytes = (uint64_t)((double)u->bytes * x);
        u->keys = (uint64_t)((double)u->keys * x);
        u->not_compact = (uint64_t)((double)u->not_compact * x);
    }
    return rc;
}
