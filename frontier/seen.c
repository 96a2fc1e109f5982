/*
 * seen.c: the seen-set without the queues: batch dedup (frontier_seen),
 * what layout is in use and whether Redis keeps it compact
 * (frontier_seen_layout), and how big it is (frontier_seen_usage).
 *
 * frontier_seen groups a batch by bucket key (a counting sort) and sends,
 * in one pipeline, MULTI, then per key SMISMEMBER key m1..mk and SADD key
 * m1..mk, then EXEC. MULTI/EXEC runs the whole batch atomically, so what
 * SMISMEMBER reports absent is exactly what the SADD after it inserts: a
 * member is "new" to one caller only, whoever else asks (other batches,
 * the admit script). Redis's cost is mostly per command, so variadic
 * commands of many members make this several times cheaper per URL than a
 * SADD (or a script call) each. A fingerprint twice in one batch is sent
 * once; its later copies are answered "not new". The keys and members are
 * those of the admit script (dedup.h), so a URL marked by one is "seen" to
 * the other. The RESP text is formatted here into one buffer. (In a Redis
 * Cluster the transaction would have to be split per partition, as the
 * admit script is.)
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

/* Keys polled per pipeline by frontier_seen_usage. */
#define USAGE_BATCH 4096

/* CONFIG GET set-max-intset-entries; -1 when the server refuses (managed
 * Redis often disables CONFIG). */
void frontier__probe_intset(struct frontier *f)
{
    redisReply *r;

    f->intset_entries = -1;
    if (!f->rc)
        return;
    r = redisCommand(f->rc, "CONFIG GET set-max-intset-entries");
    f->roundtrips++;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        f->intset_entries = strtoll(r->element[1]->str, NULL, 10);
    if (r)
        freeReplyObject(r);
    else
        frontier__disconnect(f);
}

int frontier_seen_layout(const struct frontier *f, char *out, size_t cap)
{
    char have[32];

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
                 FRONTIER_SEEN_LAYOUT, f->nparts, DEDUP_SUBBUCKETS,
                 dedup_fp_algo_name(dedup_fingerprint_algo()), have,
                 DEDUP_INTSET_ENTRIES);
    return f->intset_entries < DEDUP_INTSET_ENTRIES;
}

uint64_t frontier_roundtrips(const struct frontier *f)
{
    return f->roundtrips;
}

/* ---- frontier_seen ---- */

/* A batch grouped by bucket key: order[] lists URL indexes key by key,
 * key k's run is order[start[k] .. start[k + 1]). */
