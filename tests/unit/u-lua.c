/*
 * u-lua.c: the frontier's Lua scripts as Redis runs them. Each embedded
 * script (frontier__script_body) is its file frontier/lua/<name>.lua line
 * for line: every line the same bytes, but a "--#include NAME" line, which
 * holds the code of lua/lib/NAME.lua on that one line. An error raised by
 * a script names the line of the .lua file ("@user_script:N"): release.lua
 * and own.lua (which includes two helpers above it) run without KEYS fail
 * on their GET, and the reply must name that line of the file. Needs the
 * redis-server tests/with-redis.sh starts (URL in DCRAWL_TEST_REDIS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "frontier-internal.h"
#include "t.h"

static char *lua_file(int script, size_t *len)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/frontier/lua/%s", DC_SOURCE_DIR,
             frontier__script_file(script));
    return t_slurp(path, len);
}

/* Compare text (the file) and body (embedded) line by line; returns the
 * number of the first line that differs, 0 when none does. */
static int first_diff(const char *text, const char *body)
{
    int line = 1;

    while (*text || *body) {
        size_t lt = strcspn(text, "\n"), lb = strcspn(body, "\n");

        if (strncmp(text, "--#include ", 11) == 0) {
            if (lb == 0 || strncmp(body, "--", 2) == 0)
                return line;   /* the include was not expanded */
        } else if (lt != lb || memcmp(text, body, lt) != 0) {
            return line;
        }
        if (!text[lt] != !body[lb])
            return line;       /* one has more lines */
        text += lt + (text[lt] != 0);
        body += lb + (body[lb] != 0);
        line++;
    }
    return 0;
}

static void test_embedded(void)
{
    for (int i = 0; i < FRONTIER_NSCRIPTS; i++) {
        size_t len;
        char *text = lua_file(i, &len);
        const char *body = frontier__script_body(i);
        int diff = text ? first_diff(text, body) : -1;

        CHECK(text != NULL, "read %s", frontier__script_file(i));
        CHECK(diff == 0, "%s: line %d of the embedded text is not the "
              "file's", frontier__script_file(i), diff);
        CHECK(strncmp(body, "--", 2) == 0, "%s starts with its comment",
              frontier__script_file(i));
        free(text);
    }
}

/* 1-based line of the first line of text that contains needle, 0 if none */
static int line_of(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    int line = 1;

    if (!at)
        return 0;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

/* Run script with no KEYS and one argument; its first redis.call with a
 * KEYS entry, the first line of its file containing call, must be the
 * line the error names. */
static void test_error_line(redisContext *rc, int script, const char *call)
{
    size_t len;
    char *text = lua_file(script, &len);
    int line = text ? line_of(text, call) : 0;
    const char *at;
    redisReply *r;

    CHECK(line > 1, "%s has %s after its comment (line %d)",
          frontier__script_file(script), call, line);
    r = redisCommand(rc, "EVAL %s 0 node-a", frontier__script_body(script));
    at = r && r->type == REDIS_REPLY_ERROR ? strstr(r->str, "@user_script:")
                                            : NULL;
    CHECK(at && atoi(at + 13) == line, "error names line %d of %s: %s",
          line, frontier__script_file(script),
          r && r->str ? r->str : "(no reply)");
    if (r)
        freeReplyObject(r);
    free(text);
}

int main(void)
{
    const char *url = getenv("DCRAWL_TEST_REDIS");
    redisContext *rc;

    test_embedded();
    if (!url || strncmp(url, "unix://", 7) != 0) {
        fprintf(stderr, "u-lua: DCRAWL_TEST_REDIS not set (run via "
                        "tests/with-redis.sh)\n");
        return 1;
    }
    rc = redisConnectUnix(url + 7);
    if (!rc || rc->err) {
        fprintf(stderr, "u-lua: cannot connect to %s\n", url);
        return 1;
    }
    test_error_line(rc, FRONTIER_SCRIPT_RELEASE, "redis.call('GET', KEYS[1])");
    test_error_line(rc, FRONTIER_SCRIPT_OWN, "redis.call('GET', KEYS[4])");
    redisFree(rc);
    return t_done("u-lua");
}
