/*
 * redis-priv.c: the benchmarks' private redis-server (redis-priv.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis-priv.h"

void bench_redis_start(struct bench_redis *sv, const char *tag,
                       const char *module)
{
    snprintf(sv->dir, sizeof(sv->dir), "/tmp/%s.XXXXXX", tag);
    if (!mkdtemp(sv->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(sv->sock, sizeof(sv->sock), "%s/redis.sock", sv->dir);
    sv->pid = fork();
    if (sv->pid == 0) {
        char log[400];
        snprintf(log, sizeof(log), "%s/redis.log", sv->dir);
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
            _exit(127);
        const char *args[] = {
            "redis-server", "--port", "0", "--unixsocket", sv->sock,
            "--dir", sv->dir, "--save", "", "--appendonly", "no",
            "--set-max-intset-entries", "8192", "--maxmemory-policy",
            "noeviction", "--loglevel", "warning",
            module ? "--loadmodule" : NULL, module, NULL
        };
        execvp("redis-server", (char *const *)args);
        _exit(127);
    }
    for (int i = 0; i < 200 && access(sv->sock, F_OK) != 0; i++)
        usleep(20000);
    if (access(sv->sock, F_OK) != 0) {
        fprintf(stderr, "%s: redis-server did not start\n", tag);
        exit(1);
    }
}

void bench_redis_stop(struct bench_redis *sv)
{
    char path[400];

    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, NULL, 0);
    snprintf(path, sizeof(path), "%s/redis.sock", sv->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/redis.log", sv->dir);
    unlink(path);
    rmdir(sv->dir);
}

redisContext *bench_redis_connect(const char *sock)
{
    redisContext *r = redisConnectUnix(sock);

    if (!r || r->err) {
        fprintf(stderr, "cannot connect to %s\n", sock);
        exit(1);
    }
    return r;
}

static double info_num(const char *text, const char *field)
{
    char key[128];
    const char *p;

    snprintf(key, sizeof(key), "\n%s:", field);
    p = strstr(text, key);
    return p ? atof(p + strlen(key)) : -1;
}

long long bench_redis_info(redisContext *r, const char *section,
                           const char *field)
{
    redisReply *rep = redisCommand(r, "INFO %s", section);
    long long v = -1;

    if (rep && rep->type == REDIS_REPLY_STRING)
        v = (long long)info_num(rep->str, field);
    if (rep)
        freeReplyObject(rep);
    return v;
}

double bench_redis_cpu(redisContext *r)
{
    redisReply *rep = redisCommand(r, "INFO cpu");
    double v = 0;

    if (rep && rep->type == REDIS_REPLY_STRING)
        v = info_num(rep->str, "used_cpu_sys") +
            info_num(rep->str, "used_cpu_user");
    if (rep)
        freeReplyObject(rep);
    return v;
}
