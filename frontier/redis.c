/*
 * redis.c: the frontier's Redis connection: parse the server URL, connect
 * (AUTH, SELECT, PING), and run batches of commands in one pipeline.
 *
 * URL forms and credentials: redis-url.c.
 * redis-cluster://[userinfo@]host:port[,host:port...] hands every batch to
 * cluster-route.c; the single-server path below does not change.
 *
 * A connection that failed at the I/O level is dropped; the next call
 * reconnects from the stored URL, so a Redis restart costs the caller one
 * DC_EREDIS, not the node. redis-sentinel:// URLs ask the sentinels for
 * the master at every connect (failover.c).
 *
 * Replies are read through get_reply: the same as hiredis's blocking
 * redisGetReply, except that while nothing has arrived the caller's reply
 * hook (frontier_set_reply_hook) waits for the socket instead of read(2),
 * running the node's transfers meanwhile. The I/O timeout still holds:
 * a hook that saw nothing for the whole timeout makes the read fail at
 * once as a timed-out read would.
 *
 * Epochs. Every connect asks the server its run_id; a different one than
 * last time (a restarted server, a promoted replica) moves f->epoch on.
 * The new server may lack the last writes the old one acknowledged
 * (replication and the AOF's fsync are asynchronous): the caller drops
 * what it cached from them (frontier_epoch). Under frontier_epoch_guard
 * frontier__run fails with DC_EFAILOVER instead of sending a call to a
 * server of another epoch than the guard's.
 *
 * Thread rules: as struct frontier.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

int frontier__seterr(struct frontier *f, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(f->err, sizeof(f->err), fmt, ap);
    va_end(ap);
    return code;
}

/* ---- string vectors and calls ---- */

void frontier__strv_push(struct frontier_strv *s, const char *p, size_t len)
{
    size_t cap = s->cap;

    xgrow((void **)&s->v, &cap, s->n + 1, sizeof(*s->v));
    if (cap != s->cap) {
        s->len = xrealloc(s->len, cap * sizeof(*s->len));
        s->cap = cap;
    }
    s->v[s->n] = xstrndup(p, len);
    s->len[s->n] = len;
    s->n++;
}

void frontier__strv_pushs(struct frontier_strv *s, const char *p)
{
    frontier__strv_push(s, p, strlen(p));
}

