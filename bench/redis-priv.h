/*
 * redis-priv.h: a private redis-server for the benchmarks, started the way
 * the crawl's embedded one is (crawler/embedded-redis.c: unix socket in a
 * temp dir, no persistence, set-max-intset-entries 8192, noeviction, the
 * dcrawl-seen module unless module is NULL), and the INFO figures the
 * benchmarks print. Errors exit the benchmark with a message.
 */
#ifndef DC_BENCH_REDIS_PRIV_H
#define DC_BENCH_REDIS_PRIV_H

#include <sys/types.h>

#include <hiredis/hiredis.h>

struct bench_redis {
    pid_t pid;
    char dir[256], sock[300];
};

/* Start redis-server on a socket in /tmp/<tag>.XXXXXX; wait until it is up. */
void bench_redis_start(struct bench_redis *sv, const char *tag,
                       const char *module);
/* SIGTERM, wait, remove the socket, log and temp dir. */
void bench_redis_stop(struct bench_redis *sv);
redisContext *bench_redis_connect(const char *sock);
/* INFO <section> field as a number (-1 when absent). */
long long bench_redis_info(redisContext *r, const char *section,
                           const char *field);
/* used_cpu_sys + used_cpu_user of the server, seconds. */
double bench_redis_cpu(redisContext *r);

#endif
