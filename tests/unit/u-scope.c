/*
 * u-scope.c: the scope rules (parser/scope.c) and Retry-After parsing, as
 * tables: each row a page, a link and the reason expected.
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "parser.h"
#include "t.h"

struct row {
    const char *mode, *include, *exclude, *suffixes;
    int max_repeat;
    const char *page, *url;
    int want;
};

#define SUF ".jpg .css .JS .tar.gz"

static const struct row rows[] = {
    /* suffixes: path only, case-insensitive, query ignored */
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/x.jpg", PARSER_SCOPE_SUFFIX},
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/X.JPG", PARSER_SCOPE_SUFFIX},
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/app.js?v=1", PARSER_SCOPE_SUFFIX},
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/f.tar.gz", PARSER_SCOPE_SUFFIX},
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/page?f=x.jpg", PARSER_SCOPE_IN},
    {"any", "", "", SUF, 3, "http://a.com/", "http://a.com/jpg", PARSER_SCOPE_IN},
    {"any", "", "", "", 3, "http://a.com/", "http://a.com/x.jpg", PARSER_SCOPE_IN},
    /* repeated segments */
    {"any", "", "", "", 3, "http://a.com/", "http://a.com/a/b/a/b/a/b", PARSER_SCOPE_IN},
    {"any", "", "", "", 3, "http://a.com/", "http://a.com/a/b/a/b/a/b/a/", PARSER_SCOPE_REPEATED},
    {"any", "", "", "", 3, "http://a.com/", "http://a.com/x/x/x/x", PARSER_SCOPE_REPEATED},
    {"any", "", "", "", 3, "http://a.com/", "http://a.com/x/x/x?x/x", PARSER_SCOPE_IN},
    {"any", "", "", "", 0, "http://a.com/", "http://a.com/x/x/x/x/x", PARSER_SCOPE_IN},
    {"any", "", "", "", 1, "http://a.com/", "http://a.com/x/y/x", PARSER_SCOPE_REPEATED},
    {"any", "", "", "", 1, "http://a.com/", "http://a.com/x/xx/y", PARSER_SCOPE_IN},
    /* host mode: host:port must match exactly */
    {"host", "", "", "", 3, "http://a.com/", "http://a.com/p", PARSER_SCOPE_IN},
    {"host", "", "", "", 3, "http://a.com/", "http://www.a.com/p", PARSER_SCOPE_OFF_HOST},
    {"host", "", "", "", 3, "http://a.com/", "http://a.com:8080/p", PARSER_SCOPE_OFF_HOST},
    {"host", "", "", "", 3, "http://a.com/", "https://a.com/p", PARSER_SCOPE_IN},
    {"host", "", "", "", 3, NULL, "http://b.com/p", PARSER_SCOPE_IN}, /* seed */
    /* domain mode: registrable domain from the public suffix list */
    {"domain", "", "", "", 3, "http://a.example.com/", "http://b.example.com/", PARSER_SCOPE_IN},
    {"domain", "", "", "", 3, "http://a.example.co.uk/", "http://b.c.example.co.uk/", PARSER_SCOPE_IN},
    {"domain", "", "", "", 3, "http://a.example.co.uk/", "http://example2.co.uk/", PARSER_SCOPE_OFF_DOMAIN},
    {"domain", "", "", "", 3, "http://x.github.io/", "http://y.github.io/", PARSER_SCOPE_OFF_DOMAIN},
    {"domain", "", "", "", 3, "http://127.0.0.1:81/", "http://127.0.0.1:82/", PARSER_SCOPE_IN},
    {"domain", "", "", "", 3, "http://127.0.0.1/", "http://127.0.0.2/", PARSER_SCOPE_OFF_DOMAIN},
    {"domain", "", "", "", 3, "http://a.com/", "http://a.com.evil.net/", PARSER_SCOPE_OFF_DOMAIN},
    /* include / exclude, on the canonical URL */
    {"any", "/docs/ /blog/", "", "", 3, "http://a.com/", "http://a.com/docs/x", PARSER_SCOPE_IN},
    {"any", "/docs/ /blog/", "", "", 3, "http://a.com/", "http://a.com/blog/", PARSER_SCOPE_IN},
    {"any", "/docs/ /blog/", "", "", 3, "http://a.com/", "http://a.com/shop/", PARSER_SCOPE_NOT_INCLUDED},
    {"any", "", "[?&]sort= ^https://", "", 3, "http://a.com/", "http://a.com/l?a=1&sort=d", PARSER_SCOPE_EXCLUDED},
    {"any", "", "[?&]sort= ^https://", "", 3, "http://a.com/", "https://a.com/", PARSER_SCOPE_EXCLUDED},
    {"any", "", "[?&]sort= ^https://", "", 3, "http://a.com/", "http://a.com/l?a=1", PARSER_SCOPE_IN},
    {"any", "/docs/", "private", "", 3, "http://a.com/", "http://a.com/docs/private", PARSER_SCOPE_EXCLUDED},
    /* order: suffix is reported before the others */
    {"host", "", "", SUF, 3, "http://a.com/", "http://b.com/x.css", PARSER_SCOPE_SUFFIX},
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        struct parser_scope_conf sc = {r->mode, r->include, r->exclude,
                                       r->suffixes, r->max_repeat};
        struct parser_scope *s = NULL;
        char err[256] = "";
        int rc = parser_scope_new(&s, &sc, err, sizeof(err)), got;
        CHECK(rc == DC_OK && s, "row %zu: new %d %s", i, rc, err);
        if (!s)
            continue;
        got = parser_scope_check(s, r->page, r->url);
        CHECK(got == r->want, "row %zu %s: got %s, want %s", i, r->url,
              parser_scope_reason(got), parser_scope_reason(r->want));
        parser_scope_free(&s);
        CHECK(s == NULL, "free NULLs the pointer");
    }
}

