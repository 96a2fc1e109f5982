/*
 * pop-module.c: DCFRONT.POP, the frontier's pop (frontier/lua/pop.lua) as
 * a native command of dcrawl-seen.so. Same KEYS, ARGV and reply as the
 * script, one for one, so the client sends either (frontier/redis.c picks
 * this one when the server has it):
 *
 *   DCFRONT.POP 5 h:<d> host lease "<prefix>:{p}:q:<d>:" own
 *               now depth max lease_ms window node check host_connections
 *
 * Why native: a pop of one partition is about nine Redis commands; from
 * Lua each costs the interpreter's call glue (argument objects, command
 * lookup, reply conversion) on top of its own work, and that glue, not the
 * commands, was most of a pop's time (frontier_bench --cmdstats). Here the
 * keys are opened once and worked on through the module's key API.
 *
 * The hosts come from h:<d> as ZRANGEBYSCORE -inf now LIMIT 0 max would
 * give them (collected before anything is changed); the rest follows
 * pop.lua line for line, and the host fields are read and written with
 * front-state.c, common.lua's format.
 *
 * Lease deadlines are this server's clock (ms) + lease_ms, as rnow() in
 * the script. The command is replicated verbatim: a replica (or an AOF
 * replay) takes the same hosts and URLs, with its own clock for the
 * deadline, so after a failover a lease may run a little longer; never
 * shorter than its lease_ms.
 *
 * Key handles: Redis deletes a list, hash or set emptied through the key
 * API, and any other open handle of that key would keep the freed value;
 * so a host queue's handle is closed before the next one of the same key
 * is opened, and the other keys (h:<d>, host, lease) have one handle each.
 *
 * Keys for a cluster: the command has getkeys-api; its keys are the
 * declared ones (all of one partition's {p} slot); the host queues it
 * opens share that slot through the prefix, as in the script.
 *
 * DCFRONT.QPOP is the same pop on the native queue layout (level-type.h):
 * the hosts come from the level's heap (lvl_take, the same order) and
 * their URLs from their records; a host the pop did not reach goes back.
 * At 30 M queued URLs a pop's time was mostly cold reads, one after the
 * other; so a QPOP warms the lines of the hosts it takes (warm_rows) and
 * of those the partition's next pop is likely to take (warm_next).
 *
 * Thread rules: Redis's main thread.
 */
#include <stdlib.h>
#include <string.h>

#include "front-state.h"
#include "front-module.h"
#include "level-type.h"
#include "state-type.h"

#define NKEYS 5
#define NARGS 8

/* One ready host, as pop.lua's `open` row. */
struct row {
    RedisModuleString *host;
    struct lvl_host *lh;        /* the native layout's record */
    struct front_st st;
    long long lo, got, limit;
};

/* The pop's state: its keys, arguments and the leases taken so far. */
struct pop {
    RedisModuleCtx *ctx;
    RedisModuleKey *h, *hosts, *lease;
    struct lvl *lv;             /* h's level (native layout), or NULL */
    int native;                 /* the native queue layout (level-type.h,
                                   state-type.h) */
    const char *qpfx, *dstr, *node;
    size_t qpfx_len, node_len, dlen;
    double now;
    long long d, max, conns, window;
    char *out;                  /* the entries, each after its length */
    size_t out_len, out_cap, nout;
    int wrote;
};

static void out_add(struct pop *p, const char *s, size_t n)
{
    if (p->out_len + n > p->out_cap) {
        size_t cap = p->out_cap ? p->out_cap * 2 : 4096;
        while (cap < p->out_len + n)
            cap *= 2;
        p->out = RedisModule_Realloc(p->out, cap);
        p->out_cap = cap;
    }
    memcpy(p->out + p->out_len, s, n);
    p->out_len += n;
}

