/*
 * complete-module.c: DCFRONT.COMPLETE, the frontier's completion
 * (frontier/lua/complete.lua) as a native command of dcrawl-seen.so; same
 * KEYS, ARGV and reply as the script:
 *
 *   DCFRONT.COMPLETE numkeys lease host pend stat h:<d> fail
 *                    (queue h:<d> h:<d+1>)... now host_connections
 *                    (entry outcome delay depth host url retry)...
 *
 * Reply: the next ready ms of KEYS[5] (h:<d>), or -1. The steps are the
 * script's, in its order: the leases still held leave the lease ZSET (a
 * lease named twice counts once); per lease the host's field is read and
 * written once (front-state.c), a retry goes to the end of its queue, a
 * lease no longer held is counted only when its requeued copy is found
 * and removed (LREM); then pend and stat get one increment per field.
 * Every input is an integer the client formats, so the arithmetic is on
 * integers. Deterministic (no clock of its own): replicated verbatim.
 *
 * DCFRONT.QCOMPLETE is the same on the native queue layout (level-type.h):
 * the queue and ready set of a lease's depth are its level h:<d> (the
 * queue key passed is not opened for its content), LREM is lvl_rem1.
 *
 * Thread rules: Redis's main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front-module.h"
#include "front-state.h"
#include "level-type.h"

#define FAIL_MAX 1000 /* as complete.lua */
#define NHEAD 6       /* keys before the per-lease triples */
#define NAHEAD 2      /* arguments before the per-lease sevens */

static int exists(RedisModuleKey *k)
{
    return RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_EMPTY;
}

/* ZADD k XX score host: only a host already in an existing set */
static void zadd_xx(RedisModuleKey *k, double score, RedisModuleString *host,
                    int native)
{
    int fl = REDISMODULE_ZADD_XX;

    if (native) {
        int wrong;
        struct lvl *l = lvl_of(k, 0, &wrong);
        size_t hlen;
        const char *hs = RedisModule_StringPtrLen(host, &hlen);
        struct lvl_host *lh = l ? lvl_host(l, hs, hlen, 0) : NULL;
        if (lh)
            lvl_zadd(l, lh, score, 1);
        return;
    }
    if (RedisModule_KeyType(k) == REDISMODULE_KEYTYPE_ZSET)
        RedisModule_ZsetAdd(k, score, host, &fl);
}

/* The native layout's side of one lease: its level h:<d>, the host's
 * record there (made when a URL is pushed) */
struct side {
    struct lvl *l;
    struct lvl_host *h;
};

static int set_exists(RedisModuleKey *k, int native)
{
    int wrong;

    if (native)
        return lvl_exists(lvl_of(k, 0, &wrong));
    return exists(k);
}

/* ZREMRANGEBYRANK k 0 0: the lowest score (then name) leaves */
static void zrem_first(RedisModuleKey *k)
{
    RedisModuleString *e = NULL;
    double score;

    if (RedisModule_ZsetFirstInScoreRange(k, -1.0 / 0.0, 1.0 / 0.0, 0, 0) !=
        REDISMODULE_OK)
        return;
    if (!RedisModule_ZsetRangeEndReached(k))
        e = RedisModule_ZsetRangeCurrentElement(k, &score);
    RedisModule_ZsetRangeStop(k);
    if (e)
        RedisModule_ZsetRem(k, e, NULL);
}

/* LREM q 1 s == 1 */
static int lrem1(RedisModuleCtx *ctx, RedisModuleString *q,
                 RedisModuleString *s)
{
    RedisModuleCallReply *r = RedisModule_Call(ctx, "LREM", "sls", q, 1LL, s);

    return r && RedisModule_CallReplyType(r) == REDISMODULE_REPLY_INTEGER &&
           RedisModule_CallReplyInteger(r) == 1;
}

/* The partition's key prefix "<prefix>:{p}:" (KEYS[1] without "lease")
 * and h:<d> under it, opened. */
