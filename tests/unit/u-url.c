/*
 * u-url.c: URL resolution and canonicalization (parser/url.c).
 *
 *  1. A hand-written table: (base, ref, flags) -> expected URL or error.
 *  2. WHATWG conformance: urltestdata.json cases with an http(s) or null
 *     base. Expected = the case's href, fragment cut, then percent-
 *     normalized by norm_expected() below (written independently of url.c).
 *     Failure cases whose input is http(s) must be rejected. Known failures
 *     are listed, with reasons, in url-known-failures.txt; an unlisted
 *     failure and a listed case that now passes both fail the test.
 *  3. crawler-commons and Nutch normalizer vectors: pass counts printed,
 *     informational only (their policies differ from ours).
 *  4. Robustness: 200k mutated inputs; no crash, outputs bounded, and every
 *     accepted output is a fixed point.
 *  5. Fast path = slow path: every input above (WHATWG, normalizer cases,
 *     the table) and 1,200,000 generated URLs of varied shapes (fixed seed)
 *     go through the fast path alone, the full parser alone and the public
 *     function, with and without index.html stripping and with output
 *     limits that cut some; whenever the fast path answers, its result
 *     is byte-identical to the full parser's, and the public function
 *     always equals the full parser. The fast path must take a fair share
 *     of the generated URLs (so the comparison is not vacuous) and must
 *     decline the unusual ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "parser.h"
#include "parser-internal.h"
#include "t.h"
#include "tjson.h"

#define BASE "http://127.0.1.5:8080/docs/a.html"
#define SI PARSER_URL_STRIP_INDEX
#define OUTCAP (PARSER_URL_MAX + 1)

struct row {
    const char *base;
    const char *ref;
    unsigned flags;
    const char *want; /* NULL: expect error `err` */
    int err;
};

