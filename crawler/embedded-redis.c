/*
 * embedded-redis.c: the private redis-server of `dcrawl crawl` when no
 * --redis is given. It listens on a unix socket inside the output
 * directory (no TCP port at all), keeps nothing on disk, loads the
 * project's settings (conf/redis.conf's values, passed as arguments so no
 * file has to be found at run time), and is shut down at the end. It
 * loads the seen-set module (dcrawl-seen.so) from redis.module, or from
 * the running binary's directory (/proc/self/exe) when that is empty; a
 * missing module there just means the b256-i64 layout.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crawler.h"

/* A connected socket to the server's unix socket path, or -1. */
static int socket_connect(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >=
            (int)sizeof(sa.sun_path) ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Ready when a connect to the socket succeeds: redis-server creates the
 * socket file at bind(), a moment before it listens. */
static int socket_accepts(const char *path)
{
    int fd = socket_connect(path);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* Sleep for the i-th time of a readiness or exit poll: 1 ms for the first
 * 400 tries, then 20 ms. redis-server starts in 20-60 ms and exits in a
 * few; a connect attempt costs microseconds, while a doubling step
 * overshot the moment it was ready by up to half the time waited. */
static void poll_sleep(int i)
{
    struct timespec ts = {0, (i < 400 ? 1L : 20L) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int wait_socket(const char *path, pid_t pid)
{
    int i, st;
    int64_t t0 = dc_mono_us();
    for (i = 0; dc_mono_us() - t0 < 10 * 1000 * 1000 && i < 1000; i++) {
        if (socket_accepts(path))
            return DC_OK;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return DC_EREDIS;
        poll_sleep(i);
    }
    return DC_EREDIS;
}

/* The module path to load into out, or "" for none. */
static int module_path(const char *conf, char *out, size_t cap, char *err,
                       size_t errlen)
{
    char exe[4096];
    ssize_t n;
    char *slash;

    out[0] = '\0';
    if (conf && !strcmp(conf, "none"))
        return DC_OK;
    if (conf && *conf) {
        if (access(conf, R_OK) != 0) {
            snprintf(err, errlen, "redis.module %s: %s", conf, strerror(errno));
            return DC_EREDIS;
        }
        snprintf(out, cap, "%s", conf);
        return DC_OK;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return DC_OK;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (!slash)
        return DC_OK;
    *slash = '\0';
    if ((size_t)snprintf(out, cap, "%s/dcrawl-seen.so", exe) >= cap ||
        access(out, R_OK) != 0)
        out[0] = '\0';
    return DC_OK;
}

int embedded_redis_start(struct embedded_redis *er, const char *dir,
                         const char *module, char *err, size_t errlen)
{
    char sock[512], log[600], mod[4200], abs[PATH_MAX];
    pid_t pid;
    memset(er, 0, sizeof(*er));
    if (realpath(dir, abs)) /* redis-server chdirs to --dir, then opens the log */
        dir = abs;
    if (snprintf(er->dir, sizeof(er->dir), "%s", dir) >= (int)sizeof(er->dir) ||
        snprintf(log, sizeof(log), "%s/redis.log", dir) >= (int)sizeof(log) ||
        snprintf(sock, sizeof(sock), "%s/redis.sock", dir) >= 104) {
        snprintf(err, errlen, "output path too long for a unix socket: %s", dir);
        return DC_EREDIS;
    }
    if (module_path(module, mod, sizeof(mod), err, errlen))
        return DC_EREDIS;
    unlink(sock);
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return DC_EREDIS;
    }
    if (pid == 0) {
        setpgid(0, 0); /* a Ctrl-C to dcrawl must not kill redis first */
        /* keep only stdin/out/err: an inherited descriptor (a lock file,
         * a socket) must not outlive dcrawl in the server */
        if (close_range(3, ~0U, 0) != 0)
            for (int fd = 3, max = (int)sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++)
                close(fd);
        const char *args[] = {
            "redis-server", "--port", "0", "--unixsocket", sock,
            "--unixsocketperm", "700", "--dir", dir, "--save", "",
            "--appendonly", "no", "--daemonize", "no", "--logfile", log,
            "--set-max-intset-entries", "8192", "--maxmemory-policy",
            "noeviction", mod[0] ? "--loadmodule" : NULL, mod, NULL
        };
        execvp("redis-server", (char *const *)args);
        _exit(127);
    }
    er->pid = pid;
    if (wait_socket(sock, pid) != DC_OK) {
        snprintf(err, errlen,
                 "could not start redis-server (is it installed? see %s)", log);
        embedded_redis_stop(er);
        return DC_EREDIS;
    }
    snprintf(er->url, sizeof(er->url), "unix://%s", sock);
    return DC_OK;
}

/* Ask the server to exit: SHUTDOWN NOSAVE on its socket (it keeps
 * nothing on disk). It runs at once; a SIGTERM is only acted on at the
 * server's next cron tick (up to 100 ms later), so it is the fallback.
 * embedded_redis_stop reaps it. Done right after the crawl, the exit
 * overlaps the merge. */
void embedded_redis_signal(struct embedded_redis *er)
{
    static const char cmd[] = "SHUTDOWN NOSAVE\r\n";
    int fd;
    if (!er || er->pid <= 0 || er->signalled)
        return;
    er->signalled = 1;
    fd = er->url[0] ? socket_connect(er->url + strlen("unix://")) : -1;
    if (fd >= 0 && write(fd, cmd, sizeof(cmd) - 1) == (ssize_t)sizeof(cmd) - 1) {
        close(fd);
        return;
    }
    if (fd >= 0)
        close(fd);
    kill(er->pid, SIGTERM);
}

void embedded_redis_stop(struct embedded_redis *er)
{
    int i, st;
    int64_t t0 = dc_mono_us();
    if (!er || er->pid <= 0)
        return;
    embedded_redis_signal(er);
    for (i = 0; dc_mono_us() - t0 < 5 * 1000 * 1000; i++) { /* then force */
        if (waitpid(er->pid, &st, WNOHANG) == er->pid) {
            er->pid = 0;
            return;
        }
        poll_sleep(i);
    }
    kill(er->pid, SIGKILL);
    waitpid(er->pid, &st, 0);
    er->pid = 0;
}
