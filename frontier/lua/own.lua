-- own.lua: take or renew partition ownership (frontier/cluster.c).
-- KEYS: lease, host, key prefix "<prefix>:{p}:", own. ARGV: now,
-- node, ttl ms, host_connections, queue layout (1: native). Returns { 1 } renewed (own already held
-- node), { 2, n } taken: own was free, now holds node for ttl, and the n
-- URL leases other nodes left in the partition went back to their queues
-- (their holder died or lost the partition), or { 0, holder } held by
-- another node.
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[4])
qn = ARGV[5] == '1'
--#include requeue
local v = redis.call('GET', KEYS[4])
if v == ARGV[2] then
  redis.call('PEXPIRE', KEYS[4], ARGV[3])
  return { 1 }
end
if v then return { 0, v } end
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[3])
local mine, count = ARGV[2] .. '\t', 0
for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(e, 1, #mine) ~= mine then count = count + requeue(e) end
end
return { 2, count }
