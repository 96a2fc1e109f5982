/*
 * scope.c: which links a crawl follows (scope.* settings) and the small
 * HTTP facts politeness needs (Retry-After).
 *
 * A link is checked, in this order, against: the skip suffixes (a
 * non-page resource), the repeated path segment limit (a trap), the
 * host/domain mode, then the include and exclude expressions. The first
 * rule that rejects it names the reason (enum parser_scope_reason), so
 * the crawl summary can count drops per reason. The per-host budget is
 * not here: it must hold across nodes, so the frontier counts it in Redis.
 *
 * Registrable domains come from libpsl's built-in public suffix list
 * (psl_builtin()); an IP-address host is its own domain.
 *
 * Thread rules: a struct parser_scope is read-only after parser_scope_new;
 * parser_scope_check may run from many threads at once (regexec on a
 * compiled regex_t and the built-in PSL are both read-only).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libpsl.h>

#include "conf.h"
#include "parser.h"

#define SCOPE_MAX_SEGMENTS 256

struct parser_scope {
    int mode;
    regex_t *inc, *exc;
    size_t ninc, nexc;
    char **suffix;
    size_t *suffix_len;
    size_t nsuffix;
    int max_repeat;
    const psl_ctx_t *psl;
};

static const char *const reasons[] = {
    "in scope", "suffix", "repeated segments", "off host", "off domain",
    "not included", "excluded",
};
_Static_assert(sizeof(reasons) / sizeof(reasons[0]) == PARSER_SCOPE_NREASONS,
               "one name per enum parser_scope_reason");

const char *parser_scope_reason(int reason)
{
    if (reason < 0 || reason >= PARSER_SCOPE_NREASONS)
        return "unknown";
    return reasons[reason];
}

/* Split s at spaces into a fresh array of words (*n of them). */
static char **split_words(const char *s, size_t *n)
{
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    while (s && *s) {
        size_t len;
        while (*s == ' ' || *s == '\t')
            s++;
        len = strcspn(s, " \t");
        if (!len)
            break;
        xgrow((void **)&v, &cap, *n + 1, sizeof(*v));
        v[(*n)++] = xstrndup(s, len);
        s += len;
    }
    return v;
}

static void words_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Compile the space-separated EREs of src into *out. */
static int compile_list(const char *key, const char *src, regex_t **out,
                        size_t *nout, char *err, size_t errlen)
{
    size_t n, i;
    char **w = split_words(src, &n);
    int rc = DC_OK;
    *out = n ? xcalloc(n, sizeof(regex_t)) : NULL;
    *nout = 0;
    for (i = 0; i < n; i++) {
        int r = regcomp(&(*out)[i], w[i], REG_EXTENDED | REG_NOSUB);
        if (r) {
            char msg[128];
            regerror(r, &(*out)[i], msg, sizeof(msg));
            snprintf(err, errlen, "%s: bad regular expression '%s': %s", key,
                     w[i], msg);
            rc = DC_ECONFIG;
            break;
        }
        (*nout)++;
    }
    words_free(w, n);
    return rc;
}

int parser_scope_mode(const char *name, int *mode)
{
    static const char *const names[] = {"any", "host", "domain"};
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, names[i])) {
            *mode = i;
            return DC_OK;
        }
    return DC_EINVAL;
}

int parser_scope_new(struct parser_scope **out,
                     const struct parser_scope_conf *sc, char *err,
                     size_t errlen)
{
    struct parser_scope *s = xcalloc(1, sizeof(*s));
    int rc;
    *out = NULL;
    if (parser_scope_mode(sc->mode, &s->mode)) {
        snprintf(err, errlen, "scope.mode: '%s' is not any, host or domain",
                 sc->mode ? sc->mode : "");
        parser_scope_free(&s);
        return DC_ECONFIG;
    }
    rc = compile_list("scope.include", sc->include, &s->inc, &s->ninc, err,
                      errlen);
    if (!rc)
        rc = compile_list("scope.exclude", sc->exclude, &s->exc, &s->nexc,
                          err, errlen);
    if (rc) {
        parser_scope_free(&s);
        return rc;
    }
    s->suffix = split_words(sc->skip_suffixes, &s->nsuffix);
    s->suffix_len = xcalloc(s->nsuffix + 1, sizeof(*s->suffix_len));
    for (size_t i = 0; i < s->nsuffix; i++)
        s->suffix_len[i] = strlen(s->suffix[i]);
    s->max_repeat = sc->max_repeated_segments;
    s->psl = psl_builtin();
    *out = s;
    return DC_OK;
}

