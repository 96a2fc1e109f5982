/*
 * scripts.c: the frontier's Lua scripts. Each runs atomically on one
 * partition: every key it names carries the partition's {p} hash tag, so in
 * a Redis Cluster one call stays in one slot.
 *
 * Keys are passed in KEYS. Two scripts cannot know all their keys in
 * advance: pop learns the hosts from h:<d> and reclaim learns depth and
 * host from the lease entries, so they get a declared key prefix
 * ("<prefix>:{p}:q:<d>:" and "<prefix>:{p}:") and append the rest; the
 * prefix holds the hash tag, so the derived keys share the slot.
 *
 * Invariants the scripts keep:
 *   - a host is in h:<d> exactly when q:<d>:<host> is non-empty;
 *   - its score is max(now, next[host]), or BUSY while act[host] is at
 *     host_connections (complete and reclaim lower it again);
 *   - pend[d] = URLs of depth d queued + leased; a URL leaves pend once,
 *     when its lease completes (or, for a lease reclaimed meanwhile, when
 *     its requeued copy is removed);
 *   - act, next and pend fields are deleted at zero / once in the past, so
 *     memory follows the live hosts, not every host ever seen.
 * Numbers written back are formatted with %.0f: Lua's default %.14g would
 * round 13+ digit millisecond clocks.
 *
 * Thread rules: the bodies are constants; loading runs on f's connection.
 */
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "frontier-internal.h"

#define LUA_COMMON                                                        \
    "local busy = 9000000000000000\n"                                     \
    "local function num(x) return tonumber(x or '0') or 0 end\n"          \
    "local function str(x) return string.format('%.0f', x) end\n"         \
    "local function ready(h)\n"                                           \
    "  local r = redis.call('ZRANGEBYSCORE', h, '-inf', '(' .. str(busy),\n" \
    "                       'WITHSCORES', 'LIMIT', 0, 1)\n"               \
    "  if #r > 0 then return tonumber(r[2]) end\n"                        \
    "  return -1\n"                                                       \
    "end\n"

/* Enqueue url of host at depth d: queue q, ready set h (ARGV 1, 2 are
 * now and host_connections; KEYS 1, 3, 4 pend, next, act). */
#define LUA_ENQUEUE                                                       \
    "local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])\n"           \
    "local function enqueue(q, h, url, host, d)\n"                        \
    "  redis.call('RPUSH', q, url)\n"                                     \
    "  redis.call('HINCRBY', KEYS[1], d, 1)\n"                            \
    "  if not redis.call('ZSCORE', h, host) then\n"                       \
    "    local score = busy\n"                                            \
    "    if num(redis.call('HGET', KEYS[4], host)) < conns then\n"        \
    "      score = math.max(now, num(redis.call('HGET', KEYS[3], host)))\n" \
    "    end\n"                                                           \
    "    redis.call('ZADD', h, str(score), host)\n"                       \
    "  end\n"                                                             \
    "end\n"

#define LUA_ADMIT_END                                                     \
    "if added > 0 then redis.call('HINCRBY', KEYS[2], 'admitted', added) end\n" \
    "if seen > 0 then redis.call('HINCRBY', KEYS[2], 'seen', seen) end\n" \
    "if over > 0 then redis.call('HINCRBY', KEYS[2], 'budget', over) end\n" \
    "return res\n"

/*
 * admit (layout b256-i64). KEYS: pend, stat, next, act, budget, then per
 * URL: seen bucket, host queue, h:<d>. ARGV: now, host_connections, host
 * budget (0 = none), then per URL: seen member, url, host, depth. Returns
 * per URL 1 (new), 0 (already seen) or 2 (new, but its host's budget is
 * spent: not marked seen, not queued; counted as stat "budget").
 */
