-- own.lua: take or renew partition ownership (frontier/cluster.c).
-- KEYS: lease, act, next, key prefix "<prefix>:{p}:", own. ARGV: now,
-- node, ttl ms, host_connections. Returns { 1 } renewed (own already held
-- node), { 2, n } taken: own was free, now holds node for ttl, and the n
-- URL leases other nodes left in the partition went back to their queues
-- (their holder died or lost the partition), or { 0, holder } held by
-- another node.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])
local function requeue(e)
  local _, d, host, url =
    string.match(e, '^([^\t]*)\t(%d+)\t([^\t]+)\t(.*)$')
  if redis.call('ZREM', KEYS[1], e) == 0 or not url then return 0 end
  redis.call('LPUSH', KEYS[4] .. 'q:' .. d .. ':' .. host, url)
  local act = redis.call('HINCRBY', KEYS[2], host, -1)
  if act <= 0 then redis.call('HDEL', KEYS[2], host) end
  local score = math.max(now, num(redis.call('HGET', KEYS[3], host)))
  if act >= conns then score = busy end
  redis.call('ZADD', KEYS[4] .. 'h:' .. d, str(score), host)
  local h1 = KEYS[4] .. 'h:' .. (tonumber(d) + 1)
  if redis.call('ZSCORE', h1, host) then
    redis.call('ZADD', h1, str(score), host)
  end
  return 1
end
local v = redis.call('GET', KEYS[5])
if v == ARGV[2] then
  redis.call('PEXPIRE', KEYS[5], ARGV[3])
  return { 1 }
end
if v then return { 0, v } end
redis.call('SET', KEYS[5], ARGV[2], 'PX', ARGV[3])
local mine, count = ARGV[2] .. '\t', 0
for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(e, 1, #mine) ~= mine then count = count + requeue(e) end
end
return { 2, count }