static const struct row rows[] = {
    /* the test site's variants of one page */
    { BASE, "HTTP://127.0.1.5:8080/docs/x.html", 0, "http://127.0.1.5:8080/docs/x.html", 0 },
    { BASE, "/docs/%61bc-1.html", 0, "http://127.0.1.5:8080/docs/abc-1.html", 0 },
    { BASE, "./a/../b.html", 0, "http://127.0.1.5:8080/docs/b.html", 0 },
    { BASE, "/docs/./a/../b.html", 0, "http://127.0.1.5:8080/docs/b.html", 0 },
    { BASE, "x.html#frag", 0, "http://127.0.1.5:8080/docs/x.html", 0 },
    { BASE, "/news/index.html", SI, "http://127.0.1.5:8080/news/", 0 },
    { BASE, "/news/index.html", 0, "http://127.0.1.5:8080/news/index.html", 0 },
    { BASE, "/news/index.html?p=2", SI, "http://127.0.1.5:8080/news/?p=2", 0 },
    { BASE, "/news/xindex.html", SI, "http://127.0.1.5:8080/news/xindex.html", 0 },
    { BASE, "/index.html", SI, "http://127.0.1.5:8080/", 0 },
    { BASE, "/news/%69ndex.html", SI, "http://127.0.1.5:8080/news/", 0 },
    { NULL, "http://Example.COM:80", 0, "http://example.com/", 0 },
    { NULL, "https://h:443/p", 0, "https://h/p", 0 },
    { NULL, "https://h:80/p", 0, "https://h:80/p", 0 },
    { NULL, "http://h:443/p", 0, "http://h:443/p", 0 },
    { NULL, "http://h:0080/", 0, "http://h/", 0 },
    { NULL, "http://h:/", 0, "http://h/", 0 },
    { NULL, "http://h:65535/", 0, "http://h:65535/", 0 },
    /* relative forms */
    { BASE, "", 0, BASE, 0 },
    { BASE, "#top", 0, BASE, 0 },
    { BASE, "?q=1", 0, "http://127.0.1.5:8080/docs/a.html?q=1", 0 },
    { "http://h/a/b?x=1", "", 0, "http://h/a/b?x=1", 0 },
    { "http://h/a/b?x=1", "#f", 0, "http://h/a/b?x=1", 0 },
    { "http://h/a/b?x=1", "c", 0, "http://h/a/c", 0 },
    { "http://h/a/b", "//other/p", 0, "http://other/p", 0 },
    { "https://h/a/b", "//other:443/p", 0, "https://other/p", 0 },
    { "http://h/a/b", "\\\\other\\p\\q", 0, "http://other/p/q", 0 },
    { "http://h/a/b", "/x/y", 0, "http://h/x/y", 0 },
    { "http://h/a/b", "\\x", 0, "http://h/x", 0 },
    { "http://h/a/b/c", "../../../../x", 0, "http://h/x", 0 },
    { "http://h/a/b/c", "..", 0, "http://h/a/", 0 },
    { "http://h/a/b/c", ".", 0, "http://h/a/b/", 0 },
    { "http://h/a/b/c", "%2e%2E/d", 0, "http://h/a/d", 0 },
    { "http://h/a/b/c", ".%2e/d", 0, "http://h/a/d", 0 },
    { "http://h/a/b/c", "x/%2e/y", 0, "http://h/a/b/x/y", 0 },
    { "http://h/a/b/c", "...", 0, "http://h/a/b/...", 0 },
    { "http://h/a/b", "http:c", 0, "http://h/a/c", 0 },
    { "http://h/a/b", "http:/c", 0, "http://h/c", 0 },
    { "http://h/a/b", "http://c", 0, "http://c/", 0 },
    { "http://h/a/b", "https:c", 0, "https://c/", 0 },
    { "http://u:p@h:81/a", "b", 0, "http://u:p@h:81/b", 0 },
    { NULL, "  \t http://h/a\tb\nc\r  ", 0, "http://h/abc", 0 },
    { NULL, "\x01http://h/\x1f", 0, "http://h/", 0 },
    { NULL, "http:h/p", 0, "http://h/p", 0 },
    { NULL, "http:\\\\h\\p", 0, "http://h/p", 0 },
    { NULL, "http:///h/p", 0, "http://h/p", 0 },
    /* userinfo */
    { NULL, "http://user:pass@H/", 0, "http://user:pass@h/", 0 },
    { NULL, "http://user:@h/", 0, "http://user@h/", 0 },
    { NULL, "http://:pass@h/", 0, "http://:pass@h/", 0 },
    { NULL, "http://@h/", 0, "http://h/", 0 },
    { NULL, "http://a@b@h/", 0, "http://a%40b@h/", 0 },
    { NULL, "http://a:b:c@h/", 0, "http://a:b%3Ac@h/", 0 },
    /* hosts */
    { NULL, "http://EXAMPLE.com./", 0, "http://example.com./", 0 },
    { NULL, "http://ex%41mple.com/", 0, "http://example.com/", 0 },
    { NULL, "http://a_b-c~d/", 0, "http://a_b-c~d/", 0 },
    { NULL, "http://192.168.0.1/", 0, "http://192.168.0.1/", 0 },
    { NULL, "http://0xC0.0250.0.1/", 0, "http://192.168.0.1/", 0 },
    { NULL, "http://3232235521/", 0, "http://192.168.0.1/", 0 },
    { NULL, "http://192.168.1/", 0, "http://192.168.0.1/", 0 },
    { NULL, "http://192.11010049/", 0, "http://192.168.0.1/", 0 },
    { NULL, "http://0x7f.1/", 0, "http://127.0.0.1/", 0 },
    { NULL, "http://1.2.3.4./", 0, "http://1.2.3.4/", 0 },
    { NULL, "http://0x/", 0, "http://0.0.0.0/", 0 },
    { NULL, "http://%31%32%37.0.0.1/", 0, "http://127.0.0.1/", 0 },
    { NULL, "http://4294967295/", 0, "http://255.255.255.255/", 0 },
    { NULL, "http://1.2.3.09/", 0, NULL, DC_EURL },
    { NULL, "http://4294967296/", 0, NULL, DC_EURL },
    { NULL, "http://256.0.0.1/", 0, NULL, DC_EURL },
    { NULL, "http://1.2.3.4.5/", 0, NULL, DC_EURL },
    { NULL, "http://1.2.3.0x1g/", 0, "http://1.2.3.0x1g/", 0 },
    { NULL, "http://a.1/", 0, NULL, DC_EURL },
    { NULL, "http://[::1]/", 0, "http://[::1]/", 0 },
    { NULL, "http://[0:0:0:0:0:0:0:1]:8080/", 0, "http://[::1]:8080/", 0 },
    { NULL, "http://[2001:DB8:0:0:1:0:0:1]/", 0, "http://[2001:db8::1:0:0:1]/", 0 },
    { NULL, "http://[2001:db8:0:0:0:0:2:1]/", 0, "http://[2001:db8::2:1]/", 0 },
    { NULL, "http://[1:0:0:2::3:0]/", 0, "http://[1::2:0:0:3:0]/", 0 },
    { NULL, "http://[::ffff:192.168.0.1]/", 0, "http://[::ffff:c0a8:1]/", 0 },
    { NULL, "http://[::]/", 0, "http://[::]/", 0 },
    { NULL, "http://[1:2:3:4:5:6:7:8]/", 0, "http://[1:2:3:4:5:6:7:8]/", 0 },
    { NULL, "http://[0001:0:1:0:0:0:0:0]/", 0, "http://[1:0:1::]/", 0 },
    { NULL, "http://[::1:2:3:4:5:6:7:8]/", 0, NULL, DC_EURL },
    { NULL, "http://[1::2::3]/", 0, NULL, DC_EURL },
    { NULL, "http://[::1.2.3.04]/", 0, NULL, DC_EURL },
    { NULL, "http://[12345::]/", 0, NULL, DC_EURL },
    { NULL, "http://[::1/", 0, NULL, DC_EURL },
    { NULL, "http://[::1]x/", 0, NULL, DC_EURL },
    /* path and query encoding, percent normalization */
    { NULL, "http://h/a b\"<>`{}^", 0, "http://h/a%20b%22%3C%3E%60%7B%7D%5E", 0 },
    { NULL, "http://h/?a b\"'<>`{}", 0, "http://h/?a%20b%22%27%3C%3E`{}", 0 },
    { NULL, "http://h/%7euser/%2fx%2F%3a", 0, "http://h/~user/%2Fx%2F%3A", 0 },
    { NULL, "http://h/?q=%7e%41%2d%5f%2e%3d%26", 0, "http://h/?q=~A-_.%3D%26", 0 },
    /* a '%' that starts no %XX is written %25 (WHATWG keeps it bare) */
    { NULL, "http://h/%zz%4", 0, "http://h/%25zz%254", 0 },
    { NULL, "http://h/%%34%31", 0, "http://h/%2541", 0 },
    { NULL, "http://h/%4%31", 0, "http://h/%2541", 0 },
    { NULL, "http://h/%%2e", 0, "http://h/%25.", 0 },
    { "http://h/yap/a.html", "operator%.html", 0, "http://h/yap/operator%25.html", 0 },
    { NULL, "http://h/s?q=foobar%", 0, "http://h/s?q=foobar%25", 0 },
    { NULL, "http://u%:p%@h/", 0, "http://u%25:p%25@h/", 0 },
    { NULL, "http://h/caf\xc3\xa9", 0, "http://h/caf%C3%A9", 0 },
    { NULL, "http://h/a%00b", 0, "http://h/a%00b", 0 },
    { NULL, "http://h/?", 0, "http://h/?", 0 },
    { NULL, "http://h?x", 0, "http://h/?x", 0 },
    { NULL, "http://h#x", 0, "http://h/", 0 },
    /* rejections */
    { NULL, "javascript:alert(1)", 0, NULL, DC_EURL },
    { BASE, "javascript:void(0)", 0, NULL, DC_EURL },
    { BASE, "mailto:a@b.c", 0, NULL, DC_EURL },
    { BASE, "ftp://h/f", 0, NULL, DC_EURL },
    { BASE, "file:///etc/passwd", 0, NULL, DC_EURL },
    { BASE, "data:text/html,x", 0, NULL, DC_EURL },
    { NULL, "/relative/no/base", 0, NULL, DC_EURL },
    { NULL, "", 0, NULL, DC_EURL },
    { NULL, "http://", 0, NULL, DC_EURL },
    { NULL, "http:", 0, NULL, DC_EURL },
    { NULL, "http://h:99999/", 0, NULL, DC_EURL },
    { NULL, "http://h:65536/", 0, NULL, DC_EURL },
    { NULL, "http://h:8o/", 0, NULL, DC_EURL },
    { NULL, "http://:80/", 0, NULL, DC_EURL },
    { NULL, "http://u@/", 0, NULL, DC_EURL },
    { NULL, "http://a b/", 0, NULL, DC_EURL },
    { NULL, "http://a<b/", 0, NULL, DC_EURL },
    { NULL, "http://a%25b/", 0, NULL, DC_EURL },
    { NULL, "http://a%00b/", 0, NULL, DC_EURL },
    { NULL, "http://a^b/", 0, NULL, DC_EURL },
    { NULL, "http://CAF\xc3\xa9.example/", 0, "http://xn--caf-dma.example/", 0 },
    { NULL, "http://b\xc3\xbc" "cher.de/", 0, "http://xn--bcher-kva.de/", 0 },
    { NULL, "http://\xe4\xbe\x8b\xe5\xad\x90.\xe6\xb5\x8b\xe8\xaf\x95/", 0, "http://xn--fsqu00a.xn--0zwm56d/", 0 },
    { NULL, "http://\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80.\xd0\xb8\xd1\x81\xd0\xbf\xd1\x8b\xd1\x82\xd0\xb0\xd0\xbd\xd0\xb8\xd0\xb5/", 0, "http://xn--e1afmkfd.xn--80akhbyknj4f/", 0 },
    { NULL, "http://CAF\xc3\x89.example/", 0, NULL, DC_EURL }, /* needs mapping */
    { NULL, "http://a\xe2\x80\x8b" "b/", 0, NULL, DC_EURL },     /* U+200B */
    { NULL, "http://a\xc3/", 0, NULL, DC_EURL },               /* bad UTF-8 */
    { NULL, "http://a%C3%A9/", 0, "http://xn--a-bga/", 0 },
};

