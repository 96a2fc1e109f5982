/*
 * u-frontmod.c: the module's native frontier commands (DCFRONT.POP and
 * DCFRONT.COMPLETE, DCFRONT.ADMIT, seen/module/front-module.h) against
 * the Lua scripts they replace (frontier/lua/pop.lua, complete.lua,
 * admit-mod.lua), on one real
 * redis-server with the module (tests/with-redis.sh).
 *
 * Three frontier handles on the same server under three key prefixes:
 * "dl" opened with DCRAWL_LUA_FRONTIER set (the scripts), "dn" with
 * DCRAWL_QUEUE_LAYOUT=zset-list (the commands DCFRONT.POP, .COMPLETE,
 * .ADMIT on the same keys as the scripts), "dq" with neither (the native
 * queue layout: DCFRONT.QPOP, .QCOMPLETE, .QADMIT, and the scripts that
 * requeue through DCFRONT.QPUSH and .QZADD; a depth's ready set and queues
 * are one module value, seen/module/level-type.h, dumped with DCFRONT.QDUMP
 * as the ZSET and LISTs they stand for, and the host fields another,
 * state-type.h, dumped with DCFRONT.SDUMP as the HASH). A seeded random run drives all
 * three with the same calls: admits
 * over a few hosts (150 in one run) at three depths (http and https URLs, URLs whose text
 * does not start with their host, repeats; one run with a host budget, so
 * some are refused), pops with random limits,
 * completions with every outcome (done, failed, skipped, retry with and
 * without its own back-off), politeness delays, completions of leases
 * already completed, and leases expired and reclaimed (their completion
 * then takes the requeued copy out). After every call the replies must be
 * equal (leases in order, next ready times, new flags), and every few
 * steps and at the end the whole key space of both prefixes must be equal:
 * every key's type and contents (host fields, ready sets with scores,
 * queues, pend, stat, fail), the lease sets by member (their deadlines
 * are each server call's clock). Malformed calls of the commands get one
 * error reply each and leave the server answering. FRONTMOD_EVERY=1 in the environment
 * compares after every step and prints each step's call, to find where
 * the two first part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "t.h"
#include "t-frontier.h"

#define STEPS 1500
#define MAXHELD 400
#define NF 3 /* handles: lua, commands, native queue layout */

static const char *const prefixes[NF] = { "dl", "dn", "dq" };

static redisContext *raw;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* mode: 0 the scripts, 1 the commands on the zset-list layout, 2 the
 * native queue layout */
static struct frontier *open_prefix(const char *prefix, int conns,
                                   int budget, int mode)
{
    struct frontier *f = NULL;
    struct conf c;
    char err[256] = "";
    int rc;

    conf_init(&c);
    c.frontier_partitions = 3;
    c.politeness_host_connections = conns;
    c.frontier_lease = 30;
    c.scope_host_budget = budget;
    free(c.redis_prefix);
    c.redis_prefix = strdup(prefix);
    if (mode == 0)
        setenv("DCRAWL_LUA_FRONTIER", "1", 1);
    if (mode == 1)
        setenv("DCRAWL_QUEUE_LAYOUT", "zset-list", 1);
    rc = frontier_open(&f, getenv("DCRAWL_TEST_REDIS"), &c, "n1", err,
                       sizeof(err));
    unsetenv("DCRAWL_LUA_FRONTIER");
    unsetenv("DCRAWL_QUEUE_LAYOUT");
    CHECK(rc == DC_OK && f, "frontier_open %s: %d %s", prefix, rc, err);
    conf_release(&c);
    return f;
}

/* ---- the key space of a prefix, as sorted text lines ---- */

struct lines {
    char **v;
    size_t n, cap;
};

