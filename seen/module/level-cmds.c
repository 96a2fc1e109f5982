/*
 * level-cmds.c: the native queue layout's small commands, for what the
 * frontier does outside DCFRONT.QPOP, .QCOMPLETE and .QADMIT: the Lua
 * scripts that put leases back (frontier/lua/lib/requeue.lua), the
 * client's scan for the earliest ready host (frontier/lease.c), `dcrawl
 * status` (frontier/status.c) and the tests' view of a level:
 *
 *   DCFRONT.QPUSH key host head|tail value   LPUSH/RPUSH of q:<d>:<host>;
 *                                            the queue's length
 *   DCFRONT.QZADD key [XX] score host        ZADD [XX] of h:<d>; 1 added
 *   DCFRONT.QREADY key                       ZRANGEBYSCORE key -inf (busy
 *                                            WITHSCORES LIMIT 0 1
 *   DCFRONT.QCOUNT key min max               ZCOUNT (-inf, +inf, "(x")
 *   DCFRONT.QDUMP key                        per host: [host, in set,
 *                                            score, queued strings...]
 *
 * Scores are formatted as ZRANGE ... WITHSCORES formats them (%.17g), so
 * a level reads the same as the zset-list layout's keys. A key of another
 * type is WRONGTYPE; a missing key reads as empty.
 *
 * Thread rules: Redis's main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front-state.h"
#include "level-type.h"

static RedisModuleKey *open_rw(RedisModuleCtx *ctx, RedisModuleString *name)
{
    return RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
}

static int wrongtype(RedisModuleCtx *ctx, RedisModuleKey *k)
{
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
}

static int reply_score(RedisModuleCtx *ctx, double score)
{
    char num[40];
    int n = snprintf(num, sizeof(num), "%.17g", score);

    return RedisModule_ReplyWithStringBuffer(ctx, num, (size_t)n);
}

/* a ZRANGEBYSCORE bound: -inf, +inf, x or (x; -1 when not one */
static int bound(RedisModuleString *s, double *v, int *ex)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(s, &n);
    char buf[64], *end;

    *ex = n && p[0] == '(';
    if (*ex)
        p++, n--;
    if (!n || n >= sizeof(buf))
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (!strcmp(buf, "-inf") || !strcmp(buf, "+inf") || !strcmp(buf, "inf")) {
        *v = buf[0] == '-' ? -1.0 / 0.0 : 1.0 / 0.0;
        return 0;
    }
    *v = strtod(buf, &end);
    return *end || *v != *v ? -1 : 0;
}

