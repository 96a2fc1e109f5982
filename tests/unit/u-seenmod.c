/*
 * u-seenmod.c: the seen-set module (dcrawl-seen.so, path in argv[1])
 * loaded into real redis-server processes that this test starts on unix
 * sockets in its own temp dir (and stops). Expected answers come from the
 * test's own model of what was inserted (sorted arrays), not from the
 * module.
 *
 * Cases: flags of ADD / CHECK / CARD against the model, repeats inside a
 * blob; bad input (blob not a multiple of 8 bytes, arity, wrong key type)
 * answered with an error and the server still up; 4 processes inserting
 * overlapping sets at once, each fingerprint reported new exactly once in
 * total; persistence through DEBUG RELOAD, an RDB restart and an AOF
 * rewrite + restart; MEMORY USAGE of 1 M members within 12 bytes each.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "t.h"

#define NPROC 4
#define PER_PROC 60000

#include "t-rserver.h"

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void put_le(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++, x >>= 8)
        p[i] = (unsigned char)x;
}

/* One command with a blob of n fingerprints; returns the reply. */
static redisReply *blob_cmd(redisContext *c, const char *cmd, const char *key,
                            const uint64_t *fp, size_t n)
{
    unsigned char *b = malloc(n * 8 + 1);
    redisReply *r;

    for (size_t i = 0; i < n; i++)
        put_le(b + 8 * i, fp[i]);
    r = redisCommand(c, "%s %s %b", cmd, key, b, n * 8);
    free(b);
    return r;
}

/* Flags of cmd as a malloc'd string, NULL on an error or odd reply. */
static char *flags(redisContext *c, const char *cmd, const char *key,
                   const uint64_t *fp, size_t n)
{
    redisReply *r = blob_cmd(c, cmd, key, fp, n);
    char *out = NULL;

    if (r && r->type == REDIS_REPLY_STRING && (size_t)r->len == n) {
        out = malloc(n + 1);
        memcpy(out, r->str, n);
        out[n] = '\0';
    }
    if (r)
        freeReplyObject(r);
    return out;
}

static long long integer(redisContext *c, const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(c, fmt, arg);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (r)
        freeReplyObject(r);
    return v;
}

/* The error text of a command, "" when it did not fail. */
static void error_of(redisReply *r, char *out, size_t cap)
{
    snprintf(out, cap, "%s", r && r->type == REDIS_REPLY_ERROR ? r->str : "");
    if (r)
        freeReplyObject(r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int model_has(const uint64_t *m, size_t n, uint64_t fp)
{
    return bsearch(&fp, m, n, sizeof(*m), cmp_u64) != NULL;
}

/* ---- cases ---- */

/* Random batches (with repeats, shared top bytes, extremes) against a
 * sorted model of everything inserted. */
static void t_flags(struct server *s)
{
    enum { ROUNDS = 40, MAXB = 700 };
    uint64_t *model = calloc(ROUNDS * MAXB, sizeof(*model)), seed = 7;
    uint64_t batch[MAXB];
    size_t nm = 0, wrong = 0;

    printf("u-seenmod: random batches from splitmix seed %llu\n",
           (unsigned long long)seed);
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = 1 + splitmix(&seed) % MAXB;
        int check = round % 3 == 2;
        char *got, *want = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = splitmix(&seed);
            if (i && r % 5 == 0)
                batch[i] = batch[r % i];            /* repeat in the blob */
            else if (nm && r % 5 == 1)
                batch[i] = model[r % nm];           /* already present */
            else if (r % 7 == 2)
                batch[i] = (r % 2) ? 0 : UINT64_MAX; /* extremes */
            else
                batch[i] = (r & 0x00000000000fffffULL) | (r % 3) << 56;
        }
        for (size_t i = 0; i < n; i++) {
            int first = 1;
            for (size_t j = 0; j < i && first; j++)
                first = batch[j] != batch[i];
            want[i] = first && !model_has(model, nm, batch[i]) ? '1' : '0';
        }
        got = flags(s->c, check ? "DCSEEN.CHECK" : "DCSEEN.ADD", "k", batch,
                    n);
        wrong += !got || memcmp(got, want, n) != 0;
        if (!check)
            for (size_t i = 0; i < n; i++)
                if (want[i] == '1') {
                    model[nm++] = batch[i];
                    qsort(model, nm, sizeof(*model), cmp_u64);
                }
        free(got);
        free(want);
    }
    CHECK(wrong == 0, "%zu batches answered unlike the model", wrong);
    CHECK(integer(s->c, "DCSEEN.CARD %s", "k") == (long long)nm,
          "CARD %lld, model %zu", integer(s->c, "DCSEEN.CARD %s", "k"), nm);
    CHECK(integer(s->c, "DCSEEN.CARD %s", "nokey") == 0, "CARD of no key");
    {
        char *f = flags(s->c, "DCSEEN.CHECK", "nokey", model, 3);
        CHECK(f && !strcmp(f, "111"), "CHECK of no key: %s", f ? f : "?");
        free(f);
        CHECK(integer(s->c, "EXISTS %s", "nokey") == 0, "CHECK wrote nothing");
        f = flags(s->c, "DCSEEN.ADD", "k", model, 0);
        CHECK(f && !*f, "empty blob: empty flags");
        free(f);
        f = flags(s->c, "DCSEEN.ADD", "empty", model, 0);
        CHECK(f && integer(s->c, "EXISTS %s", "empty") == 0,
              "empty ADD creates no key");
        free(f);
    }
    free(model);
}

