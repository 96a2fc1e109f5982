/*
 * u-levelmod.c: the native queue layout's values in real redis-server
 * processes that the test starts (tests/unit/t-rserver.h), checked against
 * Redis's own types: a level (seen/module/level-type.h, type dcfrontq1)
 * against a ZSET and LISTs, and the host-field map (state-type.h, type
 * dcfronts1) against a HASH.
 *
 * A seeded random run applies the same operations to a level key "L"
 * (DCFRONT.QPUSH, .QZADD [XX]) and to a ZSET "Z" plus one LIST "Q:<host>"
 * per host (LPUSH/RPUSH, ZADD [XX]) on the same server: 240 hosts whose
 * names share long prefixes (the heap's inline 8 name bytes tie, so the
 * full names decide the order), scores from a small set (ties) and the
 * busy score, values of 0 to 300 binary bytes (one- and two-byte
 * lengths). Every reply must equal Redis's (added counts, list lengths),
 * DCFRONT.QREADY must equal ZRANGEBYSCORE Z -inf (busy WITHSCORES LIMIT 0
 * 1 and DCFRONT.QCOUNT must equal ZCOUNT for a few ranges, and the whole
 * DCFRONT.QDUMP must equal the ZSET and LISTs every few hundred steps. The
 * re-scores leave stale heap entries behind, so the heap's lazy deletion
 * and rebuild are exercised. The same steps set, read and delete fields
 * of a map "M" and a HASH "H" (DCFRONT.SSET/.SGET/.SDEL against HSET/HGET/
 * HDEL, values of varied length so records grow), and DCFRONT.SRAND must
 * give distinct fields of H with their values; DCFRONT.SDUMP must equal
 * HGETALL.
 *
 * Then persistence: the level must read the same after DEBUG RELOAD, a
 * restart from RDB, an AOF rewrite (DCFRONT.QRESTORE lines) and restart,
 * and DUMP/RESTORE into another key (what MIGRATE does). Bad input gets
 * one error each and the server keeps its data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "t.h"
#include "t-rserver.h"

#define HOSTS 240
#define STEPS 20000
#define BUSY "9000000000000000"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void host_name(int i, char *out, size_t cap)
{
    if (i % 3 == 0)
        snprintf(out, cap, "shared-prefix-%d.test", i);
    else if (i % 3 == 1)
        snprintf(out, cap, "h%d", i);
    else
        snprintf(out, cap, "shared-prefix-%d.test:%d", i / 7, 8000 + i);
}

/* ---- the state of both sides as sorted lines ---- */

struct lines {
    char **v;
    size_t n, cap;
};

