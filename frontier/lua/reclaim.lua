-- reclaim.lua: put expired leases back (frontier_reclaim). KEYS: lease,
-- host, key prefix "<prefix>:{p}:". ARGV: now, own (1: also every
-- lease of node), node, host_connections, queue layout (1: native).
-- Returns the number of leases put
-- back. A lease has expired when its deadline (set with Redis's clock by
-- pop.lua) is past Redis's clock now, so a node whose clock runs ahead
-- cannot take a lease early; ARGV now is only the politeness clock. Also
-- drops a random sample of politeness clocks already past by both clocks
-- (a node ahead must not drop a gap the owner still waits out).
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])
qn = ARGV[5] == '1'
--#include requeue
local rn = str(rnow())
local list = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', rn)
if ARGV[2] == '1' then
  local mine = ARGV[3] .. '\t'
  local rest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. rn, '+inf')
  for _, e in ipairs(rest) do
    if string.sub(e, 1, #mine) == mine then list[#list + 1] = e end
  end
end
local count = 0
for _, e in ipairs(list) do count = count + requeue(e) end
local r = redis.call(qn and 'DCFRONT.SRAND' or 'HRANDFIELD', KEYS[2], 64,
                     'WITHVALUES')
for i = 1, #r, 2 do
  local a, nx, m, td, tn = parse_st(r[i + 1])
  if nx > 0 and nx <= math.min(now, tonumber(rn)) then
    hset_st(KEYS[2], r[i], a, 0, m, td, tn)
  end
end
return count
