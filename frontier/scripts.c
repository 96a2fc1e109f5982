/*
 * scripts.c: the frontier's Lua scripts, how they are loaded and found.
 * Each script is a file frontier/lua/<name>.lua (its top comment says its
 * KEYS, ARGV and reply); CMake embeds the files line for line at build
 * time (cmake/embed-lua.cmake -> <build>/gen/frontier-lua.c), so the line
 * numbers in a Redis error ("@user_script:N") are the lines of the file.
 * Helpers several scripts use (num, str, ready, enqueue, requeue) are in
 * frontier/lua/lib/<name>.lua; a script line "--#include <name>" is
 * replaced by the helper's code on that one line, so no line moves.
 *
 * Each script runs atomically on one partition: every key it names carries
 * the partition's {p} hash tag, so in a Redis Cluster one call stays in one
 * slot. Keys are passed in KEYS. Two scripts cannot know all their keys in
 * advance: pop learns the hosts from h:<d> and reclaim learns depth and
 * host from the lease entries, so they get a declared key prefix
 * ("<prefix>:{p}:q:<d>:" and "<prefix>:{p}:") and append the rest; the
 * prefix holds the hash tag, so the derived keys share the slot.
 *
 * Invariants the scripts keep (in either queue layout, frontier.h; in the
 * native one h:<d> holds the queues and is written by the module's
 * commands, which keep them too):
 *   - a host is in h:<d> exactly when q:<d>:<host> is non-empty;
 *   - its score is max(now, next), or BUSY while its leases at depth d
 *     or below are at host_connections (complete and reclaim lower it
 *     again; leases of a deeper depth never hold d back), from the host's
 *     field "<act>[@<td>[:<tn>]] <next>" of the host HASH;
 *   - pend[d] = URLs of depth d queued + leased; a URL leaves pend once,
 *     when its lease completes (or, for a lease reclaimed meanwhile, when
 *     its requeued copy is removed);
 *   - a host field is deleted once act is zero and no clock is kept (a
 *     clock is dropped once in the past), pend fields at zero, so memory
 *     follows the live hosts, not every host ever seen.
 * Numbers written back are formatted with %.0f: Lua's default %.14g would
 * round 13+ digit millisecond clocks.
 *
 * admit-mod.lua, pop.lua and complete.lua have native twins in the
 * module dcrawl-seen.so (seen/module/front-module.h): same keys,
 * arguments, replies and invariants, sent instead of the scripts when the
 * server has them (redis.c). A change to one side is a change to both;
 * tests/unit/u-frontmod.c compares them call by call.
 *
 * Thread rules: the bodies are constants; loading runs on f's connection.
 */
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "frontier-internal.h"

/* <build>/gen/frontier-lua.c: the bytes of frontier/lua/<name>.lua */
extern const char frontier__lua_admit[], frontier__lua_admit_mod[],
    frontier__lua_pop[], frontier__lua_complete[], frontier__lua_reclaim[],
    frontier__lua_seen[], frontier__lua_own[], frontier__lua_release[],
    frontier__lua_orphans[], frontier__lua_members[],
    frontier__lua_renew[];

static const struct {
    const char *body;
    const char *file;
} scripts[FRONTIER_NSCRIPTS] = {
    [FRONTIER_SCRIPT_ADMIT] = { frontier__lua_admit, "admit.lua" },
    [FRONTIER_SCRIPT_POP] = { frontier__lua_pop, "pop.lua" },
    [FRONTIER_SCRIPT_COMPLETE] = { frontier__lua_complete, "complete.lua" },
    [FRONTIER_SCRIPT_RECLAIM] = { frontier__lua_reclaim, "reclaim.lua" },
    [FRONTIER_SCRIPT_SEEN] = { frontier__lua_seen, "seen.lua" },
    [FRONTIER_SCRIPT_ADMIT_MOD] = { frontier__lua_admit_mod, "admit-mod.lua" },
    [FRONTIER_SCRIPT_OWN] = { frontier__lua_own, "own.lua" },
    [FRONTIER_SCRIPT_RELEASE] = { frontier__lua_release, "release.lua" },
    [FRONTIER_SCRIPT_ORPHANS] = { frontier__lua_orphans, "orphans.lua" },
    [FRONTIER_SCRIPT_MEMBERS] = { frontier__lua_members, "members.lua" },
    [FRONTIER_SCRIPT_RENEW] = { frontier__lua_renew, "renew.lua" },
};

const char *frontier__script_file(int script)
{
    if (script < 0 || script >= FRONTIER_NSCRIPTS)
        return "";
    return scripts[script].file;
}

const char *frontier__script_body(int script)
{
    if (script < 0 || script >= FRONTIER_NSCRIPTS)
        return "";
    return scripts[script].body;
}

/* SCRIPT LOAD every script (one round trip) and keep the SHA1s. */
int frontier__scripts_load(struct frontier *f)
{
    struct frontier_call calls[FRONTIER_NSCRIPTS];
    redisReply *rep[FRONTIER_NSCRIPTS];
    int rc;

    for (int i = 0; i < FRONTIER_NSCRIPTS; i++) {
        frontier__call_init(&calls[i], -1);
        frontier__strv_pushs(&calls[i].args, "SCRIPT");
        frontier__strv_pushs(&calls[i].args, "LOAD");
        frontier__strv_pushs(&calls[i].args, scripts[i].body);
    }
    rc = frontier__run(f, calls, FRONTIER_NSCRIPTS, rep);
    for (int i = 0; !rc && i < FRONTIER_NSCRIPTS; i++) {
        if (rep[i]->type != REDIS_REPLY_STRING || rep[i]->len != 40)
            rc = frontier__seterr(f, DC_EREDIS, "redis SCRIPT LOAD: bad reply");
        else
            memcpy(f->sha[i], rep[i]->str, 41);
    }
    if (rc == DC_EREDIS && strncmp(f->err, "redis SCRIPT", 12) != 0) {
        char msg[sizeof(f->err)];
        snprintf(msg, sizeof(msg), "%s", f->err);
        frontier__seterr(f, DC_EREDIS, "cannot load frontier scripts: %s", msg);
    }
    frontier__replies_free(rep, FRONTIER_NSCRIPTS);
    for (int i = 0; i < FRONTIER_NSCRIPTS; i++)
        frontier__call_release(&calls[i]);
    return rc;
}
