/*
 * conf.c: filling a struct conf: built-in defaults, the config file, the
 * DCRAWL_* environment and --set assignments. The keys, their types and
 * bounds live in the table in conf-table.c; this file only finds a key and
 * hands its text to conf__parse.
 *
 * File format (conf/dcrawl.conf is the documented example):
 *
 *     # comment            ; comment
 *     [fetch]
 *     timeout = 30         # a comment after an unquoted value
 *     accept_encoding = "gzip, deflate"
 *
 * A `#` or `;` starts a comment at the beginning of a line or after
 * whitespace; a double-quoted value may hold anything but a newline, with
 * \" and \\ as escapes. A key outside any section must be written in full
 * (`fetch.timeout = 30`). Lines are at most CONF_LINE_MAX bytes.
 *
 * --set and conf_set take `section.key=value` with the whitespace around
 * key and value dropped and no quote handling (the shell quotes).
 *
 * Each key's origin (default, file and line, environment, --set, a
 * command's own option) is recorded when a value is accepted, for
 * conf_origin.
 *
 * Errors: every failure returns DC_ECONFIG (DC_EIO for an unreadable file)
 * with a one-line message in the caller's buffer; keys applied before the
 * failing one stay applied. A struct conf is built by one thread, then only
 * read.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-internal.h"

#define CONF_LINE_MAX 8192
#define CONF_NAME_MAX 128

void conf_init(struct conf *c)
{
    char err[256];
    size_t i;

    memset(c, 0, sizeof(*c));
    for (i = 0; i < conf__nopts; i++) {
        if (conf__parse(&conf__opts[i], c, conf__opts[i].def, err,
                        sizeof(err))) {
            fprintf(stderr, "dcrawl: bad built-in default: %s\n", err);
            abort();
        }
    }
}

void conf_release(struct conf *c)
{
    size_t i;

    if (!c)
        return;
    for (i = 0; i < conf__nopts; i++) {
        char **field;

        if (conf__opts[i].type != CONF_STRING)
            continue;
        field = (char **)((char *)c + conf__opts[i].offset);
        free(*field);
        *field = NULL;
    }
}

/* A NULL argument: DC_EINVAL with "missing WHAT" in err. */
static int missing(char *err, size_t errlen, const char *what)
{
    conf__seterr(err, errlen, "missing %s", what);
    return DC_EINVAL;
}

/* Parse text into o's field and record where it came from. */
static int set_from(struct conf *c, const struct conf_opt *o, const char *text,
                    const struct conf_origin *from, char *err, size_t errlen)
{
    int rc = conf__parse(o, c, text, err, errlen);

    if (rc == DC_OK)
        c->origin[o - conf__opts] = *from;
    return rc;
}

static int set_kv_from(struct conf *c, const char *key, const char *value,
                       enum conf_source source, char *err, size_t errlen)
{
    const struct conf_origin from = {source, 0, NULL};
    const struct conf_opt *o;

    if (!c || !key || !value)
        return missing(err, errlen, "key or value");
    o = conf__find(key, strlen(key));
    if (!o) {
        conf__seterr(err, errlen, "unknown key %.128s", key);
        return DC_ECONFIG;
    }
    return set_from(c, o, value, &from, err, errlen);
}