static RedisModuleKey *h_of(RedisModuleCtx *ctx, const char *pfx,
                            size_t plen, const char *d)
{
    char name[512];
    int n = snprintf(name, sizeof(name), "%.*sh:%s", (int)plen, pfx, d);

    if (n < 0 || (size_t)n >= sizeof(name))
        return NULL;
    return front_open_text(ctx, name, (size_t)n);
}

/* free_one / free_marks of common.lua: every marked depth no longer at
 * the limit gets score in its h:<d> (except k0 and k1, which the caller
 * scores); out = the marks left. */
static void free_marks(RedisModuleCtx *ctx, int native, const char *pfx,
                       size_t plen,
                       RedisModuleString *host, const char *m, double score,
                       const struct front_st *st, long long conns,
                       long long k0, long long k1, int has_k1, char *out)
{
    char left[FRONT_MARKS] = "", d[32];
    const char *p = m;

    while (*p) {
        size_t n = strspn(p, "0123456789");
        long long dn;

        if (!n) {
            p++;
            continue;
        }
        if (n >= sizeof(d))
            n = sizeof(d) - 1;
        memcpy(d, p, n);
        d[n] = '\0';
        p += strspn(p, "0123456789");
        dn = strtoll(d, NULL, 10);
        if (front_low(st, dn) >= conns) {
            front_mark(left, d, left);
            continue;
        }
        if (dn != k0 && !(has_k1 && dn == k1)) {
            RedisModuleKey *h = h_of(ctx, pfx, plen, d);
            if (h) {
                zadd_xx(h, score, host, native);
                RedisModule_CloseKey(h);
            }
        }
    }
    strcpy(out, left);
}

/* lease_end(act, td, tn, d) */
static void lease_end(struct front_st *st, long long d)
{
    st->act--;
    if (st->has_td && st->td == d)
        st->tn--;
    if (st->act <= 0 || !st->has_td || st->tn <= 0) {
        st->has_td = 0;
        st->td = 0;
        st->tn = 0;
    }
}

/* A lease's queue and ready sets are closed before the next lease opens
 * them again: an emptied list or set is deleted, and another handle of the
 * same key would keep the freed value. */
static void close3(RedisModuleKey *a, RedisModuleKey *b, RedisModuleKey *c)
{
    RedisModule_CloseKey(a);
    RedisModule_CloseKey(b);
    RedisModule_CloseKey(c);
}

static int bad(RedisModuleCtx *ctx, const char *what)
{
    char msg[96];

    snprintf(msg, sizeof(msg), "ERR DCFRONT.COMPLETE: %s", what);
    return RedisModule_ReplyWithError(ctx, msg);
}

