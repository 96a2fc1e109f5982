-- common.lua: what most scripts start with. busy is the score of a host
-- at its connection limit (FRONTIER_BUSY, later than any clock); num reads
-- a missing field as 0; str formats a number with %.0f, as Lua's default
-- %.14g would round 13+ digit millisecond clocks.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
