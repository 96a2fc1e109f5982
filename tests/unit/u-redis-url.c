/*
 * u-redis-url.c: Redis URLs and credentials (frontier/redis-url.c), no
 * server: parsing of every form (percent-decoded userinfo, user-only,
 * password-only, [v6], unix sockets with and without userinfo, bad
 * escapes), the redacted form shown in messages, which credentials win
 * (URL over settings), and redis.password_file (newline stripped, missing,
 * empty, two lines, both settings given), redis-sentinel:// URLs (the
 * sentinel list, the master's name, db and credentials). Logging in
 * against real servers is tests/e2e/auth.sh, Sentinel tests/e2e/failover.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "t.h"

static const struct {
    const char *url;
    int rc;
    const char *host, *path;
    int port, db;
    const char *user, *pass; /* NULL: none */
} parses[] = {
    {"redis://h", DC_OK, "h", "", 6379, 0, NULL, NULL},
    {"redis://h:6380/2", DC_OK, "h", "", 6380, 2, NULL, NULL},
    {"redis://:pw@h:1", DC_OK, "h", "", 1, 0, NULL, "pw"},
    {"redis://u:pw@h/3", DC_OK, "h", "", 6379, 3, "u", "pw"},
    {"redis://u@h", DC_OK, "h", "", 6379, 0, "u", NULL},
    {"redis://u:@h", DC_OK, "h", "", 6379, 0, "u", NULL},
    {"redis://u:p%40s%3As%2F%25%20x@h", DC_OK, "h", "", 6379, 0, "u",
     "p@s:s/% x"},
    {"redis://u%3Ax:a:b:c@h", DC_OK, "h", "", 6379, 0, "u:x", "a:b:c"},
    {"redis://u:a@b@h:7", DC_OK, "h", "", 7, 0, "u", "a@b"},
    {"redis://:pw@[::1]:6390/1", DC_OK, "::1", "", 6390, 1, NULL, "pw"},
    {"unix:///tmp/r.sock", DC_OK, "", "/tmp/r.sock", 0, 0, NULL, NULL},
    {"unix:/tmp/r.sock?db=4", DC_OK, "", "/tmp/r.sock", 0, 4, NULL, NULL},
    {"unix://u:p%40w@/tmp/r.sock?db=2", DC_OK, "", "/tmp/r.sock", 0, 2, "u",
     "p@w"},
    {"unix://:pw@/tmp/r.sock", DC_OK, "", "/tmp/r.sock", 0, 0, NULL, "pw"},
    {"redis://:p%zz@h", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"redis://:p%4@h", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"redis://:p%00@h", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"redis://:pw@", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"redis://:p/w@h", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"unix://u:p@tmp/r.sock", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"unix://u:p@", DC_EINVAL, 0, 0, 0, 0, 0, 0},
    {"http://u:p@h", DC_EINVAL, 0, 0, 0, 0, 0, 0},
};

