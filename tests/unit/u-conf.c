/*
 * u-conf.c: the configuration table, conf/dcrawl.conf, value parsing, the
 * environment and the order of precedence.
 *
 * The documented file is read here with a small independent reader (not
 * conf_load_file) so a bug in the loader cannot hide a stale file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "t.h"

#define MAX_KEYS 80
#define DOC_FILE DC_SOURCE_DIR "/conf/dcrawl.conf"

/* Every key's texts as conf_foreach reports them. */
struct snapshot {
    int n;
    char key[MAX_KEYS][64];
    char value[MAX_KEYS][256];
    char def[MAX_KEYS][256];
    int help_ok[MAX_KEYS];
};

static void snap_visit(void *ud, const char *key, const char *value,
                       const char *def, const char *help)
{
    struct snapshot *s = ud;

    if (s->n >= MAX_KEYS)
        return;
    snprintf(s->key[s->n], sizeof(s->key[0]), "%s", key);
    snprintf(s->value[s->n], sizeof(s->value[0]), "%s", value);
    snprintf(s->def[s->n], sizeof(s->def[0]), "%s", def);
    s->help_ok[s->n] = help && *help && !strchr(help, '\n');
    s->n++;
}

static void snap(const struct conf *c, struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    conf_foreach(c, snap_visit, s);
}

/* Current value text of key, or NULL. */
static const char *value_of(const struct conf *c, const char *key)
{
    static struct snapshot s;
    int i;

    snap(c, &s);
    for (i = 0; i < s.n; i++)
        if (!strcmp(s.key[i], key))
            return s.value[i];
    return NULL;
}

/* --- (a) the documented file ---------------------------------------- */

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s &&
           (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* Count how often `key` is assigned in the documented file and whether
 * every assignment has value `want` (quotes removed). */
static int doc_count(const char *key, const char *want, int *same)
{
    FILE *f = fopen(DOC_FILE, "r");
    char line[1024], section[64] = "", full[256];
    int n = 0, lines = 0;

    *same = 1;
    if (!f)
        return -1;
    while (lines++ < 10000 && fgets(line, sizeof(line), f)) {
        char *s = trim(line), *eq, *v;

        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            snprintf(section, sizeof(section), "%.*s", (int)strcspn(s + 1, "]"),
                     s + 1);
            continue;
        }
        eq = strchr(s, '=');
        if (!eq)
            continue;
        *eq = '\0';
        snprintf(full, sizeof(full), "%s.%s", section, trim(s));
        if (strcmp(full, key))
            continue;
        n++;
        v = trim(eq + 1);
        if (*v == '"' && strlen(v) >= 2 && v[strlen(v) - 1] == '"') {
            v[strlen(v) - 1] = '\0';
            v++;
        }
        if (strcmp(v, want))
            *same = 0;
    }
    fclose(f);
    return n;
}

/* Number of `key = value` lines in the documented file. */
static int doc_assignments(void)
{
    FILE *f = fopen(DOC_FILE, "r");
    char line[1024];
    int n = 0, lines = 0;

    if (!f)
        return -1;
    while (lines++ < 10000 && fgets(line, sizeof(line), f)) {
        char *s = trim(line);
        if (*s && *s != '#' && *s != ';' && *s != '[' && strchr(s, '='))
            n++;
    }
    fclose(f);
    return n;
}