/* qdec: a queued URL back in full ("\1" = http://host, "\2" = https://) */
static void entry_add(struct pop *p, const char *host, size_t hlen,
                      const char *u, size_t ulen)
{
    size_t at, n;

    n = 0;
    out_add(p, (const char *)&n, sizeof(n)); /* set below */
    at = p->out_len;
    out_add(p, p->node, p->node_len);
    out_add(p, "\t", 1);
    out_add(p, p->dstr, p->dlen);
    out_add(p, "\t", 1);
    out_add(p, host, hlen);
    out_add(p, "\t", 1);
    if (ulen && (u[0] == 1 || u[0] == 2)) {
        out_add(p, u[0] == 1 ? "http://" : "https://", u[0] == 1 ? 7 : 8);
        out_add(p, host, hlen);
        u++, ulen--;
    }
    out_add(p, u, ulen);
    n = p->out_len - at;
    memcpy(p->out + at - sizeof(n), &n, sizeof(n));
    p->nout++;
}

/* The entry at *off in p->out (its text and length); *off moves past it. */
static const char *entry_at(const struct pop *p, size_t *off, size_t *n)
{
    memcpy(n, p->out + *off, sizeof(*n));
    *off += sizeof(*n) + *n;
    return p->out + *off - *n;
}

static RedisModuleKey *queue_open(struct pop *p, RedisModuleString *host)
{
    size_t hlen;
    const char *h = RedisModule_StringPtrLen(host, &hlen);
    char small[512], *name = small;
    RedisModuleString *k;

    if (p->qpfx_len + hlen > sizeof(small))
        name = RedisModule_Alloc(p->qpfx_len + hlen);
    memcpy(name, p->qpfx, p->qpfx_len);
    memcpy(name + p->qpfx_len, h, hlen);
    k = RedisModule_CreateString(p->ctx, name, p->qpfx_len + hlen);
    if (name != small)
        RedisModule_Free(name);
    return front_open(p->ctx, k);
}

/* take(host, n): up to n URLs of host leased; *empty when fewer came
 * (its queue is now empty). -1 when the queue is not a list. */
static long long take(struct pop *p, struct row *r, long long n, int *empty)
{
    RedisModuleString *host = r->host;
    RedisModuleKey *q;
    size_t hlen;
    const char *h;
    long long got = 0;
    int t;

    *empty = 0;
    if (n <= 0)
        return 0;
    if (p->lv) {
        h = lvl_host_name(r->lh, &hlen);
        for (; got < n; got++) {
            size_t ulen;
            const char *s = lvl_pop(p->lv, r->lh, &ulen);
            if (!s)
                break;
            entry_add(p, h, hlen, s, ulen);
            p->wrote = 1;
        }
        *empty = got < n;
        return got;
    }
    q = queue_open(p, host);
    t = RedisModule_KeyType(q);
    if (t == REDISMODULE_KEYTYPE_EMPTY || t != REDISMODULE_KEYTYPE_LIST) {
        RedisModule_CloseKey(q);
        *empty = 1;
        return t == REDISMODULE_KEYTYPE_EMPTY ? 0 : -1;
    }
    h = RedisModule_StringPtrLen(host, &hlen);
    for (; got < n; got++) {
        RedisModuleString *u = RedisModule_ListPop(q, REDISMODULE_LIST_HEAD);
        size_t ulen;
        const char *s;

        if (!u)
            break;
        s = RedisModule_StringPtrLen(u, &ulen);
        entry_add(p, h, hlen, s, ulen);
        p->wrote = 1;
    }
    RedisModule_CloseKey(q); /* no handle outlives a pop that may empty it */
    *empty = got < n;
    return got;
}

static void zadd(struct pop *p, double score, struct row *r)
{
    if (p->lv)
        lvl_zadd(p->lv, r->lh, score, 0);
    else
        RedisModule_ZsetAdd(p->h, score, r->host, NULL);
    p->wrote = 1;
}

static void st_set(struct pop *p, RedisModuleString *host,
                   const struct front_st *st)
{
    front_st_set(p->ctx, p->hosts, p->native, host, st);
    p->wrote = 1;
}

/* finish(...): the host's score in h:<d> and its state once it got its
 * leases */
