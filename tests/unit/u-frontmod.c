/*
 * u-frontmod.c: the module's native frontier commands (DCFRONT.POP and
 * DCFRONT.COMPLETE, DCFRONT.ADMIT, seen/module/front-module.h) against
 * the Lua scripts they replace (frontier/lua/pop.lua, complete.lua,
 * admit-mod.lua), on one real
 * redis-server with the module (tests/with-redis.sh).
 *
 * Two frontier handles on the same server under two key prefixes: "dl"
 * opened with DCRAWL_LUA_FRONTIER set (the scripts), "dn" without (the
 * commands). A seeded random run drives both with the same calls: admits
 * over a few hosts at three depths (http and https URLs, URLs whose text
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

#define HOSTS 7
#define STEPS 1500
#define MAXHELD 400

static redisContext *raw;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static struct frontier *open_prefix(const char *prefix, int conns,
                                   int budget, int lua)
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
    if (lua)
        setenv("DCRAWL_LUA_FRONTIER", "1", 1);
    rc = frontier_open(&f, getenv("DCRAWL_TEST_REDIS"), &c, "n1", err,
                       sizeof(err));
    unsetenv("DCRAWL_LUA_FRONTIER");
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

        if (strstr(rel, ":meta") == rel) { /* its creation time differs */
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
    struct lines a = { 0 }, b = { 0 };
    size_t i;
    int ok;

    dump("dl", &a);
    dump("dn", &b);
    for (i = 0; i < a.n && i < b.n && !strcmp(a.v[i], b.v[i]); i++)
        ;
    ok = a.n == b.n && i == a.n;
    CHECK(ok, "step %d: key spaces differ at line %zu: lua '%s' native '%s'",
          step, i, i < a.n ? a.v[i] : "(end)", i < b.n ? b.v[i] : "(end)");
    lines_free(&a);
    lines_free(&b);
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
    struct frontier_lease l[2]; /* [0] lua, [1] native */
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

