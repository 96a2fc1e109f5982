-- release.lua: give a partition up (frontier/cluster.c). KEYS: own;
-- ARGV: node. Deletes own if it holds node; returns 1 or 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