static const struct {
    const char *url;
    int rc, n;
    const char *name, *host0, *hostlast;
    int port0, portlast, db;
    const char *user, *pass;
} sentinels[] = {
    {"redis-sentinel://127.0.0.1:26379/dcm", DC_OK, 1, "dcm", "127.0.0.1",
     "127.0.0.1", 26379, 26379, 0, NULL, NULL},
    {"redis-sentinel://a:1,b:2,[::1]:3/m-1/4", DC_OK, 3, "m-1", "a", "::1", 1,
     3, 4, NULL, NULL},
    {"redis-sentinel://u:p%40w@a:1,b:2/m", DC_OK, 2, "m", "a", "b", 1, 2, 0,
     "u", "p@w"},
    {"redis-sentinel://:pw@a:1/m", DC_OK, 1, "m", "a", "a", 1, 1, 0, NULL,
     "pw"},
    {"redis-sentinel://a/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},   /* no port */
    {"redis-sentinel://a:1", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},   /* no name */
    {"redis-sentinel://a:1/", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel:///m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},    /* none */
    {"redis-sentinel://a:1,/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://a:1,,b:2/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://a:0/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://a:70000/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://[::1]/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://a:1/m/x", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://a:1/m n", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis-sentinel://:p%zz@a:1/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"redis://a:1/m", DC_EINVAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

static void t_sentinel(void)
{
    for (size_t i = 0; i < sizeof(sentinels) / sizeof(sentinels[0]); i++) {
        struct frontier_sentinels sl;
        int rc = frontier__sentinel_parse(&sl, sentinels[i].url);

        CHECK(rc == sentinels[i].rc, "%s: rc %d", sentinels[i].url, rc);
        if (rc || sentinels[i].rc)
            continue;
        CHECK(sl.n == sentinels[i].n && !strcmp(sl.name, sentinels[i].name) &&
                  sl.master.db == sentinels[i].db,
              "%s: %d sentinels, name '%s', db %d", sentinels[i].url, sl.n,
              sl.name, sl.master.db);
        CHECK(!strcmp(sl.host[0], sentinels[i].host0) &&
                  sl.port[0] == sentinels[i].port0 &&
                  !strcmp(sl.host[sl.n - 1], sentinels[i].hostlast) &&
                  sl.port[sl.n - 1] == sentinels[i].portlast,
              "%s: first %s:%d last %s:%d", sentinels[i].url, sl.host[0],
              sl.port[0], sl.host[sl.n - 1], sl.port[sl.n - 1]);
        CHECK(sl.master.has_user == (sentinels[i].user != NULL) &&
                  (!sl.master.has_user ||
                   !strcmp(sl.master.user, sentinels[i].user)) &&
                  sl.master.has_pass == (sentinels[i].pass != NULL) &&
                  (!sl.master.has_pass ||
                   !strcmp(sl.master.pass, sentinels[i].pass)),
              "%s: user '%s' password '%s'", sentinels[i].url, sl.master.user,
              sl.master.pass);
    }
    /* more sentinels than FRONTIER_SENTINELS_MAX: refused, not cut */
    char many[512] = "redis-sentinel://";
    struct frontier_sentinels sl;
    for (int i = 0; i <= FRONTIER_SENTINELS_MAX; i++)
        strcat(many, i ? ",h:1" : "h:1");
    strcat(many, "/m");
    CHECK(frontier__sentinel_parse(&sl, many) == DC_EINVAL, "%d sentinels",
          FRONTIER_SENTINELS_MAX + 1);
    /* the redacted form hides the master's password */
    char shown[128];
    frontier_url_redact("redis-sentinel://u:secret@a:1,b:2/m", shown,
                        sizeof(shown));
    CHECK(!strcmp(shown, "redis-sentinel://u:***@a:1,b:2/m"), "redacted: %s",
          shown);
}

static void t_parse(void)
{
    for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
        struct frontier_redis_addr a;
        int rc = frontier__url_parse(&a, parses[i].url);

        CHECK(rc == parses[i].rc, "%s: rc %d", parses[i].url, rc);
        if (rc || parses[i].rc)
            continue;
        CHECK(!strcmp(a.host, parses[i].host) && !strcmp(a.path, parses[i].path)
                  && a.port == parses[i].port && a.db == parses[i].db,
              "%s: host '%s' path '%s' port %d db %d", parses[i].url, a.host,
              a.path, a.port, a.db);
        CHECK(a.has_user == (parses[i].user != NULL) &&
                  (!a.has_user || !strcmp(a.user, parses[i].user)),
              "%s: user '%s' (%d)", parses[i].url, a.user, a.has_user);
        CHECK(a.has_pass == (parses[i].pass != NULL) &&
                  (!a.has_pass || !strcmp(a.pass, parses[i].pass)),
              "%s: password '%s' (%d)", parses[i].url, a.pass, a.has_pass);
    }
    /* a password longer than the buffer is an error, not a cut */
    char big[1200];
    snprintf(big, sizeof(big), "redis://:");
    memset(big + 9, 'x', 1000);
    snprintf(big + 1009, sizeof(big) - 1009, "@h");
    struct frontier_redis_addr a;
    CHECK(frontier__url_parse(&a, big) == DC_EINVAL, "1000-byte password");
}

static const struct {
    const char *url, *shown;
} redacts[] = {
    {"redis://h:1/2", "redis://h:1/2"},
    {"redis://:pw@h:1/2", "redis://:***@h:1/2"},
    {"redis://u:pw@h", "redis://u:***@h"},
    {"redis://u@h", "redis://u@h"},
    {"redis://u:p%40w@h", "redis://u:***@h"},
    {"redis://:a@b@h", "redis://:***@h"},     /* a bare '@' in it */
    {"redis://:p/w@h", "redis://:***@h"},     /* malformed: still hidden */
    {"redis://:p:w@h", "redis://:***@h"},
    {"unix://u:pw@/tmp/r.sock?db=1", "unix://u:***@/tmp/r.sock?db=1"},
    {"unix:///tmp/a@b.sock", "unix:///tmp/a@b.sock"},
    {"unix:/tmp/r.sock", "unix:/tmp/r.sock"},
    {"redis-cluster://u:pw@a:1,b:2", "redis-cluster://u:***@a:1,b:2"},
    {"redis-cluster://a:1,b:2", "redis-cluster://a:1,b:2"},
    {"", ""},
};

static void t_redact(void)
{
    char out[256], tiny[8];

    for (size_t i = 0; i < sizeof(redacts) / sizeof(redacts[0]); i++) {
        frontier_url_redact(redacts[i].url, out, sizeof(out));
        CHECK(!strcmp(out, redacts[i].shown), "%s -> %s", redacts[i].url, out);
    }
    frontier_url_redact("redis://:secret@h", tiny, sizeof(tiny));
    CHECK(!strstr(tiny, "sec") && strlen(tiny) == 7, "cut short: %s", tiny);
    frontier_url_redact(NULL, out, sizeof(out));
    CHECK(out[0] == '\0', "NULL");
}

/* ---- credentials: settings, password_file, URL over settings ---- */

static char dir[] = "/tmp/u-redis-url-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* frontier__auth_conf on a fresh frontier with the given settings; the
 * password found (or NULL) into pass, the error message into err. */
static int auth_conf(const char *user, const char *pw, const char *file,
                     char *pass, size_t cap, char *err, size_t errlen)
{
    struct frontier *f = xcalloc(1, sizeof(*f));
    struct conf c;
    int rc;

    conf_init(&c);
    free(c.redis_user);
    free(c.redis_password);
    free(c.redis_password_file);
    c.redis_user = xstrdup(user);
    c.redis_password = xstrdup(pw);
    c.redis_password_file = xstrdup(file);
    rc = frontier__auth_conf(f, &c);
    snprintf(pass, cap, "%s", f->auth_pass ? f->auth_pass : "(none)");
    snprintf(err, errlen, "%s", f->err);
    frontier__auth_free(f);
    CHECK(!f->auth_pass && !f->auth_user, "auth_free clears");
    free(f);
    conf_release(&c);
    return rc;
}

static void t_password_file(void)
{
    char pass[128], err[256];
    const char *p;
    int rc;

    p = write_file("pw1", "s3cret\n");
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_OK && !strcmp(pass, "s3cret"), "newline dropped: %d '%s'",
          rc, pass);
    p = write_file("pw2", "with space\r\n");
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_OK && !strcmp(pass, "with space"), "CRLF dropped: '%s'",
          pass);
    p = write_file("pw3", "nolf");
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_OK && !strcmp(pass, "nolf"), "no newline: '%s'", pass);
    p = write_file("pw4", "");
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "empty"), "empty: %d %s", rc, err);
    p = write_file("pw5", "two\nlines\n");
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "one line") && !strstr(err, "two"),
          "two lines: %d %s", rc, err);
    rc = auth_conf("", "", "/nonexistent/pw", pass, sizeof(pass), err,
                   sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "/nonexistent/pw") &&
              strstr(err, "No such file"), "missing: %s", err);
    rc = auth_conf("", "", dir, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "redis.password_file"),
          "a directory: %s", err);
    p = write_file("pw6", "x\n");
    rc = auth_conf("", "inline", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "not both") && !strstr(err, "inline"),
          "both: %s", err);
    rc = auth_conf("crawler", "inline", "", pass, sizeof(pass), err,
                   sizeof(err));
    CHECK(rc == DC_OK && !strcmp(pass, "inline"), "redis.password: %s", pass);
    char *big = xcalloc(5000, 1);
    memset(big, 'x', 4500);
    p = write_file("pw7", big);
    free(big);
    rc = auth_conf("", "", p, pass, sizeof(pass), err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, "too large"), "4500 bytes: %s", err);
}

