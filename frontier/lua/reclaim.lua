-- reclaim.lua: put expired leases back (frontier_reclaim). KEYS: lease,
-- act, next, key prefix "<prefix>:{p}:". ARGV: now, own (1: also every
-- lease of node), node, host_connections. Returns the number of leases put
-- back. Also drops a random sample of politeness clocks that are already
-- in the past.
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])
--#include requeue
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