static int complete(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                    int native)
{
    static const char *names[] = { "done:", "failed:", "skipped:" };
    RedisModuleString **K, **A;
    RedisModuleKey *lease, *hosts, *pend, *stat, *fail;
    struct front_counts pc = { 0 }, sc = { 0 };
    long long n, now, conns;
    const char *pfx;
    size_t plen;
    unsigned char *held;
    int rc = 0; /* 1: an error was replied */

    if (front_keys_request(ctx, argv, argc))
        return REDISMODULE_OK;
    if ((n = front_groups(argv, argc, NHEAD, 3, NAHEAD, 7, 0, &K, &A)) < 0)
        return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(A[0], &now) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(A[1], &conns) != REDISMODULE_OK)
        return bad(ctx, "bad number");
    RedisModule_AutoMemory(ctx);
    if (front_open_as(ctx, K[0], REDISMODULE_KEYTYPE_ZSET, &lease) ||
        front_open_state(ctx, K[1], native, &hosts) ||
        front_open_as(ctx, K[2], REDISMODULE_KEYTYPE_HASH, &pend) ||
        front_open_as(ctx, K[3], REDISMODULE_KEYTYPE_HASH, &stat) ||
        front_open_as(ctx, K[5], REDISMODULE_KEYTYPE_ZSET, &fail))
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    pfx = RedisModule_StringPtrLen(K[0], &plen);
    if (plen < 5)
        return bad(ctx, "bad lease key");
    plen -= 5; /* "<prefix>:{p}:" of "...:lease" */

    /* the leases still held leave the lease ZSET, each once */
    held = RedisModule_Calloc((size_t)n + 1, 1);
    for (long long i = 0; i < n; i++) {
        int del = 0;
        if (RedisModule_ZsetRem(lease, A[NAHEAD + 7 * i], &del) ==
                REDISMODULE_OK && del)
            held[i] = 1;
    }
    for (long long i = 0; i < n && !rc; i++) {
        RedisModuleString **a = A + NAHEAD + 7 * i, *host = a[4];
        /* the native layout has no queue key: not opened */
        RedisModuleKey *q = native ? NULL : front_open(ctx, K[NHEAD + 3 * i]);
        RedisModuleKey *h = front_open(ctx, K[NHEAD + 3 * i + 1]);
        RedisModuleKey *h1 = front_open(ctx, K[NHEAD + 3 * i + 2]);
        long long outcome, delay, dn, retry, gap, queued = -1, nx;
        const char *d, *url, *hs;
        size_t dlen, ulen, hlen;
        struct front_st st;
        double s0, s1, sc_now;
        int counted = held[i], nxt, wrongt;
        struct side sd = { NULL, NULL };
        char m[FRONT_MARKS], name[48], dnext[32];

        if (RedisModule_StringToLongLong(a[1], &outcome) != REDISMODULE_OK ||
            RedisModule_StringToLongLong(a[2], &delay) != REDISMODULE_OK ||
            RedisModule_StringToLongLong(a[3], &dn) != REDISMODULE_OK ||
            RedisModule_StringToLongLong(a[6], &retry) != REDISMODULE_OK) {
            bad(ctx, "bad number");
            rc = 1;
            close3(q, h, h1);
            break;
        }
        if (native) {
            int w0, w1;
            const char *hn = RedisModule_StringPtrLen(host, &hlen);
            sd.l = lvl_of(h, 0, &w0);
            lvl_of(h1, 0, &w1);
            sd.h = sd.l ? lvl_host(sd.l, hn, hlen, 0) : NULL;
            wrongt = w0 || w1;
        } else {
            wrongt = !front_is(q, REDISMODULE_KEYTYPE_LIST) ||
                     !front_is(h, REDISMODULE_KEYTYPE_ZSET) ||
                     !front_is(h1, REDISMODULE_KEYTYPE_ZSET);
        }
        if (wrongt) {
            RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
            rc = 1;
            close3(q, h, h1);
            break;
        }
        d = RedisModule_StringPtrLen(a[3], &dlen);
        url = RedisModule_StringPtrLen(a[5], &ulen);
        hs = RedisModule_StringPtrLen(host, &hlen);
        front_st_get(hosts, host, &st);
        if (counted)
            lease_end(&st, dn);
        if (outcome == 3) {
            if (counted && native) {
                int wrong;
                char tag;
                size_t pre = front_qsplit(url, ulen, hs, hlen, &tag);
                if (!sd.l)
                    sd.l = lvl_of(h, 1, &wrong);
                if (!sd.h)
                    sd.h = lvl_host(sd.l, hs, hlen, 1);
                lvl_push_tag(sd.l, sd.h, tag, url + pre, ulen - pre);
            } else if (counted)
                RedisModule_ListPush(q, REDISMODULE_LIST_TAIL,
                                     front_qenc(ctx, url, ulen, hs, hlen));
            counted = 0;
        } else if (!counted && native) {
            RedisModuleString *e = front_qenc(ctx, url, ulen, hs, hlen);
            size_t elen;
            const char *es = RedisModule_StringPtrLen(e, &elen);
            counted = sd.h && (lvl_rem1(sd.l, sd.h, es, elen) ||
                               (elen != ulen &&
                                lvl_rem1(sd.l, sd.h, url, ulen)));
        } else if (!counted) {
            RedisModuleString *s = front_qenc(ctx, url, ulen, hs, hlen);
            size_t slen;
            RedisModule_StringPtrLen(s, &slen);
            RedisModule_CloseKey(q); /* LREM may delete it */
            counted = lrem1(ctx, K[NHEAD + 3 * i], s) ||
                      (slen != ulen && lrem1(ctx, K[NHEAD + 3 * i], a[5]));
            q = front_open(ctx, K[NHEAD + 3 * i]);
        }
        if (counted && outcome >= 0 && outcome <= 2) {
            snprintf(name, sizeof(name), "%s%.*s", names[outcome], (int)dlen, d);
            front_count_add(&pc, d, 1);
            front_count_add(&sc, name, 1);
            if (outcome == 1) {
                int fl = 0;
                double ns;
                RedisModule_ZsetIncrby(fail, 1.0, host, &fl, &ns);
                if (RedisModule_ValueLength(fail) > FAIL_MAX)
                    zrem_first(fail);
            }
        }
        gap = delay > 0 ? delay : 0;
        if ((outcome == 3 || !held[i]) && native)
            queued = sd.h ? (long long)lvl_qlen(sd.h) : 0;
        else if (outcome == 3 || !held[i])
            queued = exists(q) ? (long long)RedisModule_ValueLength(q) : 0;
        if (outcome == 3 && queued <= 1 && retry > gap)
            gap = retry;
        nx = st.nx > now + gap ? st.nx : now + gap;
        sc_now = (double)(nx > now ? nx : now);
        /* after_end(pfx, host, act, td, tn, m, d, score, conns, nxt) */
        nxt = set_exists(h1, native);
        s0 = s1 = sc_now;
        strcpy(m, st.m);
        if (front_low(&st, dn) >= conns) {
            s0 = FRONT_BUSY;
            front_mark(m, d, m);
        }
        snprintf(dnext, sizeof(dnext), "%lld", dn + 1);
        if (nxt && front_low(&st, dn + 1) >= conns) {
            s1 = FRONT_BUSY;
            front_mark(m, dnext, m);
        }
        if (m[0])
            free_marks(ctx, native, pfx, plen, host, m, sc_now, &st, conns, dn,
                       dn + 1, nxt, m);
        strcpy(st.m, m);
        st.nx = nx > now ? nx : 0;
        front_st_set(ctx, hosts, native, host, &st);
        if (native) {
            if (sd.h && queued < 0)
                lvl_zadd(sd.l, sd.h, s0, 1);
            else if (queued > 0)
                lvl_zadd(sd.l, sd.h, s0, 0);
            else if (sd.h)
                lvl_zrem(sd.l, sd.h);
            if (sd.h)
                lvl_host_gc(sd.l, sd.h);
            zadd_xx(h1, s1, host, native);
            RedisModule_CloseKey(q);
            lvl_close(h);
            lvl_close(h1);
            continue;
        }
        if (queued < 0)
            zadd_xx(h, s0, host, native);
        else if (queued > 0)
            RedisModule_ZsetAdd(h, s0, host, NULL);
        else if (exists(h))
            RedisModule_ZsetRem(h, host, NULL);
        if (exists(h1))
            zadd_xx(h1, s1, host, native);
        close3(q, h, h1);
    }
    RedisModule_Free(held);
    if (!rc && front_counts_flush(ctx, pend, &pc, -1, 1)) {
        bad(ctx, "pend is not an integer");
        rc = 1;
    }
    if (!rc && front_counts_flush(ctx, stat, &sc, 1, 0)) {
        bad(ctx, "stat is not an integer");
        rc = 1;
    }
    RedisModule_Free(pc.v); /* left by an error before the flushes */
    RedisModule_Free(sc.v);
    RedisModule_ReplicateVerbatim(ctx);
    if (rc)
        return REDISMODULE_OK; /* the error is the reply */
    /* ready(KEYS[5]), opened now: a lease's handle may have emptied it */
    if (native) {
        int wrong;
        return RedisModule_ReplyWithLongLong(
            ctx, lvl_ready(lvl_of(RedisModule_OpenKey(ctx, K[4], REDISMODULE_READ),
                                  0, &wrong)));
    }
    return RedisModule_ReplyWithLongLong(
        ctx, front_ready(RedisModule_OpenKey(ctx, K[4], REDISMODULE_READ)));
}

int front_cmd_complete(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    return complete(ctx, argv, argc, 0);
}

int front_cmd_qcomplete(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc)
{
    return complete(ctx, argv, argc, 1);
}