static const char script_admit[] =
    LUA_COMMON
    LUA_ENQUEUE
    "local budget = tonumber(ARGV[3])\n"
    "local res, added, seen, over = {}, 0, 0, 0\n"
    "for i = 0, (#KEYS - 5) / 3 - 1 do\n"
    "  local k, a = 6 + 3 * i, 4 + 4 * i\n"
    "  local host = ARGV[a + 2]\n"
    "  if budget > 0 and num(redis.call('HGET', KEYS[5], host)) >= budget\n"
    "     and redis.call('SISMEMBER', KEYS[k], ARGV[a]) == 0 then\n"
    "    over = over + 1\n"
    "    res[i + 1] = 2\n"
    "  elseif redis.call('SADD', KEYS[k], ARGV[a]) == 1 then\n"
    "    enqueue(KEYS[k + 1], KEYS[k + 2], ARGV[a + 1], host, ARGV[a + 3])\n"
    "    if budget > 0 then redis.call('HINCRBY', KEYS[5], host, 1) end\n"
    "    added = added + 1\n"
    "    res[i + 1] = 1\n"
    "  else\n"
    "    seen = seen + 1\n"
    "    res[i + 1] = 0\n"
    "  end\n"
    "end\n"
    LUA_ADMIT_END;

/*
 * admit (layout mod-u64). KEYS: pend, stat, next, act, budget, the
 * partition's module seen-set "<prefix>:{p}:S", then per URL: host queue,
 * h:<d>. ARGV: now, host_connections, host budget (0 = none), then per
 * URL: url, host, depth, and last the fingerprints of all URLs as one blob
 * (8 bytes each, little-endian). Without a budget one DCSEEN.ADD inserts
 * them all and answers a '1'/'0' flag per URL; with one, each URL is
 * checked against its host's budget first, as in admit, and inserted (or
 * only checked, when the budget is spent) on its own. Same reply as admit.
 */
static const char script_admit_mod[] =
    LUA_COMMON
    LUA_ENQUEUE
    "local budget = tonumber(ARGV[3])\n"
    "local res, added, seen, over = {}, 0, 0, 0\n"
    "local fps = ARGV[#ARGV]\n"
    "local flags = ''\n"
    "if budget == 0 then flags = redis.call('DCSEEN.ADD', KEYS[6], fps) end\n"
    "for i = 0, (#KEYS - 6) / 2 - 1 do\n"
    "  local k, a = 7 + 2 * i, 4 + 3 * i\n"
    "  local host, new = ARGV[a + 1], false\n"
    "  if budget == 0 then\n"
    "    new = string.byte(flags, i + 1) == 49\n"
    "  else\n"
    "    local fp = string.sub(fps, 8 * i + 1, 8 * i + 8)\n"
    "    if num(redis.call('HGET', KEYS[5], host)) < budget then\n"
    "      new = redis.call('DCSEEN.ADD', KEYS[6], fp) == '1'\n"
    "    elseif redis.call('DCSEEN.CHECK', KEYS[6], fp) == '1' then\n"
    "      over = over + 1\n"
    "      res[i + 1] = 2\n"
    "    end\n"
    "  end\n"
    "  if res[i + 1] then\n"
    "    -- refused by the budget\n"
    "  elseif new then\n"
    "    enqueue(KEYS[k], KEYS[k + 1], ARGV[a], host, ARGV[a + 2])\n"
    "    if budget > 0 then redis.call('HINCRBY', KEYS[5], host, 1) end\n"
    "    added = added + 1\n"
    "    res[i + 1] = 1\n"
    "  else\n"
    "    seen = seen + 1\n"
    "    res[i + 1] = 0\n"
    "  end\n"
    "end\n"
    LUA_ADMIT_END;

/*
 * seen (frontier_seen: the seen-set without the queues). KEYS: the
 * partition's bucket-key prefix "<prefix>:{p}:s:"; the script appends the
 * bucket number, as pop appends hosts (the prefix carries the hash tag, so
 * every key it builds is in the partition's slot). ARGV: mode ('1' check
 * only, '0' insert), then groups: bucket, count, count members (signed
 * 64-bit decimals, no repeats; the client caps a group at
 * FRONTIER_SEEN_GROUP_MAX so unpack stays within Lua's stack). Returns ONE
 * bulk string, a '1' (new) or '0' (seen) per member in ARGV order: one
 * reply object per call instead of an array of integers. A group of one
 * member costs one SADD (or SISMEMBER); a larger one SMISMEMBER, then one
 * SADD of the absent members.
 */