void parser_scope_free(struct parser_scope **sp)
{
    struct parser_scope *s = sp ? *sp : NULL;
    size_t i;
    if (!s)
        return;
    for (i = 0; i < s->ninc; i++)
        regfree(&s->inc[i]);
    for (i = 0; i < s->nexc; i++)
        regfree(&s->exc[i]);
    free(s->inc);
    free(s->exc);
    words_free(s->suffix, s->nsuffix);
    free(s->suffix_len);
    free(s);
    *sp = NULL;
}

/* Length of the path part of path+query p (up to '?'). */
static size_t path_len(const char *p)
{
    return strcspn(p, "?");
}

static int has_skip_suffix(const struct parser_scope *s, const char *p,
                           size_t len)
{
    for (size_t i = 0; i < s->nsuffix; i++) {
        size_t l = s->suffix_len[i];
        if (l && l <= len && !strncasecmp(p + len - l, s->suffix[i], l))
            return 1;
    }
    return 0;
}

/* Does one non-empty segment of path p (len bytes) occur more than max
 * times? Only the first SCOPE_MAX_SEGMENTS segments are compared. */
int parser_scope_repeated(const char *p, size_t len, int max)
{
    const char *seg[SCOPE_MAX_SEGMENTS];
    size_t slen[SCOPE_MAX_SEGMENTS], n = 0, i = 0;
    if (max <= 0)
        return 0;
    while (i < len && n < SCOPE_MAX_SEGMENTS) {
        size_t l;
        while (i < len && p[i] == '/')
            i++;
        for (l = 0; i + l < len && p[i + l] != '/'; l++)
            ;
        if (!l)
            break;
        seg[n] = p + i;
        slen[n++] = l;
        i += l;
    }
    for (i = 0; i < n; i++) {
        int count = 1;
        for (size_t j = i + 1; j < n; j++)
            if (slen[j] == slen[i] && !memcmp(seg[j], seg[i], slen[i]))
                count++;
        if (count > max)
            return 1;
    }
    return 0;
}

/* Host part of a canonical URL's host key, without port or brackets. */
static int host_name(const char *url, char *out, size_t cap)
{
    const char *h, *end;
    size_t hl;
    if (parser_url_host(url, &h, &hl))
        return DC_EURL;
    end = h + hl;
    if (*h == '[') {
        const char *rb = memchr(h, ']', hl);
        if (!rb)
            return DC_EURL;
        h++;
        end = rb;
    } else {
        const char *colon = memchr(h, ':', hl);
        if (colon)
            end = colon;
    }
    if ((size_t)(end - h) >= cap)
        return DC_ETOOBIG;
    memcpy(out, h, (size_t)(end - h));
    out[end - h] = '\0';
    return DC_OK;
}

static int is_ip(const char *h)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

int parser_scope_domain(const struct parser_scope *s, const char *url,
                        char *out, size_t cap)
{
    char h[512];
    const char *d;
    int rc = host_name(url, h, sizeof(h));
    if (rc)
        return rc;
    d = is_ip(h) ? NULL : psl_registrable_domain(s->psl, h);
    if (!d)
        d = h; /* an IP, or a host that is itself a public suffix */
    if (strlen(d) >= cap)
        return DC_ETOOBIG;
    snprintf(out, cap, "%s", d);
    return DC_OK;
}

static int same_host(const char *a, const char *b)
{
    const char *ha, *hb;
    size_t la, lb;
    if (parser_url_host(a, &ha, &la) || parser_url_host(b, &hb, &lb))
        return 0;
    return la == lb && !memcmp(ha, hb, la);
}

static int same_domain(const struct parser_scope *s, const char *a,
                       const char *b)
{
    char da[512], db[512];
    if (parser_scope_domain(s, a, da, sizeof(da)) ||
        parser_scope_domain(s, b, db, sizeof(db)))
        return 0;
    return !strcmp(da, db);
}

