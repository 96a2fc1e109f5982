/*
 * t-rserver.h: redis-server processes a test starts itself, with the
 * dcrawl-seen module (path in `module`), each on a unix socket in a
 * sub-directory of the test's temp dir `dir` (both set by the test's
 * main), with or without AOF; they load whatever RDB or AOF their
 * directory holds. Used by u-seenmod.c and u-levelmod.c.
 */
#ifndef DC_T_RSERVER_H
#define DC_T_RSERVER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

static const char *module;
static char dir[64];

struct server {
    pid_t pid;
    char sock[160];
    redisContext *c;
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start redis-server in sub (a dir under the test's), with or without
 * AOF; it loads the module and whatever RDB/AOF the dir holds. */
static int server_start(struct server *s, const char *sub, int aof)
{
    char d[96];
    struct stat sb;

    snprintf(d, sizeof(d), "%s/%s", dir, sub);
    mkdir(d, 0700);
    snprintf(s->sock, sizeof(s->sock), "%s/redis.sock", d);
    unlink(s->sock);
    s->c = NULL;
    s->pid = fork();
    if (s->pid == 0) {
        char log[128];
        snprintf(log, sizeof(log), "%s/log", d);
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket",
               s->sock, "--dir", d, "--save", "", "--appendonly",
               aof ? "yes" : "no", "--logfile", log, "--loadmodule", module,
               "--enable-debug-command", "local", "--aof-use-rdb-preamble",
               "no", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) { /* 10 s */
        if (stat(s->sock, &sb) == 0) {
            s->c = redisConnectUnix(s->sock);
            if (s->c && !s->c->err)
                return 0;
            redisFree(s->c);
            s->c = NULL;
        }
        sleep_ms(50);
    }
    return -1;
}

static void server_stop(struct server *s, int save)
{
    int st;

    if (s->c) {
        redisReply *r = redisCommand(s->c, save ? "SHUTDOWN SAVE"
                                                : "SHUTDOWN NOSAVE");
        if (r)
            freeReplyObject(r);
        redisFree(s->c);
        s->c = NULL;
    }
    for (int i = 0; i < 100 && waitpid(s->pid, &st, WNOHANG) == 0; i++)
        sleep_ms(50);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &st, 0);
}

/* The test's main: argv[1] is the module; a temp dir /tmp/dcrawl-<name>.*
 * for the servers. 0, or 1 after a usage line. */
static int rserver_init(int argc, char **argv, const char *name)
{
    if (argc != 2 || access(argv[1], R_OK) != 0) {
        fprintf(stderr, "usage: %s /path/to/dcrawl-seen.so\n", name);
        return 1;
    }
    module = argv[1];
    signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof(dir), "/tmp/dcrawl-%s.XXXXXX", name);
    return mkdtemp(dir) ? 0 : 1;
}

static void rserver_cleanup(const char *name)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "%s: could not remove %s\n", name, dir);
}

#endif