/* URL user/password win over the settings, each on its own. */
static void t_creds(void)
{
    struct frontier f;
    struct frontier_redis_addr a;
    const char *user, *pass;

    memset(&f, 0, sizeof(f));
    f.auth_user = "setuser";
    f.auth_pass = "setpass";
    frontier__url_parse(&a, "redis://h");
    CHECK(frontier__creds(&f, &a, &user, &pass) == DC_OK &&
              !strcmp(user, "setuser") && !strcmp(pass, "setpass"),
          "settings only");
    frontier__url_parse(&a, "redis://urluser@h");
    CHECK(frontier__creds(&f, &a, &user, &pass) == DC_OK &&
              !strcmp(user, "urluser") && !strcmp(pass, "setpass"),
          "URL user, settings' password");
    frontier__url_parse(&a, "redis://:urlpass@h");
    CHECK(frontier__creds(&f, &a, &user, &pass) == DC_OK &&
              !strcmp(user, "setuser") && !strcmp(pass, "urlpass"),
          "settings' user, URL password");
    f.auth_pass = NULL;
    frontier__url_parse(&a, "redis://urluser@h");
    CHECK(frontier__creds(&f, &a, &user, &pass) == DC_EINVAL,
          "a user without a password");
    f.auth_user = NULL;
    frontier__url_parse(&a, "redis://h");
    CHECK(frontier__creds(&f, &a, &user, &pass) == DC_OK && !user && !pass,
          "no credentials at all");
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    t_parse();
    t_sentinel();
    t_redact();
    t_password_file();
    t_creds();
    for (int i = 1; i <= 7; i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/pw%d", dir, i);
        unlink(p);
    }
    rmdir(dir);
    return t_done("u-redis-url");
}