static void test_documented_file(void)
{
    struct conf def, fromfile;
    struct snapshot a, b;
    char err[512] = "";
    int i, rc, same;

    conf_init(&def);
    snap(&def, &a);
    CHECK(a.n == 72, "table has %d keys, expected 72", a.n);
    for (i = 0; i < a.n; i++) {
        CHECK(!strcmp(a.value[i], a.def[i]),
              "%s: init value '%s' != "
              "default text '%s'",
              a.key[i], a.value[i], a.def[i]);
        CHECK(a.help_ok[i], "%s: help missing or multi-line", a.key[i]);
        CHECK(doc_count(a.key[i], a.def[i], &same) == 1,
              "%s: not exactly once in dcrawl.conf", a.key[i]);
        CHECK(same, "%s: dcrawl.conf value differs from default '%s'", a.key[i],
              a.def[i]);
    }
    CHECK(doc_assignments() == a.n,
          "dcrawl.conf has %d assignments, table "
          "%d keys",
          doc_assignments(), a.n);

    conf_init(&fromfile);
    rc = conf_load_file(&fromfile, DOC_FILE, err, sizeof(err));
    CHECK(rc == DC_OK, "loading dcrawl.conf: %d %s", rc, err);
    snap(&fromfile, &b);
    CHECK(a.n == b.n, "key counts differ");
    for (i = 0; i < a.n && i < b.n; i++)
        CHECK(!strcmp(a.value[i], b.value[i]),
              "%s: '%s' after file, '%s' "
              "by default",
              a.key[i], b.value[i], a.value[i]);
    conf_release(&fromfile);
    conf_release(&def);
}

/* Defaults read straight from the struct, against the brief's numbers. */
static void test_default_fields(void)
{
    struct conf c;

    conf_init(&c);
    CHECK(
        !strcmp(c.crawl_user_agent, "dcrawl/" DCRAWL_VERSION " (+https://example.org/dcrawl)"),
        "ua");
    CHECK(c.crawl_depth == 3 && !strcmp(c.crawl_node_id, ""), "depth/node");
    CHECK(c.politeness_delay == 1.0 && c.politeness_host_connections == 1,
          "politeness");
    CHECK(c.robots_obey == 1 && c.fetch_concurrency == 256, "robots/conc");
    CHECK(c.fetch_timeout == 30.0 && c.fetch_connect_timeout == 10.0,
          "timeouts");
    CHECK(c.fetch_max_bytes == 10 * 1024 * 1024, "max_bytes %lld",
          (long long)c.fetch_max_bytes);
    CHECK(c.fetch_max_redirects == 5 && c.fetch_http2 && c.fetch_verify_tls &&
              c.fetch_retries == 1,
          "fetch flags");
    CHECK(!strcmp(c.fetch_accept_encoding, "gzip, deflate"), "encoding");
    CHECK(c.parse_threads == 0 && c.url_max_length == 2048 &&
              c.url_strip_index_html && c.noise_enabled,
          "parse/url/noise");
    CHECK(c.frontier_partitions == 1024 && c.frontier_lease == 300.0,
          "frontier");
    CHECK(c.politeness_ip_connections == 2 &&
              c.politeness_max_retry_after == 600.0 &&
              c.politeness_max_backoff == 300.0,
          "politeness ip/retry-after/backoff");
    CHECK(!strcmp(c.scope_mode, "any") && !strcmp(c.scope_include, "") &&
              !strcmp(c.scope_exclude, "") &&
              strstr(c.scope_skip_suffixes, ".jpg ") &&
              c.scope_max_repeated_segments == 3 && c.scope_host_budget == 0 &&
              !strcmp(c.scope_private_addresses, "seeds"),
          "scope");
    CHECK(!strcmp(c.redis_prefix, "dc") && !strcmp(c.redis_url, ""), "redis");
    CHECK(c.dedup_cache_entries == 1048576, "cache_entries");
    CHECK(c.output_warc_max_bytes == (int64_t)1 << 30 &&
              c.output_gzip_level == 1,
          "output");
    conf_release(&c);
    conf_release(&c); /* second release is a no-op */
    conf_release(NULL);
}

/* --- (b) assignments --------------------------------------------------- */

