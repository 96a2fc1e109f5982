/*
 * admit-module.c: DCFRONT.ADMIT, the frontier's admission in seen-set
 * layout mod-u64 (frontier/lua/admit-mod.lua with lib/admit.lua) as a
 * native command of dcrawl-seen.so; same KEYS, ARGV and reply as the
 * script:
 *
 *   DCFRONT.ADMIT numkeys pend stat host budget S (queue h:<d>)...
 *                 now host_connections budget (url host depth)... blob
 *
 * blob holds every URL's fingerprint (8 little-endian bytes each). Without
 * a host budget (0) the fingerprints go into the partition's seen-set S in
 * one insert, as one DCSEEN.ADD would (seen-set.h); with one, each URL is
 * checked against its host's count first: under it, inserted on its own;
 * over it, only checked, and a URL not seen yet is refused (answer 2).
 * A new URL is queued at the end of its host queue (qenc, front-state.h);
 * a queue that this makes one long was empty, so its host gets a score in
 * h:<d>: now or its politeness clock, or busy (and the depth marked) while
 * its leases at or below d are at host_connections. Reply: per URL 1
 * (new, queued), 0 (seen before) or 2 (refused by the budget); stat and
 * pend get one increment per field. Deterministic: replicated verbatim.
 *
 * DCFRONT.QADMIT is the same on the native queue layout (level-type.h):
 * a new URL goes to the end of its host's queue in the level h:<d>.
 *
 * Thread rules: Redis's main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front-module.h"
#include "front-state.h"
#include "level-type.h"
#include "seen-set.h"

#define NHEAD 5  /* keys before the per-URL pairs */
#define NAHEAD 3 /* arguments before the per-URL triples */
#define NOT_INT -9 /* a counter field holds no integer (as HINCRBY's error) */

/* enqueue(q, h, url, host, d) of lib/admit.lua; -1 on a wrong key type */
static int enqueue(RedisModuleCtx *ctx, int native, RedisModuleKey *hosts,
                   RedisModuleString *qname, RedisModuleString *hname,
                   RedisModuleString *url, RedisModuleString *host,
                   RedisModuleString *d, long long now, long long conns)
{
    RedisModuleKey *q, *h;
    const char *u, *hs, *ds;
    size_t ulen, hlen;
    long long dn;
    struct front_st st;
    double score;
    char m2[FRONT_MARKS];
    int first;

    struct lvl *lv = NULL;
    struct lvl_host *lh = NULL;

    u = RedisModule_StringPtrLen(url, &ulen);
    hs = RedisModule_StringPtrLen(host, &hlen);
    if (native) {
        char tag;
        size_t pre = front_qsplit(u, ulen, hs, hlen, &tag);
        int wrong;
        h = front_open(ctx, hname);
        if (!(lv = lvl_of(h, 1, &wrong))) {
            RedisModule_CloseKey(h);
            return -1;
        }
        lh = lvl_host(lv, hs, hlen, 1);
        lvl_push_tag(lv, lh, tag, u + pre, ulen - pre);
        if (lvl_qlen(lh) != 1) {
            RedisModule_CloseKey(h);
            return 0;
        }
    } else {
        if (front_open_as(ctx, qname, REDISMODULE_KEYTYPE_LIST, &q)) {
            RedisModule_CloseKey(q);
            return -1;
        }
        RedisModule_ListPush(q, REDISMODULE_LIST_TAIL,
                             front_qenc(ctx, u, ulen, hs, hlen));
        first = RedisModule_ValueLength(q) == 1;
        RedisModule_CloseKey(q);
        if (!first)
            return 0;
        if (front_open_as(ctx, hname, REDISMODULE_KEYTYPE_ZSET, &h)) {
            RedisModule_CloseKey(h);
            return -1;
        }
    }
    ds = RedisModule_StringPtrLen(d, NULL);
    dn = strtoll(ds, NULL, 10);
    front_st_get(hosts, host, &st);
    score = (double)(now > st.nx ? now : st.nx);
    if (front_low(&st, dn) >= conns) {
        score = FRONT_BUSY;
        if (front_mark(st.m, ds, m2)) {
            strcpy(st.m, m2);
            front_st_set(ctx, hosts, native, host, &st);
        }
    }
    if (lv)
        lvl_zadd(lv, lh, score, 0);
    else
        RedisModule_ZsetAdd(h, score, host, NULL);
    RedisModule_CloseKey(h);
    return 0;
}

/* Cache warming (native layout) for the URLs of this admission, the
 * first WARM_MAX of them: warm_slots, their hosts' table slots and, with
 * blob, the seen-set's sub-arrays they fall in, keeping each URL's level
 * in lv[] (NULL when its key holds none); warm_records, after the
 * seen-set's work, their hosts' records. The levels stay valid in
 * between: only the seen-set key is written there. At 30 M queued URLs
 * each is a cold miss; fetched together, they overlap instead of coming
 * one after the other. */
#define WARM_MAX 64
static size_t warm_slots(RedisModuleCtx *ctx, RedisModuleString **K,
                         RedisModuleString **A, long long n,
                         const unsigned char *blob, struct lvl **lv)
{
    size_t k = n < WARM_MAX ? (size_t)n : WARM_MAX;

    if (blob)
        seen_prefetch_blob(ctx, K[4], blob, (size_t)n);
    for (size_t i = 0; i < k; i++) {
        RedisModuleKey *h = front_open(ctx, K[NHEAD + 2 * i + 1]);
        int wrong;
        size_t hlen;
        const char *hs = RedisModule_StringPtrLen(A[NAHEAD + 3 * i + 1],
                                                  &hlen);

        if ((lv[i] = lvl_of(h, 0, &wrong)))
            lvl_prefetch_name(lv[i], hs, hlen, 0);
        RedisModule_CloseKey(h);
    }
    return k;
}