static const char script_seen[] =
    "local add, out, i, n = ARGV[1] == '0', {}, 2, #ARGV\n"
    "while i < n do\n"
    "  local key, cnt, first = KEYS[1] .. ARGV[i], tonumber(ARGV[i + 1]), i + 2\n"
    "  if cnt == 1 then\n"
    "    local r\n"
    "    if add then r = redis.call('SADD', key, ARGV[first])\n"
    "    else r = 1 - redis.call('SISMEMBER', key, ARGV[first]) end\n"
    "    out[#out + 1] = r == 1 and '1' or '0'\n"
    "  else\n"
    "    local ms = redis.call('SMISMEMBER', key,\n"
    "                          unpack(ARGV, first, first + cnt - 1))\n"
    "    local new = {}\n"
    "    for j = 1, cnt do\n"
    "      if ms[j] == 0 then\n"
    "        out[#out + 1] = '1'\n"
    "        new[#new + 1] = ARGV[first + j - 1]\n"
    "      else\n"
    "        out[#out + 1] = '0'\n"
    "      end\n"
    "    end\n"
    "    if add and #new > 0 then redis.call('SADD', key, unpack(new)) end\n"
    "  end\n"
    "  i = first + cnt\n"
    "end\n"
    "return table.concat(out)\n";

/*
 * pop. KEYS: h:<d>, next, act, lease, queue prefix "<prefix>:{p}:q:<d>:",
 * own. ARGV: now, depth, max, lease deadline, host_connections, node,
 * check (1: pop only while own holds node). Returns { next ready ms at d
 * or -1, lease entry... }, or { -2 } when the partition is not ours.
 */
static const char script_pop[] =
    LUA_COMMON
    "if ARGV[7] == '1' and redis.call('GET', KEYS[6]) ~= ARGV[6] then\n"
    "  return { -2 }\n"
    "end\n"
    "local now, max = tonumber(ARGV[1]), tonumber(ARGV[3])\n"
    "local conns = tonumber(ARGV[5])\n"
    "local out = { -1 }\n"
    "local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],\n"
    "                         'LIMIT', 0, max)\n"
    "for _, host in ipairs(hosts) do\n"
    "  if #out > max then break end\n"
    "  local nx = num(redis.call('HGET', KEYS[2], host))\n"
    "  local act = num(redis.call('HGET', KEYS[3], host))\n"
    "  local q = KEYS[5] .. host\n"
    "  if act >= conns then\n"
    "    redis.call('ZADD', KEYS[1], str(busy), host)\n"
    "  elseif nx > now then\n"
    "    redis.call('ZADD', KEYS[1], str(nx), host)\n"
    "  else\n"
    "    if nx > 0 then redis.call('HDEL', KEYS[2], host) end\n"
    "    local take, got = math.min(conns - act, max + 1 - #out), 0\n"
    "    while got < take do\n"
    "      local url = redis.call('LPOP', q)\n"
    "      if not url then break end\n"
    "      local e = ARGV[6] .. '\\t' .. ARGV[2] .. '\\t' .. host .. '\\t' .. url\n"
    "      redis.call('ZADD', KEYS[4], ARGV[4], e)\n"
    "      out[#out + 1] = e\n"
    "      got = got + 1\n"
    "    end\n"
    "    if got > 0 then redis.call('HINCRBY', KEYS[3], host, got) end\n"
    "    if redis.call('LLEN', q) == 0 then\n"
    "      redis.call('ZREM', KEYS[1], host)\n"
    "    elseif act + got >= conns then\n"
    "      redis.call('ZADD', KEYS[1], str(busy), host)\n"
    "    else\n"
    "      redis.call('ZADD', KEYS[1], ARGV[1], host)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "out[1] = ready(KEYS[1])\n"
    "return out\n";