static const struct {
    const char *assign;
    int rc;
    const char *key;   /* checked when rc == DC_OK */
    const char *value; /* expected value text */
    const char *msg;   /* substring of the error, when rc != DC_OK */
} assigns[] = {
    {"crawl.depth=0", DC_OK, "crawl.depth", "0", NULL},
    {"crawl.depth=63", DC_OK, "crawl.depth", "63", NULL},
    {"crawl.depth=64", DC_ECONFIG, NULL, NULL, "0..63"},
    {"crawl.depth=-1", DC_ECONFIG, NULL, NULL, "crawl.depth"},
    {"crawl.depth=3x", DC_ECONFIG, NULL, NULL, "'3x'"},
    {"crawl.depth=", DC_ECONFIG, NULL, NULL, "crawl.depth"},
    {"crawl.depth=99999999999999999999", DC_ECONFIG, NULL, NULL, "0..63"},
    {" crawl.depth = 7 ", DC_OK, "crawl.depth", "7", NULL},
    {"fetch.http2=false", DC_OK, "fetch.http2", "false", NULL},
    {"fetch.http2=YES", DC_OK, "fetch.http2", "true", NULL},
    {"fetch.http2=off", DC_OK, "fetch.http2", "false", NULL},
    {"fetch.http2=On", DC_OK, "fetch.http2", "true", NULL},
    {"fetch.http2=0", DC_OK, "fetch.http2", "false", NULL},
    {"fetch.http2=1", DC_OK, "fetch.http2", "true", NULL},
    {"fetch.http2=no", DC_OK, "fetch.http2", "false", NULL},
    {"fetch.http2=TRUE", DC_OK, "fetch.http2", "true", NULL},
    {"fetch.http2=2", DC_ECONFIG, NULL, NULL, "'2'"},
    {"fetch.http2=maybe", DC_ECONFIG, NULL, NULL, "fetch.http2"},
    {"fetch.max_bytes=1024", DC_OK, "fetch.max_bytes", "1K", NULL},
    {"fetch.max_bytes=1023", DC_ECONFIG, NULL, NULL, "1K..16G"},
    {"fetch.max_bytes=64k", DC_OK, "fetch.max_bytes", "64K", NULL},
    {"fetch.max_bytes=3M", DC_OK, "fetch.max_bytes", "3M", NULL},
    {"fetch.max_bytes=16G", DC_OK, "fetch.max_bytes", "16G", NULL},
    {"fetch.max_bytes=17g", DC_ECONFIG, NULL, NULL, "out of range"},
    {"fetch.max_bytes=1500", DC_OK, "fetch.max_bytes", "1500", NULL},
    {"fetch.max_bytes=2049k", DC_OK, "fetch.max_bytes", "2049K", NULL},
    {"fetch.max_bytes=10MB", DC_ECONFIG, NULL, NULL, "'10MB'"},
    {"fetch.max_bytes=M", DC_ECONFIG, NULL, NULL, "fetch.max_bytes"},
    {"fetch.max_bytes=9999999999999T", DC_ECONFIG, NULL, NULL, "max_bytes"},
    {"output.warc_max_bytes=1T", DC_OK, "output.warc_max_bytes", "1T", NULL},
    {"output.warc_max_bytes=1048575", DC_ECONFIG, NULL, NULL, "1M..1T"},
    {"dedup.cache_entries=16", DC_OK, "dedup.cache_entries", "16", NULL},
    {"dedup.cache_entries=15", DC_ECONFIG, NULL, NULL, "16..1073741824"},
    {"dedup.cache_entries=1k", DC_ECONFIG, NULL, NULL, "'1k'"},
    {"fetch.timeout=0.1", DC_OK, "fetch.timeout", "0.1", NULL},
    {"fetch.timeout=2.5", DC_OK, "fetch.timeout", "2.5", NULL},
    {"fetch.timeout=60", DC_OK, "fetch.timeout", "60.0", NULL},
    {"fetch.timeout=0.09", DC_ECONFIG, NULL, NULL, "0.1..3600"},
    {"fetch.timeout=nan", DC_ECONFIG, NULL, NULL, "'nan'"},
    {"fetch.timeout=inf", DC_ECONFIG, NULL, NULL, "fetch.timeout"},
    {"fetch.timeout=1e400", DC_ECONFIG, NULL, NULL, "fetch.timeout"},
    {"fetch.timeout=1s", DC_ECONFIG, NULL, NULL, "'1s'"},
    {"politeness.delay=0", DC_OK, "politeness.delay", "0.0", NULL},
    {"politeness.delay=3601", DC_ECONFIG, NULL, NULL, "0.0..3600.0"},
    {"fetch.concurrency=10000", DC_OK, "fetch.concurrency", "10000", NULL},
    {"fetch.concurrency=0", DC_ECONFIG, NULL, NULL, "1..10000"},
    {"output.gzip_level=9", DC_OK, "output.gzip_level", "9", NULL},
    {"output.gzip_level=10", DC_ECONFIG, NULL, NULL, "0..9"},
    {"frontier.partitions=65536", DC_OK, "frontier.partitions", "65536", NULL},
    {"frontier.partitions=65537", DC_ECONFIG, NULL, NULL, "1..65536"},
    {"redis.url=redis://127.0.0.1:6390/2", DC_OK, "redis.url",
     "redis://127.0.0.1:6390/2", NULL},
    {"redis.url=a=b", DC_OK, "redis.url", "a=b", NULL},
    {"redis.prefix=", DC_ECONFIG, NULL, NULL, "redis.prefix"},
    {"crawl.node_id=node-7", DC_OK, "crawl.node_id", "node-7", NULL},
    {"crawl.user_agent=dcrawl/0.2 (+https://x.test/)", DC_OK,
     "crawl.user_agent", "dcrawl/0.2 (+https://x.test/)", NULL},
    {"crawl.user_agent=Mozilla/5.0", DC_ECONFIG, NULL, NULL, "dcrawl"},
    {"crawl.user_agent=dcrawl\r\nX: y", DC_ECONFIG, NULL, NULL, "control"},
    {"fetch.accept_encoding=", DC_OK, "fetch.accept_encoding", "", NULL},
    {"scope.private_addresses=deny", DC_OK, "scope.private_addresses", "deny", NULL},
    {"scope.private_addresses=allow", DC_OK, "scope.private_addresses", "allow", NULL},
    {"scope.private_addresses=none", DC_ECONFIG, NULL, NULL, "deny, seeds, allow"},
    {"scope.private_addresses=Seeds", DC_ECONFIG, NULL, NULL, "not one of"},
    {"crawl.nope=1", DC_ECONFIG, NULL, NULL, "unknown key crawl.nope"},
    {"depth=1", DC_ECONFIG, NULL, NULL, "unknown key depth"},
    {"crawl.depth", DC_ECONFIG, NULL, NULL, "section.key=value"},
    {"=5", DC_ECONFIG, NULL, NULL, "bad key"},
};

