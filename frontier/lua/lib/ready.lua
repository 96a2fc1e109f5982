-- ready.lua: ready(h), the earliest score below busy in the ZSET h (when
-- a host of it may be fetched next), or -1. Needs common.
local function ready(h)
  local r = redis.call('ZRANGEBYSCORE', h, '-inf', '(' .. str(busy),
                       'WITHSCORES', 'LIMIT', 0, 1)
  if #r > 0 then return tonumber(r[2]) end
  return -1
end
