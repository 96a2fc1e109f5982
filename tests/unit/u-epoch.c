/*
 * u-epoch.c: server epochs (frontier/redis.c, frontier/failover.c) against
 * a real redis-server that this test starts, kills and starts again on the
 * same unix socket (a new run_id: a restart, as a failover looks to a
 * client). Checks: epoch 0 after open and across a reconnect to the same
 * server; a call under frontier_epoch_guard that meets the new server is
 * not sent (DC_EFAILOVER, the new server untouched) and the epoch is 1;
 * unguarded calls then work; frontier_server names the socket.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "frontier.h"
#include "t-frontier.h"
#include "t.h"

extern char **environ;
static char dir[] = "/tmp/dcrawl-u-epoch.XXXXXX";
static char sock[256];

static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* redis-server on sock; its pid, or -1 when it does not come up in 5 s. */
static pid_t server_start(void)
{
    char *argv[] = { "redis-server", "--port", "0", "--unixsocket", sock,
                     "--dir", dir, "--save", "", "--appendonly", "no",
                     "--daemonize", "no", "--loglevel", "warning", NULL };
    posix_spawn_file_actions_t fa;
    struct stat st;
    pid_t pid;
    int rc;

    unlink(sock);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    rc = posix_spawnp(&pid, "redis-server", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    for (int i = 0; i < 100; i++) {
        if (stat(sock, &st) == 0)
            return pid;
        nap_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void server_kill(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Keys in the server (DBSIZE), -1 on error. */
static long long dbsize(void)
{
    redisContext *c = redisConnectUnix(sock);
    redisReply *r = c && !c->err ? redisCommand(c, "DBSIZE") : NULL;
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

    if (r)
        freeReplyObject(r);
    if (c)
        redisFree(c);
    return n;
}

static int admit_one(struct frontier *f, const char *url)
{
    struct frontier_url u;
    unsigned char isnew = 0;

    t_mkurl(&u, url, 0);
    return frontier_admit(f, &u, 1, 1000, &isnew);
}

int main(void)
{
    struct frontier *f = NULL;
    struct conf c;
    char url[300], err[256];
    pid_t pid;

    signal(SIGPIPE, SIG_IGN); /* as the dcrawl binary: writes to a dead
                               * server fail with EPIPE */
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(sock, sizeof(sock), "%s/redis.sock", dir);
    snprintf(url, sizeof(url), "unix://%s", sock);
    pid = server_start();
    CHECK(pid > 0, "redis-server starts on %s", sock);
    if (pid <= 0) {
        rmdir(dir);
        return t_done("u-epoch");
    }
    conf_init(&c);
    c.redis_retry = 10;
    CHECK(frontier_open(&f, url, &c, "n1", err, sizeof(err)) == DC_OK, "%s",
          err);
    CHECK(frontier_epoch(f) == 0, "epoch %llu after open",
          (unsigned long long)frontier_epoch(f));
    CHECK(strcmp(frontier_server(f), sock) == 0, "server %s",
          frontier_server(f));
    CHECK(admit_one(f, "http://a.example/1") == DC_OK, "admit");

    /* the same server again: a reconnect is no new epoch */
    {
        redisContext *k = redisConnectUnix(sock);
        redisReply *r = redisCommand(k, "CLIENT KILL TYPE normal SKIPME yes");
        freeReplyObject(r);
        redisFree(k);
    }
    CHECK(admit_one(f, "http://a.example/2") == DC_OK, "admit after a kill");
    CHECK(frontier_epoch(f) == 0, "same server: epoch %llu",
          (unsigned long long)frontier_epoch(f));

    /* another server on the same socket (a new run_id) */
    server_kill(pid);
    pid = server_start();
    CHECK(pid > 0, "redis-server starts again");
    frontier_epoch_guard(f, 1, 0);
    CHECK(admit_one(f, "http://a.example/3") == DC_EFAILOVER,
          "guarded call on a new server: %s", frontier_errstr(f));
    CHECK(frontier_epoch(f) == 1, "new server: epoch %llu",
          (unsigned long long)frontier_epoch(f));
    CHECK(dbsize() == 0, "the guarded call was not sent (%lld keys)",
          dbsize());
    frontier_epoch_guard(f, 0, 0);
    frontier_failover_reset(f);
    CHECK(admit_one(f, "http://a.example/3") == DC_OK, "unguarded: %s",
          frontier_errstr(f));
    CHECK(dbsize() > 0, "written to the new server");
    frontier_epoch_guard(f, 1, 1);
    CHECK(admit_one(f, "http://a.example/4") == DC_OK,
          "guard of the current epoch: %s", frontier_errstr(f));
    frontier_epoch_guard(f, 0, 0);

    frontier_close(&f);
    conf_release(&c);
    server_kill(pid);
    unlink(sock);
    rmdir(dir);
    return t_done("u-epoch");
}