static void test_assignments(void)
{
    size_t i;

    for (i = 0; i < sizeof(assigns) / sizeof(assigns[0]); i++) {
        struct conf c;
        char err[512] = "";
        int rc;

        conf_init(&c);
        rc = conf_set(&c, assigns[i].assign, err, sizeof(err));
        CHECK(rc == assigns[i].rc, "'%s': rc %d, want %d (%s)",
              assigns[i].assign, rc, assigns[i].rc, err);
        if (rc == DC_OK && assigns[i].key) {
            const char *v = value_of(&c, assigns[i].key);
            CHECK(v && !strcmp(v, assigns[i].value),
                  "'%s': value '%s', "
                  "want '%s'",
                  assigns[i].assign, v ? v : "(null)", assigns[i].value);
        }
        if (rc != DC_OK && assigns[i].msg)
            CHECK(strstr(err, assigns[i].msg) != NULL,
                  "'%s': error '%s' "
                  "lacks '%s'",
                  assigns[i].assign, err, assigns[i].msg);
        conf_release(&c);
    }
}

/* Field values set through the table, read straight from the struct. */
static void test_fields_and_failure(void)
{
    struct conf c;
    char err[256];

    conf_init(&c);
    CHECK(conf_set(&c, "fetch.max_bytes=3m", err, sizeof(err)) == DC_OK, "3m");
    CHECK(c.fetch_max_bytes == 3 * 1048576, "3m = %lld",
          (long long)c.fetch_max_bytes);
    CHECK(conf_set_kv(&c, "output.warc_max_bytes", "2g", err, sizeof(err)) ==
              DC_OK,
          "2g");
    CHECK(c.output_warc_max_bytes == (int64_t)2 << 30, "2g");
    CHECK(conf_set_kv(&c, "fetch.connect_timeout", "0.25", err, sizeof(err)) ==
              DC_OK,
          "0.25");
    CHECK(c.fetch_connect_timeout == 0.25, "0.25");
    CHECK(conf_set_kv(&c, "robots.obey", "off", err, sizeof(err)) == DC_OK,
          "obey");
    CHECK(c.robots_obey == 0, "obey off");
    /* a failed assignment leaves the old value */
    CHECK(conf_set_kv(&c, "crawl.depth", "5", err, sizeof(err)) == DC_OK, "5");
    CHECK(conf_set_kv(&c, "crawl.depth", "500", err, sizeof(err)) == DC_ECONFIG,
          "500");
    CHECK(c.crawl_depth == 5, "depth kept at %d", c.crawl_depth);
    CHECK(conf_set_kv(&c, "redis.prefix", "crawl9", err, sizeof(err)) == DC_OK,
          "prefix");
    CHECK(conf_set_kv(&c, "redis.prefix", "", err, sizeof(err)) == DC_ECONFIG,
          "empty prefix");
    CHECK(!strcmp(c.redis_prefix, "crawl9"), "prefix kept");
    /* NULL / zero-size error buffers are allowed */
    CHECK(conf_set(&c, "nope.nope=1", NULL, 0) == DC_ECONFIG, "null err");
    CHECK(conf_set_kv(&c, "crawl.depth", "x", err, 0) == DC_ECONFIG, "0 err");
    conf_release(&c);
}