static void add(struct lines *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 512;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = strdup(s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_lines(struct lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static void value_line(struct lines *l, const char *host, size_t idx,
                       const char *v, size_t n)
{
    char buf[900];
    int at = snprintf(buf, sizeof(buf), "q %s %04zu ", host, idx);

    for (size_t i = 0; i < n && at < (int)sizeof(buf) - 3; i++)
        at += snprintf(buf + at, sizeof(buf) - (size_t)at, "%02x",
                       (unsigned char)v[i]);
    add(l, buf);
}

static void level_lines(redisContext *c, const char *key, struct lines *out)
{
    redisReply *r = redisCommand(c, "DCFRONT.QDUMP %s", key);
    char buf[300];

    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements;
         i++) {
        const redisReply *h = r->element[i];
        if (h->element[1]->integer) {
            snprintf(buf, sizeof(buf), "z %s %s", h->element[0]->str,
                     h->element[2]->str);
            add(out, buf);
        }
        for (size_t j = 3; j < h->elements; j++)
            value_line(out, h->element[0]->str, j - 3, h->element[j]->str,
                       h->element[j]->len);
    }
    if (r)
        freeReplyObject(r);
    qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static void redis_lines(redisContext *c, struct lines *out)
{
    redisReply *r = redisCommand(c, "ZRANGE Z 0 -1 WITHSCORES");
    char buf[300], host[64];

    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements;
         i += 2) {
        snprintf(buf, sizeof(buf), "z %s %s", r->element[i]->str,
                 r->element[i + 1]->str);
        add(out, buf);
    }
    if (r)
        freeReplyObject(r);
    for (int h = 0; h < HOSTS; h++) {
        host_name(h, host, sizeof(host));
        r = redisCommand(c, "LRANGE Q:%s 0 -1", host);
        for (size_t j = 0; r && r->type == REDIS_REPLY_ARRAY && j < r->elements;
             j++)
            value_line(out, host, j, r->element[j]->str, r->element[j]->len);
        if (r)
            freeReplyObject(r);
    }
    qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static int same_lines(struct lines *a, struct lines *b, const char *what)
{
    size_t i;
    int ok;

    for (i = 0; i < a->n && i < b->n && !strcmp(a->v[i], b->v[i]); i++)
        ;
    ok = a->n == b->n && i == a->n;
    CHECK(ok, "%s: differ at line %zu of %zu/%zu: '%s' vs '%s'", what, i,
          a->n, b->n, i < a->n ? a->v[i] : "(end)",
          i < b->n ? b->v[i] : "(end)");
    return ok;
}

/* a flat [field, value, ...] reply as sorted lines */
static void pair_lines(redisContext *c, const char *cmd, const char *key,
                       struct lines *out)
{
    redisReply *r = redisCommand(c, "%s %s", cmd, key);
    char buf[600];

    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements;
         i += 2) {
        snprintf(buf, sizeof(buf), "f %s %s", r->element[i]->str,
                 r->element[i + 1]->str);
        add(out, buf);
    }
    if (r)
        freeReplyObject(r);
    qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

/* the level "key" against Redis's ZSET and LISTs, and the map M2 of the
 * same name's suffix (M for L, M2 for L2) against the HASH H */
static int same_as_redis(redisContext *c, const char *key, const char *what)
{
    struct lines a = { 0 }, b = { 0 };
    int ok;

    level_lines(c, key, &a);
    redis_lines(c, &b);
    ok = same_lines(&a, &b, what);
    free_lines(&a);
    free_lines(&b);
    pair_lines(c, "DCFRONT.SDUMP", key[1] ? "M2" : "M", &a);
    pair_lines(c, "HGETALL", "H", &b);
    ok = same_lines(&a, &b, what) && ok;
    free_lines(&a);
    free_lines(&b);
    return ok;
}

/* ---- one random step on both sides ---- */

static int same_reply(redisReply *a, redisReply *b)
{
    if (!a || !b || a->type != b->type)
        return 0;
    if (a->type == REDIS_REPLY_INTEGER)
        return a->integer == b->integer;
    if (a->type == REDIS_REPLY_STRING)
        return a->len == b->len && !memcmp(a->str, b->str, a->len);
    if (a->type == REDIS_REPLY_ARRAY) {
        if (a->elements != b->elements)
            return 0;
        for (size_t i = 0; i < a->elements; i++)
            if (!same_reply(a->element[i], b->element[i]))
                return 0;
        return 1;
    }
    return a->type == REDIS_REPLY_NIL;
}

static int step(redisContext *c, int i)
{
    static const char *const ranges[][2] = {
        { "-inf", "+inf" }, { "-inf", "(" BUSY }, { "(300", "700" },
        { BUSY, BUSY }, { "100", "(500" },
    };
    char host[64], score[32];
    redisReply *a, *b;
    unsigned op = rnd(100);
    int ok;

    host_name((int)rnd(HOSTS), host, sizeof(host));
    if (rnd(8) == 0)
        snprintf(score, sizeof(score), "%s", BUSY);
    else
        snprintf(score, sizeof(score), "%u", 100 * rnd(10));
    if (op < 40) {
        char v[300];
        size_t n = rnd(10) ? rnd(80) : 128 + rnd(172);
        int head = rnd(3) == 0;
        for (size_t k = 0; k < n; k++)
            v[k] = (char)rnd(256);
        a = redisCommand(c, "DCFRONT.QPUSH L %s %s %b", host,
                         head ? "head" : "tail", v, n);
        b = redisCommand(c, "%s Q:%s %b", head ? "LPUSH" : "RPUSH", host, v, n);
    } else if (op < 52) { /* the host-field map against a HASH */
        char v[200];
        size_t n = 1 + rnd(rnd(4) ? 20 : 180);
        unsigned k = rnd(4);
        for (size_t j = 0; j < n; j++)
            v[j] = (char)('a' + rnd(26));
        if (k == 0) {
            a = redisCommand(c, "DCFRONT.SDEL M %s", host);
            b = redisCommand(c, "HDEL H %s", host);
        } else if (k == 1) {
            a = redisCommand(c, "DCFRONT.SGET M %s", host);
            b = redisCommand(c, "HGET H %s", host);
        } else {
            a = redisCommand(c, "DCFRONT.SSET M %s %b", host, v, n);
            b = redisCommand(c, "HSET H %s %b", host, v, n);
        }
    } else if (op < 54) { /* a sample: distinct fields of H, their values */
        unsigned n = 1 + rnd(20);
        a = redisCommand(c, "DCFRONT.SRAND M %u WITHVALUES", n);
        b = redisCommand(c, "HLEN H");
        ok = a && a->type == REDIS_REPLY_ARRAY && b &&
             a->elements == 2 * (size_t)(b->integer < n ? b->integer : n);
        for (size_t j = 0; ok && j + 1 < a->elements; j += 2) {
            redisReply *x = redisCommand(c, "HGET H %s", a->element[j]->str);
            ok = x && x->type == REDIS_REPLY_STRING &&
                 !strcmp(x->str, a->element[j + 1]->str);
            for (size_t q = 0; ok && q < j; q += 2)
                ok = strcmp(a->element[q]->str, a->element[j]->str) != 0;
            if (x)
                freeReplyObject(x);
        }
        CHECK(ok, "step %d: DCFRONT.SRAND %u", i, n);
        if (a)
            freeReplyObject(a);
        if (b)
            freeReplyObject(b);
        return ok;
    } else if (op < 85) {
        int xx = rnd(3) == 0;
        a = redisCommand(c, xx ? "DCFRONT.QZADD L XX %s %s"
                               : "DCFRONT.QZADD L %s %s", score, host);
        b = redisCommand(c, xx ? "ZADD Z XX %s %s" : "ZADD Z %s %s", score,
                         host);
    } else if (op < 93) {
        a = redisCommand(c, "DCFRONT.QREADY L");
        b = redisCommand(c, "ZRANGEBYSCORE Z -inf (" BUSY
                            " WITHSCORES LIMIT 0 1");
    } else {
        int k = (int)rnd(sizeof(ranges) / sizeof(ranges[0]));
        a = redisCommand(c, "DCFRONT.QCOUNT L %s %s", ranges[k][0],
                         ranges[k][1]);
        b = redisCommand(c, "ZCOUNT Z %s %s", ranges[k][0], ranges[k][1]);
    }
    ok = same_reply(a, b);
    CHECK(ok, "step %d op %u: level reply %d, redis %d", i, op,
          a ? a->type : -1, b ? b->type : -1);
    if (a)
        freeReplyObject(a);
    if (b)
        freeReplyObject(b);
    return ok;
}

static void t_random(struct server *s)
{
    int ok = 1;

    for (int i = 0; i < STEPS && ok; i++) {
        ok = step(s->c, i);
        if (ok && i % 500 == 499) {
            char what[32];
            snprintf(what, sizeof(what), "step %d", i);
            ok = same_as_redis(s->c, "L", what);
        }
    }
    same_as_redis(s->c, "L", "end of the run");
}

/* ---- persistence and bad input ---- */

static int wait_rewrite(redisContext *c)
{
    for (int i = 0; i < 200; i++) { /* 20 s */
        redisReply *r = redisCommand(c, "INFO persistence");
        int busy = !r || r->type != REDIS_REPLY_STRING ||
                   strstr(r->str, "aof_rewrite_in_progress:1") ||
                   strstr(r->str, "aof_rewrite_scheduled:1");
        if (r)
            freeReplyObject(r);
        if (!busy)
            return 0;
        sleep_ms(100);
    }
    return -1;
}

static void fill(redisContext *c, int from, int n)
{
    for (int i = from; i < from + n; i++)
        step(c, i);
}

static long long integer(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (r)
        freeReplyObject(r);
    return v;
}

static void t_persist(void)
{
    struct server s;
    redisReply *r;

    rng = 77;
    CHECK(server_start(&s, "rdb", 0) == 0, "rdb server");
    if (s.c) {
        fill(s.c, 0, 3000);
        CHECK(integer(s.c, "DCFRONT.QCOUNT L -inf +inf") > HOSTS / 2,
              "a level to save");
        r = redisCommand(s.c, "DEBUG RELOAD");
        CHECK(r && r->type == REDIS_REPLY_STATUS, "DEBUG RELOAD");
        if (r)
            freeReplyObject(r);
        same_as_redis(s.c, "L", "after DEBUG RELOAD");
        r = redisCommand(s.c, "DUMP L");
        if (r && r->type == REDIS_REPLY_STRING) {
            redisReply *x = redisCommand(s.c, "RESTORE L2 0 %b", r->str,
                                         r->len);
            CHECK(x && x->type == REDIS_REPLY_STATUS, "RESTORE");
            if (x)
                freeReplyObject(x);
        }
        CHECK(r && r->type == REDIS_REPLY_STRING, "DUMP");
        if (r)
            freeReplyObject(r);
        r = redisCommand(s.c, "DUMP M");
        if (r && r->type == REDIS_REPLY_STRING) {
            redisReply *x = redisCommand(s.c, "RESTORE M2 0 %b", r->str,
                                         r->len);
            CHECK(x && x->type == REDIS_REPLY_STATUS, "RESTORE of the map");
            if (x)
                freeReplyObject(x);
        }
        if (r)
            freeReplyObject(r);
        same_as_redis(s.c, "L2", "after DUMP and RESTORE");
        fill(s.c, 3000, 500); /* the level changes after the copy */
        server_stop(&s, 1);
        CHECK(server_start(&s, "rdb", 0) == 0, "restart from RDB");
        if (s.c) {
            same_as_redis(s.c, "L", "after a restart from RDB");
            server_stop(&s, 0);
        }
    }
    CHECK(server_start(&s, "aof", 1) == 0, "aof server");
    if (s.c) {
        fill(s.c, 0, 3000);
        r = redisCommand(s.c, "BGREWRITEAOF");
        if (r)
            freeReplyObject(r);
        CHECK(wait_rewrite(s.c) == 0, "AOF rewrite done");
        fill(s.c, 3000, 300); /* after the rewrite: plain AOF lines */
        server_stop(&s, 0);
        CHECK(server_start(&s, "aof", 1) == 0, "restart from AOF");
        if (s.c) {
            same_as_redis(s.c, "L", "after BGREWRITEAOF and a restart");
            server_stop(&s, 0);
        }
    }
}

static void t_bad_input(struct server *s)
{
    static const char *const calls[] = {
        "DCFRONT.QPUSH L h",
        "DCFRONT.QPUSH L h middle v",
        "DCFRONT.QPUSH S h head v",
        "DCFRONT.QZADD L",
        "DCFRONT.QZADD L x h",
        "DCFRONT.QZADD L (5 h",
        "DCFRONT.QZADD L YY 5 h",
        "DCFRONT.QZADD S 5 h",
        "DCFRONT.QREADY S",
        "DCFRONT.QCOUNT L a b",
        "DCFRONT.QCOUNT S 0 1",
        "DCFRONT.QDUMP S",
        "DCFRONT.QRESTORE L2 g 1 0 \005ab", /* a length past the end */
        "DCFRONT.QRESTORE L2 g 2 0 x",
        "DCFRONT.QRESTORE L2 g x 0 x",
        "DCFRONT.QRESTORE L2 g 1 0",
        "DCFRONT.QRESTORE S g 1 0 x",
        "DCFRONT.QPOP 5 S b:host b:lease b:q: b:own 1 0 10 1000 1 n 0 1",
        "DCFRONT.QPOP 5 L S b:lease b:q: b:own 1 0 10 1000 1 n 0 1",
        "DCFRONT.SGET S h",
        "DCFRONT.SGET M",
        "DCFRONT.SSET M h",
        "DCFRONT.SSET S h v",
        "DCFRONT.SDEL S h",
        "DCFRONT.SRAND M 0 WITHVALUES",
        "DCFRONT.SRAND M 5",
        "DCFRONT.SRAND S 5 WITHVALUES",
        "DCFRONT.SDUMP S",
    };
    redisReply *r = redisCommand(s->c, "SET S x");
    struct lines before = { 0 }, after = { 0 };

    if (r)
        freeReplyObject(r);
    r = redisCommand(s->c, "DCFRONT.QRESTORE L2 h 1 0 %b", "\002ab", (size_t)3);
    CHECK(r && r->type == REDIS_REPLY_INTEGER, "a good QRESTORE");
    if (r)
        freeReplyObject(r);
    r = redisCommand(s->c, "DCFRONT.QRESTORE L2 h 1 0 %b", "\002ab", (size_t)3);
    CHECK(r && r->type == REDIS_REPLY_ERROR, "the same host twice: error");
    if (r)
        freeReplyObject(r);
    level_lines(s->c, "L", &before);
    for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
        r = redisCommand(s->c, calls[i]);
        CHECK(r && r->type == REDIS_REPLY_ERROR, "error reply for '%s'",
              calls[i]);
        if (r)
            freeReplyObject(r);
    }
    level_lines(s->c, "L", &after);
    same_lines(&before, &after, "the level after the bad calls");
    CHECK(integer(s->c, "DCFRONT.QCOUNT L2 -inf +inf") == 1,
          "L2 keeps its one host");
    free_lines(&before);
    free_lines(&after);
}

int main(int argc, char **argv)
{
    struct server s;

    if (rserver_init(argc, argv, "u-levelmod"))
        return 1;
    if (server_start(&s, "main", 0) != 0) {
        CHECK(0, "redis-server with %s did not start", module);
    } else {
        t_random(&s);
        t_bad_input(&s);
        server_stop(&s, 0);
    }
    t_persist();
    rserver_cleanup("u-levelmod");
    return t_done("u-levelmod");
}