static void warm_records(RedisModuleString **A, struct lvl **lv, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        size_t hlen;
        const char *hs = RedisModule_StringPtrLen(A[NAHEAD + 3 * i + 1],
                                                  &hlen);

        if (lv[i])
            lvl_prefetch_name(lv[i], hs, hlen, 1);
    }
}

static int admit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                 int native)
{
    RedisModuleString **K, **A;
    RedisModuleKey *pend, *stat, *hosts, *budk;
    struct front_counts pc = { 0 }, sc = { 0 };
    size_t blen, added_set;
    long long n, now, conns, budget;
    const unsigned char *blob;
    unsigned char *res;
    char *flags = NULL;
    int rc = 0;
    struct lvl *warm_lv[WARM_MAX];
    size_t nwarm = 0;

    if (front_keys_request(ctx, argv, argc))
        return REDISMODULE_OK;
    if ((n = front_groups(argv, argc, NHEAD, 2, NAHEAD, 3, 1, &K, &A)) < 0)
        return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(A[0], &now) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(A[1], &conns) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(A[2], &budget) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.ADMIT: bad number");
    blob = (const unsigned char *)RedisModule_StringPtrLen(A[NAHEAD + 3 * n],
                                                           &blen);
    if (blen != 8 * (size_t)n)
        return RedisModule_ReplyWithError(ctx,
                                          "ERR DCFRONT.ADMIT: bad blob length");
    RedisModule_AutoMemory(ctx);
    if (front_open_as(ctx, K[0], REDISMODULE_KEYTYPE_HASH, &pend) ||
        front_open_as(ctx, K[1], REDISMODULE_KEYTYPE_HASH, &stat) ||
        front_open_state(ctx, K[2], native, &hosts) ||
        front_open_as(ctx, K[3], REDISMODULE_KEYTYPE_HASH, &budk))
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    res = RedisModule_Calloc((size_t)n + 1, 1);
    if (native)
        nwarm = warm_slots(ctx, K, A, n, budget == 0 ? blob : NULL, warm_lv);
    if (budget == 0) {
        flags = RedisModule_Alloc((size_t)n + 1);
        rc = seen_add_blob(ctx, K[4], blob, (size_t)n, flags, &added_set);
    }
    warm_records(A, warm_lv, nwarm);
    for (long long i = 0; i < n && !rc; i++) {
        RedisModuleString **a = A + NAHEAD + 3 * i, *host = a[1];
        int isnew = 0;

        if (budget == 0) {
            isnew = flags[i] == '1';
        } else {
            RedisModuleString *v = NULL;
            long long used = 0;
            char flag;

            if (RedisModule_HashGet(budk, REDISMODULE_HASH_NONE, host, &v,
                                    NULL) == REDISMODULE_OK && v &&
                RedisModule_StringToLongLong(v, &used) != REDISMODULE_OK)
                used = 0; /* num(): not a number reads as 0 */
            if (used < budget) {
                rc = seen_add_blob(ctx, K[4], blob + 8 * i, 1, &flag,
                                   &added_set);
                isnew = !rc && flag == '1';
            } else if (!(rc = seen_check_blob(ctx, K[4], blob + 8 * i, 1,
                                              &flag)) && flag == '1') {
                front_count_add(&sc, "budget", 1);
                res[i] = 2;
            }
            if (rc)
                break;
        }
        if (res[i] == 2)
            continue;
        if (isnew) {
            const char *h;
            size_t hlen;
            long long v;
            RedisModuleString **qh = K + NHEAD + 2 * i; /* queue, h:<d> */

            front_count_add(&pc, RedisModule_StringPtrLen(a[2], NULL), 1);
            if (enqueue(ctx, native, hosts, qh[0], qh[1], a[0], host, a[2],
                        now, conns)) {
                rc = SEEN_WRONGTYPE;
                break;
            }
            h = RedisModule_StringPtrLen(host, &hlen);
            if (budget > 0 && front_hincr(ctx, budk, h, hlen, 1, &v)) {
                rc = NOT_INT;
                break;
            }
            front_count_add(&sc, "admitted", 1);
            res[i] = 1;
        } else {
            front_count_add(&sc, "seen", 1);
            res[i] = 0;
        }
    }
    RedisModule_Free(flags);
    if (!rc && (front_counts_flush(ctx, stat, &sc, 1, 0) ||
                front_counts_flush(ctx, pend, &pc, 1, 0)))
        rc = NOT_INT;
    RedisModule_Free(sc.v); /* left by an error before the flushes */
    RedisModule_Free(pc.v);
    RedisModule_ReplicateVerbatim(ctx);
    if (rc) {
        RedisModule_Free(res);
        return RedisModule_ReplyWithError(ctx, rc == NOT_INT
                                                   ? "ERR hash value is not an integer"
                                                   : seen_errstr(rc));
    }
    RedisModule_ReplyWithArray(ctx, (long)n);
    for (long long i = 0; i < n; i++)
        RedisModule_ReplyWithLongLong(ctx, res[i]);
    RedisModule_Free(res);
    return REDISMODULE_OK;
}

int front_cmd_admit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return admit(ctx, argv, argc, 0);
}

int front_cmd_qadmit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return admit(ctx, argv, argc, 1);
}
