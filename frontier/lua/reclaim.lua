-- reclaim.lua: put expired leases back (frontier_reclaim). KEYS: lease,
-- act, next, key prefix "<prefix>:{p}:". ARGV: now, own (1: also every
-- lease of node), node, host_connections. Returns the number of leases put
-- back. Also drops a random sample of politeness clocks that are already
-- in the past. requeue(e) is the same in own.lua and orphans.lua (a
-- script cannot share code with another one).
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
local list = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if ARGV[2] == '1' then
  local mine = ARGV[3] .. '\t'
  local rest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')
  for _, e in ipairs(rest) do
    if string.sub(e, 1, #mine) == mine then list[#list + 1] = e end
  end
end
local count = 0
for _, e in ipairs(list) do count = count + requeue(e) end
local r = redis.call('HRANDFIELD', KEYS[3], 64, 'WITHVALUES')
for i = 1, #r, 2 do
  if num(r[i + 1]) <= now then redis.call('HDEL', KEYS[3], r[i]) end
end
return count