static int any_match(const regex_t *re, size_t n, const char *url)
{
    for (size_t i = 0; i < n; i++)
        if (regexec(&re[i], url, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

int parser_scope_check(const struct parser_scope *s, const char *page_url,
                       const char *url)
{
    const char *p = parser_url_path(url);
    size_t plen;
    if (!p)
        return PARSER_SCOPE_EXCLUDED;
    plen = path_len(p);
    if (has_skip_suffix(s, p, plen))
        return PARSER_SCOPE_SUFFIX;
    if (parser_scope_repeated(p, plen, s->max_repeat))
        return PARSER_SCOPE_REPEATED;
    if (page_url && s->mode == PARSER_SCOPE_MODE_HOST &&
        !same_host(page_url, url))
        return PARSER_SCOPE_OFF_HOST;
    if (page_url && s->mode == PARSER_SCOPE_MODE_DOMAIN &&
        !same_domain(s, page_url, url))
        return PARSER_SCOPE_OFF_DOMAIN;
    if (s->ninc && !any_match(s->inc, s->ninc, url))
        return PARSER_SCOPE_NOT_INCLUDED;
    if (any_match(s->exc, s->nexc, url))
        return PARSER_SCOPE_EXCLUDED;
    return PARSER_SCOPE_IN;
}

/* ---------------------------------------------------------- Retry-After */

static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr",
                                       "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"};

static int month_of(const char *m)
{
    for (int i = 0; i < 12; i++)
        if (!strncmp(m, months[i], 3))
            return i;
    return -1;
}

/* HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 or asctime form, to
 * seconds since the epoch. DC_EPARSE when it is none of them. */
int parser_http_date(const char *v, int64_t *secs)
{
    struct tm tm;
    char mon[4] = "", wk[16] = "";
    int d, y, hh, mm, ss, n = 0;
    time_t t;
    memset(&tm, 0, sizeof(tm));
    if (sscanf(v, "%15[A-Za-z], %2d %3s %4d %2d:%2d:%2d GMT%n", wk, &d, mon,
               &y, &hh, &mm, &ss, &n) == 7 && n) {
        /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
    } else if (sscanf(v, "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d GMT%n", wk, &d,
                      mon, &y, &hh, &mm, &ss, &n) == 7 && n) {
        y += y < 70 ? 2000 : 1900; /* RFC 850: Sunday, 06-Nov-94 ... */
    } else if (sscanf(v, "%15[A-Za-z] %3s %2d %2d:%2d:%2d %4d%n", wk, mon, &d,
                      &hh, &mm, &ss, &y, &n) == 7 && n) {
        /* asctime: Sun Nov  6 08:49:37 1994 */
    } else {
        return DC_EPARSE;
    }
    tm.tm_mon = month_of(mon);
    if (tm.tm_mon < 0 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60 ||
        y < 1970 || y > 9999 || hh < 0 || mm < 0 || ss < 0)
        return DC_EPARSE;
    tm.tm_mday = d;
    tm.tm_year = y - 1900;
    tm.tm_hour = hh;
    tm.tm_min = mm;
    tm.tm_sec = ss;
    t = timegm(&tm);
    if (t == (time_t)-1)
        return DC_EPARSE;
    *secs = (int64_t)t;
    return DC_OK;
}

/* The value of header `name` in a header block, trimmed, into out. */
static int header_value(const char *head, size_t len, const char *name,
                        char *out, size_t cap)
{
    size_t nl = strlen(name), i = 0;
    while (i < len) {
        const char *line = head + i;
        const char *eol = memchr(line, '\n', len - i);
        size_t ll = eol ? (size_t)(eol - line) : len - i;
        if (ll > nl && line[nl] == ':' && !strncasecmp(line, name, nl)) {
            const char *v = line + nl + 1, *e = line + ll;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && isspace((unsigned char)e[-1]))
                e--;
            if ((size_t)(e - v) >= cap)
                return DC_ETOOBIG;
            memcpy(out, v, (size_t)(e - v));
            out[e - v] = '\0';
            return DC_OK;
        }
        i += ll + 1;
    }
    return DC_ENOTFOUND;
}

int parser_retry_after(const char *head, size_t len, int64_t now_ms,
                       int64_t *delay_ms)
{
    char v[128];
    int64_t secs;
    int rc = header_value(head, len, "Retry-After", v, sizeof(v));
    if (rc)
        return rc == DC_ENOTFOUND ? rc : DC_EPARSE;
    if (v[0] >= '0' && v[0] <= '9' && strspn(v, "0123456789") == strlen(v)) {
        if (strlen(v) > 9) /* beyond any cap: clamp, do not overflow */
            secs = 999999999;
        else
            secs = atoll(v);
        *delay_ms = secs * 1000;
        return DC_OK;
    }
    rc = parser_http_date(v, &secs);
    if (rc)
        return rc;
    *delay_ms = secs * 1000 - now_ms;
    if (*delay_ms < 0)
        *delay_ms = 0;
    return DC_OK;
}