/* --- (c) environment and precedence ------------------------------------ */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static void test_env_precedence(const char *dir)
{
    struct conf c;
    char path[512], err[512] = "";
    int rc;

    snprintf(path, sizeof(path), "%s/prec.conf", dir);
    write_file(path, "[fetch]\ntimeout = 45\nretries = 3\n"
                     "[crawl]\ndepth = 9\n");
    setenv("DCRAWL_FETCH_TIMEOUT", "60", 1);
    setenv("DCRAWL_CRAWL_DEPTH", "11", 1);
    setenv("DCRAWL_REDIS_URL", "unix:/tmp/r.sock", 1);
    setenv("DCRAWL_POLITENESS_HOST_CONNECTIONS", "4", 1);

    conf_init(&c);
    rc = conf_load_file(&c, path, err, sizeof(err));
    CHECK(rc == DC_OK, "prec file: %s", err);
    CHECK(c.fetch_timeout == 45.0 && c.fetch_retries == 3 && c.crawl_depth == 9,
          "file over defaults");
    rc = conf_load_env(&c, err, sizeof(err));
    CHECK(rc == DC_OK, "env: %s", err);
    CHECK(c.fetch_timeout == 60.0, "env over file: %g", c.fetch_timeout);
    CHECK(c.fetch_retries == 3, "file value kept when no env");
    CHECK(c.crawl_depth == 11, "env depth");
    CHECK(!strcmp(c.redis_url, "unix:/tmp/r.sock"), "env redis url");
    CHECK(c.politeness_host_connections == 4, "env host_connections");
    rc = conf_set(&c, "crawl.depth=2", err, sizeof(err));
    CHECK(rc == DC_OK && c.crawl_depth == 2, "--set over env");
    CHECK(c.fetch_connect_timeout == 10.0, "untouched default");
    conf_release(&c);

    setenv("DCRAWL_FETCH_TIMEOUT", "soon", 1);
    conf_init(&c);
    rc = conf_load_env(&c, err, sizeof(err));
    CHECK(rc == DC_ECONFIG, "bad env rc %d", rc);
    CHECK(strstr(err, "DCRAWL_FETCH_TIMEOUT") && strstr(err, "soon"),
          "bad env message: %s", err);
    conf_release(&c);

    unsetenv("DCRAWL_FETCH_TIMEOUT");
    unsetenv("DCRAWL_CRAWL_DEPTH");
    unsetenv("DCRAWL_REDIS_URL");
    unsetenv("DCRAWL_POLITENESS_HOST_CONNECTIONS");
    conf_init(&c);
    CHECK(conf_load_env(&c, err, sizeof(err)) == DC_OK, "empty env");
    CHECK(c.fetch_timeout == 30.0, "no env, default");
    conf_release(&c);
    unlink(path);
}

