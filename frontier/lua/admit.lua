-- admit.lua: admit URLs in seen-set layout b256-i64 (frontier_admit).
-- Insert each URL's member into its seen bucket if absent and, if it was
-- absent, queue the URL at its depth.
-- KEYS: pend, stat, next, act, budget, then per URL: seen bucket, host
-- queue, h:<d>. ARGV: now, host_connections, host budget (0 = none), then
-- per URL: seen member, url, host, depth. Returns per URL 1 (new), 0
-- (already seen) or 2 (new, but its host's budget is spent: not marked
-- seen, not queued; counted as stat "budget").
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local function enqueue(q, h, url, host, d)
  redis.call('RPUSH', q, url)
  redis.call('HINCRBY', KEYS[1], d, 1)
  if not redis.call('ZSCORE', h, host) then
    local score = busy
    if num(redis.call('HGET', KEYS[4], host)) < conns then
      score = math.max(now, num(redis.call('HGET', KEYS[3], host)))
    end
    redis.call('ZADD', h, str(score), host)
  end
end
local budget = tonumber(ARGV[3])
local res, added, seen, over = {}, 0, 0, 0
for i = 0, (#KEYS - 5) / 3 - 1 do
  local k, a = 6 + 3 * i, 4 + 4 * i
  local host = ARGV[a + 2]
  if budget > 0 and num(redis.call('HGET', KEYS[5], host)) >= budget
     and redis.call('SISMEMBER', KEYS[k], ARGV[a]) == 0 then
    over = over + 1
    res[i + 1] = 2
  elseif redis.call('SADD', KEYS[k], ARGV[a]) == 1 then
    enqueue(KEYS[k + 1], KEYS[k + 2], ARGV[a + 1], host, ARGV[a + 3])
    if budget > 0 then redis.call('HINCRBY', KEYS[5], host, 1) end
    added = added + 1
    res[i + 1] = 1
  else
    seen = seen + 1
    res[i + 1] = 0
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'admitted', added) end
if seen > 0 then redis.call('HINCRBY', KEYS[2], 'seen', seen) end
if over > 0 then redis.call('HINCRBY', KEYS[2], 'budget', over) end
return res