static void t_bad_input(struct server *s)
{
    static const char *const bad_blobs[] = {"x", "1234567", "123456789",
                                            "123456789012345"};
    char err[256];
    redisReply *r;

    for (size_t i = 0; i < sizeof(bad_blobs) / sizeof(*bad_blobs); i++) {
        error_of(redisCommand(s->c, "DCSEEN.ADD kbad %s", bad_blobs[i]), err,
                 sizeof(err));
        CHECK(strstr(err, "multiple of 8") != NULL, "ADD %s: '%s'",
              bad_blobs[i], err);
        error_of(redisCommand(s->c, "DCSEEN.CHECK kbad %s", bad_blobs[i]), err,
                 sizeof(err));
        CHECK(strstr(err, "multiple of 8") != NULL, "CHECK %s: '%s'",
              bad_blobs[i], err);
    }
    CHECK(integer(s->c, "EXISTS %s", "kbad") == 0, "bad blobs wrote nothing");
    error_of(redisCommand(s->c, "DCSEEN.ADD k"), err, sizeof(err));
    CHECK(strstr(err, "wrong number of arguments") != NULL, "arity: %s", err);
    error_of(redisCommand(s->c, "DCSEEN.CARD"), err, sizeof(err));
    CHECK(strstr(err, "wrong number of arguments") != NULL, "arity: %s", err);
    error_of(redisCommand(s->c, "DCSEEN.CHECK a b c"), err, sizeof(err));
    CHECK(strstr(err, "wrong number of arguments") != NULL, "arity: %s", err);
    r = redisCommand(s->c, "SET str x");
    if (r)
        freeReplyObject(r);
    r = redisCommand(s->c, "RPUSH list x");
    if (r)
        freeReplyObject(r);
    error_of(redisCommand(s->c, "DCSEEN.ADD str 12345678"), err, sizeof(err));
    CHECK(!strncmp(err, "WRONGTYPE", 9), "ADD on a string: %s", err);
    error_of(redisCommand(s->c, "DCSEEN.CHECK list 12345678"), err,
             sizeof(err));
    CHECK(!strncmp(err, "WRONGTYPE", 9), "CHECK on a list: %s", err);
    error_of(redisCommand(s->c, "DCSEEN.CARD list"), err, sizeof(err));
    CHECK(!strncmp(err, "WRONGTYPE", 9), "CARD on a list: %s", err);
    error_of(redisCommand(s->c, "DCSEEN.ADD k 12345678"), err, sizeof(err));
    error_of(redisCommand(s->c, "SADD k 1"), err, sizeof(err));
    CHECK(!strncmp(err, "WRONGTYPE", 9), "SADD on the module key: %s", err);
    r = redisCommand(s->c, "PING");
    CHECK(r && r->type == REDIS_REPLY_STATUS, "server still up");
    if (r)
        freeReplyObject(r);
}

/* ADD the fingerprints of fp[0 .. n) that belong to key c<key>; write
 * those answered new to fd. */
static int add_some(redisContext *c, const uint64_t *fp, size_t n, int key,
                    int fd)
{
    uint64_t *sub = malloc(n * sizeof(*sub));
    size_t m = 0;
    char name[8], *f;
    int rc = 0;

    for (size_t i = 0; i < n; i++)
        if ((int)(fp[i] % 3) == key)
            sub[m++] = fp[i];
    snprintf(name, sizeof(name), "c%d", key);
    f = c && !c->err ? flags(c, "DCSEEN.ADD", name, sub, m) : NULL;
    if (!f)
        rc = 1;
    for (size_t i = 0; f && i < m; i++)
        if (f[i] == '1' && write(fd, &sub[i], 8) != 8)
            rc = 1;
    free(f);
    free(sub);
    return rc;
}

/* Process k inserts the fingerprints i in [k*PER/2, k*PER/2 + PER) of a
 * common sequence, in shuffled batches over 3 keys; it writes the ones
 * it was told are new to fd. */
