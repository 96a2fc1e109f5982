-- orphans.lua: leases of this node it does not hold (after a reconnect,
-- frontier_reclaim_orphans). KEYS: lease, host, key prefix
-- "<prefix>:{p}:". ARGV: now, host_connections, node, queue layout (1:
-- native), then the entries node holds (frontier/held.c). Every other
-- lease of node goes back to its queue; returns how many.
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
qn = ARGV[4] == '1'
--#include requeue
local mine, keep, count = ARGV[3] .. '\t', {}, 0
for i = 5, #ARGV do keep[ARGV[i]] = true end
for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(e, 1, #mine) == mine and not keep[e] then
    count = count + requeue(e)
  end
end
return count
