-- complete.lua: complete leases with their outcomes (frontier_complete).
-- KEYS: lease, host, pend, stat, h:<d> whose ready time to return, fail,
-- then per lease: queue, h:<d>, h:<d+1>. ARGV: now, host_connections, then
-- per lease: entry, outcome, delay, depth, host, url, retry. A retry
-- (outcome 3) goes to the end of its host queue; its own back-off (retry
-- ms) holds the host only when nothing else of it is queued. Returns the
-- next ready ms of KEYS[5], or -1. A URL given up (outcome 1) counts for
-- its host in the fail ZSET (host -> URLs given up), kept to FAIL_MAX
-- hosts: past that the host with the fewest is dropped (a status display
-- shows the top ones). The leases still held leave the lease ZSET in one
-- ZMSCORE + ZREM, pend and stat take one HINCRBY per field, each host's
-- state is read and written once per lease, and h:<d+1> is touched only
-- when that key exists. A lease completed while held, not retried, leaves
-- its queue as it was, so its host is in h:<d> exactly when it was before
-- (the invariant, scripts.c): ZADD XX re-scores it without reading the
-- queue.
-- Native twin: DCFRONT.COMPLETE (seen/module/complete-module.c); keep the two equal.
--#include common
--#include ready
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local pfx = string.sub(KEYS[1], 1, -6) -- "<prefix>:{p}:" of "...:lease"
local names = { 'done:', 'failed:', 'skipped:' }
local FAIL_MAX, n = 1000, (#KEYS - 6) / 3
local held, gone, ent = {}, {}, {}
for i = 1, n do ent[i] = ARGV[3 + 7 * (i - 1)] end
for s = 1, n, 500 do
  local e, rm = math.min(s + 499, n), {}
  local sc = redis.call('ZMSCORE', KEYS[1], unpack(ent, s, e))
  for j = s, e do
    if sc[j - s + 1] and not gone[ent[j]] then
      held[j], gone[ent[j]] = true, true
      rm[#rm + 1] = ent[j]
    end
  end
  if #rm > 0 then redis.call('ZREM', KEYS[1], unpack(rm)) end
end
local has, pend, stats = {}, {}, {}
local function exists(k)
  if has[k] == nil then has[k] = redis.call('EXISTS', k) == 1 end
  return has[k]
end
for i = 0, n - 1 do
  local k, a = 7 + 3 * i, 3 + 7 * i
  local q, h, h1 = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local outcome, d = tonumber(ARGV[a + 1]), ARGV[a + 3]
  local host, url = ARGV[a + 4], ARGV[a + 5]
  local counted = held[i + 1]
  local act, cur, m, td, tn = hget_st(KEYS[2], host)
  local dn = tonumber(d)
  if counted then act, td, tn = lease_end(act, td, tn, dn) end
  if outcome == 3 then
    if counted then redis.call('RPUSH', q, qenc(url, host)) end
    counted = false
  elseif not counted then
    local s = qenc(url, host) -- or queued whole, before the encoding
    counted = redis.call('LREM', q, 1, s) == 1 or
              (s ~= url and redis.call('LREM', q, 1, url) == 1)
  end
  if counted then
    local name = names[outcome + 1] .. d
    pend[d], stats[name] = (pend[d] or 0) + 1, (stats[name] or 0) + 1
    if outcome == 1 then
      redis.call('ZINCRBY', KEYS[6], 1, host)
      if redis.call('ZCARD', KEYS[6]) > FAIL_MAX then
        redis.call('ZREMRANGEBYRANK', KEYS[6], 0, 0)
      end
    end
  end
  local gap, queued = math.max(tonumber(ARGV[a + 2]), 0), nil
  if outcome == 3 or not held[i + 1] then queued = redis.call('LLEN', q) end
  if outcome == 3 and queued <= 1 then
    gap = math.max(gap, tonumber(ARGV[a + 6]))
  end
  local nx = math.max(cur, now + gap)
  local score, score1
  score, score1, m = after_end(pfx, host, act, td, tn, m, dn,
                               math.max(nx, now), conns, exists(h1))
  hset_st(KEYS[2], host, act, nx > now and nx or 0, m, td, tn)
  if not queued then
    redis.call('ZADD', h, 'XX', str(score), host)
  elseif queued > 0 then
    redis.call('ZADD', h, str(score), host)
    has[h] = true
  else
    redis.call('ZREM', h, host)
    has[h] = nil
  end
  if exists(h1) then redis.call('ZADD', h1, 'XX', str(score1), host) end
end
for d, c in pairs(pend) do
  if redis.call('HINCRBY', KEYS[3], d, -c) <= 0 then
    redis.call('HDEL', KEYS[3], d)
  end
end
for name, c in pairs(stats) do redis.call('HINCRBY', KEYS[4], name, c) end
return ready(KEYS[5])
