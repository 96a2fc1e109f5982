-- members.lua: heartbeat and live set (frontier/cluster.c). KEYS: nodes
-- (the ZSET id -> heartbeat deadline). ARGV: node ('' for no heartbeat),
-- node timeout ms, forget ms. With Redis's clock now (TIME): node's
-- deadline becomes now + timeout, entries dead for forget ms are dropped,
-- and the reply is { now, id... } with every id whose deadline is after
-- now. Node clocks never enter: a node whose clock is behind is not seen
-- dead, one ahead does not outlive its death.
--#include common
local now = rnow()
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], str(now + tonumber(ARGV[2])), ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', str(now - tonumber(ARGV[3])))
local out = { now }
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. str(now),
                               '+inf')) do
  out[#out + 1] = id
end
return out