int conf_set_kv(struct conf *c, const char *key, const char *value, char *err,
                size_t errlen)
{
    return set_kv_from(c, key, value, CONF_FROM_OPTION, err, errlen);
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

/* Length of s[0..n) without trailing whitespace. */
static size_t trim_len(const char *s, size_t n)
{
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return n;
}

int conf_set(struct conf *c, const char *assignment, char *err, size_t errlen)
{
    const char *eq, *k, *v;
    char key[CONF_NAME_MAX], *val;
    size_t klen;
    int rc;

    if (!c || !assignment)
        return missing(err, errlen, "assignment");
    eq = strchr(assignment, '=');
    if (!eq) {
        conf__seterr(err, errlen, "expected section.key=value, got '%.128s'",
               assignment);
        return DC_ECONFIG;
    }
    k = skip_space(assignment);
    klen = eq > k ? trim_len(k, (size_t)(eq - k)) : 0;
    if (klen == 0 || klen >= sizeof(key)) {
        conf__seterr(err, errlen, "bad key in '%.128s'", assignment);
        return DC_ECONFIG;
    }
    memcpy(key, k, klen);
    key[klen] = '\0';
    v = skip_space(eq + 1);
    val = xstrndup(v, trim_len(v, strlen(v)));
    rc = set_kv_from(c, key, val, CONF_FROM_SET, err, errlen);
    free(val);
    return rc;
}

/* "DCRAWL_" + name upper-cased, '.' as '_'. */
static void env_name(const char *name, char *out, size_t cap)
{
    size_t n;

    snprintf(out, cap, "DCRAWL_%s", name);
    for (n = 7; out[n]; n++)
        out[n] = out[n] == '.' ? '_' : (char)toupper((unsigned char)out[n]);
}

int conf_load_env(struct conf *c, char *err, size_t errlen)
{
    const struct conf_origin from = {CONF_FROM_ENV, 0, NULL};
    char name[CONF_NAME_MAX + 8], msg[512];
    const char *v;
    size_t i;
    int rc;

    for (i = 0; i < conf__nopts; i++) {
        env_name(conf__opts[i].name, name, sizeof(name));
        v = getenv(name);
        if (!v)
            continue;
        rc = set_from(c, &conf__opts[i], v, &from, msg, sizeof(msg));
        if (rc) {
            conf__seterr(err, errlen, "environment %s: %s", name, msg);
            return rc;
        }
    }
    return DC_OK;
}

/* --- config files ------------------------------------------------------ */

/* Where one file is being read, for messages. */
struct conf_reader {
    const char *path;
    int line;
    char section[CONF_NAME_MAX];
    char *err;
    size_t errlen;
};

static int file_error(struct conf_reader *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    conf__seterr(r->err, r->errlen, "%s:%d: %s", r->path, r->line, msg);
    return DC_ECONFIG;
}

static int is_comment_at(const char *s, const char *p)
{
    return (*p == '#' || *p == ';') &&
           (p == s || isspace((unsigned char)p[-1]));
}

/* `[name]`, optionally followed by a comment. */
static int read_section(struct conf_reader *r, const char *s)
{
    const char *end = strchr(s, ']');
    const char *b = skip_space(s + 1);
    const char *rest = end ? skip_space(end + 1) : NULL;
    size_t n;

    if (!end || (*rest && !is_comment_at(end + 1, rest)))
        return file_error(r, "expected [section]");
    n = end > b ? trim_len(b, (size_t)(end - b)) : 0;
    if (n == 0 || n >= sizeof(r->section) || memchr(b, '.', n))
        return file_error(r, "bad section name");
    memcpy(r->section, b, n);
    r->section[n] = '\0';
    return DC_OK;
}

/* A double-quoted value at s (just past the quote) into out. */
static int read_quoted(struct conf_reader *r, const char *s, char *out)
{
    const char *rest;

    while (*s && *s != '"') {
        if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
            s++;
        *out++ = *s++;
    }
    *out = '\0';
    if (*s != '"')
        return file_error(r, "unterminated quoted value");
    rest = skip_space(s + 1);
    if (*rest && !is_comment_at(s + 1, rest))
        return file_error(r, "text after quoted value");
    return DC_OK;
}

/* An unquoted value: up to a comment, trailing space trimmed. */
static void read_plain(const char *s, char *out)
{
    const char *p = s;

    while (*p && !is_comment_at(s, p))
        p++;
    memcpy(out, s, trim_len(s, (size_t)(p - s)));
    out[trim_len(s, (size_t)(p - s))] = '\0';
}

/* "section.key" for the key text k[0..klen). */
static int full_name(struct conf_reader *r, const char *k, size_t klen,
                     char *out, size_t cap)
{
    int n;

    if (klen == 0)
        return file_error(r, "missing key before '='");
    if (r->section[0])
        n = snprintf(out, cap, "%s.%.*s", r->section, (int)klen, k);
    else
        n = snprintf(out, cap, "%.*s", (int)klen, k);
    if (n < 0 || (size_t)n >= cap)
        return file_error(r, "key too long");
    return DC_OK;
}

static int read_assignment(struct conf_reader *r, struct conf *c, const char *s,
                           char *val)
{
    const char *eq = strchr(s, '='), *v;
    const struct conf_origin from = {CONF_FROM_FILE, r->line, r->path};
    const struct conf_opt *o;
    char name[2 * CONF_NAME_MAX], msg[512];
    int rc;

    if (!eq)
        return file_error(r, "expected key = value");
    rc = full_name(r, s, trim_len(s, (size_t)(eq - s)), name, sizeof(name));
    if (rc)
        return rc;
    o = conf__find(name, strlen(name));
    if (!o)
        return file_error(r, "unknown key %s", name);
    v = skip_space(eq + 1);
    if (*v == '"') {
        rc = read_quoted(r, v + 1, val);
        if (rc)
            return rc;
    } else {
        read_plain(v, val);
    }
    if (set_from(c, o, val, &from, msg, sizeof(msg)))
        return file_error(r, "%s", msg);
    return DC_OK;
}

/* One line without its newline; val has room for the whole line. */
static int read_line(struct conf_reader *r, struct conf *c, const char *line,
                     char *val)
{
    const char *s = skip_space(line);

    if (!*s || *s == '#' || *s == ';')
        return DC_OK;
    if (*s == '[')
        return read_section(r, s);
    return read_assignment(r, c, s, val);
}

/* Next line into buf without its newline: 1, 0 at end of file, or -1 when
 * the line does not fit. */
static int next_line(FILE *f, char *buf, size_t cap)
{
    size_t n;

    if (!fgets(buf, (int)cap, f))
        return 0;
    n = strlen(buf);
    if (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    else if (!feof(f))
        return -1;
    if (n && buf[n - 1] == '\r')
        buf[--n] = '\0';
    return 1;
}

static int read_file(struct conf_reader *r, struct conf *c, FILE *f)
{
    char *line = xmalloc(CONF_LINE_MAX), *val = xmalloc(CONF_LINE_MAX);
    int rc = DC_OK, got;

    while (rc == DC_OK && (got = next_line(f, line, CONF_LINE_MAX)) != 0) {
        r->line++;
        if (got < 0)
            rc = file_error(r, "line longer than %d bytes", CONF_LINE_MAX - 2);
        else
            rc = read_line(r, c, line, val);
    }
    if (rc == DC_OK && ferror(f)) {
        conf__seterr(r->err, r->errlen, "%s: read error", r->path);
        rc = DC_EIO;
    }
    free(line);
    free(val);
    return rc;
}

int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen)
{
    struct conf_reader r = {path, 0, "", err, errlen};
    FILE *f;
    int rc;

    if (!c || !path)
        return missing(err, errlen, "config file name");
    f = fopen(path, "r");
    if (!f) {
        conf__seterr(err, errlen, "%s: %s", path, strerror(errno));
        return DC_EIO;
    }
    rc = read_file(&r, c, f);
    fclose(f);
    return rc;
}

void conf_foreach(const struct conf *c, conf_visit_fn fn, void *ud)
{
    char buf[CONF_NUMLEN];
    size_t i;

    for (i = 0; i < conf__nopts; i++) {
        const struct conf_opt *o = &conf__opts[i];

        fn(ud, o->name, conf__format(o, c, buf, sizeof(buf)), o->def, o->help);
    }
}

const char *conf_origin(const struct conf *c, const char *key, char *buf,
                        size_t cap)
{
    const struct conf_opt *o = conf__find(key, strlen(key));
    const struct conf_origin *from;
    char name[CONF_NAME_MAX + 8];

    if (!o)
        return NULL;
    from = &c->origin[o - conf__opts];
    switch (from->source) {
    case CONF_FROM_FILE:
        snprintf(buf, cap, "file:%s:%d", from->file, from->line);
        return buf;
    case CONF_FROM_ENV:
        env_name(o->name, name, sizeof(name));
        snprintf(buf, cap, "env:%s", name);
        return buf;
    case CONF_FROM_SET:
        return "--set";
    case CONF_FROM_OPTION:
        return "command line";
    default:
        return "default";
    }
}