struct seen_groups {
    size_t *order;
    size_t *start;      /* nkeys + 1 */
    uint32_t *keyid;    /* per URL: partition * DEDUP_SUBBUCKETS + bucket */
    size_t nkeys;
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

/* fp as a signed decimal (dedup_seen_member's format, without printf). */
static void resp_member(struct resp *r, uint64_t fp)
{
    char tmp[24], *p = put_u64(tmp + sizeof(tmp), fp >> 63 ? ~fp + 1 : fp);

    if (fp >> 63)
        *--p = '-';
    resp_bulk(r, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* Counting sort of the batch by bucket key (O(n + keys)). */
static void group(struct frontier *f, const struct frontier_url *u, size_t n,
                  struct seen_groups *g)
{
    g->nkeys = (size_t)f->nparts * DEDUP_SUBBUCKETS;
    g->start = xcalloc(g->nkeys + 1, sizeof(*g->start));
    g->order = xmalloc(n * sizeof(*g->order));
    g->keyid = xmalloc(n * sizeof(*g->keyid));
    for (size_t i = 0; i < n; i++) {
        int p = frontier_partition(f, u[i].host, u[i].hostlen);
        g->keyid[i] = (uint32_t)p * DEDUP_SUBBUCKETS + dedup_seen_bucket(u[i].fp);
        g->start[g->keyid[i] + 1]++;
    }
    for (size_t k = 0; k < g->nkeys; k++)
        g->start[k + 1] += g->start[k];
    size_t *fill = xmalloc(g->nkeys * sizeof(*fill));
    memcpy(fill, g->start, g->nkeys * sizeof(*fill));
    for (size_t i = 0; i < n; i++)
        g->order[fill[g->keyid[i]]++] = i;
    free(fill);
}

static void groups_release(struct seen_groups *g)
{
    free(g->order);
    free(g->start);
    free(g->keyid);
}

/* 1 if URL order[j]'s fingerprint appeared earlier in its key's run. */
static int dup_in_run(const struct frontier_url *u, const size_t *order,
                      size_t from, size_t j)
{
    for (size_t i = from; i < j; i++)
        if (u[order[i]].fp == u[order[j]].fp)
            return 1;
    return 0;
}

/*
 * MULTI, then per key with URLs: SMISMEMBER key m... and (unless
 * check_only) SADD key m..., then EXEC. Members repeated in the batch are
 * sent once (sent[i] = 0 for the copies). Returns the commands queued.
 */
static size_t build(struct frontier *f, const struct frontier_url *u,
                    const struct seen_groups *g, int check_only,
                    unsigned char *sent, struct resp *r)
{
    char key[512];
    size_t ncmd = 0;

    resp_raw(r, "*1\r\n$5\r\nMULTI\r\n", 15);
    for (size_t k = 0; k < g->nkeys; k++) {
        size_t from = g->start[k], to = g->start[k + 1], m = 0;
        if (from == to)
            continue;
        for (size_t j = from; j < to; j++)
            m += sent[g->order[j]] = !dup_in_run(u, g->order, from, j);
        dedup_seen_key(f->prefix, (int)(k / DEDUP_SUBBUCKETS),
                       (uint64_t)(k % DEDUP_SUBBUCKETS)
                           << (64 - DEDUP_SUBBUCKET_BITS),
                       key, sizeof(key));
        for (int c = 0; c < (check_only ? 1 : 2); c++) {
            resp_head(r, '*', m + 2);
            if (c == 0)
                resp_bulk(r, "SMISMEMBER", 10);
            else
                resp_bulk(r, "SADD", 4);
            resp_bulk(r, key, strlen(key));
            for (size_t j = from; j < to; j++)
                if (sent[g->order[j]])
                    resp_member(r, u[g->order[j]].fp);
            ncmd++;
        }
    }
    resp_raw(r, "*1\r\n$4\r\nEXEC\r\n", 14);
    return ncmd;
}

static int seen_io_error(struct frontier *f)
{
    frontier__seterr(f, DC_EREDIS, "redis: %s",
                     f->rc && f->rc->errstr[0] ? f->rc->errstr
                                               : "connection lost");
    frontier__disconnect(f);
    return DC_EREDIS;
}

/* Read MULTI's +OK, ncmd +QUEUED and EXEC's array; on success *exec is
 * the EXEC reply (caller frees). */
static int read_replies(struct frontier *f, size_t ncmd, redisReply **exec)
{
    int rc = DC_OK;

    *exec = NULL;
    for (size_t i = 0; i < ncmd + 2; i++) {
        redisReply *r = NULL;
        if (redisGetReply(f->rc, (void **)&r) != REDIS_OK || !r)
            return seen_io_error(f);
        if (r->type == REDIS_REPLY_ERROR && !rc)
            rc = frontier__seterr(f, DC_EREDIS, "redis: %s", r->str);
        if (i == ncmd + 1 && !rc)
            *exec = r;
        else
            freeReplyObject(r);
    }
    if (!rc && ((*exec)->type != REDIS_REPLY_ARRAY ||
                (*exec)->elements != ncmd)) {
        freeReplyObject(*exec);
        *exec = NULL;
        rc = frontier__seterr(f, DC_EREDIS, "seen: bad EXEC reply");
    }
    return rc;
}

/* SMISMEMBER's answers (every other EXEC element unless check_only). */
static int answer(struct frontier *f, const struct seen_groups *g,
                  const unsigned char *sent, int check_only,
                  const redisReply *exec, unsigned char *isnew)
{
    size_t e = 0;

    for (size_t k = 0; k < g->nkeys; k++) {
        size_t from = g->start[k], to = g->start[k + 1], m = 0;
        const redisReply *a;
        if (from == to)
            continue;
        a = exec->element[e];
        e += check_only ? 1 : 2;
        for (size_t j = from; j < to; j++) {
            size_t i = g->order[j];
            if (!sent[i]) {
                isnew[i] = 0;
                continue;
            }
            if (a->type != REDIS_REPLY_ARRAY || m >= a->elements ||
                a->element[m]->type != REDIS_REPLY_INTEGER)
                return frontier__seterr(f, DC_EREDIS, "seen: bad reply");
            isnew[i] = a->element[m++]->integer == 0;
        }
    }
    return DC_OK;
}

int frontier_seen(struct frontier *f, const struct frontier_url *urls,
                  size_t n, int check_only, unsigned char *isnew)
{
    struct seen_groups g;
    struct resp r = {NULL, 0, 0};
    redisReply *exec = NULL;
    unsigned char *sent;
    size_t ncmd;
    int rc = DC_OK;

    if (n == 0)
        return DC_OK;
    for (size_t i = 0; i < n; i++)
        if (!urls[i].host || urls[i].hostlen == 0)
            return frontier__seterr(f, DC_EINVAL, "seen: bad URL entry");
    if (!f->rc && frontier__connect(f, NULL, 0) != DC_OK)
        return DC_EREDIS;
    group(f, urls, n, &g);
    sent = xcalloc(n, 1);
    ncmd = build(f, urls, &g, check_only, sent, &r);
    if (redisAppendFormattedCommand(f->rc, r.b, r.len) != REDIS_OK)
        rc = seen_io_error(f);
    free(r.b);
    if (!rc) {
        f->roundtrips++;
        rc = read_replies(f, ncmd, &exec);
    }
    if (!rc)
        rc = answer(f, &g, sent, check_only, exec, isnew);

    if (exec)
        freeReplyObject(exec);
    free(sent);
    groups_release(&g);
    return rc;
}

/* ---- frontier_seen_usage ---- */

static void usage_add(struct frontier_seen_usage *u, redisReply **r)
{
    if (r[0]->type != REDIS_REPLY_INTEGER || r[0]->integer <= 0)
        return;
    u->keys++;
    u->members += (uint64_t)r[0]->integer;
    if (r[1]->type == REDIS_REPLY_INTEGER)
        u->bytes += (uint64_t)r[1]->integer;
    if (r[2]->type == REDIS_REPLY_STATUS || r[2]->type == REDIS_REPLY_STRING)
        if (strcmp(r[2]->str, "intset") != 0)
            u->not_compact++;
}

/* Ask about buckets [from, to) of the nparts * DEDUP_SUBBUCKETS. */
static int usage_batch(struct frontier *f, size_t from, size_t to,
                       struct frontier_seen_usage *u)
{
    static const char *const cmds[3] = {
        "SCARD %s", "MEMORY USAGE %s SAMPLES 0", "OBJECT ENCODING %s"
    };
    char key[512];

    for (size_t k = from; k < to; k++) {
        int p = (int)(k / DEDUP_SUBBUCKETS);
        uint64_t fp = (uint64_t)(k % DEDUP_SUBBUCKETS)
                      << (64 - DEDUP_SUBBUCKET_BITS);
        if (dedup_seen_key(f->prefix, p, fp, key, sizeof(key)))
            return frontier__seterr(f, DC_EINVAL, "seen key too long");
        for (int c = 0; c < 3; c++)
            if (redisAppendCommand(f->rc, cmds[c], key) != REDIS_OK)
                return seen_io_error(f);
    }
    f->roundtrips++;
    for (size_t k = from; k < to; k++) {
        redisReply *r[3] = {NULL, NULL, NULL};
        int ok = 1;
        for (int c = 0; c < 3; c++)
            if (redisGetReply(f->rc, (void **)&r[c]) != REDIS_OK || !r[c])
                ok = 0;
        if (ok)
            usage_add(u, r);
        for (int c = 0; c < 3; c++)
            if (r[c])
                freeReplyObject(r[c]);
        if (!ok)
            return seen_io_error(f);
    }
    return DC_OK;
}

int frontier_seen_usage(struct frontier *f, struct frontier_seen_usage *u)
{
    size_t total = (size_t)f->nparts * DEDUP_SUBBUCKETS;
    int rc = DC_OK;

    memset(u, 0, sizeof(*u));
    if (!f->rc && frontier__connect(f, NULL, 0) != DC_OK)
        return DC_EREDIS;
    for (size_t k = 0; !rc && k < total; k += USAGE_BATCH)
        rc = usage_batch(f, k, k + USAGE_BATCH < total ? k + USAGE_BATCH
                                                      : total, u);
    return rc;
}