/*
 * complete. KEYS: lease, act, next, pend, stat, h:<d> whose ready time to
 * return, then per lease: queue, h:<d>, h:<d+1>. ARGV: now,
 * host_connections, then per lease: entry, outcome, delay, depth, host, url.
 * Returns the next ready ms of KEYS[6], or -1.
 */
static const char script_complete[] =
    LUA_COMMON
    "local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "local names = { 'done:', 'failed:', 'skipped:' }\n"
    "for i = 0, (#KEYS - 6) / 3 - 1 do\n"
    "  local k, a = 7 + 3 * i, 3 + 6 * i\n"
    "  local q, h, h1 = KEYS[k], KEYS[k + 1], KEYS[k + 2]\n"
    "  local outcome, d = tonumber(ARGV[a + 1]), ARGV[a + 3]\n"
    "  local host, url = ARGV[a + 4], ARGV[a + 5]\n"
    "  local held = redis.call('ZREM', KEYS[1], ARGV[a]) == 1\n"
    "  local counted = held\n"
    "  if held and redis.call('HINCRBY', KEYS[2], host, -1) <= 0 then\n"
    "    redis.call('HDEL', KEYS[2], host)\n"
    "  end\n"
    "  if outcome == 3 then\n"
    "    if held then redis.call('RPUSH', q, url) end\n"
    "    counted = false\n"
    "  elseif not held then\n"
    "    counted = redis.call('LREM', q, 1, url) == 1\n"
    "  end\n"
    "  if counted then\n"
    "    if redis.call('HINCRBY', KEYS[4], d, -1) <= 0 then\n"
    "      redis.call('HDEL', KEYS[4], d)\n"
    "    end\n"
    "    redis.call('HINCRBY', KEYS[5], names[outcome + 1] .. d, 1)\n"
    "  end\n"
    "  local cur = num(redis.call('HGET', KEYS[3], host))\n"
    "  local nx = math.max(cur, now + math.max(tonumber(ARGV[a + 2]), 0))\n"
    "  if nx > now then\n"
    "    redis.call('HSET', KEYS[3], host, str(nx))\n"
    "  elseif cur > 0 then\n"
    "    redis.call('HDEL', KEYS[3], host)\n"
    "  end\n"
    "  local score = math.max(nx, now)\n"
    "  if num(redis.call('HGET', KEYS[2], host)) >= conns then score = busy end\n"
    "  if redis.call('LLEN', q) > 0 then\n"
    "    redis.call('ZADD', h, str(score), host)\n"
    "  else\n"
    "    redis.call('ZREM', h, host)\n"
    "  end\n"
    "  if redis.call('ZSCORE', h1, host) then\n"
    "    redis.call('ZADD', h1, str(score), host)\n"
    "  end\n"
    "end\n"
    "return ready(KEYS[6])\n";

/* requeue(e): put lease entry e back at the front of its host queue
 * (KEYS 1-4: lease, act, next, key prefix "<prefix>:{p}:"; now and conns
 * as locals). Returns 1 when e was still leased. */
#define LUA_REQUEUE                                                       \
    "local function requeue(e)\n"                                         \
    "  local _, d, host, url =\n"                                         \
    "    string.match(e, '^([^\\t]*)\\t(%d+)\\t([^\\t]+)\\t(.*)$')\n"      \
    "  if redis.call('ZREM', KEYS[1], e) == 0 or not url then return 0 end\n" \
    "  redis.call('LPUSH', KEYS[4] .. 'q:' .. d .. ':' .. host, url)\n"   \
    "  local act = redis.call('HINCRBY', KEYS[2], host, -1)\n"            \
    "  if act <= 0 then redis.call('HDEL', KEYS[2], host) end\n"          \
    "  local score = math.max(now, num(redis.call('HGET', KEYS[3], host)))\n" \
    "  if act >= conns then score = busy end\n"                           \
    "  redis.call('ZADD', KEYS[4] .. 'h:' .. d, str(score), host)\n"      \
    "  local h1 = KEYS[4] .. 'h:' .. (tonumber(d) + 1)\n"                 \
    "  if redis.call('ZSCORE', h1, host) then\n"                          \
    "    redis.call('ZADD', h1, str(score), host)\n"                      \
    "  end\n"                                                             \
    "  return 1\n"                                                        \
    "end\n"