static void line_add(struct lines *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = strdup(s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A native level h:<d> (rel: its name without the prefix) as the lines of
 * the ZSET h:<d> and the LISTs q:<d>:<host> it stands for. */
static void dump_level(const char *name, const char *rel, struct lines *out)
{
    redisReply *r = redisCommand(raw, "DCFRONT.QDUMP %s", name);
    char buf[4096], qrel[512];
    const char *hd = strstr(rel, ":h:");
    int inset = 0;

    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements;
         i++)
        inset += r->element[i]->element[1]->integer != 0;
    if (inset) {
        snprintf(buf, sizeof(buf), "%s zset", rel);
        line_add(out, buf);
    }
    for (size_t i = 0; hd && r && r->type == REDIS_REPLY_ARRAY &&
                       i < r->elements; i++) {
        const redisReply *h = r->element[i];
        if (h->element[1]->integer) {
            snprintf(buf, sizeof(buf), "%s = %s = %s", rel, h->element[0]->str,
                     h->element[2]->str);
            line_add(out, buf);
        }
        if (h->elements <= 3)
            continue;
        snprintf(qrel, sizeof(qrel), "%.*s:q:%s:%s", (int)(hd - rel), rel,
                 hd + 3, h->element[0]->str);
        snprintf(buf, sizeof(buf), "%s list", qrel);
        line_add(out, buf);
        for (size_t j = 3; j < h->elements; j++) {
            snprintf(buf, sizeof(buf), "%s [%05zu] %s", qrel, j - 3,
                     h->element[j]->str);
            line_add(out, buf);
        }
    }
    if (r)
        freeReplyObject(r);
}

/* Every key of prefix (its name without the prefix), with its type and
 * contents, one line per element. */
static void dump(const char *prefix, struct lines *out)
{
    redisReply *k = redisCommand(raw, "KEYS %s:*", prefix);
    size_t plen = strlen(prefix);
    char buf[4096];

    for (size_t i = 0; k && k->type == REDIS_REPLY_ARRAY && i < k->elements;
         i++) {
        const char *name = k->element[i]->str, *rel = name + plen;
        redisReply *t = redisCommand(raw, "TYPE %s", name), *r = NULL;

        if (strstr(rel, ":meta") == rel) { /* creation time, layouts */
            freeReplyObject(t);
            continue;
        }
        if (!strcmp(t->str, "dcfrontq1")) {
            dump_level(name, rel, out);
            freeReplyObject(t);
            continue;
        }
        if (!strcmp(t->str, "dcfronts1")) { /* the host fields: a HASH */
            r = redisCommand(raw, "DCFRONT.SDUMP %s", name);
            snprintf(buf, sizeof(buf), "%s hash", rel);
            line_add(out, buf);
            for (size_t j = 0; r && r->type == REDIS_REPLY_ARRAY &&
                               j + 1 < r->elements; j += 2) {
                snprintf(buf, sizeof(buf), "%s = %s = %s", rel,
                         r->element[j]->str, r->element[j + 1]->str);
                line_add(out, buf);
            }
            if (r)
                freeReplyObject(r);
            freeReplyObject(t);
            continue;
        }
        if (!strcmp(t->str, "hash"))
            r = redisCommand(raw, "HGETALL %s", name);
        else if (!strcmp(t->str, "zset") && strstr(rel, ":lease"))
            r = redisCommand(raw, "ZRANGE %s 0 -1", name);
        else if (!strcmp(t->str, "zset"))
            r = redisCommand(raw, "ZRANGE %s 0 -1 WITHSCORES", name);
        else if (!strcmp(t->str, "list"))
            r = redisCommand(raw, "LRANGE %s 0 -1", name);
        else if (!strcmp(t->str, "string"))
            r = redisCommand(raw, "GET %s", name);
        snprintf(buf, sizeof(buf), "%s %s", rel, t->str);
        line_add(out, buf);
        if (r && r->type == REDIS_REPLY_ARRAY) {
            int pairs = !strcmp(t->str, "hash") ||
                        (!strcmp(t->str, "zset") && !strstr(rel, ":lease"));
            for (size_t j = 0; j < r->elements; j += pairs ? 2 : 1) {
                if (pairs)
                    snprintf(buf, sizeof(buf), "%s = %s = %s", rel,
                             r->element[j]->str, r->element[j + 1]->str);
                else if (!strcmp(t->str, "list")) /* order matters */
                    snprintf(buf, sizeof(buf), "%s [%05zu] %s", rel, j,
                             r->element[j]->str);
                else
                    snprintf(buf, sizeof(buf), "%s = %s", rel,
                             r->element[j]->str);
                line_add(out, buf);
            }
        } else if (r && r->type == REDIS_REPLY_STRING) {
            snprintf(buf, sizeof(buf), "%s = %s", rel, r->str);
            line_add(out, buf);
        }
        if (r)
            freeReplyObject(r);
        freeReplyObject(t);
    }
    if (k)
        freeReplyObject(k);
    qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static void lines_free(struct lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static int same_state(int step)
{
    struct lines a = { 0 };
    int ok = 1;

    dump("dl", &a);
    for (int k = 1; k < NF; k++) {
        struct lines b = { 0 };
        size_t i;
        int same;
        dump(prefixes[k], &b);
        for (i = 0; i < a.n && i < b.n && !strcmp(a.v[i], b.v[i]); i++)
            ;
        same = a.n == b.n && i == a.n;
        CHECK(same, "step %d: key spaces differ at line %zu: lua '%s' %s '%s'",
              step, i, i < a.n ? a.v[i] : "(end)", prefixes[k],
              i < b.n ? b.v[i] : "(end)");
        ok = ok && same;
        lines_free(&b);
    }
    lines_free(&a);
    return ok;
}

static long long cmdstat_calls(const char *cmd)
{
    redisReply *r = redisCommand(raw, "INFO commandstats");
    char key[64];
    const char *p;
    long long n = 0;

    snprintf(key, sizeof(key), "cmdstat_%s:calls=", cmd);
    if (r && r->type == REDIS_REPLY_STRING &&
        (p = strstr(r->str, key)))
        n = atoll(p + strlen(key));
    if (r)
        freeReplyObject(r);
    return n;
}

/* Malformed calls get an error reply, one each, and the server stays up
 * with its data: wrong arity, numbers that are not numbers, keys of
 * another type. */
static void bad_input(void)
{
    static const char *calls[] = {
        "DCFRONT.POP",
        "DCFRONT.POP 5 a b c d e 1 2 3",
        "DCFRONT.POP 5 b:h b:host b:lease b:q: b:own x 0 10 1000 1 n 0 1",
        "DCFRONT.POP 5 b:str b:host b:lease b:q: b:own 1 0 10 1000 1 n 0 1",
        "DCFRONT.POP 2 a b",
        "DCFRONT.COMPLETE",
        "DCFRONT.COMPLETE 7 a b c d e f g 1 1",
        "DCFRONT.COMPLETE 9 b:lease b:host b:pend b:stat b:h b:fail b:q b:h b:h1 "
            "1 1 e x 0 0 h u 0",
        "DCFRONT.COMPLETE 9 b:lease b:host b:pend b:stat b:h b:fail b:str b:h b:h1 "
            "1 1 e 0 0 0 h http://h/ 0",
        "DCFRONT.COMPLETE 9 b:lease b:host b:pend b:stat b:h b:fail b:q b:h b:h1 "
            "1 1 e 0",
        "DCFRONT.ADMIT",
        "DCFRONT.ADMIT 7 b:pend b:stat b:host b:budget b:S b:q b:h 1 1 0 "
            "http://h/ h 0 123",
        "DCFRONT.ADMIT 7 b:pend b:stat b:host b:budget b:str b:q b:h 1 1 0 "
            "http://h/ h 0 12345678",
        "DCFRONT.ADMIT 7 b:pend b:stat b:host b:budget b:S b:str b:h 1 1 0 "
            "http://h/ h 0 12345678",
    };
    redisReply *r = redisCommand(raw, "SET b:str x");

    freeReplyObject(r);
    for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
        r = redisCommand(raw, calls[i]);
        CHECK(r && r->type == REDIS_REPLY_ERROR, "error reply for '%s': %s",
              calls[i], r && r->type == REDIS_REPLY_ERROR ? "" : "none");
        if (r)
            freeReplyObject(r);
        r = redisCommand(raw, "GET b:str");
        CHECK(r && r->type == REDIS_REPLY_STRING && !strcmp(r->str, "x"),
              "server answers after '%s', in step", calls[i]);
        if (r)
            freeReplyObject(r);
    }
}

/* ---- the run ---- */

struct held {
    struct frontier_lease l[NF]; /* one per handle, as prefixes */
    int done;
};

static char *url_text(int i, int host, int depth)
{
    char buf[160];

    switch (i % 5) {
    case 0:
        snprintf(buf, sizeof(buf), "https://h%d.test/d%d/p%d", host, depth, i);
        break;
    case 1: /* its text does not start with its host: queued whole */
        snprintf(buf, sizeof(buf), "http://www.h%d.test/p%d?d=%d", host, i,
                 depth);
        break;
    default:
        snprintf(buf, sizeof(buf), "http://h%d.test/d%d/p%d", host, depth, i);
    }
    return strdup(buf);
}

static void run(int conns, int ahead, int budget, unsigned seed, int hosts)
{
    struct frontier *f[NF];
    struct held *held = calloc(MAXHELD, sizeof(*held));
    size_t nheld = 0;
    int64_t now = 1000000;
    int next_id = 0, diverged = 0;
    redisReply *r = redisCommand(raw, "FLUSHDB");

    freeReplyObject(r);
    rng = 0x9e3779b97f4a7c15ULL ^ seed;
    for (int k = 0; k < NF; k++) {
        f[k] = open_prefix(prefixes[k], conns, budget, k);
        if (!f[k])
            return;
        frontier_set_lease_ahead(f[k], ahead);
    }
    for (int step = 0; step < STEPS && !diverged; step++) {
        unsigned op = rnd(100);

        if (getenv("FRONTMOD_EVERY"))
            fprintf(stderr, "step %d op %u now %lld\n", step, op, (long long)now);

        if (op < 30) { /* admit */
            struct frontier_url u[8];
            char *txt[8], hostbuf[8][32];
            unsigned char isnew[NF][8];
            int n = 1 + (int)rnd(8), rc[NF];

            for (int i = 0; i < n; i++) {
                int id = rnd(4) ? next_id++ : (int)rnd((unsigned)next_id + 1);
                int host = id % hosts, depth = (int)rnd(3);
                txt[i] = url_text(id, host, depth);
                t_mkurl(&u[i], txt[i], depth);
                snprintf(hostbuf[i], sizeof(hostbuf[i]), "h%d.test", host);
                u[i].host = hostbuf[i];
                u[i].hostlen = strlen(hostbuf[i]);
            }
            for (int k = 0; k < NF; k++) {
                rc[k] = frontier_admit(f[k], u, (size_t)n, now, isnew[k]);
                CHECK(rc[k] == DC_OK, "admit %s %d", prefixes[k], rc[k]);
                CHECK(!memcmp(isnew[0], isnew[k], (size_t)n),
                      "admit flags differ: %s", prefixes[k]);
            }
            for (int i = 0; i < n; i++)
                free(txt[i]);
        } else if (op < 60) { /* pop */
            struct frontier_lease *l[NF] = { NULL };
            size_t n[NF] = { 0 }, max = 1 + rnd(12);
            int64_t nx[NF];
            int depth = (int)rnd(3), rc[NF], same = 1;

            for (int k = 0; k < NF; k++)
                rc[k] = frontier_pop(f[k], depth, now, max, &l[k], &n[k], &nx[k]);
            for (int k = 1; k < NF && same; k++) {
                same = rc[0] == DC_OK && rc[k] == DC_OK && n[0] == n[k] &&
                       nx[0] == nx[k];
                for (size_t i = 0; same && i < n[0]; i++)
                    same = !strcmp(l[0][i].entry, l[k][i].entry) &&
                           !strcmp(l[0][i].url, l[k][i].url);
                CHECK(same, "step %d: pop d%d max %zu: lua %zu (next %lld), "
                      "%s %zu (next %lld)", step, depth, max, n[0],
                      (long long)nx[0], prefixes[k], n[k], (long long)nx[k]);
            }
            if (!same)
                diverged = 1;
            for (size_t i = 0; same && i < n[0] && nheld < MAXHELD; i++) {
                for (int k = 0; k < NF; k++) {
                    struct frontier_lease *d = &held[nheld].l[k], *s = &l[k][i];
                    *d = *s;
                    d->entry = strdup(s->entry);
                    d->url = strdup(s->url);
                    d->host = strdup(s->host);
                }
                held[nheld++].done = 0;
            }
            for (int k = 0; k < NF; k++)
                frontier_leases_free(l[k], n[k]);
        } else if (op < 90 && nheld) { /* complete a few */
            struct frontier_lease batch[NF][6];
            int outcome[6], rc[NF];
            int64_t delay[6];
            size_t n = 1 + rnd(6), m = 0;

            for (size_t i = 0; i < n; i++) {
                struct held *h = &held[rnd((unsigned)nheld)];
                if (h->done && rnd(4)) /* now and then complete one twice */
                    continue;
                int64_t retry = rnd(2) ? 0 : 50 + rnd(500);
                for (int k = 0; k < NF; k++) {
                    batch[k][m] = h->l[k];
                    batch[k][m].retry_ms = retry;
                }
                outcome[m] = (int)rnd(4);
                delay[m] = rnd(3) ? 0 : (int64_t)rnd(400);
                h->done = 1;
                m++;
            }
            for (size_t i = 0; getenv("FRONTMOD_EVERY") && i < m; i++)
                fprintf(stderr, "  complete %s outcome %d delay %lld retry %lld\n",
                        batch[0][i].url, outcome[i], (long long)delay[i],
                        (long long)batch[0][i].retry_ms);
            for (int k = 0; k < NF; k++) {
                rc[k] = frontier_complete(f[k], batch[k], outcome, delay, m, now);
                CHECK(rc[0] == rc[k], "step %d: complete rc %d %s %d", step,
                      rc[0], prefixes[k], rc[k]);
            }
        } else if (op < 93) { /* leases expire and come back */
            size_t got[NF] = { 0 };
            char pat[16];
            for (int k = 0; k < NF; k++) {
                snprintf(pat, sizeof(pat), "%s:*:lease", prefixes[k]);
                t_leases_expire(raw, pat);
            }
            for (int k = 0; k < NF; k++) {
                CHECK(frontier_reclaim(f[k], now, 0, &got[k]) == DC_OK,
                      "reclaim");
                CHECK(got[0] == got[k], "reclaimed %zu %s %zu", got[0],
                      prefixes[k], got[k]);
            }
        } else {
            now += rnd(600);
        }
        if ((step % 50 == 49 || getenv("FRONTMOD_EVERY")) && !same_state(step))
            diverged = 1;
    }
    same_state(STEPS);
    for (size_t i = 0; i < nheld; i++)
        for (int k = 0; k < NF; k++) {
            free(held[i].l[k].entry);
            free(held[i].l[k].url);
            free(held[i].l[k].host);
        }
    free(held);
    for (int k = 0; k < NF; k++)
        frontier_close(&f[k]);
}

int main(void)
{
    const char *url = getenv("DCRAWL_TEST_REDIS");
    long long pops, completes, admits;

    if (!url || strncmp(url, "unix://", 7)) {
        fprintf(stderr, "u-frontmod: run under tests/with-redis.sh\n");
        return 1;
    }
    raw = redisConnectUnix(url + 7);
    if (!raw || raw->err) {
        fprintf(stderr, "u-frontmod: cannot connect to %s\n", url);
        return 1;
    }
    run(1, 0, 0, 1, 7);
    run(1, 4, 0, 2, 7);
    run(2, 0, 0, 3, 7);
    run(3, 8, 0, 4, 7);
    run(1, 2, 9, 5, 7); /* a host budget: URLs over it refused (2) */
    run(1, 0, 0, 6, 150); /* larger ready sets and heaps */
    bad_input();
    pops = cmdstat_calls("dcfront.pop");
    completes = cmdstat_calls("dcfront.complete");
    admits = cmdstat_calls("dcfront.admit");
    /* every path ran: the commands for "dn", the scripts for "dl", the
     * native layout's for "dq" */
    CHECK(pops > 100 && completes > 100 && admits > 100,
          "native calls: pop %lld complete %lld admit %lld", pops, completes,
          admits);
    pops = cmdstat_calls("dcfront.qpop");
    completes = cmdstat_calls("dcfront.qcomplete");
    admits = cmdstat_calls("dcfront.qadmit");
    CHECK(pops > 100 && completes > 100 && admits > 100,
          "native layout calls: pop %lld complete %lld admit %lld", pops,
          completes, admits);
    CHECK(cmdstat_calls("dcfront.qpush") > 10 &&
              cmdstat_calls("dcfront.qready") > 10,
          "requeued through DCFRONT.QPUSH %lld, scanned with QREADY %lld",
          cmdstat_calls("dcfront.qpush"), cmdstat_calls("dcfront.qready"));
    CHECK(cmdstat_calls("evalsha") > pops, "the scripts ran too");
    redisFree(raw);
    return t_done("u-frontmod");
}
