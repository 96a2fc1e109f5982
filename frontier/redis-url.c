/*
 * redis-url.c: Redis server URLs, the credentials a connection logs in
 * with, and the URL as it may be shown.
 *
 * URL forms (RFC 3986 userinfo, percent-decoded, so a password holding
 * '@', ':' or '/' is written %40, %3A, %2F):
 *   redis://[user][:password]@host[:port][/db]   host may be [v6]
 *   unix://[user][:password]@/abs/path[?db=N]
 *   unix:///abs/path[?db=N], unix:/abs/path[?db=N]   (no userinfo)
 *   redis-cluster://[user][:password]@host:port[,host:port...] (cluster-route.c)
 *   redis-sentinel://[user][:password]@host:port[,host:port...]/name[/db]
 *       Redis Sentinels (each host:port one sentinel) watching the
 *       master called name (sentinel.c); the userinfo and db are the
 *       master's, the sentinels are asked without credentials
 * A userinfo without a colon is a user name only (its password comes from
 * the settings); ":password" is the default user's password.
 *
 * Credentials. The URL's user and password win over the settings
 * redis.user, redis.password and redis.password_file (the file holds the
 * password, one trailing newline dropped); the password then goes to
 * `AUTH [user] password` on every connection, reconnects and every master
 * of a cluster included. A user without any password is an error before
 * connecting, not a refusal from the server.
 *
 * Showing a URL: frontier_url_redact replaces the password by "***"; every
 * message and output naming a Redis URL uses it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

/* Longest password read from redis.password_file. */
#define PASSWORD_FILE_MAX 4096

static int parse_int(const char *s, size_t len, int lo, int hi, int *out)
{
    long v = 0;

    if (len == 0 || len > 9)
        return DC_EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return DC_EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return DC_EINVAL;
    *out = (int)v;
    return DC_OK;
}

static int copy_part(char *dst, size_t cap, const char *s, size_t len)
{
    if (len >= cap)
        return DC_EINVAL;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return DC_OK;
}

/* Percent-decode s[0..len) into dst (cap bytes with the NUL); a bad
 * escape, %00 or a result too long is DC_EINVAL. */
static int decode(char *dst, size_t cap, const char *s, size_t len)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < len ? dc_hexval((unsigned char)s[i + 1]) : -1;
            int lo = hi >= 0 ? dc_hexval((unsigned char)s[i + 2]) : -1;
            if (lo < 0 || (hi | lo) == 0)
                return DC_EINVAL;
            c = hi * 16 + lo;
            i += 2;
        }
        if (o + 1 >= cap)
            return DC_EINVAL;
        dst[o++] = (char)c;
    }
    dst[o] = '\0';
    return DC_OK;
}

int frontier__userinfo(struct frontier_redis_addr *a, const char *s,
                       size_t len)
{
    const char *colon = memchr(s, ':', len);
    size_t ulen = colon ? (size_t)(colon - s) : len;

    if (decode(a->user, sizeof(a->user), s, ulen))
        return DC_EINVAL;
    a->has_user = a->user[0] != '\0';
    if (!colon)
        return DC_OK;
    if (decode(a->pass, sizeof(a->pass), colon + 1, len - ulen - 1))
        return DC_EINVAL;
    a->has_pass = a->pass[0] != '\0';
    return DC_OK;
}

static int parse_hostport(struct frontier_redis_addr *a, const char *s,
                          size_t len)
{
    const char *port = NULL;
    size_t hlen = len;

    if (len && s[0] == '[') {
        const char *end = memchr(s, ']', len);
        if (!end)
            return DC_EINVAL;
        if (copy_part(a->host, sizeof(a->host), s + 1, (size_t)(end - s) - 1))
            return DC_EINVAL;
        if ((size_t)(end - s) + 1 < len) {
            if (end[1] != ':')
                return DC_EINVAL;
            port = end + 2;
        }
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon) {
            hlen = (size_t)(colon - s);
            port = colon + 1;
        }
        if (copy_part(a->host, sizeof(a->host), s, hlen))
            return DC_EINVAL;
    }
    if (!a->host[0])
        return DC_EINVAL;
    a->port = 6379;
    if (port)
        return parse_int(port, len - (size_t)(port - s), 1, 65535, &a->port);
    return DC_OK;
}

/* The userinfo of an authority s[0..len): the text before its last '@'.
 * Returns where the rest starts (s when there is none). */
