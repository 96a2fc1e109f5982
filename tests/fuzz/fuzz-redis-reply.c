/*
 * fuzz-redis-reply.c: the frontier's handling of Redis replies
 * (frontier/, seen/), fed a fake reply stream.
 *
 * No server: this file defines redisConnectUnixWithTimeout, which the
 * executable's own definition puts in place of hiredis's for the frontier
 * (the frontier is opened on a unix:// URL). It hands back a hiredis
 * context on one end of a socket pair whose other end is closed, with the
 * fuzz input already fed to the context's reply reader (redisReaderFeed):
 * every reply the frontier waits for comes from the input, parsed by
 * hiredis's reader, and when the input runs out the next read fails at
 * once (end of file), as with a server that went away. A reconnect gets
 * an empty stream.
 *
 * Input: one option byte, then the reply stream. Option bit 7 clear: a
 * well-formed opening handshake (PING, SCRIPT LOAD, module probe, meta,
 * partition_by, intset probe) is put before the stream, so the fuzzer
 * spends its time on the operations; set: the handshake comes from the
 * stream too. Bits 0-6 choose the operations run after frontier_open, in
 * this order: 0 admit (and seen_batch), 1 pop then complete the leases,
 * 2 reclaim, level and stats, 3 status, 4 robots, noise, meta and digest
 * reads, 5 cluster join, tick, orphans and leave, 6 seen_usage.
 *
 * With DCRAWL_FUZZ_REDIS=PATH the harness connects to a real server at the
 * unix socket PATH instead: record-redis.py records seeds that way.
 *
 * hiredis allocates an array reply's element table from its announced
 * count before the elements arrive; streams announcing more than 100000
 * elements are skipped (a trusted Redis sends none, and it is hiredis's
 * allocation, not the frontier's code).
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "fuzz.h"
#include "seen.h"

#define SHA40 "0123456789abcdef0123456789abcdef01234567"
#define LOAD "$40\r\n" SHA40 "\r\n"
static const char handshake[] =
    "+PONG\r\n"
    LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD /* SCRIPT LOAD x9 */
    "*1\r\n*-1\r\n"                                 /* COMMAND INFO */
    ":1\r\n:1\r\n:1\r\n:1\r\n"                      /* HSETNX x4 */
    "$1\r\n4\r\n$7\r\nmurmur3\r\n$8\r\nb256-i64\r\n" /* HGET x3 */
    ":1\r\n$4\r\nhost\r\n"                          /* partition_by */
    "*2\r\n$22\r\nset-max-intset-entries\r\n$3\r\n512\r\n";

static const uint8_t *stream;
static size_t stream_len;
static int with_handshake;

redisContext *redisConnectUnixWithTimeout(const char *path,
                                          const struct timeval tv)
{
    const char *real = getenv("DCRAWL_FUZZ_REDIS");
    redisContext *c;
    int sv[2];

    if (real && *real) { /* recording seeds (record-redis.py): for real */
        redisContext *(*next)(const char *, const struct timeval) =
            (redisContext * (*)(const char *, const struct timeval))
                dlsym(RTLD_NEXT, "redisConnectUnixWithTimeout");
        FUZZ_CHECK(next != NULL);
        return next(real, tv);
    }
    (void)path;
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    close(sv[1]);
    c = redisConnectFd(sv[0]);
    FUZZ_CHECK(c && !c->err);
    if (with_handshake)
        FUZZ_CHECK(redisReaderFeed(c->reader, handshake,
                                   sizeof(handshake) - 1) == REDIS_OK);
    if (stream_len)
        FUZZ_CHECK(redisReaderFeed(c->reader, (const char *)stream,
                                   stream_len) == REDIS_OK);
    with_handshake = 0;
    stream_len = 0;
    return c;
}

/* An array count over 100000 anywhere in the stream. */
static int huge_array(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned long v = 0;
        size_t k = i + 1;
        if (d[i] != '*')
            continue;
        while (k < n && d[k] >= '0' && d[k] <= '9' && v <= 100000)
            v = v * 10 + (d[k++] - '0');
        if (v > 100000)
            return 1;
    }
    return 0;
}

static void found_robots(void *ud, size_t i, const struct frontier_robots *r)
{
    (void)ud;
    (void)i;
    FUZZ_CHECK(r->body_len == 0 || r->body != NULL);
}

static void found_blob(void *ud, size_t i, const void *blob, size_t len)
{
    (void)ud;
    (void)i;
    FUZZ_CHECK(len == 0 || blob != NULL);
}

static const char *const urls[3] = { "http://a.test/", "http://a.test/x",
                                     "https://b.test:8443/y?z" };

