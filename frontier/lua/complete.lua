-- complete.lua: complete leases with their outcomes (frontier_complete).
-- KEYS: lease, act, next, pend, stat, h:<d> whose ready time to return,
-- fail, then per lease: queue, h:<d>, h:<d+1>. ARGV: now, host_connections, then
-- per lease: entry, outcome, delay, depth, host, url, retry. A retry (outcome
-- 3) goes to the end of its host queue; its own back-off (retry ms) holds
-- the host only when nothing else of it is queued. Returns the next ready ms
-- of KEYS[6], or -1. A URL given up (outcome 1) counts for its host in the
-- fail ZSET (host -> URLs given up), kept to FAIL_MAX hosts: past that the
-- host with the fewest is dropped (a status display shows the top ones).
--#include common
--#include ready
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local names = { 'done:', 'failed:', 'skipped:' }
local FAIL_MAX = 1000
for i = 0, (#KEYS - 7) / 3 - 1 do
  local k, a = 8 + 3 * i, 3 + 7 * i
  local q, h, h1 = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local outcome, d = tonumber(ARGV[a + 1]), ARGV[a + 3]
  local host, url = ARGV[a + 4], ARGV[a + 5]
  local held = redis.call('ZREM', KEYS[1], ARGV[a]) == 1
  local counted = held
  if held and redis.call('HINCRBY', KEYS[2], host, -1) <= 0 then
    redis.call('HDEL', KEYS[2], host)
  end
  if outcome == 3 then
    if held then redis.call('RPUSH', q, qenc(url, host)) end
    counted = false
  elseif not held then
    local s = qenc(url, host) -- or queued whole, before the encoding
    counted = redis.call('LREM', q, 1, s) == 1 or
              (s ~= url and redis.call('LREM', q, 1, url) == 1)
  end
  if counted then
    if redis.call('HINCRBY', KEYS[4], d, -1) <= 0 then
      redis.call('HDEL', KEYS[4], d)
    end
    redis.call('HINCRBY', KEYS[5], names[outcome + 1] .. d, 1)
    if outcome == 1 then
      redis.call('ZINCRBY', KEYS[7], 1, host)
      if redis.call('ZCARD', KEYS[7]) > FAIL_MAX then
        redis.call('ZREMRANGEBYRANK', KEYS[7], 0, 0)
      end
    end
  end
  local cur = num(redis.call('HGET', KEYS[3], host))
  local gap = math.max(tonumber(ARGV[a + 2]), 0)
  local queued = redis.call('LLEN', q)
  if outcome == 3 and queued <= 1 then
    gap = math.max(gap, tonumber(ARGV[a + 6]))
  end
  local nx = math.max(cur, now + gap)
  if nx > now then
    redis.call('HSET', KEYS[3], host, str(nx))
  elseif cur > 0 then
    redis.call('HDEL', KEYS[3], host)
  end
  local score = math.max(nx, now)
  if num(redis.call('HGET', KEYS[2], host)) >= conns then score = busy end
  if queued > 0 then
    redis.call('ZADD', h, str(score), host)
  else
    redis.call('ZREM', h, host)
  end
  if redis.call('ZSCORE', h1, host) then
    redis.call('ZADD', h1, str(score), host)
  end
end
return ready(KEYS[6])
