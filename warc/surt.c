/*
 * surt.c: SURT keys for the CDXJ index (warc_surt), the form pywb sorts
 * and looks up its index by: "com,example)/a?b=1".
 *
 * Steps: scheme and "www." dropped, host labels reversed and comma-joined
 * (an IP address is kept as it is), default port dropped, lower-cased,
 * query arguments sorted, fragment dropped. The output is truncated to the
 * caller's buffer but the needed length is always returned. Reentrant.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "warc.h"

struct sbuf {
    char *out;
    size_t cap, n;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, b->n++) {
        if (b->n + 1 < b->cap) {
            char c = s[i];
            b->out[b->n] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
        }
    }
    if (b->cap)
        b->out[b->n < b->cap ? b->n : b->cap - 1] = '\0';
}

/* host[0..n) reversed by labels, comma-joined, without a "www" label. */
static void surt_host(struct sbuf *b, const char *host, size_t n)
{
    size_t end = n, first = 1;

    if (n > 4 && strncasecmp(host, "www.", 4) == 0) {
        host += 4;
        end = n - 4;
    }
    while (end > 0) {
        size_t start = end;
        while (start > 0 && host[start - 1] != '.')
            start--;
        if (!first)
            sb_add(b, ",", 1);
        first = 0;
        sb_add(b, host + start, end - start);
        end = start ? start - 1 : 0;
    }
}

static int cmp_arg(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = strcspn(x, "&"), ly = strcspn(y, "&");
    int c = strncmp(x, y, lx < ly ? lx : ly);

    return c ? c : (lx > ly) - (lx < ly);
}

/* The query's arguments in sorted order. */
static void surt_query(struct sbuf *b, const char *q, size_t n)
{
    char *copy = xstrndup(q, n);
    const char **arg = xmalloc((n + 1) * sizeof(*arg));
    size_t na = 0, first = 1;

    for (char *p = copy;; p++) {
        arg[na++] = p;
        p += strcspn(p, "&");
        if (!*p)
            break;
    }
    qsort(arg, na, sizeof(*arg), cmp_arg);
    sb_add(b, "?", 1);
    for (size_t i = 0; i < na; i++) {
        size_t l = strcspn(arg[i], "&");
        if (!l)
            continue;
        if (!first)
            sb_add(b, "&", 1);
        first = 0;
        sb_add(b, arg[i], l);
    }
    free(arg);
    free(copy);
}

size_t warc_surt(const char *url, char *out, size_t cap)
{
    struct sbuf b = { out, cap, 0 };
    const char *p = strstr(url, "://"), *auth, *host_end, *path;
    size_t alen, hlen;
    int https;

    if (cap)
        out[0] = '\0';
    if (!p) {
        sb_add(&b, url, strcspn(url, "#"));
        return b.n;
    }
    https = (size_t)(p - url) == 5 && strncasecmp(url, "https", 5) == 0;
    auth = p + 3;
    alen = strcspn(auth, "/?#");
    path = auth + alen;
    if (memchr(auth, '@', alen)) { /* drop user info */
        const char *at = auth;
        while (memchr(at, '@', alen - (size_t)(at - auth)))
            at = (const char *)memchr(at, '@', alen - (size_t)(at - auth)) + 1;
        alen -= (size_t)(at - auth);
        auth = at;
    }
    host_end = auth + alen;
    for (const char *c = auth + alen; c > auth && c[-1] != ']'; c--)
        if (c[-1] == ':') {
            host_end = c - 1;
            break;
        }
    hlen = (size_t)(host_end - auth);
    if ((hlen && auth[0] == '[') || strspn(auth, "0123456789.") >= hlen)
        sb_add(&b, auth, hlen);
    else
        surt_host(&b, auth, hlen);
    if (host_end < auth + alen) {
        const char *port = host_end + 1;
        size_t pl = (size_t)(auth + alen - port);
        if (!(pl == 2 && !https && !strncmp(port, "80", 2)) &&
            !(pl == 3 && https && !strncmp(port, "443", 3)) && pl) {
            sb_add(&b, ":", 1);
            sb_add(&b, port, pl);
        }
    }
    sb_add(&b, ")", 1);
    {
        size_t plen = strcspn(path, "?#");
        if (!plen)
            sb_add(&b, "/", 1);
        sb_add(&b, path, plen);
        if (path[plen] == '?') {
            const char *q = path + plen + 1;
            size_t ql = strcspn(q, "#");
            if (ql)
                surt_query(&b, q, ql);
        }
    }
    return b.n;
}