static void run(int conns, int ahead, int budget, unsigned seed)
{
    struct frontier *f[2];
    struct held *held = calloc(MAXHELD, sizeof(*held));
    size_t nheld = 0;
    int64_t now = 1000000;
    int next_id = 0, diverged = 0;
    redisReply *r = redisCommand(raw, "FLUSHDB");

    freeReplyObject(r);
    rng = 0x9e3779b97f4a7c15ULL ^ seed;
    f[0] = open_prefix("dl", conns, budget, 1);
    f[1] = open_prefix("dn", conns, budget, 0);
    if (!f[0] || !f[1])
        return;
    frontier_set_lease_ahead(f[0], ahead);
    frontier_set_lease_ahead(f[1], ahead);
    for (int step = 0; step < STEPS && !diverged; step++) {
        unsigned op = rnd(100);

        if (getenv("FRONTMOD_EVERY"))
            fprintf(stderr, "step %d op %u now %lld\n", step, op, (long long)now);

        if (op < 30) { /* admit */
            struct frontier_url u[8];
            char *txt[8], hostbuf[8][32];
            unsigned char isnew[2][8];
            int n = 1 + (int)rnd(8), rc[2];

            for (int i = 0; i < n; i++) {
                int id = rnd(4) ? next_id++ : (int)rnd((unsigned)next_id + 1);
                int host = id % HOSTS, depth = (int)rnd(3);
                txt[i] = url_text(id, host, depth);
                t_mkurl(&u[i], txt[i], depth);
                snprintf(hostbuf[i], sizeof(hostbuf[i]), "h%d.test", host);
                u[i].host = hostbuf[i];
                u[i].hostlen = strlen(hostbuf[i]);
            }
            for (int k = 0; k < 2; k++)
                rc[k] = frontier_admit(f[k], u, (size_t)n, now, isnew[k]);
            CHECK(rc[0] == DC_OK && rc[1] == DC_OK, "admit %d %d", rc[0], rc[1]);
            CHECK(!memcmp(isnew[0], isnew[1], (size_t)n), "admit flags differ");
            for (int i = 0; i < n; i++)
                free(txt[i]);
        } else if (op < 60) { /* pop */
            struct frontier_lease *l[2] = { NULL, NULL };
            size_t n[2] = { 0, 0 }, max = 1 + rnd(12);
            int64_t nx[2];
            int depth = (int)rnd(3), rc[2], same;

            for (int k = 0; k < 2; k++)
                rc[k] = frontier_pop(f[k], depth, now, max, &l[k], &n[k], &nx[k]);
            same = rc[0] == DC_OK && rc[1] == DC_OK && n[0] == n[1] &&
                   nx[0] == nx[1];
            for (size_t i = 0; same && i < n[0]; i++)
                same = !strcmp(l[0][i].entry, l[1][i].entry) &&
                       !strcmp(l[0][i].url, l[1][i].url);
            CHECK(same, "step %d: pop d%d max %zu: lua %zu (next %lld), "
                  "native %zu (next %lld)", step, depth, max, n[0],
                  (long long)nx[0], n[1], (long long)nx[1]);
            if (!same)
                diverged = 1;
            for (size_t i = 0; same && i < n[0] && nheld < MAXHELD; i++) {
                for (int k = 0; k < 2; k++) {
                    struct frontier_lease *d = &held[nheld].l[k], *s = &l[k][i];
                    *d = *s;
                    d->entry = strdup(s->entry);
                    d->url = strdup(s->url);
                    d->host = strdup(s->host);
                }
                held[nheld++].done = 0;
            }
            for (int k = 0; k < 2; k++)
                frontier_leases_free(l[k], n[k]);
        } else if (op < 90 && nheld) { /* complete a few */
            struct frontier_lease batch[2][6];
            int outcome[6], rc[2];
            int64_t delay[6];
            size_t n = 1 + rnd(6), m = 0;

            for (size_t i = 0; i < n; i++) {
                struct held *h = &held[rnd((unsigned)nheld)];
                if (h->done && rnd(4)) /* now and then complete one twice */
                    continue;
                int64_t retry = rnd(2) ? 0 : 50 + rnd(500);
                for (int k = 0; k < 2; k++) {
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
            for (int k = 0; k < 2; k++)
                rc[k] = frontier_complete(f[k], batch[k], outcome, delay, m, now);
            CHECK(rc[0] == rc[1], "step %d: complete rc %d %d", step, rc[0],
                  rc[1]);
        } else if (op < 93) { /* leases expire and come back */
            size_t got[2] = { 0, 0 };
            t_leases_expire(raw, "dl:*:lease");
            t_leases_expire(raw, "dn:*:lease");
            for (int k = 0; k < 2; k++)
                CHECK(frontier_reclaim(f[k], now, 0, &got[k]) == DC_OK,
                      "reclaim");
            CHECK(got[0] == got[1], "reclaimed %zu %zu", got[0], got[1]);
        } else {
            now += rnd(600);
        }
        if ((step % 50 == 49 || getenv("FRONTMOD_EVERY")) && !same_state(step))
            diverged = 1;
    }
    same_state(STEPS);
    for (size_t i = 0; i < nheld; i++)
        for (int k = 0; k < 2; k++) {
            free(held[i].l[k].entry);
            free(held[i].l[k].url);
            free(held[i].l[k].host);
        }
    free(held);
    frontier_close(&f[0]);
    frontier_close(&f[1]);
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
    run(1, 0, 0, 1);
    run(1, 4, 0, 2);
    run(2, 0, 0, 3);
    run(3, 8, 0, 4);
    run(1, 2, 9, 5); /* a host budget: URLs over it refused (2) */
    bad_input();
    pops = cmdstat_calls("dcfront.pop");
    completes = cmdstat_calls("dcfront.complete");
    admits = cmdstat_calls("dcfront.admit");
    /* both paths ran: the commands for "dn", the scripts for "dl" */
    CHECK(pops > 100 && completes > 100 && admits > 100,
          "native calls: pop %lld complete %lld admit %lld", pops, completes,
          admits);
    CHECK(cmdstat_calls("evalsha") > pops, "the scripts ran too");
    redisFree(raw);
    return t_done("u-frontmod");
}
