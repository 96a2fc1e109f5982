-- orphans.lua: leases of this node it does not hold (after a reconnect,
-- frontier_reclaim_orphans). KEYS: lease, act, next, key prefix
-- "<prefix>:{p}:". ARGV: now, host_connections, node, then the entries
-- node holds (frontier/held.c). Every other lease of node goes back to its
-- queue; returns how many.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
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
local mine, keep, count = ARGV[3] .. '\t', {}, 0
for i = 4, #ARGV do keep[ARGV[i]] = true end
for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(e, 1, #mine) == mine and not keep[e] then
    count = count + requeue(e)
  end
end
return count