/* --- (d) config files: syntax and FILE:LINE errors --------------------- */

static const struct {
    const char *text;
    int rc;
    int line;        /* expected line in the message, when rc != OK */
    const char *msg; /* substring of the message */
} files[] = {
    {"[fetch]\ntimeout = 12 # twelve\n; comment\n\n", DC_OK, 0, NULL},
    {"# a\n[crawl]\nuser_agent = \"dcrawl/1 (#1; \\\"q\\\")\" ; c\n", DC_OK, 0,
     NULL},
    {"fetch.retries = 2\n[ url ]\n  max_length=100  \r\n", DC_OK, 0, NULL},
    {"[crawl]\ndepth = 3\n\n[fetch]\ntimout = 5\n", DC_ECONFIG, 5,
     "unknown key fetch.timout"},
    {"[bogus]\nkey = 1\n", DC_ECONFIG, 2, "unknown key bogus.key"},
    {"[crawl]\ndepth = 3\ndepth = 64\n", DC_ECONFIG, 3, "0..63"},
    {"[crawl]\n# c\ndepth 3\n", DC_ECONFIG, 3, "key = value"},
    {"[crawl\ndepth = 3\n", DC_ECONFIG, 1, "[section]"},
    {"[crawl]\nnode_id = \"abc\n", DC_ECONFIG, 2, "unterminated"},
    {"[crawl]\nnode_id = \"abc\" x\n", DC_ECONFIG, 2, "after quoted"},
    {"[fetch]\nhttp2 = sometimes\n", DC_ECONFIG, 2, "fetch.http2"},
    {"[fetch]\n= 5\n", DC_ECONFIG, 2, "missing key"},
    {"depth = 3\n", DC_ECONFIG, 1, "unknown key depth"},
};

static void check_file_case(const char *path, size_t i)
{
    struct conf c;
    char err[512] = "", want[600];
    int rc;

    write_file(path, files[i].text);
    conf_init(&c);
    rc = conf_load_file(&c, path, err, sizeof(err));
    CHECK(rc == files[i].rc, "file case %zu: rc %d want %d (%s)", i, rc,
          files[i].rc, err);
    if (files[i].rc != DC_OK) {
        snprintf(want, sizeof(want), "%s:%d: ", path, files[i].line);
        CHECK(!strncmp(err, want, strlen(want)),
              "file case %zu: '%s' does "
              "not start with '%s'",
              i, err, want);
        CHECK(strstr(err, files[i].msg) != NULL,
              "file case %zu: '%s' lacks "
              "'%s'",
              i, err, files[i].msg);
    }
    if (i == 0)
        CHECK(c.fetch_timeout == 12.0, "inline comment: %g", c.fetch_timeout);
    if (i == 1)
        CHECK(!strcmp(c.crawl_user_agent, "dcrawl/1 (#1; \"q\")"),
              "quoted: '%s'", c.crawl_user_agent);
    if (i == 2)
        CHECK(c.fetch_retries == 2 && c.url_max_length == 100,
              "full key / spaces / CRLF");
    conf_release(&c);
}