static int finish(struct pop *p, struct row *r, int empty)
{
    char m2[FRONT_MARKS];
    int changed = 0;

    strcpy(m2, r->st.m);
    if (!empty && p->lv) {
        empty = lvl_qlen(r->lh) == 0;
    } else if (!empty) {
        RedisModuleKey *q = queue_open(p, r->host);
        int t = RedisModule_KeyType(q);
        empty = t == REDISMODULE_KEYTYPE_EMPTY ||
                RedisModule_ValueLength(q) == 0;
        RedisModule_CloseKey(q);
        if (t != REDISMODULE_KEYTYPE_EMPTY && t != REDISMODULE_KEYTYPE_LIST)
            return -1;
    }
    if (empty) {
        if (p->lv)
            lvl_zrem(p->lv, r->lh);
        else
            RedisModule_ZsetRem(p->h, r->host, NULL);
        p->wrote = 1;
    } else if (r->lo + r->got >= r->limit) {
        zadd(p, FRONT_BUSY, r);
        changed = front_mark(r->st.m, p->dstr, m2);
    } else {
        zadd(p, p->now, r);
    }
    if (r->got > 0 || changed) {
        front_lease_add(&r->st, p->d, r->got);
        strcpy(r->st.m, m2);
        st_set(p, r->host, &r->st);
    }
    return 0;
}

/* The host-field slots of the hosts whose names hash to hv[0..n), and
 * with rec, then their records (through the slots, in cache by then). */
static void warm_fields(struct pop *p, const uint64_t *hv, size_t n, int rec)
{
    int wrong;
    struct hst *m = n ? hst_of(p->hosts, 0, &wrong) : NULL;

    for (size_t i = 0; m && i < n; i++)
        hst_prefetch(m, hv[i], 0);
    for (size_t i = 0; m && rec && i < n; i++)
        hst_prefetch(m, hv[i], 1);
}

/* Cache warming for the hosts this pop took: their queue heads and
 * host-field slots together, then their host-field records, so the rows'
 * misses overlap instead of coming one row after the other. */
static void warm_rows(struct pop *p, struct lvl_host **hs, size_t n)
{
    uint64_t hv[LVL_WARM_MAX];

    if (n > LVL_WARM_MAX)
        n = LVL_WARM_MAX;
    for (size_t i = 0; i < n; i++)
        hv[i] = lvl_prefetch_host(p->lv, hs[i]);
    warm_fields(p, hv, n, 1);
}

/* Cache warming for the partition's next pop, the hosts it is likely to
 * take (the first max of the ready order): their names, queue heads,
 * table slots and host-field slots. Their records were fetched at this
 * pop's start (lvl_prefetch_run), so reading them here waits for nothing.
 * With 1,024 partitions a node pops a partition again only after many
 * others, so these lines come from the shared cache then, not memory;
 * that next pop's warm_rows fetches the host-field records. */
static void warm_next(struct pop *p)
{
    uint64_t hv[LVL_WARM_MAX];

    warm_fields(p, hv, lvl_prefetch_next(p->lv, (size_t)p->max, hv), 0);
}

static int arg_ll(RedisModuleString *s, long long *v)
{
    return RedisModule_StringToLongLong(s, v) == REDISMODULE_OK ? 0 : -1;
}

/* check == '1': the partition's own key must hold node */
static int owned(RedisModuleCtx *ctx, RedisModuleString *own,
                 RedisModuleString *node)
{
    RedisModuleCallReply *r = RedisModule_Call(ctx, "GET", "s", own);
    size_t a, b;
    const char *x, *y;

    if (!r || RedisModule_CallReplyType(r) != REDISMODULE_REPLY_STRING)
        return 0;
    x = RedisModule_CallReplyStringPtr(r, &a);
    y = RedisModule_StringPtrLen(node, &b);
    return x && a == b && !memcmp(x, y, a);
}

static int reply_err(struct pop *p, const char *msg)
{
    RedisModule_Free(p->out);
    if (p->wrote)
        RedisModule_ReplicateVerbatim(p->ctx);
    return RedisModule_ReplyWithError(p->ctx, msg);
}

int front_keys_request(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc)
{
    long long nk;

    if (!RedisModule_IsKeysPositionRequest(ctx))
        return 0;
    if (argc >= 2 && RedisModule_StringToLongLong(argv[1], &nk) ==
                         REDISMODULE_OK)
        for (long long i = 2; i < 2 + nk && i < argc; i++)
            RedisModule_KeyAtPos(ctx, (int)i);
    return 1;
}