/* ------------------------------------------------------------ part 1 */

static void test_table(void)
{
    char out[OUTCAP];
    size_t i, n;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        int rc = parser_url_canon(r->base, r->ref, strlen(r->ref), r->flags,
                                  PARSER_URL_MAX, out, sizeof(out), &n);
        if (r->want)
            CHECK(rc == DC_OK && n == strlen(out) &&
                      strcmp(out, r->want) == 0,
                  "row %zu %s: rc %d got '%s' want '%s'", i, r->ref, rc,
                  rc ? "" : out, r->want);
        else
            CHECK(rc == r->err, "row %zu %s: rc %d want %d (out '%s')", i,
                  r->ref, rc, r->err, rc ? "" : out);
    }
}

/* Length limits and the host/path accessors. */
static void test_limits(void)
{
    char out[OUTCAP], big[PARSER_URL_MAX + 64];
    const char *u = "http://h/abcdef", *host;
    size_t n, hl;

    CHECK(parser_url_canon(NULL, u, strlen(u), 0, 15, out, 16, &n) == DC_OK &&
              n == 15, "exact fit");
    CHECK(parser_url_canon(NULL, u, strlen(u), 0, 14, out, sizeof(out), &n) ==
              DC_ETOOBIG, "max_len");
    CHECK(parser_url_canon(NULL, u, strlen(u), 0, 100, out, 15, &n) ==
              DC_ETOOBIG, "cap");
    CHECK(parser_url_canon(NULL, u, strlen(u), 0, 100, out, 0, &n) ==
              DC_ETOOBIG, "cap 0");
    memcpy(big, "http://h/", 9);
    memset(big + 9, 'a', sizeof(big) - 9);
    CHECK(parser_url_canon(NULL, big, sizeof(big), 0, PARSER_URL_MAX, out,
                           sizeof(out), &n) == DC_ETOOBIG, "overlong");
    CHECK(parser_url_canon(NULL, big, PARSER_URL_MAX, 0, PARSER_URL_MAX, out,
                           sizeof(out), &n) == DC_OK && n == PARSER_URL_MAX,
          "PARSER_URL_MAX fits");
    CHECK(parser_url_canon(NULL, NULL, 0, 0, 10, out, sizeof(out), &n) ==
              DC_EINVAL, "NULL ref");

    CHECK(parser_url_host("http://u:p@Ex.com:81/x?y", &host, &hl) == DC_OK &&
              hl == 9 && memcmp(host, "Ex.com:81", 9) == 0, "host+port");
    CHECK(parser_url_host("https://[::1]/", &host, &hl) == DC_OK && hl == 5 &&
              memcmp(host, "[::1]", 5) == 0, "host v6");
    CHECK(parser_url_host("ftp://h/", &host, &hl) == DC_EURL, "host ftp");
    CHECK(parser_url_host("http://h", &host, &hl) == DC_EURL, "host no path");
    CHECK(parser_url_host("http:///x", &host, &hl) == DC_EURL, "host empty");
    CHECK(parser_url_path("http://u@h:1/a/b?c=/d") != NULL &&
              strcmp(parser_url_path("http://u@h:1/a/b?c=/d"), "/a/b?c=/d") == 0,
          "path");
    CHECK(parser_url_path("mailto:x/y") == NULL, "path non-http");
}