static void test_files(const char *dir)
{
    struct conf c;
    char path[512], err[512] = "";
    size_t i;
    int rc;

    snprintf(path, sizeof(path), "%s/case.conf", dir);
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        check_file_case(path, i);
    unlink(path);

    /* a file that does not exist */
    snprintf(path, sizeof(path), "%s/missing.conf", dir);
    conf_init(&c);
    rc = conf_load_file(&c, path, err, sizeof(err));
    CHECK(rc == DC_EIO, "missing file rc %d", rc);
    CHECK(strstr(err, path) && strstr(err, "No such file"), "missing: %s", err);

    /* earlier keys stay set when a later line fails */
    snprintf(path, sizeof(path), "%s/partial.conf", dir);
    write_file(path, "[crawl]\ndepth = 8\nnope = 1\ndepth = 9\n");
    rc = conf_load_file(&c, path, err, sizeof(err));
    CHECK(rc == DC_ECONFIG && c.crawl_depth == 8, "partial: %d %d", rc,
          c.crawl_depth);
    conf_release(&c);
    unlink(path);
}

/* A line longer than the reader's limit is an error, not a split line. */
static void test_long_line(const char *dir)
{
    struct conf c;
    char path[512], err[512] = "";
    FILE *f;
    int i, rc;

    snprintf(path, sizeof(path), "%s/long.conf", dir);
    f = fopen(path, "w");
    if (!f)
        return;
    fputs("[redis]\nurl = \"", f);
    for (i = 0; i < 20000; i++)
        fputc('a', f);
    fputs("\"\n", f);
    fclose(f);
    conf_init(&c);
    rc = conf_load_file(&c, path, err, sizeof(err));
    CHECK(rc == DC_ECONFIG && strstr(err, ":2: "), "long line: %d %s", rc, err);
    conf_release(&c);
    unlink(path);
}

/* Each key's origin follows the source that set it last. */
static void test_origins(const char *dir)
{
    struct conf c;
    char path[512], want[600], buf[4200], err[512] = "";
    const char *o;

    snprintf(path, sizeof(path), "%s/origin.conf", dir);
    write_file(path, "# origins\n[fetch]\ntimeout = 45\n\nretries = 3\n"
                     "[crawl]\ndepth = 9\n");
    setenv("DCRAWL_FETCH_RETRIES", "4", 1);
    conf_init(&c);
    o = conf_origin(&c, "fetch.timeout", buf, sizeof(buf));
    CHECK(o && !strcmp(o, "default"), "init: %s", o ? o : "(null)");
    CHECK(conf_origin(&c, "no.such", buf, sizeof(buf)) == NULL, "unknown key");
    CHECK(conf_load_file(&c, path, err, sizeof(err)) == DC_OK, "file: %s", err);
    CHECK(conf_load_env(&c, err, sizeof(err)) == DC_OK, "env: %s", err);
    CHECK(conf_set(&c, "crawl.depth=2", err, sizeof(err)) == DC_OK, "set");
    CHECK(conf_set_kv(&c, "crawl.node_id", "n1", err, sizeof(err)) == DC_OK,
          "kv");
    snprintf(want, sizeof(want), "file:%s:3", path);
    o = conf_origin(&c, "fetch.timeout", buf, sizeof(buf));
    CHECK(!strcmp(o, want), "file origin: %s, want %s", o, want);
    o = conf_origin(&c, "fetch.retries", buf, sizeof(buf));
    CHECK(!strcmp(o, "env:DCRAWL_FETCH_RETRIES"), "env origin: %s", o);
    o = conf_origin(&c, "crawl.depth", buf, sizeof(buf));
    CHECK(!strcmp(o, "--set"), "--set origin: %s", o);
    o = conf_origin(&c, "crawl.node_id", buf, sizeof(buf));
    CHECK(!strcmp(o, "command line"), "option origin: %s", o);
    o = conf_origin(&c, "fetch.connect_timeout", buf, sizeof(buf));
    CHECK(!strcmp(o, "default"), "untouched: %s", o);
    /* a refused value leaves the origin as it was */
    CHECK(conf_set(&c, "fetch.timeout=never", err, sizeof(err)) == DC_ECONFIG,
          "bad set");
    o = conf_origin(&c, "fetch.timeout", buf, sizeof(buf));
    CHECK(!strcmp(o, want), "origin kept after a bad value: %s", o);
    conf_release(&c);
    unsetenv("DCRAWL_FETCH_RETRIES");
    unlink(path);
}

