-- renew.lua: extend leases their node still holds (frontier_renew).
-- KEYS: lease. ARGV: lease ms, then the entries. The new deadline is
-- Redis's clock plus the lease time, as pop.lua sets it. An entry no
-- longer in the ZSET (its deadline passed and it was reclaimed, or it was
-- completed) is not added back. Returns how many were extended.
--#include common
local dl = str(rnow() + tonumber(ARGV[1]))
local count = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', dl, ARGV[i])
    count = count + 1
  end
end
return count