/*
 * reclaim. KEYS: lease, act, next, key prefix "<prefix>:{p}:". ARGV: now,
 * own (1: also every lease of node), node, host_connections. Returns the
 * number of leases put back. Also drops a random sample of politeness
 * clocks that are already in the past.
 */
static const char script_reclaim[] =
    LUA_COMMON
    "local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])\n"
    LUA_REQUEUE
    "local list = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\n"
    "if ARGV[2] == '1' then\n"
    "  local mine = ARGV[3] .. '\\t'\n"
    "  local rest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')\n"
    "  for _, e in ipairs(rest) do\n"
    "    if string.sub(e, 1, #mine) == mine then list[#list + 1] = e end\n"
    "  end\n"
    "end\n"
    "local count = 0\n"
    "for _, e in ipairs(list) do count = count + requeue(e) end\n"
    "local r = redis.call('HRANDFIELD', KEYS[3], 64, 'WITHVALUES')\n"
    "for i = 1, #r, 2 do\n"
    "  if num(r[i + 1]) <= now then redis.call('HDEL', KEYS[3], r[i]) end\n"
    "end\n"
    "return count\n";

/*
 * own: take or renew partition ownership. KEYS: lease, act, next, key
 * prefix "<prefix>:{p}:", own. ARGV: now, node, ttl ms, host_connections.
 * Returns { 1 } renewed (own already held node), { 2, n } taken: own was
 * free, now holds node for ttl, and the n URL leases other nodes left in
 * the partition went back to their queues (their holder died or lost the
 * partition), or { 0, holder } held by another node.
 */
static const char script_own[] =
    LUA_COMMON
    "local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])\n"
    LUA_REQUEUE
    "local v = redis.call('GET', KEYS[5])\n"
    "if v == ARGV[2] then\n"
    "  redis.call('PEXPIRE', KEYS[5], ARGV[3])\n"
    "  return { 1 }\n"
    "end\n"
    "if v then return { 0, v } end\n"
    "redis.call('SET', KEYS[5], ARGV[2], 'PX', ARGV[3])\n"
    "local mine, count = ARGV[2] .. '\\t', 0\n"
    "for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
    "  if string.sub(e, 1, #mine) ~= mine then count = count + requeue(e) end\n"
    "end\n"
    "return { 2, count }\n";

/*
 * orphans: KEYS: lease, act, next, key prefix "<prefix>:{p}:". ARGV: now,
 * host_connections, node, then the entries node holds (held.c). Every
 * other lease of node goes back to its queue; returns how many.
 */
static const char script_orphans[] =
    LUA_COMMON
    "local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    LUA_REQUEUE
    "local mine, keep, count = ARGV[3] .. '\\t', {}, 0\n"
    "for i = 4, #ARGV do keep[ARGV[i]] = true end\n"
    "for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
    "  if string.sub(e, 1, #mine) == mine and not keep[e] then\n"
    "    count = count + requeue(e)\n"
    "  end\n"
    "end\n"
    "return count\n";

/* release: KEYS own; ARGV node. Deletes own if it holds node; 1 or 0. */
static const char script_release[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('DEL', KEYS[1])\n"
    "end\n"
    "return 0\n";

static const char *const bodies[FRONTIER_NSCRIPTS] = {
    script_admit, script_pop, script_complete, script_reclaim, script_seen,
    script_admit_mod, script_own, script_release, script_orphans
};

const char *frontier__script_body(int script)
{
    if (script < 0 || script >= FRONTIER_NSCRIPTS)
        return "";
    return bodies[script];
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
        frontier__strv_pushs(&calls[i].args, bodies[i]);
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
