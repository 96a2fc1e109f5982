-- pop.lua: lease ready URLs of one depth from one partition
-- (frontier_pop). KEYS: h:<d>, next, act, lease, queue prefix
-- "<prefix>:{p}:q:<d>:", own. ARGV: now, depth, max, lease ms (the
-- deadline is Redis's clock + this: reclaim compares it with the same
-- clock, so no node's clock skew can expire a lease early), window (leases a host may have out), node, check (1: pop only while own
-- holds node), host_connections. A host whose last completion left a
-- politeness clock in next is leased up to host_connections + 1 (one URL
-- at hand when its gap ends; never past the window), any other up to the
-- window (frontier_set_lease_ahead); every ready host gets its
-- host_connections first, the window's extra leases come from the room
-- left. Returns { next ready ms at d or -1, lease entry... }, or { -2 }
-- when the partition is not ours.
--#include common
--#include ready
if ARGV[7] == '1' and redis.call('GET', KEYS[6]) ~= ARGV[6] then
  return { -2 }
end
local now, max = tonumber(ARGV[1]), tonumber(ARGV[3])
local window, conns = tonumber(ARGV[5]), tonumber(ARGV[8])
local out = { -1 }
local deadline = str(rnow() + tonumber(ARGV[4]))
local function take(host, n)
  local q, got = KEYS[5] .. host, 0
  while got < n do
    local url = redis.call('LPOP', q)
    if not url then break end
    url = qdec(url, host)
    local e = ARGV[6] .. '\t' .. ARGV[2] .. '\t' .. host .. '\t' .. url
    redis.call('ZADD', KEYS[4], deadline, e)
    out[#out + 1] = e
    got = got + 1
  end
  if got > 0 then redis.call('HINCRBY', KEYS[3], host, got) end
  return got
end
local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],
                         'LIMIT', 0, max)
local open = {}
for _, host in ipairs(hosts) do
  if #out > max then break end
  local nx = num(redis.call('HGET', KEYS[2], host))
  local act = num(redis.call('HGET', KEYS[3], host))
  local limit = nx > 0 and math.min(window, conns + 1) or window
  if act >= limit then
    redis.call('ZADD', KEYS[1], str(busy), host)
  elseif nx > now then
    redis.call('ZADD', KEYS[1], str(nx), host)
  else
    act = act + take(host, math.min(conns - act, max + 1 - #out))
    open[#open + 1] = { host, act, limit }
  end
end
for _, o in ipairs(open) do
  local host, act, limit = o[1], o[2], o[3]
  if act < limit then
    act = act + take(host, math.min(limit - act, max + 1 - #out))
  end
  if redis.call('LLEN', KEYS[5] .. host) == 0 then
    redis.call('ZREM', KEYS[1], host)
  elseif act >= limit then
    redis.call('ZADD', KEYS[1], str(busy), host)
  else
    redis.call('ZADD', KEYS[1], ARGV[1], host)
  end
end
out[1] = ready(KEYS[1])
return out
