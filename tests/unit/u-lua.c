/*
 * u-lua.c: the frontier's Lua scripts as Redis runs them. Each embedded
 * script (frontier__script_body) is byte for byte its file
 * frontier/lua/<name>.lua, and an error raised by a script names the line
 * of the .lua file ("@user_script:N"): release.lua run without KEYS fails
 * on its GET, and the reply must name that line of the file. Needs the
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

static void test_embedded(void)
{
    for (int i = 0; i < FRONTIER_NSCRIPTS; i++) {
        size_t len;
        char *text = lua_file(i, &len);
        const char *body = frontier__script_body(i);

        CHECK(text != NULL, "read %s", frontier__script_file(i));
        CHECK(text && strlen(body) == len && memcmp(body, text, len) == 0,
              "%s: the embedded text is not the file's bytes",
              frontier__script_file(i));
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

static void test_error_line(redisContext *rc)
{
    size_t len;
    char *text = lua_file(FRONTIER_SCRIPT_RELEASE, &len);
    int line = text ? line_of(text, "redis.call('GET', KEYS[1])") : 0;
    const char *at;
    redisReply *r;

    CHECK(line > 1, "release.lua has its GET after its comment (line %d)",
          line);
    r = redisCommand(rc, "EVAL %s 0 node-a",
                     frontier__script_body(FRONTIER_SCRIPT_RELEASE));
    CHECK(r && r->type == REDIS_REPLY_ERROR, "release without KEYS fails");
    at = r && r->type == REDIS_REPLY_ERROR ? strstr(r->str, "@user_script:")
                                            : NULL;
    CHECK(at && atoi(at + 13) == line, "error names line %d of release.lua: %s",
          line, r && r->str ? r->str : "(no reply)");
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
    test_error_line(rc);
    redisFree(rc);
    return t_done("u-lua");
}