static int cmd_qpush(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    struct lvl_host *h;
    const char *host, *where, *v;
    size_t hlen, wlen, vlen;
    int wrong, head;

    if (argc != 5)
        return RedisModule_WrongArity(ctx);
    where = RedisModule_StringPtrLen(argv[3], &wlen);
    head = wlen == 4 && !memcmp(where, "head", 4);
    if (!head && !(wlen == 4 && !memcmp(where, "tail", 4)))
        return RedisModule_ReplyWithError(ctx,
                                          "ERR DCFRONT.QPUSH: head or tail");
    k = open_rw(ctx, argv[1]);
    if (!(l = lvl_of(k, 1, &wrong)))
        return wrongtype(ctx, k);
    host = RedisModule_StringPtrLen(argv[2], &hlen);
    v = RedisModule_StringPtrLen(argv[4], &vlen);
    h = lvl_host(l, host, hlen, 1);
    lvl_push(l, h, head, v, vlen);
    RedisModule_ReplyWithLongLong(ctx, (long long)lvl_qlen(h));
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

static int cmd_qzadd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    struct lvl_host *h;
    const char *host, *opt;
    size_t hlen, olen;
    double score;
    int wrong, ex, xx = 0, added;

    if (argc == 5) {
        opt = RedisModule_StringPtrLen(argv[2], &olen);
        if (olen != 2 || (opt[0] != 'X' && opt[0] != 'x') ||
            (opt[1] != 'X' && opt[1] != 'x'))
            return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.QZADD: XX");
        xx = 1;
    } else if (argc != 4) {
        return RedisModule_WrongArity(ctx);
    }
    if (bound(argv[argc - 2], &score, &ex) || ex)
        return RedisModule_ReplyWithError(ctx,
                                          "ERR DCFRONT.QZADD: bad score");
    host = RedisModule_StringPtrLen(argv[argc - 1], &hlen);
    k = open_rw(ctx, argv[1]);
    l = lvl_of(k, !xx, &wrong);
    if (wrong)
        return wrongtype(ctx, k);
    h = l ? lvl_host(l, host, hlen, !xx) : NULL;
    added = h && !lvl_inset(h);
    if (h)
        lvl_zadd(l, h, score, xx);
    RedisModule_ReplyWithLongLong(ctx, xx ? 0 : added);
    if (l)
        lvl_close(k);
    else
        RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

static int cmd_qready(RedisModuleCtx *ctx, RedisModuleString **argv,
                      int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    struct lvl_host *h;
    const char *name;
    size_t n;
    int wrong;

    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    k = open_rw(ctx, argv[1]); /* stale heap tops are dropped */
    l = lvl_of(k, 0, &wrong);
    if (wrong)
        return wrongtype(ctx, k);
    if (!(h = lvl_first(l))) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithArray(ctx, 0);
    }
    name = lvl_host_name(h, &n);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithStringBuffer(ctx, name, n);
    reply_score(ctx, lvl_score(h));
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmd_qcount(RedisModuleCtx *ctx, RedisModuleString **argv,
                      int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    struct lvl_host *h;
    double min, max;
    int wrong, minex, maxex;
    size_t at = 0;
    long long n = 0;

    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    if (bound(argv[2], &min, &minex) || bound(argv[3], &max, &maxex))
        return RedisModule_ReplyWithError(
            ctx, "ERR min or max is not a float");
    k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    l = lvl_of(k, 0, &wrong);
    if (wrong)
        return wrongtype(ctx, k);
    while ((h = lvl_next(l, &at))) {
        double s = lvl_score(h);
        if (lvl_inset(h) && (minex ? s > min : s >= min) &&
            (maxex ? s < max : s <= max))
            n++;
    }
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithLongLong(ctx, n);
}

static int cmd_qdump(RedisModuleCtx *ctx, RedisModuleString **argv,
                     int argc)
{
    RedisModuleKey *k;
    struct lvl *l;
    struct lvl_host *h;
    size_t at = 0, nh = 0;
    int wrong;

    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    l = lvl_of(k, 0, &wrong);
    if (wrong)
        return wrongtype(ctx, k);
    while (lvl_next(l, &at))
        nh++;
    RedisModule_ReplyWithArray(ctx, (long)nh);
    at = 0;
    while ((h = lvl_next(l, &at))) {
        size_t n, qa = 0;
        const char *name = lvl_host_name(h, &n), *s;
        RedisModule_ReplyWithArray(ctx, 3 + (long)lvl_qlen(h));
        RedisModule_ReplyWithStringBuffer(ctx, name, n);
        RedisModule_ReplyWithLongLong(ctx, lvl_inset(h));
        reply_score(ctx, lvl_score(h));
        while ((s = lvl_qnext(h, &qa, &n)))
            RedisModule_ReplyWithStringBuffer(ctx, s, n);
    }
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

int lvl_cmds_register(RedisModuleCtx *ctx)
{
    if (RedisModule_CreateCommand(ctx, "dcfront.qpush", cmd_qpush,
                                  "write deny-oom", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.qzadd", cmd_qzadd,
                                  "write deny-oom", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.qready", cmd_qready,
                                  "write", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.qcount", cmd_qcount,
                                  "readonly", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "dcfront.qdump", cmd_qdump,
                                  "readonly", 1, 1, 1))
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
