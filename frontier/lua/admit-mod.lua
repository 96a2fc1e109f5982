-- admit-mod.lua: admit URLs in seen-set layout mod-u64 (the dcrawl-seen
-- module, seen/module/). KEYS: pend, stat, host, budget, the
-- partition's module seen-set "<prefix>:{p}:S", then per URL: host queue,
-- h:<d>. ARGV: now, host_connections, host budget (0 = none), then per
-- URL: url, host, depth, and last the fingerprints of all URLs as one blob
-- (8 bytes each, little-endian). Without a budget one DCSEEN.ADD inserts
-- them all and answers a '1'/'0' flag per URL; with one, each URL is
-- checked against its host's budget first, as in admit.lua, and inserted
-- (or only checked, when the budget is spent) on its own. Same reply as
-- admit.lua.
-- Native twin: DCFRONT.ADMIT (seen/module/admit-module.c); keep the two equal.
--#include common
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local budget = tonumber(ARGV[3])
--#include admit
local fps = ARGV[#ARGV]
local flags = ''
if budget == 0 then flags = redis.call('DCSEEN.ADD', KEYS[5], fps) end
for i = 0, (#KEYS - 5) / 2 - 1 do
  local k, a = 6 + 2 * i, 4 + 3 * i
  local host, new = ARGV[a + 1], false
  if budget == 0 then
    new = string.byte(flags, i + 1) == 49
  else
    local fp = string.sub(fps, 8 * i + 1, 8 * i + 8)
    if num(redis.call('HGET', KEYS[4], host)) < budget then
      new = redis.call('DCSEEN.ADD', KEYS[5], fp) == '1'
    elseif redis.call('DCSEEN.CHECK', KEYS[5], fp) == '1' then
      over = over + 1
      res[i + 1] = 2
    end
  end
  if not res[i + 1] then -- else refused by the budget
    answer(i, new, KEYS[k], KEYS[k + 1], ARGV[a], host, ARGV[a + 2])
  end
end
return finish()