static void worker(const char *sock, int k, int fd)
{
    redisContext *c = redisConnectUnix(sock);
    uint64_t *mine = malloc(PER_PROC * sizeof(*mine)), seed = 100 + k;
    size_t at = 0;
    int rc = 0;

    for (size_t i = 0; i < PER_PROC; i++) {
        uint64_t x = (uint64_t)k * PER_PROC / 2 + i;
        mine[i] = splitmix(&x);
    }
    for (size_t i = PER_PROC - 1; i > 0; i--) { /* shuffle */
        size_t j = splitmix(&seed) % (i + 1);
        uint64_t t = mine[i];
        mine[i] = mine[j];
        mine[j] = t;
    }
    while (!rc && at < PER_PROC) {
        size_t n = 1 + splitmix(&seed) % 2000;
        if (n > PER_PROC - at)
            n = PER_PROC - at;
        for (int key = 0; key < 3; key++) /* a fingerprint's key: fp % 3 */
            rc |= add_some(c, mine + at, n, key, fd);
        at += n;
    }
    free(mine);
    redisFree(c);
    _exit(rc);
}

static void t_concurrent(struct server *s)
{
    int fds[2], st, failed = 0;
    pid_t pids[NPROC];
    size_t total = PER_PROC * (NPROC + 1) / 2, n = 0, cap = 4 * total;
    uint64_t *got = malloc(cap * sizeof(*got)), *want = malloc(total * 8);
    size_t dups = 0, missing = 0;
    ssize_t r;

    CHECK(pipe(fds) == 0, "pipe");
    for (int k = 0; k < NPROC; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            close(fds[0]);
            worker(s->sock, k, fds[1]);
        }
    }
    close(fds[1]);
    while (n < cap && (r = read(fds[0], got + n, (cap - n) * 8)) > 0)
        n += (size_t)r / 8;
    close(fds[0]);
    for (int k = 0; k < NPROC; k++) {
        waitpid(pids[k], &st, 0);
        failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    CHECK(failed == 0, "%d workers failed", failed);
    for (size_t i = 0; i < total; i++) {
        uint64_t x = i;
        want[i] = splitmix(&x);
    }
    qsort(got, n, 8, cmp_u64);
    qsort(want, total, 8, cmp_u64);
    for (size_t i = 1; i < n; i++)
        dups += got[i] == got[i - 1];
    for (size_t i = 0; i < total; i++)
        missing += !model_has(got, n, want[i]);
    CHECK(n == total && dups == 0 && missing == 0,
          "new reported %zu times for %zu fingerprints: %zu twice, %zu never",
          n, total, dups, missing);
    CHECK(integer(s->c, "DCSEEN.CARD %s", "c0") +
              integer(s->c, "DCSEEN.CARD %s", "c1") +
              integer(s->c, "DCSEEN.CARD %s", "c2") == (long long)total,
          "CARD sums to %zu", total);
    free(got);
    free(want);
}

/* Keys p0..p2 hold `n` known fingerprints each: CARD and CHECK agree. */
static int holds(redisContext *c, const uint64_t *fp, size_t n)
{
    int ok = 1;

    for (int k = 0; k < 3; k++) {
        char key[8], *f;
        snprintf(key, sizeof(key), "p%d", k);
        f = flags(c, "DCSEEN.CHECK", key, fp + (size_t)k * n, n);
        ok = ok && f && strspn(f, "0") == n &&
             integer(c, "DCSEEN.CARD %s", key) == (long long)n;
        free(f);
    }
    return ok;
}

/* ADD the first n of each key's `stride` fingerprints. */
static void fill(redisContext *c, const uint64_t *fp, size_t n, size_t stride)
{
    for (int k = 0; k < 3; k++) {
        char key[8];
        snprintf(key, sizeof(key), "p%d", k);
        for (size_t at = 0; at < n; at += 5000) {
            char *f = flags(c, "DCSEEN.ADD", key, fp + k * stride + at,
                            n - at < 5000 ? n - at : 5000);
            free(f);
        }
    }
}