/* The User-Agent default carries the one version. */
static void test_version(void)
{
    struct conf c;

    conf_init(&c);
    CHECK(!strncmp(c.crawl_user_agent, "dcrawl/" DCRAWL_VERSION " ",
                   strlen("dcrawl/" DCRAWL_VERSION " ")),
          "user agent %s", c.crawl_user_agent);
    conf_release(&c);
}

/* The password settings: DCRAWL_REDIS_PASSWORD and
 * DCRAWL_REDIS_PASSWORD_FILE reach them, and no error message about a
 * secret key echoes its value. */
static void test_secrets(void)
{
    struct conf c;
    char err[512] = "", big[700];
    const char *v;

    CHECK(conf_key_secret("redis.password") && conf_key_secret("redis.url") &&
              !conf_key_secret("redis.user") &&
              !conf_key_secret("redis.password_file") &&
              !conf_key_secret(NULL),
          "conf_key_secret");
    conf_init(&c);
    setenv("DCRAWL_REDIS_PASSWORD", "s3cr3t-env", 1);
    setenv("DCRAWL_REDIS_PASSWORD_FILE", "/run/secrets/pw", 1);
    setenv("DCRAWL_REDIS_USER", "crawler", 1);
    CHECK(conf_load_env(&c, err, sizeof(err)) == DC_OK, "env: %s", err);
    CHECK(c.redis_password && !strcmp(c.redis_password, "s3cr3t-env"),
          "redis.password from the environment");
    v = value_of(&c, "redis.password_file");
    CHECK(v && !strcmp(v, "/run/secrets/pw"), "redis.password_file: %s",
          v ? v : "(null)");
    v = value_of(&c, "redis.user");
    CHECK(v && !strcmp(v, "crawler"), "redis.user: %s", v ? v : "(null)");
    unsetenv("DCRAWL_REDIS_PASSWORD");
    unsetenv("DCRAWL_REDIS_PASSWORD_FILE");
    unsetenv("DCRAWL_REDIS_USER");
    conf_release(&c);

    memset(big, 0, sizeof(big));
    snprintf(big, sizeof(big), "redis.password=TOPSECRET");
    memset(big + strlen(big), 'x', 600);
    conf_init(&c);
    CHECK(conf_set(&c, big, err, sizeof(err)) == DC_ECONFIG,
          "a 609-byte password is refused");
    CHECK(strstr(err, "redis.password") && !strstr(err, "TOPSECRET"),
          "message names the key, not the value: %s", err);
    char *url = xcalloc(5000, 1);
    snprintf(url, 5000, "redis.url=redis://:TOPSECRET@h/");
    memset(url + strlen(url), '1', 4500);
    CHECK(conf_set(&c, url, err, sizeof(err)) == DC_ECONFIG,
          "a 4990-byte URL is refused");
    CHECK(strstr(err, "redis.url") && !strstr(err, "TOPSECRET"),
          "message names the key, not the value: %s", err);
    free(url);
    conf_release(&c);
}

int main(void)
{
    char dir[] = "/tmp/u-conf-XXXXXX";

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_documented_file();
    test_default_fields();
    test_assignments();
    test_fields_and_failure();
    test_env_precedence(dir);
    test_files(dir);
    test_long_line(dir);
    test_origins(dir);
    test_version();
    test_secrets();
    rmdir(dir);
    return t_done("u-conf");
}
