-- pop.lua: lease ready URLs of one depth from one partition
-- (frontier_pop). KEYS: h:<d>, next, act, lease, queue prefix
-- "<prefix>:{p}:q:<d>:", own. ARGV: now, depth, max, lease deadline,
-- host_connections, node, check (1: pop only while own holds node).
-- Returns { next ready ms at d or -1, lease entry... }, or { -2 } when the
-- partition is not ours.
--#include common
--#include ready
if ARGV[7] == '1' and redis.call('GET', KEYS[6]) ~= ARGV[6] then
  return { -2 }
end
local now, max = tonumber(ARGV[1]), tonumber(ARGV[3])
local conns = tonumber(ARGV[5])
local out = { -1 }
local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],
                         'LIMIT', 0, max)
for _, host in ipairs(hosts) do
  if #out > max then break end
  local nx = num(redis.call('HGET', KEYS[2], host))
  local act = num(redis.call('HGET', KEYS[3], host))
  local q = KEYS[5] .. host
  if act >= conns then
    redis.call('ZADD', KEYS[1], str(busy), host)
  elseif nx > now then
    redis.call('ZADD', KEYS[1], str(nx), host)
  else
    if nx > 0 then redis.call('HDEL', KEYS[2], host) end
    local take, got = math.min(conns - act, max + 1 - #out), 0
    while got < take do
      local url = redis.call('LPOP', q)
      if not url then break end
      url = qdec(url, host)
      local e = ARGV[6] .. '\t' .. ARGV[2] .. '\t' .. host .. '\t' .. url
      redis.call('ZADD', KEYS[4], ARGV[4], e)
      out[#out + 1] = e
      got = got + 1
    end
    if got > 0 then redis.call('HINCRBY', KEYS[3], host, got) end
    if redis.call('LLEN', q) == 0 then
      redis.call('ZREM', KEYS[1], host)
    elseif act + got >= conns then
      redis.call('ZADD', KEYS[1], str(busy), host)
    else
      redis.call('ZADD', KEYS[1], ARGV[1], host)
    end
  end
end
out[1] = ready(KEYS[1])
return out