/* DCSEEN.ADD commands in the rewritten AOF's base file (aof/). */
static int base_adds(void)
{
    char cmd[256];
    FILE *p;
    int n = -1;

    snprintf(cmd, sizeof(cmd),
             "cat '%s'/aof/appendonlydir/*.base.aof | grep -c '^DCSEEN.ADD'",
             dir);
    p = popen(cmd, "r");
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

/* DCSEEN.ADD of fp[0 .. n) to key "lua" from a Lua script. */
static void lua_add(redisContext *c, const uint64_t *fp, size_t n)
{
    unsigned char b[64];
    redisReply *r;

    for (size_t i = 0; i < n && i < 8; i++)
        put_le(b + 8 * i, fp[i]);
    r = redisCommand(c, "EVAL %s 1 lua %b",
                     "return redis.call('DCSEEN.ADD', KEYS[1], ARGV[1])", b,
                     n * 8);
    CHECK(r && r->type == REDIS_REPLY_STRING && (size_t)r->len == n &&
              strspn(r->str, "1") == n, "DCSEEN.ADD from Lua");
    if (r)
        freeReplyObject(r);
}

static void t_persist(void)
{
    enum { N = 150000 }; /* > 64 Ki per key: AOF rewrite emits chunks */
    uint64_t *fp = malloc(3 * N * sizeof(*fp)), seed = 99;
    struct server s;
    redisReply *r;
    int up;

    for (size_t i = 0; i < 3 * N; i++)
        fp[i] = splitmix(&seed);
    up = server_start(&s, "rdb", 0) == 0;
    CHECK(up, "rdb server");
    if (up) {
        fill(s.c, fp, N, N);
        r = redisCommand(s.c, "DEBUG RELOAD");
        CHECK(r && r->type == REDIS_REPLY_STATUS, "DEBUG RELOAD: %s",
              r && r->str ? r->str : "?");
        if (r)
            freeReplyObject(r);
        CHECK(holds(s.c, fp, N), "after DEBUG RELOAD");
        server_stop(&s, 1);
        up = server_start(&s, "rdb", 0) == 0;
        CHECK(up && holds(s.c, fp, N), "after restart from RDB");
        server_stop(&s, 0);
    }
    up = server_start(&s, "aof", 1) == 0;
    CHECK(up, "aof server");
    if (up) {
        fill(s.c, fp, N / 2, N);  /* first halves, then a rewrite */
        r = redisCommand(s.c, "BGREWRITEAOF");
        if (r)
            freeReplyObject(r);
        for (int i = 0; i < 200; i++) { /* 20 s */
            r = redisCommand(s.c, "INFO persistence");
            int busy = !r || r->type != REDIS_REPLY_STRING ||
                       strstr(r->str, "aof_rewrite_in_progress:1") ||
                       strstr(r->str, "aof_rewrite_scheduled:1");
            if (r)
                freeReplyObject(r);
            if (!busy)
                break;
            sleep_ms(100);
        }
        CHECK(base_adds() == 6, "rewritten AOF: %d DCSEEN.ADD, want 3 keys "
              "x 2 chunks", base_adds());
        fill(s.c, fp, N, N); /* the rest goes to the AOF after the rewrite */
        lua_add(s.c, fp, 3);  /* as the admit script calls it */
        server_stop(&s, 0);
        up = server_start(&s, "aof", 1) == 0;
        CHECK(up && holds(s.c, fp, N), "after BGREWRITEAOF + restart");
        if (up) {
            char *f = flags(s.c, "DCSEEN.CHECK", "lua", fp, 4);
            CHECK(f && !strcmp(f, "0001"), "ADD from Lua in the AOF: %s",
                  f ? f : "?");
            free(f);
        }
        server_stop(&s, 0);
    }
    free(fp);
}

static void t_memory(struct server *s)
{
    enum { N = 1000000, B = 20000 };
    uint64_t *fp = malloc(B * sizeof(*fp)), seed = 5;
    redisReply *r;
    long long bytes = -1;

    for (size_t at = 0; at < N; at += B) {
        for (size_t i = 0; i < B; i++)
            fp[i] = splitmix(&seed);
        free(flags(s->c, "DCSEEN.ADD", "mem", fp, B));
    }
    r = redisCommand(s->c, "MEMORY USAGE mem");
    if (r && r->type == REDIS_REPLY_INTEGER)
        bytes = r->integer;
    if (r)
        freeReplyObject(r);
    printf("u-seenmod: MEMORY USAGE of %d members: %lld bytes (%.2f per "
           "member)\n", N, bytes, (double)bytes / N);
    CHECK(bytes >= 8LL * N && bytes <= 12LL * N, "MEMORY USAGE %lld", bytes);
    CHECK(integer(s->c, "DCSEEN.CARD %s", "mem") == N, "CARD");
    free(fp);
}

int main(int argc, char **argv)
{
    struct server s;

    if (rserver_init(argc, argv, "u-seenmod"))
        return 1;
    if (server_start(&s, "main", 0) != 0) {
        fprintf(stderr, "u-seenmod: redis-server with %s did not start\n",
                module);
        CHECK(0, "server start");
    } else {
        t_flags(&s);
        t_bad_input(&s);
        t_concurrent(&s);
        t_memory(&s);
        server_stop(&s, 0);
    }
    t_persist();
    rserver_cleanup("u-seenmod");
    return t_done("u-seenmod");
}