static void test_bad_conf(void)
{
    struct parser_scope_conf bad[] = {
        {"hosts", "", "", "", 3},
        {"any", "(", "", "", 3},
        {"any", "", "a[", "", 3},
        {"any", "ok", "x{2,1}", "", 3},
    };
    const char *key[] = {"scope.mode", "scope.include", "scope.exclude",
                         "scope.exclude"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct parser_scope *s = (struct parser_scope *)&bad[i];
        char err[256] = "";
        int rc = parser_scope_new(&s, &bad[i], err, sizeof(err));
        CHECK(rc == DC_ECONFIG && s == NULL, "bad %zu: rc %d", i, rc);
        CHECK(strstr(err, key[i]) != NULL, "bad %zu: message '%s'", i, err);
    }
    parser_scope_free(NULL);
}

static void test_domain(void)
{
    struct parser_scope_conf sc = {"domain", "", "", "", 0};
    struct parser_scope *s;
    char err[128], d[256];
    CHECK(parser_scope_new(&s, &sc, err, sizeof(err)) == DC_OK, "new");
    CHECK(parser_scope_domain(s, "http://a.b.example.co.uk:8080/x", d,
                              sizeof(d)) == DC_OK &&
              !strcmp(d, "example.co.uk"),
          "domain '%s'", d);
    CHECK(parser_scope_domain(s, "http://[::1]:8080/", d, sizeof(d)) == DC_OK &&
              !strcmp(d, "::1"),
          "ipv6 '%s'", d);
    CHECK(parser_scope_domain(s, "not a url", d, sizeof(d)) != DC_OK, "bad");
    CHECK(parser_scope_domain(s, "http://a.example.com/", d, 4) == DC_ETOOBIG,
          "small buffer");
    parser_scope_free(&s);
}

struct ra {
    const char *head;
    int rc;
    int64_t want_ms;
};

static void test_retry_after(void)
{
    /* now = Sun, 06 Nov 1994 08:49:37 GMT */
    const int64_t now = 784111777LL * 1000;
    static const struct ra rows_ra[] = {
        {"HTTP/1.1 503 x\r\nRetry-After: 2\r\n\r\n", DC_OK, 2000},
        {"HTTP/1.1 429 x\r\nretry-after:120\r\n\r\n", DC_OK, 120000},
        {"HTTP/1.1 503 x\r\nRetry-After: 0 \r\n\r\n", DC_OK, 0},
        {"HTTP/1.1 503 x\r\nRetry-After: 99999999999999999999\r\n\r\n", DC_OK,
         999999999000LL},
        {"HTTP/1.1 503 x\r\nRetry-After: Sun, 06 Nov 1994 08:49:47 GMT\r\n\r\n",
         DC_OK, 10000},
        {"HTTP/1.1 503 x\r\nRetry-After: Sunday, 06-Nov-94 08:50:37 GMT\r\n\r\n",
         DC_OK, 60000},
        {"HTTP/1.1 503 x\r\nRetry-After: Sun Nov  6 08:49:38 1994\r\n\r\n", DC_OK,
         1000},
        {"HTTP/1.1 503 x\r\nRetry-After: Sun, 06 Nov 1994 08:00:00 GMT\r\n\r\n",
         DC_OK, 0}, /* in the past */
        {"HTTP/1.1 503 x\r\nRetry-After: -5\r\n\r\n", DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nRetry-After: 1.5\r\n\r\n", DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nRetry-After: soon\r\n\r\n", DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nRetry-After: Sun, 36 Nov 1994 08:49:47 GMT\r\n\r\n",
         DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nRetry-After: Sun, 06 Foo 1994 08:49:47 GMT\r\n\r\n",
         DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nRetry-After:\r\n\r\n", DC_EPARSE, 0},
        {"HTTP/1.1 503 x\r\nX-Retry-After: 5\r\n\r\n", DC_ENOTFOUND, 0},
        {"", DC_ENOTFOUND, 0},
    };
    for (size_t i = 0; i < sizeof(rows_ra) / sizeof(rows_ra[0]); i++) {
        int64_t ms = -1;
        int rc = parser_retry_after(rows_ra[i].head, strlen(rows_ra[i].head),
                                    now, &ms);
        CHECK(rc == rows_ra[i].rc, "ra %zu: rc %d want %d", i, rc,
              rows_ra[i].rc);
        if (rc == DC_OK)
            CHECK(ms == rows_ra[i].want_ms, "ra %zu: %lld ms want %lld", i,
                  (long long)ms, (long long)rows_ra[i].want_ms);
    }
}

int main(void)
{
    test_rows();
    test_bad_conf();
    test_domain();
    test_retry_after();
    return t_done("u-scope");
}