/* ------------------------------------------------------------ part 2 */

static int is_unres(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

static int hexv(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Expected canonical form of a WHATWG href: drop the fragment, upper-case
 * %xx, decode %xx of unreserved characters, empty path -> "/". */
static void norm_expected(const char *href, char *out, size_t cap)
{
    const char *s = href;
    size_t o = 0;
    char *p;

    while (*s && *s != '#' && o + 4 < cap) {
        int a = s[0] == '%' ? hexv((unsigned char)s[1]) : -1;
        int b = a >= 0 ? hexv((unsigned char)s[2]) : -1;
        if (b >= 0 && is_unres(a * 16 + b)) {
            out[o++] = (char)(a * 16 + b);
        } else if (b >= 0) {
            out[o++] = '%';
            out[o++] = "0123456789ABCDEF"[a];
            out[o++] = "0123456789ABCDEF"[b];
        } else if (s[0] == '%') { /* starts no %XX: %25 */
            memcpy(out + o, "%25", 3);
            o += 3;
            s -= 2;
        } else {
            out[o++] = *s;
            s -= 2;
        }
        s += 3;
    }
    out[o] = '\0';
    p = strstr(out, "://");
    if (p && !strpbrk(p + 3, "/?"))
        strcat(out, "/");
}

struct known {
    struct tj *inputs[64];
    size_t n;
    int failed[64]; /* a case with this input failed this run */
};

/* url-known-failures.txt: a JSON string per line, then "# reason". */
static void known_load(struct known *k, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];

    k->n = 0;
    CHECK(f != NULL, "cannot open %s", path);
    while (f && fgets(line, sizeof(line), f) && k->n < 64) {
        char *end;
        if (line[0] != '"')
            continue;
        end = strstr(line, "\"  #");
        CHECK(end != NULL, "bad known-failure line: %s", line);
        if (!end)
            continue;
        k->inputs[k->n] = tj_parse(line, (size_t)(end + 1 - line));
        CHECK(k->inputs[k->n] != NULL, "bad JSON string: %s", line);
        if (k->inputs[k->n])
            k->failed[k->n++] = 0;
    }
    if (f)
        fclose(f);
}

static int known_find(const struct known *k, const struct tj *input)
{
    size_t i;

    for (i = 0; i < k->n; i++)
        if (k->inputs[i]->len == input->len &&
            memcmp(k->inputs[i]->str, input->str, input->len) == 0)
            return (int)i;
    return -1;
}

static int starts_http(const char *s, size_t n)
{
    while (n > 0 && (unsigned char)*s <= 0x20) {
        s++;
        n--;
    }
    return (n >= 5 && strncasecmp(s, "http:", 5) == 0) ||
           (n >= 6 && strncasecmp(s, "https:", 6) == 0);
}

/* One case: 1 pass, 0 fail, -1 not an http(s) case. */
static int whatwg_case(const struct tj *c, char *why, size_t whylen)
{
    static char out[OUTCAP], want[OUTCAP];
    const struct tj *in = tj_get(c, "input"), *fail = tj_get(c, "failure");
    const char *base = tj_str(tj_get(c, "base")), *href = tj_str(tj_get(c, "href"));
    size_t n;
    int rc;

    if (!in || in->type != TJ_STR)
        return -1;
    if (base && strncmp(base, "http:", 5) && strncmp(base, "https:", 6))
        return -1;
    if (fail && fail->b) {
        if (!base && !starts_http(in->str, in->len))
            return -1;
        rc = parser_url_canon(base, in->str, in->len, 0, PARSER_URL_MAX, out,
                              sizeof(out), &n);
        snprintf(why, whylen, "accepted -> %s", rc ? "" : out);
        return rc != DC_OK;
    }
    if (!href || (strncmp(href, "http:", 5) && strncmp(href, "https:", 6)))
        return -1;
    norm_expected(href, want, sizeof(want));
    rc = parser_url_canon(base, in->str, in->len, 0, PARSER_URL_MAX, out,
                          sizeof(out), &n);
    snprintf(why, whylen, "rc %d got '%s' want '%s'", rc, rc ? "" : out, want);
    return rc == DC_OK && strcmp(out, want) == 0;
}

static void test_whatwg(void)
{
    struct tj *all = tj_load_file(DC_SHARED_DIR "/conformance/url/urltestdata.json");
    struct known k;
    size_t i, cases = 0, pass = 0, kf = 0, unexpected = 0;
    char why[3 * OUTCAP];

    CHECK(all && all->type == TJ_ARR, "load urltestdata.json");
    known_load(&k, DC_SOURCE_DIR "/tests/unit/url-known-failures.txt");
    for (i = 0; all && i < all->n; i++) {
        const struct tj *c = all->items[i];
        int r = c->type == TJ_OBJ ? whatwg_case(c, why, sizeof(why)) : -1, ki;
        if (r < 0)
            continue;
        cases++;
        if (r == 1) {
            pass++;
            continue;
        }
        ki = known_find(&k, tj_get(c, "input"));
        if (ki >= 0) {
            kf++;
            k.failed[ki] = 1;
            continue;
        }
        unexpected++;
        CHECK(0, "WHATWG input '%s' base '%s': %s", tj_get(c, "input")->str,
              tj_str(tj_get(c, "base")) ? tj_str(tj_get(c, "base")) : "null",
              why);
    }
    for (i = 0; i < k.n; i++) {
        CHECK(k.failed[i], "known failure now passes, remove it: %s",
              k.inputs[i]->str);
        tj_free(k.inputs[i]);
    }
    CHECK(cases > 300, "only %zu WHATWG cases selected", cases);
    printf("WHATWG http(s): %zu cases, %zu pass, %zu known failures, %zu unexpected\n",
           cases, pass, kf, unexpected);
    tj_free(all);
}

/* ------------------------------------------------------------ part 3 */

static void informational(const char *name)
{
    char path[512], out[OUTCAP];
    struct tj *all;
    size_t i, total = 0, pass = 0, n;

    snprintf(path, sizeof(path), "%s/conformance/url/%s", DC_SHARED_DIR, name);
    all = tj_load_file(path);
    CHECK(all && all->type == TJ_ARR, "load %s", name);
    for (i = 0; all && i < all->n; i++) {
        const struct tj *in = tj_get(all->items[i], "input");
        const char *want = tj_str(tj_get(all->items[i], "expected"));
        int rc;
        if (!in || in->type != TJ_STR)
            continue;
        total++;
        rc = parser_url_canon(NULL, in->str, in->len, 0, PARSER_URL_MAX, out,
                              sizeof(out), &n);
        if (want ? rc == DC_OK && strcmp(out, want) == 0 : rc != DC_OK)
            pass++;
    }
    printf("%s: %zu/%zu agree (informational, not asserted)\n", name, pass,
           total);
    tj_free(all);
}

/* ------------------------------------------------------------ part 4 */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
    uint64_t x = rng_state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static const char *seeds[] = {
    "http://h/a/b?c#d", "https://u:p@[::1]:8443/%2e%2E/x", "HTTP:\\\\A.b.\\c",
    "//x.y/z", "../a/./b/../c", "?q=%41%zz", "http://0x7f.1:080/",
    "http://[::ffff:1.2.3.4]/", "http://a%41.b/%25%2", "https:x",
    "index.html", "http://h/%%34%31%4%31", "a/%2e%2e/%2E", "http://@:@/",
};

static const char alphabet[] = "/\\?#%.:@[]0123456789abcdefxX%2e~ \t\n\x01\x7f\x80\xc3\xa9HTtps";

static size_t mutate(char *buf, size_t cap)
{
    size_t n, k, edits = 1 + rng() % 8;

    strcpy(buf, seeds[rng() % (sizeof(seeds) / sizeof(seeds[0]))]);
    n = strlen(buf);
    for (k = 0; k < edits; k++) {
        size_t at = n ? rng() % (n + 1) : 0;
        char c = alphabet[rng() % (sizeof(alphabet) - 1)];
        switch (rng() % 4) {
        case 0: /* insert */
            if (n + 1 < cap) {
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = c;
                n++;
            }
            break;
        case 1: /* delete */
            if (at < n) {
                memmove(buf + at, buf + at + 1, n - at - 1);
                n--;
            }
            break;
        case 2: /* replace */
            if (at < n)
                buf[at] = c;
            break;
        default: /* random byte */
            if (at < n)
                buf[at] = (char)(rng() & 0xFF);
        }
    }
    return n;
}

static long fuzz_accepted;

static void fuzz_one(const char *ref, size_t n, const char *base,
                     unsigned flags, int *bad)
{
    size_t cap = 1 + rng() % 64, maxl = rng() % 80, len, len2;
    char *small = malloc(cap), out[OUTCAP], again[OUTCAP];
    int rc = parser_url_canon(base, ref, n, flags, maxl, small, cap, &len);

    if (rc != DC_OK && rc != DC_EURL && rc != DC_ETOOBIG)
        (*bad)++;
    if (rc == DC_OK && (len >= cap || len > maxl || strlen(small) != len))
        (*bad)++;
    free(small);
    rc = parser_url_canon(base, ref, n, flags, PARSER_URL_MAX, out,
                          sizeof(out), &len);
    if (rc != DC_OK)
        return;
    fuzz_accepted++;
    if (parser_url_canon(NULL, out, len, flags, PARSER_URL_MAX, again,
                         sizeof(again), &len2) != DC_OK ||
        strcmp(out, again) != 0) {
        if (*bad < 5)
            fprintf(stderr, "not a fixed point: '%s' -> '%s'\n", out, again);
        (*bad)++;
    }
    if (parser_url_canon(out, "", 0, flags, PARSER_URL_MAX, again,
                         sizeof(again), &len2) != DC_OK ||
        strcmp(out, again) != 0)
        (*bad)++;
    if (!parser_url_path(out) || parser_url_path(out)[0] != '/')
        (*bad)++;
}

static void test_fuzz(void)
{
    static const char *bases[] = { NULL, BASE, "https://u@[::1]:1/a/b?c",
                                   "http://h/index.html?x" };
    char buf[256];
    int bad = 0;
    long i;

    for (i = 0; i < 200000; i++) {
        size_t n = mutate(buf, sizeof(buf));
        fuzz_one(buf, n, bases[rng() % 4], (unsigned)(rng() & 1), &bad);
    }
    printf("robustness: %ld inputs, %ld accepted, %d violations\n", i,
           fuzz_accepted, bad);
    CHECK(bad == 0, "%d robustness violations", bad);
    CHECK(fuzz_accepted > i / 10, "too few accepted inputs: %ld", fuzz_accepted);
}

/* ------------------------------------------------------------ part 5 */

static struct {
    long inputs, fast, mismatch;
} eq;

/* One input through both paths and the public function. */
static void same_paths(const char *base, const char *ref, size_t n,
                       unsigned flags, size_t maxl)
{
    static char f[OUTCAP], sl[OUTCAP], pub[OUTCAP];
    size_t fl = 0, sll = 0, pl = 0;
    int rf, rs, rp;

    rf = parser__url_canon_fast(base, ref, n, flags, maxl, f, sizeof(f), &fl);
    rs = parser__url_canon_slow(base, ref, n, flags, maxl, sl, sizeof(sl),
                                &sll);
    rp = parser_url_canon(base, ref, n, flags, maxl, pub, sizeof(pub), &pl);
    eq.inputs++;
    if (rf == DC_OK)
        eq.fast++;
    if ((rf != DC_OK && rf != -1) ||
        (rf == DC_OK && (rs != DC_OK || fl != sll || memcmp(f, sl, fl) ||
                         strlen(f) != fl)) ||
        rp != rs || (rs == DC_OK && (pl != sll || memcmp(pub, sl, pl)))) {
        if (eq.mismatch < 5)
            fprintf(stderr, "paths differ on '%.*s' flags %u max %zu: fast %d "
                    "'%s' slow %d '%s' public %d '%s'\n", (int)n, ref, flags,
                    maxl, rf, rf ? "" : f, rs, rs ? "" : sl, rp,
                    rp ? "" : pub);
        eq.mismatch++;
    }
}

static void same_paths_all(const char *base, const char *ref, size_t n)
{
    same_paths(base, ref, n, 0, PARSER_URL_MAX);
    same_paths(base, ref, n, SI, PARSER_URL_MAX);
    same_paths(NULL, ref, n, 0, PARSER_URL_MAX);
    same_paths(NULL, ref, n, SI, n > 4 ? n - 4 : 0); /* some cut short */
}

static void eq_file(const char *path, int whatwg)
{
    struct tj *all = tj_load_file(path);
    size_t i;

    CHECK(all && all->type == TJ_ARR, "load %s", path);
    for (i = 0; all && i < all->n; i++) {
        const struct tj *in = tj_get(all->items[i], "input");
        const struct tj *b = whatwg ? tj_get(all->items[i], "base") : NULL;
        const char *base = tj_str(b);
        if (in && in->type == TJ_STR)
            same_paths_all(base, in->str, in->len);
    }
    tj_free(all);
}

/* Pieces the generator draws from: mostly plain, some of everything the
 * fast path must decline or get right. */
static const char *const g_scheme[] = {
    "http://", "https://", "http://", "https://", "HTTP://", "Https://",
    "http:/", "http:///", "https:\\\\", "ftp://", "http:", " http://",
    "\thttps://", "httpx://", "https//",
};
static const char *const g_user[] = { "u@", "user:pw@", ":@", "a%41:b@" };
static const char *const g_label[] = {
    "www", "example", "a-b", "x_y", "t~", "xn--mnchen-3ya", "EXAMPLE", "Www",
    "123", "0x7f", "1", "caf\xc3\xa9", "a%41", "a%2e", "b", "0", "a b", "",
    "%", "h^", "h|", "a\tb",
};
static const char *const g_tld[] = { "com", "org", "de", "co.uk", "io", "9",
                                     "0x1", "", "COM" };
static const char *const g_ip[] = {
    "127.0.0.1", "10.1", "0x7f.1", "[::1]", "[2001:DB8::1]", "[::ffff:1.2.3.4]",
    "256.1.1.1", "1.2.3.4.", "[fe80::", "4294967295", "017.0.0.1",
};
static const char *const g_port[] = {
    ":80", ":443", ":8080", ":1", ":0080", ":", ":65535", ":65536",
    ":99999", ":8a", ":0", ":00443", ":123456",
};
static const char *const g_seg[] = {
    "a", "wiki", "Article_1", "index.html", "x.html", "%41", "%4a", "%4A",
    "%7E", "%7e", "%2e", "%2E", "%20", "%3F", "%zz", "%", "%4", ".", "..",
    ".x", "..x", "x.", "a..b", ".%2e", "caf\xc3\xa9", "a b", "\"q\"", "<t>",
    "^", "{}", "|", "`", "'", "~u", "a;b=c", "a:b", "@", "!$&()*+,", "\\",
    "%%34%31", "\x01", "\x7f", "\xff", "A-Z_0.9", "%C3%A9", "%2F", "%25",
    "[]", "a\tb", "a\nb", "?",
};
static const char *const g_query[] = {
    "q=1", "ref=home&sort=price", "a=%41", "a=%2f", "a=%2F", "x='y'", "?x",
    "a/b", "a\\b", "a b", "%zz", "%", "\xc3\xa9", "\"", "<>", "`{}|^", "%7e",
    "", "k=%20v", "a=%%34%31",
};

static uint64_t g_state = 0x1234567887654321ull;

static unsigned g_rnd(unsigned n)
{
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    return (unsigned)((g_state >> 11) % n);
}

#define PICK(a) (a)[g_rnd(sizeof(a) / sizeof((a)[0]))]

static size_t g_add(char *buf, size_t n, size_t cap, const char *s)
{
    size_t k = strlen(s);

    if (n + k >= cap)
        return n;
    memcpy(buf + n, s, k);
    return n + k;
}

/* A URL: mostly the plain shape, with a few odd parts mixed in. */
static size_t gen_url(char *buf, size_t cap)
{
    int odd = g_rnd(4) == 0; /* one in four may have unusual pieces */
    size_t n = 0;
    unsigned k, i;

    n = g_add(buf, n, cap, odd && g_rnd(3) == 0 ? PICK(g_scheme)
                                                : g_scheme[g_rnd(2)]);
    if (odd && g_rnd(8) == 0)
        n = g_add(buf, n, cap, PICK(g_user));
    if (odd && g_rnd(6) == 0) {
        n = g_add(buf, n, cap, PICK(g_ip));
    } else {
        k = 1 + g_rnd(3);
        for (i = 0; i < k; i++) {
            n = g_add(buf, n, cap, odd && g_rnd(4) == 0 ? PICK(g_label)
                                                        : g_label[g_rnd(6)]);
            n = g_add(buf, n, cap, ".");
        }
        n = g_add(buf, n, cap, odd && g_rnd(3) == 0 ? PICK(g_tld)
                                                    : g_tld[g_rnd(5)]);
        if (g_rnd(20) == 0)
            n = g_add(buf, n, cap, ".");
    }
    if (g_rnd(6) == 0)
        n = g_add(buf, n, cap, odd ? PICK(g_port) : g_port[g_rnd(3)]);
    k = g_rnd(6);
    for (i = 0; i < k; i++) {
        n = g_add(buf, n, cap, odd && g_rnd(8) == 0 ? "\\" : "/");
        n = g_add(buf, n, cap, odd || g_rnd(4) == 0 ? PICK(g_seg)
                                                   : g_seg[g_rnd(5)]);
    }
    if (g_rnd(3) == 0)
        n = g_add(buf, n, cap, "/");
    if (g_rnd(3) == 0) {
        n = g_add(buf, n, cap, "?");
        n = g_add(buf, n, cap, odd ? PICK(g_query) : g_query[g_rnd(3)]);
    }
    if (g_rnd(4) == 0) {
        n = g_add(buf, n, cap, "#");
        n = g_add(buf, n, cap, g_rnd(2) ? "frag" : PICK(g_seg));
    }
    if (odd && g_rnd(10) == 0)
        n = g_add(buf, n, cap, g_rnd(2) ? " " : "\n");
    /* a random byte flipped now and then */
    if (odd && n && g_rnd(8) == 0)
        buf[g_rnd((unsigned)n)] = (char)(1 + g_rnd(255));
    return n;
}

#define EQ_GENERATED 1200000L

static void test_fast_equals_slow(void)
{
    char buf[512];
    long gen_fast, i;
    size_t r;

    eq_file(DC_SHARED_DIR "/conformance/url/urltestdata.json", 1);
    eq_file(DC_SHARED_DIR
            "/conformance/url/crawler_commons_normalizer_cases.json", 0);
    eq_file(DC_SHARED_DIR "/conformance/url/nutch_normalizer_cases.json", 0);
    for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        same_paths(rows[r].base, rows[r].ref, strlen(rows[r].ref),
                   rows[r].flags, PARSER_URL_MAX);
    CHECK(eq.inputs > 4 * 300 && eq.fast > 100,
          "conformance inputs %ld, fast %ld", eq.inputs, eq.fast);
    printf("fast vs slow, conformance: %ld runs, fast path %ld, %ld differ\n",
           eq.inputs, eq.fast, eq.mismatch);
    gen_fast = eq.fast;
    for (i = 0; i < EQ_GENERATED; i++) {
        size_t n = gen_url(buf, sizeof(buf));
        same_paths(i % 3 ? NULL : BASE, buf, n, (unsigned)(i & 1),
                   i % 7 ? PARSER_URL_MAX : 20 + (size_t)(i % 60));
    }
    gen_fast = eq.fast - gen_fast;
    printf("fast vs slow, generated: %ld URLs, fast path %ld, %ld differ\n",
           i, gen_fast, eq.mismatch);
    CHECK(eq.mismatch == 0, "%ld inputs where the paths differ", eq.mismatch);
    CHECK(gen_fast > EQ_GENERATED / 3 && gen_fast < EQ_GENERATED * 19 / 20,
          "fast path took %ld of %ld generated URLs", gen_fast, EQ_GENERATED);
}

int main(void)
{
    test_table();
    test_limits();
    test_whatwg();
    informational("crawler_commons_normalizer_cases.json");
    informational("nutch_normalizer_cases.json");
    test_fuzz();
    test_fast_equals_slow();
    return t_done("u-url");
}