static const char *take_userinfo(struct frontier_redis_addr *a, const char *s,
                                 size_t len, int *bad)
{
    const char *at = NULL;

    for (size_t i = 0; i < len; i++)
        if (s[i] == '@')
            at = s + i;
    if (!at)
        return s;
    *bad = frontier__userinfo(a, s, (size_t)(at - s)) != DC_OK;
    return at + 1;
}

static int parse_tcp(struct frontier_redis_addr *a, const char *s)
{
    size_t alen = strcspn(s, "/");
    int bad = 0;
    const char *hp = take_userinfo(a, s, alen, &bad);

    if (bad || parse_hostport(a, hp, alen - (size_t)(hp - s)))
        return DC_EINVAL;
    s += alen;
    if (*s == '/' && s[1])
        return parse_int(s + 1, strlen(s + 1), 0, 100000, &a->db);
    return DC_OK;
}

/* s: what follows "unix:" ("//[userinfo@]/path" or "/path"). */
static int parse_unix(struct frontier_redis_addr *a, const char *s)
{
    if (strncmp(s, "//", 2) == 0) {
        int bad = 0;
        s += 2;
        s = take_userinfo(a, s, strcspn(s, "/"), &bad);
        if (bad)
            return DC_EINVAL;
    }
    size_t plen = strcspn(s, "?");
    if (s[0] != '/' || copy_part(a->path, sizeof(a->path), s, plen))
        return DC_EINVAL;
    s += plen;
    if (!*s)
        return DC_OK;
    if (strncmp(s, "?db=", 4) != 0)
        return DC_EINVAL;
    return parse_int(s + 4, strlen(s + 4), 0, 100000, &a->db);
}

int frontier__url_parse(struct frontier_redis_addr *a, const char *url)
{
    memset(a, 0, sizeof(*a));
    if (strncmp(url, "redis://", 8) == 0)
        return parse_tcp(a, url + 8);
    if (strncmp(url, "unix:", 5) == 0)
        return parse_unix(a, url + 5);
    return DC_EINVAL;
}

/* "host:port" or "[v6]:port" of a sentinel list entry (port required). */
static int parse_sentinel(struct frontier_sentinels *sl, const char *s,
                          size_t len)
{
    struct frontier_redis_addr a;

    memset(&a, 0, sizeof(a));
    if (sl->n >= FRONTIER_SENTINELS_MAX || len == 0 ||
        !memchr(s, ':', len) || (s[len - 1] == ']'))
        return DC_EINVAL;
    if (parse_hostport(&a, s, len) || !a.host[0])
        return DC_EINVAL;
    memcpy(sl->host[sl->n], a.host, sizeof(sl->host[0]));
    sl->port[sl->n++] = a.port;
    return DC_OK;
}

int frontier__sentinel_parse(struct frontier_sentinels *sl, const char *url)
{
    const char *s, *slash, *hp;
    size_t alen;
    int bad = 0;

    memset(sl, 0, sizeof(*sl));
    if (strncmp(url, FRONTIER_SENTINEL_SCHEME,
                strlen(FRONTIER_SENTINEL_SCHEME)) != 0)
        return DC_EINVAL;
    s = url + strlen(FRONTIER_SENTINEL_SCHEME);
    alen = strcspn(s, "/");
    hp = take_userinfo(&sl->master, s, alen, &bad);
    if (bad || s[alen] != '/')
        return DC_EINVAL;
    for (const char *p = hp, *end = s + alen; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (parse_sentinel(sl, p, n))
            return DC_EINVAL;
        p += n + (comma ? 1 : 0);
        if (comma && p == end)
            return DC_EINVAL;
    }
    s += alen + 1;
    slash = strchr(s, '/');
    if (copy_part(sl->name, sizeof(sl->name), s,
                  slash ? (size_t)(slash - s) : strlen(s)) || !sl->name[0] ||
        strpbrk(sl->name, " \t\r\n\"'"))
        return DC_EINVAL;
    if (!sl->n)
        return DC_EINVAL;
    if (slash)
        return parse_int(slash + 1, strlen(slash + 1), 0, 100000,
                         &sl->master.db);
    return DC_OK;
}

void frontier__addr_name(const struct frontier_redis_addr *a, char *out,
                         size_t cap)
{
    if (a->path[0])
        snprintf(out, cap, "%s", a->path);
    else if (strchr(a->host, ':'))
        snprintf(out, cap, "[%s]:%d", a->host, a->port);
    else
        snprintf(out, cap, "%s:%d", a->host, a->port);
}