long long front_groups(RedisModuleString **argv, int argc, int nhead,
                       int kper, int nahead, int aper, int tail,
                       RedisModuleString ***keys, RedisModuleString ***args)
{
    long long nk, n;

    if (argc < 2 || kper < 1 ||
        RedisModule_StringToLongLong(argv[1], &nk) != REDISMODULE_OK ||
        nk < nhead || (nk - nhead) % kper || 2 + nk > argc)
        return -1;
    n = (nk - nhead) / kper;
    if (argc != 2 + nk + nahead + aper * n + tail)
        return -1;
    *keys = argv + 2;
    *args = argv + 2 + nk;
    return n;
}

static int pop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
               int native)
{
    RedisModuleString **K = argv + 2, **A = argv + 2 + NKEYS;
    struct pop p;
    struct row *rows = NULL, *open = NULL;
    size_t nrows = 0, nopen = 0;
    long long numkeys, lease_ms, now_ll, deadline;
    double score;
    const char *check;
    size_t clen;
    int wrong;

    if (front_keys_request(ctx, argv, argc))
        return REDISMODULE_OK;
    if (argc != 2 + NKEYS + NARGS)
        return RedisModule_WrongArity(ctx);
    if (arg_ll(argv[1], &numkeys) || numkeys != NKEYS)
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.POP takes 5 keys");
    RedisModule_AutoMemory(ctx);
    memset(&p, 0, sizeof(p));
    p.ctx = ctx;
    if (arg_ll(A[0], &now_ll) || arg_ll(A[1], &p.d) || arg_ll(A[2], &p.max) ||
        arg_ll(A[3], &lease_ms) || arg_ll(A[4], &p.window) ||
        arg_ll(A[7], &p.conns))
        return RedisModule_ReplyWithError(ctx, "ERR DCFRONT.POP: bad number");
    p.now = (double)now_ll;
    check = RedisModule_StringPtrLen(A[6], &clen);
    if (clen == 1 && check[0] == '1' && !owned(ctx, K[4], A[5])) {
        RedisModule_ReplyWithArray(ctx, 1);
        return RedisModule_ReplyWithLongLong(ctx, -2);
    }
    p.dstr = RedisModule_StringPtrLen(A[1], &p.dlen);
    p.node = RedisModule_StringPtrLen(A[5], &p.node_len);
    p.qpfx = RedisModule_StringPtrLen(K[3], &p.qpfx_len);
    if (native) {
        p.h = front_open(ctx, K[0]);
        p.lv = lvl_of(p.h, 0, &wrong);
        if (wrong)
            return RedisModule_ReplyWithError(ctx,
                                              REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (front_open_as(ctx, K[0], REDISMODULE_KEYTYPE_ZSET, &p.h))
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    p.native = native;
    if (front_open_state(ctx, K[1], native, &p.hosts) ||
        front_open_as(ctx, K[2], REDISMODULE_KEYTYPE_ZSET, &p.lease))
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    deadline = RedisModule_Milliseconds() + lease_ms;

    /* hosts = ZRANGEBYSCORE h -inf now LIMIT 0 max */
    if (p.lv && p.max > 0) {
        size_t cap = lvl_heap_size(p.lv) < (size_t)p.max
                         ? lvl_heap_size(p.lv) : (size_t)p.max;
        struct lvl_host **hs = RedisModule_Alloc((cap + 1) * sizeof(*hs));
        nrows = lvl_take(p.lv, p.now, cap, hs);
        lvl_prefetch_run(p.lv, (size_t)p.max); /* the next pop's */
        warm_rows(&p, hs, nrows);
        if (nrows)
            rows = RedisModule_Alloc(nrows * sizeof(*rows));
        for (size_t i = 0; i < nrows; i++) {
            size_t hlen;
            const char *hn = lvl_host_name(hs[i], &hlen);
            rows[i].lh = hs[i];
            rows[i].host = RedisModule_CreateString(ctx, hn, hlen);
        }
        RedisModule_Free(hs);
    } else if (p.max > 0 && RedisModule_KeyType(p.h) == REDISMODULE_KEYTYPE_ZSET &&
        RedisModule_ZsetFirstInScoreRange(p.h, -1.0 / 0.0, p.now, 0, 0) ==
            REDISMODULE_OK) {
        size_t cap = 0;
        while (!RedisModule_ZsetRangeEndReached(p.h) &&
               (long long)nrows < p.max) {
            RedisModuleString *e = RedisModule_ZsetRangeCurrentElement(p.h, &score);
            if (nrows == cap) {
                cap = cap ? cap * 2 : 64;
                rows = RedisModule_Realloc(rows, cap * sizeof(*rows));
            }
            rows[nrows++].host = e;
            if (!RedisModule_ZsetRangeNext(p.h))
                break;
        }
        RedisModule_ZsetRangeStop(p.h);
    }
    if (nrows)
        open = RedisModule_Alloc(nrows * sizeof(*open));
    for (size_t i = 0; i < nrows; i++) {
        struct row *r = &rows[i];
        long long n;
        int empty;

        if ((long long)p.nout >= p.max)
            break;
        front_st_get(p.hosts, r->host, &r->st);
        r->lo = front_low(&r->st, p.d);
        r->limit = r->st.nx > 0 ? (p.window < p.conns + 1 ? p.window
                                                          : p.conns + 1)
                                : p.window;
        r->got = 0;
        if (r->lo >= r->limit) {
            char m2[FRONT_MARKS];
            zadd(&p, FRONT_BUSY, r);
            if (front_mark(r->st.m, p.dstr, m2)) {
                strcpy(r->st.m, m2);
                st_set(&p, r->host, &r->st);
            }
        } else if ((double)r->st.nx > p.now) {
            zadd(&p, (double)r->st.nx, r);
        } else {
            n = p.conns - r->lo;
            if (n > p.max - (long long)p.nout)
                n = p.max - (long long)p.nout;
            if ((r->got = take(&p, r, n, &empty)) < 0)
                goto wrongtype;
            if (r->lo + r->got < r->limit && !empty)
                open[nopen++] = *r;
            else if (finish(&p, r, empty))
                goto wrongtype;
        }
    }
    for (size_t i = 0; i < nopen; i++) {
        struct row *r = &open[i];
        long long n = r->limit - r->lo - r->got, more;
        int empty;

        if (n > p.max - (long long)p.nout)
            n = p.max - (long long)p.nout;
        if ((more = take(&p, r, n, &empty)) < 0)
            goto wrongtype;
        r->got += more;
        if (finish(&p, r, empty))
            goto wrongtype;
    }
    for (size_t i = 0, off = 0, n; i < p.nout; i++) {
        const char *e = entry_at(&p, &off, &n);
        RedisModule_ZsetAdd(p.lease, (double)deadline,
                            RedisModule_CreateString(ctx, e, n), NULL);
    }
    if (p.lv) { /* rows the pop did not reach go back; emptied ones go */
        for (size_t i = 0; i < nrows; i++) {
            lvl_restore(p.lv, rows[i].lh);
            lvl_host_gc(p.lv, rows[i].lh);
        }
        if (p.max > 0)
            warm_next(&p);
    }
    RedisModule_ReplyWithArray(ctx, 1 + (long)p.nout);
    RedisModule_ReplyWithLongLong(ctx, p.lv ? lvl_ready(p.lv)
                                            : front_ready(p.h));
    if (p.lv)
        lvl_close(p.h);
    for (size_t i = 0, off = 0, n; i < p.nout; i++) {
        const char *e = entry_at(&p, &off, &n);
        RedisModule_ReplyWithStringBuffer(ctx, e, n);
    }
    RedisModule_Free(p.out);
    RedisModule_Free(rows);
    RedisModule_Free(open);
    if (p.wrote)
        RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;

wrongtype:
    RedisModule_Free(rows);
    RedisModule_Free(open);
    return reply_err(&p, REDISMODULE_ERRORMSG_WRONGTYPE);
}

int front_cmd_pop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return pop(ctx, argv, argc, 0);
}

int front_cmd_qpop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return pop(ctx, argv, argc, 1);
}