static void op_admit(struct frontier *f)
{
    struct frontier_url u[3];
    unsigned char isnew[3];

    for (int i = 0; i < 3; i++) {
        u[i].url = urls[i];
        u[i].len = strlen(urls[i]);
        u[i].host = urls[i] + (i == 2 ? 8 : 7);
        u[i].hostlen = i == 2 ? 11 : 6;
        u[i].fp = dedup_fingerprint(urls[i], u[i].len);
        u[i].depth = i;
    }
    (void)frontier_admit(f, u, 3, 1000, isnew);
    (void)seen_batch(f, u, 3, 1, isnew);
}

static void op_pop(struct frontier *f)
{
    struct frontier_lease *l = NULL;
    size_t n = 0;
    int64_t next = 0;
    int out[8];
    int64_t delay[8];

    if (frontier_pop(f, 0, 2000, 8, &l, &n, &next) != DC_OK)
        return;
    FUZZ_CHECK(n <= 8);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(l[i].entry && l[i].url && l[i].host);
        FUZZ_CHECK(l[i].partition >= 0 &&
                   l[i].partition < frontier_partitions(f));
        out[i] = (int)(i % 4);
        delay[i] = (int64_t)i * 100;
    }
    (void)frontier_complete(f, l, out, delay, n, 3000);
    frontier_leases_free(l, n);
}

static void op_sweep(struct frontier *f)
{
    struct frontier_stats st;
    int64_t pending[4];
    size_t n;
    int level;

    (void)frontier_reclaim(f, 4000, 1, &n);
    (void)frontier_level(f, 3, pending, &level);
    (void)frontier_stats(f, &st);
}

static void op_status(struct frontier *f)
{
    struct frontier_status *st = NULL;

    if (frontier_status(f, 5000, &st) == DC_OK) {
        FUZZ_CHECK(st != NULL && st->nlive <= st->nnodes);
        FUZZ_CHECK(st->ndepths >= 0 && st->ndepths <= FRONTIER_STATUS_DEPTHS);
    }
    frontier_status_free(&st);
}

static void op_reads(struct frontier *f)
{
    const char *hosts[2] = { "a.test", "b.test:8443" };
    const char *dig[2] = { "sha1:AAAA", "sha1:BBBB" };
    const char *uri[2] = { urls[0], urls[1] };
    const int64_t ms[2] = { 1, 2 };
    unsigned char isdup[2];
    char *orig[2] = { NULL, NULL }, meta[64];
    int64_t orig_ms[2];

    (void)frontier_robots_get(f, hosts, 2, found_robots, NULL);
    (void)frontier_noise_get(f, hosts, 2, found_blob, NULL);
    (void)frontier_meta_get(f, "max_depth", meta, sizeof(meta));
    if (frontier_digest_claim(f, dig, uri, ms, 2, isdup, orig, orig_ms) ==
        DC_OK)
        for (int i = 0; i < 2; i++)
            free(orig[i]);
}

static void op_cluster(struct frontier *f, const struct conf *c)
{
    struct frontier_node_info info = { 1, 2, 3, 1.5, 0, "fetching" };
    struct frontier_cluster_view v;
    int64_t next;
    size_t n;

    if (frontier_cluster_join(f, c) != DC_OK)
        return;
    (void)frontier_cluster_tick(f, 6000, &info, &next);
    (void)frontier_cluster_owns(f, 0, 6000);
    (void)frontier_reclaim_orphans(f, 7000, &n);
    frontier_cluster_view(f, &v);
    (void)frontier_cluster_leave(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct conf c;
    static int init;
    struct frontier *f;
    char err[256];

    if (!init) {
        signal(SIGPIPE, SIG_IGN);
        conf_init(&c);
        FUZZ_CHECK(conf_set(&c, "frontier.partitions=4", err, sizeof(err)) ==
                   DC_OK);
        FUZZ_CHECK(conf_set(&c, "redis.retry=0", err, sizeof(err)) == DC_OK);
        init = 1;
    }
    if (size < 1 || huge_array(data + 1, size - 1))
        return 0;
    stream = data + 1;
    stream_len = size - 1;
    with_handshake = !(data[0] & 0x80);
    if (frontier_open(&f, "unix:///nonexistent/fuzz.sock", &c, "node-1", err,
                      sizeof(err)) != DC_OK) {
        stream_len = 0;
        return 0;
    }
    if (data[0] & 1)
        op_admit(f);
    if (data[0] & 2)
        op_pop(f);
    if (data[0] & 4)
        op_sweep(f);
    if (data[0] & 8)
        op_status(f);
    if (data[0] & 16)
        op_reads(f);
    if (data[0] & 32)
        op_cluster(f, &c);
    if (data[0] & 64) {
        struct seen_usage u;
        (void)seen_usage(f, 4, &u);
    }
    frontier_close(&f);
    stream_len = 0;
    return 0;
}