void frontier_url_redact(const char *url, char *out, size_t cap)
{
    const char *auth = url ? strstr(url, "://") : NULL;
    const char *at = NULL, *colon;

    if (!cap)
        return;
    if (!auth) {
        snprintf(out, cap, "%s", url ? url : "");
        return;
    }
    auth += 3;
    for (const char *p = auth; *p; p++) /* the last '@': a password may */
        if (*p == '@')                  /* hold a bare one or a '/' */
            at = p;
    colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (!colon)
        snprintf(out, cap, "%s", url);
    else
        snprintf(out, cap, "%.*s***%s", (int)(colon + 1 - url), url, at);
}

/* ---- credentials from the settings ---- */

static void secret_free(char **s)
{
    if (*s) {
        memset(*s, 0, strlen(*s));
        free(*s);
    }
    *s = NULL;
}

/* The password in file path (one trailing "\n" or "\r\n" dropped). */
static int read_password_file(struct frontier *f, const char *path,
                              char **out)
{
    char buf[PASSWORD_FILE_MAX + 2];
    FILE *fp = fopen(path, "rb");
    size_t n;

    if (!fp)
        return frontier__seterr(f, DC_ECONFIG, "redis.password_file %s: %s",
                                path, strerror(errno));
    errno = 0;
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    int failed = ferror(fp) ? (errno ? errno : EIO) : 0;
    fclose(fp);
    if (failed || n > PASSWORD_FILE_MAX)
        return frontier__seterr(f, DC_ECONFIG, "redis.password_file %s: %s",
                                path, failed ? strerror(failed) : "too large");
    if (n && buf[n - 1] == '\n')
        n--;
    if (n && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    if (!n || strlen(buf) != n || strpbrk(buf, "\r\n"))
        return frontier__seterr(f, DC_ECONFIG, "redis.password_file %s: %s",
                                path, n ? "must hold one line, no NUL byte"
                                        : "is empty");
    *out = xstrdup(buf);
    memset(buf, 0, sizeof(buf));
    return DC_OK;
}

int frontier__auth_conf(struct frontier *f, const struct conf *c)
{
    const char *pw = c ? c->redis_password : NULL;
    const char *file = c ? c->redis_password_file : NULL;

    if (c && c->redis_user && *c->redis_user)
        f->auth_user = xstrdup(c->redis_user);
    if (pw && *pw && file && *file)
        return frontier__seterr(f, DC_ECONFIG, "set redis.password or "
                                "redis.password_file, not both");
    if (file && *file)
        return read_password_file(f, file, &f->auth_pass);
    if (pw && *pw)
        f->auth_pass = xstrdup(pw);
    return DC_OK;
}

void frontier__auth_free(struct frontier *f)
{
    secret_free(&f->auth_user);
    secret_free(&f->auth_pass);
}

int frontier__creds(const struct frontier *f, const struct frontier_redis_addr *a,
                    const char **user, const char **pass)
{
    *user = a->has_user ? a->user : f->auth_user;
    *pass = a->has_pass ? a->pass : f->auth_pass;
    if (*user && **user && !(*pass && **pass))
        return DC_EINVAL;
    return DC_OK;
}

/*
 * Log connection c in with the credentials (nothing to do without a
 * password). DC_EAUTH when the server refuses them (message names where,
 * never the password), DC_EREDIS on an I/O error.
 */
int frontier__auth(struct frontier *f, redisContext *c, const char *user,
                   const char *pass, const char *where)
{
    const char *argv[3] = {"AUTH", user, pass};
    size_t len[3] = {4, user ? strlen(user) : 0, pass ? strlen(pass) : 0};
    int with_user = user && *user;
    redisReply *r;
    int rc = DC_OK;

    if (!pass || !*pass)
        return DC_OK;
    if (!with_user) {
        argv[1] = pass;
        len[1] = len[2];
    }
    r = redisCommandArgv(c, with_user ? 3 : 2, argv, len);
    if (!r)
        return frontier__seterr(f, DC_EREDIS, "redis %s: AUTH failed: %s",
                                where, c->errstr);
    if (r->type == REDIS_REPLY_ERROR)
        rc = frontier__seterr(f, DC_EAUTH, "redis %s: authentication failed "
                              "(%s%s%s%s)", where, with_user ? "user " : "",
                              with_user ? user : "", with_user ? ": " : "",
                              r->str);
    freeReplyObject(r);
    return rc;
}
