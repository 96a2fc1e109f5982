/*
 * fuzz-robots.c: robots.txt parsing and matching (parser/robots.c).
 *
 * Input: one option byte (bit 0: PARSER_ROBOTS_CANON; bits 1-2: the
 * agent), then the robots.txt body. When the body holds a NUL byte, what
 * follows the last one is a list of URLs (one a line) to match: each goes
 * through parser_robots_url_path and parser_robots_allowed. A few fixed
 * paths are matched always. Checks: the answers are 0 or 1, the Sitemap
 * list is bounded and NUL-terminated strings.
 */
#include <string.h>

#include "conf.h"
#include "fuzz.h"
#include "parser.h"

static const char *const agents[4] = { "dcrawl", "googlebot", "*", "a-b_c" };
static const char *const paths[] = { "/", "/robots.txt", "/a/b?c=d",
                                     "/%7Ea/%2fx$", "/index.html" };

static void match(const struct parser_robots *r, const char *url, size_t n)
{
    char buf[4096], path[4096];

    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    memcpy(buf, url, n);
    buf[n] = '\0';
    parser_robots_url_path(buf, path, sizeof(path));
    FUZZ_CHECK(path[0] == '/');
    FUZZ_CHECK(parser_robots_allowed(r, path) <= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct parser_robots *r;
    const char *const *maps;
    const char *body, *urls = NULL, *end;
    size_t len, n;
    char tok[64];

    if (size < 1)
        return 0;
    body = (const char *)data + 1;
    len = size - 1;
    end = body + len;
    for (const char *p = end; p > body; p--)
        if (p[-1] == '\0') {
            urls = p;
            len = (size_t)(p - 1 - body);
            break;
        }
    r = parser_robots_parse(body, len, agents[(data[0] >> 1) & 3],
                            data[0] & 1 ? PARSER_ROBOTS_CANON : 0);
    FUZZ_CHECK(r != NULL);
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        FUZZ_CHECK(parser_robots_allowed(r, paths[i]) <= 1);
    while (urls && urls < end) {
        const char *nl = memchr(urls, '\n', (size_t)(end - urls));
        size_t ul = nl ? (size_t)(nl - urls) : (size_t)(end - urls);
        match(r, urls, ul);
        urls = nl ? nl + 1 : end;
    }
    (void)parser_robots_crawl_delay(r);
    n = parser_robots_sitemaps(r, &maps);
    FUZZ_CHECK(n <= 64);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(maps[i] && strlen(maps[i]) < 1u << 20);
    parser_robots_free(&r);
    FUZZ_CHECK(r == NULL);
    if (len > 0) {
        char *ua = strndup(body, len < 200 ? len : 200);
        parser_agent_token(ua, tok, sizeof(tok));
        free(ua);
    }
    return 0;
}