void frontier__strv_pushf(struct frontier_strv *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof(buf)) {
        frontier__strv_push(s, buf, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    frontier__strv_push(s, big, (size_t)n);
    free(big);
}

void frontier__strv_release(struct frontier_strv *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

void frontier__call_init(struct frontier_call *c, int script)
{
    memset(c, 0, sizeof(*c));
    c->script = script;
}

void frontier__call_release(struct frontier_call *c)
{
    if (!c)
        return;
    frontier__strv_release(&c->keys);
    frontier__strv_release(&c->args);
}

int frontier__command(struct frontier *f, redisReply **rep, ...)
{
    struct frontier_call c;
    const char *w;
    va_list ap;
    int rc;

    frontier__call_init(&c, -1);
    va_start(ap, rep);
    while ((w = va_arg(ap, const char *)))
        frontier__strv_pushs(&c.args, w);
    va_end(ap);
    rc = frontier__run(f, &c, 1, rep);
    frontier__call_release(&c);
    return rc;
}

void frontier__calls_free(struct frontier_call *c, size_t n)
{
    if (!c)
        return;
    for (size_t i = 0; i < n; i++)
        frontier__call_release(&c[i]);
    free(c);
}

void frontier__replies_free(redisReply **replies, size_t n)
{
    if (!replies)
        return;
    for (size_t i = 0; i < n; i++) {
        if (replies[i])
            freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
}

/* ---- connecting ---- */

struct timeval frontier__tv(int64_t ms)
{
    struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
    return tv;
}

/* Run one command now; the reply must not be an error. */
static int setup_cmd(struct frontier *f, const char *what, int argc,
                     const char **argv)
{
    size_t len[4];
    redisReply *r;
    int rc = DC_OK;

    for (int i = 0; i < argc; i++)
        len[i] = strlen(argv[i]);
    r = redisCommandArgv(f->rc, argc, argv, len);
    if (!r)
        return frontier__seterr(f, DC_EREDIS, "redis %s failed: %s", what,
                                f->rc->errstr);
    if (r->type == REDIS_REPLY_ERROR)
        rc = frontier__seterr(f, DC_EREDIS, "redis %s failed: %s", what,
                              r->str);
    freeReplyObject(r);
    return rc;
}

/* Log in (redis-url.c), SELECT the database, PING: a server that wants
 * a password and got none answers NOAUTH here. */
static int setup_session(struct frontier *f, const struct frontier_redis_addr *a,
                         const char *name)
{
    const char *user, *pass;
    char db[16];
    int rc;

    frontier__creds(f, a, &user, &pass);
    rc = frontier__auth(f, f->rc, user, pass, name);
    if (rc)
        return rc;
    snprintf(db, sizeof(db), "%d", a->db);
    if (a->db)
        rc = setup_cmd(f, "SELECT", 2, (const char *[]){ "SELECT", db });
    if (!rc)
        rc = setup_cmd(f, "PING", 1, (const char *[]){ "PING" });
    if (rc && strstr(f->err, "NOAUTH"))
        rc = frontier__seterr(f, DC_EAUTH, "redis %s: authentication "
                              "required (NOAUTH): give the password in "
                              "redis.password_file or DCRAWL_REDIS_PASSWORD",
                              name);
    return rc;
}

/* The run_id line of an INFO server reply into out ("" when absent). */
static void info_run_id(const redisReply *r, char *out, size_t cap)
{
    const char *p = r && r->type == REDIS_REPLY_STRING
                        ? strstr(r->str, "run_id:") : NULL;
    size_t n = p ? strcspn(p + 7, "\r\n") : 0;

    out[0] = '\0';
    if (p && n && n < cap)
        snprintf(out, cap, "%.*s", (int)n, p + 7);
}

/*
 * Which server f->rc is: its run_id (a new one for every redis-server
 * process: a restart, a promoted replica), or its address when INFO is
 * not allowed. A server other than the last one moves f->epoch on: what
 * the caller learned from the old one may be missing on this one.
 */
static void identify(struct frontier *f)
{
    char id[sizeof(f->server_id)];
    redisReply *r = redisCommand(f->rc, "INFO server");

    info_run_id(r, id, sizeof(id));
    if (r)
        freeReplyObject(r);
    if (!id[0])
        snprintf(id, sizeof(id), "addr %.58s", f->server_name);
    if (f->server_id[0] && strcmp(f->server_id, id) != 0)
        f->epoch++;
    snprintf(f->server_id, sizeof(f->server_id), "%s", id);
}

int frontier__connect_addr(struct frontier *f,
                           const struct frontier_redis_addr *a,
                           const char *name)
{
    const char *user, *pass;

    if (frontier__creds(f, a, &user, &pass))
        return frontier__seterr(f, DC_EINVAL, "redis %s: user %s has no "
                                "password (give redis.password_file or "
                                "DCRAWL_REDIS_PASSWORD)", name, user);
    if (a->path[0])
        f->rc = redisConnectUnixWithTimeout(a->path,
                                            frontier__tv(frontier__io_ms(f, 0)));
    else
        f->rc = redisConnectWithTimeout(a->host, a->port,
                                        frontier__tv(frontier__io_ms(f, 0)));
    if (!f->rc || f->rc->err)
        return frontier__seterr(f, DC_EREDIS,
                                "cannot connect to redis at %s: %s", name,
                                f->rc ? f->rc->errstr : "out of memory");
    redisSetTimeout(f->rc, frontier__tv(frontier__io_ms(f, 1)));
    snprintf(f->server_name, sizeof(f->server_name), "%s", name);
    return setup_session(f, a, name);
}

/*
 * Connect f->rc to f->url. Returns DC_EINVAL for a malformed URL, DC_EREDIS
 * when the server cannot be reached or refuses the session; the message is
 * in f->err (and in err when err is not NULL).
 */
int frontier__connect(struct frontier *f, char *err, size_t errlen)
{
    struct frontier_redis_addr a;
    char name[PATH_MAX + 16];
    int rc;

    memset(&a, 0, sizeof(a));
    frontier__disconnect(f);
    if (strncmp(f->url, FRONTIER_CLUSTER_SCHEME,
                strlen(FRONTIER_CLUSTER_SCHEME)) == 0) {
        rc = frontier__route_connect(f);
    } else if (strncmp(f->url, FRONTIER_SENTINEL_SCHEME,
                       strlen(FRONTIER_SENTINEL_SCHEME)) == 0) {
        rc = frontier__sentinel_connect(f);
    } else if (frontier__url_parse(&a, f->url)) {
        char shown[512];
        frontier_url_redact(f->url, shown, sizeof(shown));
        rc = frontier__seterr(f, DC_EINVAL, "malformed redis URL: %s", shown);
    } else {
        frontier__addr_name(&a, name, sizeof(name));
        rc = frontier__connect_addr(f, &a, name);
    }
    memset(a.pass, 0, sizeof(a.pass));
    if (!rc && f->rc)
        identify(f);
    if (rc) {
        frontier__disconnect(f);
        if (err && errlen)
            snprintf(err, errlen, "%s", f->err);
    }
    return rc;
}

void frontier__disconnect(struct frontier *f)
{
    if (f && f->rc) {
        redisFree(f->rc);
        f->rc = NULL;
    }
    if (f)
        frontier__route_free(&f->rt);
}

/* ---- pipelines ---- */

/* The module command that does a script's work with the script's keys,
 * arguments and reply (seen/module/front-module.h), or NULL. */
static const char *native_name(int script, int qnative)
{
    switch (script) {
    case FRONTIER_SCRIPT_POP:
        return qnative ? "DCFRONT.QPOP" : "DCFRONT.POP";
    case FRONTIER_SCRIPT_COMPLETE:
        return qnative ? "DCFRONT.QCOMPLETE" : "DCFRONT.COMPLETE";
    case FRONTIER_SCRIPT_ADMIT_MOD:
        return qnative ? "DCFRONT.QADMIT" : "DCFRONT.ADMIT";
    default:
        return NULL;
    }
}

/* argv of a call, as pointers into the call (valid while it lives). */
static int call_argv(const struct frontier *f, const struct frontier_call *c,
                     int eval, const char ***argv, size_t **len, char *nk)
{
    size_t n = c->args.n, i = 0;
    const char *native = f->native || f->qnative
                             ? native_name(c->script, f->qnative)
                             : NULL;

    if (c->script >= 0)
        n += 3 + c->keys.n;
    *argv = xmalloc(n * sizeof(**argv));
    *len = xmalloc(n * sizeof(**len));
    if (native) {
        snprintf(nk, 24, "%zu", c->keys.n);
        (*argv)[0] = native; /* with the script's keys and arguments */
        (*argv)[1] = nk;
        for (int k = 0; k < 2; k++)
            (*len)[k] = strlen((*argv)[k]);
        i = 2;
        n--;
    } else if (c->script >= 0) {
        const char *body = frontier__script_body(c->script);
        snprintf(nk, 24, "%zu", c->keys.n);
        (*argv)[0] = eval ? "EVAL" : "EVALSHA";
        (*argv)[1] = eval ? body : f->sha[c->script];
        (*argv)[2] = nk;
        for (int k = 0; k < 3; k++)
            (*len)[k] = strlen((*argv)[k]);
        i = 3;
    }
    if (c->script >= 0) {
        for (size_t k = 0; k < c->keys.n; k++, i++) {
            (*argv)[i] = c->keys.v[k];
            (*len)[i] = c->keys.len[k];
        }
    }
    for (size_t k = 0; k < c->args.n; k++, i++) {
        (*argv)[i] = c->args.v[k];
        (*len)[i] = c->args.len[k];
    }
    return (int)n;
}

static int append_call(struct frontier *f, const struct frontier_call *c,
                       int eval)
{
    const char **argv;
    size_t *len;
    char nk[24];
    int argc = call_argv(f, c, eval, &argv, &len, nk);
    int rc = redisAppendCommandArgv(f->rc, argc, argv, len);

    free(argv);
    free(len);
    return rc == REDIS_OK ? DC_OK : DC_EREDIS;
}

int frontier__io_ms(const struct frontier *f, int cmd)
{
    int64_t d = cmd ? FRONTIER_COMMAND_MS : FRONTIER_CONNECT_MS;

    return (int)(f->io_ms > 0 && f->io_ms < d ? f->io_ms : d);
}

void frontier__io_set(struct frontier *f, int64_t ms)
{
    f->io_ms = ms;
    if (f->rc)
        redisSetTimeout(f->rc, frontier__tv(frontier__io_ms(f, 1)));
    frontier__route_timeouts(f); /* a Redis Cluster's open connections */
}

void frontier_set_wait_hook(struct frontier *f,
                            void (*fn)(void *ud, int64_t ms), void *ud)
{
    f->wait_fn = fn;
    f->wait_ud = ud;
}

void frontier_set_reply_hook(struct frontier *f,
                             int (*fn)(void *ud, int fd, int ms), void *ud)
{
    f->reply_fn = fn;
    f->reply_ud = ud;
}

static int64_t mono_ms(void);

/* The reply hook saw nothing for the whole I/O timeout: one read that
 * cannot block (1 ms socket timeout), so a reply that came at the last
 * moment is still read and a missing one fails as a timed-out blocking
 * read would; a reply that is arriving is read to its end. */
static int read_last(struct frontier *f, void **r)
{
    redisContext *c = f->rc;
    int rc;

    redisSetTimeout(c, frontier__tv(1));
    rc = redisBufferRead(c);
    if (c->err == 0)
        redisSetTimeout(c, frontier__tv(frontier__io_ms(f, 1)));
    if (rc != REDIS_OK || redisGetReplyFromReader(c, r) != REDIS_OK)
        return REDIS_ERR;
    return *r ? REDIS_OK : redisGetReply(c, r);
}

/* redisGetReply with the reply hook waiting instead of read(2). */
static int get_reply(struct frontier *f, void **r)
{
    redisContext *c = f->rc;
    int64_t end, left;
    int done = 0;

    if (!f->reply_fn)
        return redisGetReply(c, r);
    if (redisGetReplyFromReader(c, r) != REDIS_OK)
        return REDIS_ERR;
    if (*r)
        return REDIS_OK;
    do {
        if (redisBufferWrite(c, &done) != REDIS_OK)
            return REDIS_ERR;
    } while (!done);
    end = mono_ms() + frontier__io_ms(f, 1);
    while (!*r) {
        left = end - mono_ms();
        if (left <= 0 || !f->reply_fn(f->reply_ud, c->fd, (int)left))
            return read_last(f, r);
        if (redisBufferRead(c) != REDIS_OK ||
            redisGetReplyFromReader(c, r) != REDIS_OK)
            return REDIS_ERR;
    }
    return REDIS_OK;
}

int frontier__io_error(struct frontier *f)
{
    frontier__seterr(f, DC_EREDIS, "redis: %s",
                     f->rc && f->rc->errstr[0] ? f->rc->errstr
                                               : "connection lost");
    frontier__disconnect(f);
    return DC_EREDIS;
}

static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && r->str &&
           strncmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Send the script again in full with EVAL (one extra round trip). */
static int retry_eval(struct frontier *f, const struct frontier_call *c,
                      redisReply **reply)
{
    void *r = NULL;

    freeReplyObject(*reply);
    *reply = NULL;
    if (append_call(f, c, 1) || get_reply(f, &r) != REDIS_OK)
        return frontier__io_error(f);
    *reply = r;
    return DC_OK;
}

static int check_replies(struct frontier *f, struct frontier_call *calls,
                         size_t n, redisReply **replies)
{
    for (size_t i = 0; i < n; i++) {
        if (is_noscript(replies[i]) && retry_eval(f, &calls[i], &replies[i]))
            return DC_EREDIS;
        if (replies[i]->type == REDIS_REPLY_ERROR)
            return frontier__seterr(f, DC_EREDIS, "redis: %s",
                                    replies[i]->str);
    }
    return DC_OK;
}

static int ensure_connected(struct frontier *f)
{
    if (f->rc || f->rt)
        return DC_OK;
    return frontier__connect(f, NULL, 0) ? DC_EREDIS : DC_OK;
}

int frontier__pipe(struct frontier *f, const struct frontier_raw *c, size_t n,
                   redisReply **rep)
{
    memset(rep, 0, n * sizeof(*rep));
    if (ensure_connected(f))
        return DC_EREDIS;
    if (n > 0)
        f->roundtrips++;
    if (f->rt)
        return frontier__route_pipe(f, c, n, rep);
    for (size_t i = 0; i < n; i++)
        if (redisAppendFormattedCommand(f->rc, c[i].cmd, c[i].len) != REDIS_OK)
            return frontier__io_error(f);
    for (size_t i = 0; i < n; i++)
        if (get_reply(f, (void **)&rep[i]) != REDIS_OK || !rep[i]) {
            frontier__replies_free(rep, n);
            return frontier__io_error(f);
        }
    return DC_OK;
}

/* Format calls[i] (EVAL when eval[i], else EVALSHA) into raw[i]. */
static void format_calls(struct frontier *f, const struct frontier_call *calls,
                         size_t n, const unsigned char *eval,
                         struct frontier_raw *raw)
{
    for (size_t i = 0; i < n; i++) {
        const char **argv;
        size_t *len;
        char nk[24], *cmd = NULL;
        int argc = call_argv(f, &calls[i], eval && eval[i], &argv, &len, nk);
        int k = redisFormatCommandArgv(&cmd, argc, argv, len);

        if (k < 0 || !cmd) {
            fprintf(stderr, "dcrawl: out of memory\n");
            abort(); /* as xmalloc */
        }
        raw[i].cmd = cmd;
        raw[i].len = (size_t)k;
        raw[i].slot = frontier__call_slot(&calls[i]);
        free(argv);
        free(len);
    }
}

static void raws_free(struct frontier_raw *raw, size_t n)
{
    for (size_t i = 0; i < n; i++)
        redisFreeCommand((char *)raw[i].cmd);
    free(raw);
}

/* frontier__run on a cluster: NOSCRIPT replies are sent again with EVAL
 * in a second batch. */
static int cluster_run(struct frontier *f, struct frontier_call *calls,
                       size_t n, redisReply **replies)
{
    struct frontier_raw *raw = xcalloc(n ? n : 1, sizeof(*raw));
    unsigned char *eval = xcalloc(n ? n : 1, 1);
    int rc, again = 0;

    format_calls(f, calls, n, NULL, raw);
    rc = frontier__pipe(f, raw, n, replies);
    for (size_t i = 0; !rc && i < n; i++)
        again += eval[i] = is_noscript(replies[i]);
    if (again) {
        struct frontier_raw *raw2 = xcalloc(n, sizeof(*raw2));
        struct frontier_call *c2 = xcalloc(n, sizeof(*c2));
        redisReply **rep2 = xcalloc(n, sizeof(*rep2));
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (eval[i])
                c2[m++] = calls[i]; /* shallow: strings stay in calls */
        memset(eval, 1, n);
        format_calls(f, c2, (size_t)m, eval, raw2);
        rc = frontier__pipe(f, raw2, (size_t)m, rep2);
        for (size_t i = 0, j = 0; !rc && i < n; i++)
            if (is_noscript(replies[i])) {
                freeReplyObject(replies[i]);
                replies[i] = rep2[j++];
            }
        raws_free(raw2, (size_t)m);
        free(c2);
        free(rep2);
    }
    for (size_t i = 0; !rc && i < n; i++)
        if (replies[i]->type == REDIS_REPLY_ERROR)
            rc = frontier__seterr(f, DC_EREDIS, "redis: %s", replies[i]->str);
    if (rc)
        frontier__replies_free(replies, n);
    raws_free(raw, n);
    free(eval);
    return rc;
}

/* An error reply of a server that is no longer the master (a demoted
 * one, or a replica the sentinels have not promoted): the call did
 * nothing; reconnecting finds the master. */
static int is_demoted(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && r->str &&
           (strncmp(r->str, "READONLY", 8) == 0 ||
            strncmp(r->str, "MASTERDOWN", 10) == 0);
}

/* Send calls[*done..n) and read their replies into replies[]; *done
 * advances past every call answered. I/O errors drop the connection. */
static int run_from(struct frontier *f, struct frontier_call *calls, size_t n,
                    redisReply **replies, size_t *done)
{
    if (!f->rc && frontier__connect(f, NULL, 0) != DC_OK)
        return DC_EREDIS;
    if (*done < n)
        f->roundtrips++;
    for (size_t i = *done; i < n; i++)
        if (append_call(f, &calls[i], 0))
            return frontier__io_error(f);
    for (; *done < n; (*done)++) {
        void *r = NULL;
        if (get_reply(f, &r) != REDIS_OK)
            return frontier__io_error(f);
        if (is_demoted(r)) { /* no longer the master: ask again */
            freeReplyObject(r);
            return frontier__io_error(f);
        }
        replies[*done] = r;
    }
    return DC_OK;
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Before an attempt: the caller's hook, and an I/O timeout that ends no
 * later than the earliest local validity of a held partition (cluster.c).
 * Returns the timeout to restore (f->io_ms as it was). */
static int64_t attempt_prepare(struct frontier *f)
{
    int64_t io = f->io_ms, left;
    if (f->wait_fn)
        f->wait_fn(f->wait_ud, 0);
    left = frontier__cluster_left_ms(f);
    if (left < frontier__io_ms(f, 1))
        frontier__io_set(f, left < FRONTIER_IO_MIN_MS ? FRONTIER_IO_MIN_MS : left);
    return io;
}

static void attempt_done(struct frontier *f, int64_t io)
{
    if (f->io_ms != io)
        frontier__io_set(f, io);
}

/* The reconnect back-off: the caller's hook, else a sleep. */
static void backoff_wait(struct frontier *f, int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    if (f->wait_fn)
        f->wait_fn(f->wait_ud, ms);
    else
        nanosleep(&ts, NULL);
}

/*
 * Send n calls in one pipeline; replies[i] (caller frees with
 * frontier__replies_free) answers calls[i]. Any error reply or I/O error
 * returns DC_EREDIS with every reply freed and NULL.
 *
 * A lost connection (Redis restarting, still loading its AOF) is retried
 * for up to f->retry_ms with back-off from 100 ms to 2 s; calls already
 * answered are not sent again, so a script runs once per call even across
 * the reconnect (a call whose reply was lost in flight may have run: its
 * effect stays, as after any crash). The caller's wait hook
 * (frontier_set_wait_hook) runs before each attempt and in place of the
 * back-off's sleeps; an attempt's I/O timeout ends no later than the
 * local validity of the partitions held (cluster.c), at least
 * FRONTIER_IO_MIN_MS, so the hook sees a lapse in time.
 */
int frontier__run(struct frontier *f, struct frontier_call *calls, size_t n,
                  redisReply **replies)
{
    int64_t start = -1, backoff = 100;
    size_t done = 0;
    int rc;

    memset(replies, 0, n * sizeof(*replies));
    for (;;) {
        int64_t now, io = attempt_prepare(f);
        rc = ensure_connected(f);
        if (!rc && f->guarded && f->epoch != f->guard_epoch) {
            attempt_done(f, io);
            rc = frontier__seterr(f, DC_EFAILOVER, "redis: the server "
                                  "changed (now %s)", f->server_name);
            frontier__replies_free(replies, n);
            return rc;
        }
        if (!rc && f->rt) { /* Redis Cluster: cluster-route.c's own retries */
            rc = cluster_run(f, calls, n, replies);
            attempt_done(f, io);
            return rc;
        }
        if (!rc)
            rc = run_from(f, calls, n, replies, &done);
        attempt_done(f, io);
        if (!rc)
            break;
        now = mono_ms();
        if (start < 0)
            start = now;
        if (f->retry_ms <= 0 || now - start >= f->retry_ms)
            break;
        f->reconnects++;
        if (backoff > f->retry_ms - (now - start))
            backoff = f->retry_ms - (now - start);
        backoff_wait(f, backoff);
        backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
    }
    if (!rc)
        rc = check_replies(f, calls, n, replies);
    if (rc)
        frontier__replies_free(replies, n);
    return rc;
}
