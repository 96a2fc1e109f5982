-- admit.lua: admit URLs in seen-set layout b256-i64 (frontier_admit).
-- Insert each URL's member into its seen bucket if absent and, if it was
-- absent, queue the URL at its depth.
-- KEYS: pend, stat, host, budget, then per URL: seen bucket, host
-- queue, h:<d>. ARGV: now, host_connections, host budget (0 = none), then
-- per URL: seen member, url, host, depth. Returns per URL 1 (new), 0
-- (already seen) or 2 (new, but its host's budget is spent: not marked
-- seen, not queued; counted as stat "budget").
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local budget = tonumber(ARGV[3])
--#include admit
for i = 0, (#KEYS - 4) / 3 - 1 do
  local k, a = 5 + 3 * i, 4 + 4 * i
  local host = ARGV[a + 2]
  if budget > 0 and num(redis.call('HGET', KEYS[4], host)) >= budget
     and redis.call('SISMEMBER', KEYS[k], ARGV[a]) == 0 then
    over = over + 1
    res[i + 1] = 2
  else
    local new = redis.call('SADD', KEYS[k], ARGV[a]) == 1
    answer(i, new, KEYS[k + 1], KEYS[k + 2], ARGV[a + 1], host, ARGV[a + 3])
  end
end
return finish()
