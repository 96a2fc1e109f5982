-- admit-mod.lua: admit URLs in seen-set layout mod-u64 (the dcrawl-seen
-- module, seen/module/). KEYS: pend, stat, next, act, budget, the
-- partition's module seen-set "<prefix>:{p}:S", then per URL: host queue,
-- h:<d>. ARGV: now, host_connections, host budget (0 = none), then per
-- URL: url, host, depth, and last the fingerprints of all URLs as one blob
-- (8 bytes each, little-endian). Without a budget one DCSEEN.ADD inserts
-- them all and answers a '1'/'0' flag per URL; with one, each URL is
-- checked against its host's budget first, as in admit.lua, and inserted
-- (or only checked, when the budget is spent) on its own. Same reply as
-- admit.lua.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
local now, conns = tonumber(ARGV[1]), tonumber(ARGV[2])
local function enqueue(q, h, url, host, d)
  redis.call('RPUSH', q, url)
  redis.call('HINCRBY', KEYS[1], d, 1)
  if not redis.call('ZSCORE', h, host) then
    local score = busy
    if num(redis.call('HGET', KEYS[4], host)) < conns then
      score = math.max(now, num(redis.call('HGET', KEYS[3], host)))
    end
    redis.call('ZADD', h, str(score), host)
  end
end
local budget = tonumber(ARGV[3])
local res, added, seen, over = {}, 0, 0, 0
local fps = ARGV[#ARGV]
local flags = ''
if budget == 0 then flags = redis.call('DCSEEN.ADD', KEYS[6], fps) end
for i = 0, (#KEYS - 6) / 2 - 1 do
  local k, a = 7 + 2 * i, 4 + 3 * i
  local host, new = ARGV[a + 1], false
  if budget == 0 then
    new = string.byte(flags, i + 1) == 49
  else
    local fp = string.sub(fps, 8 * i + 1, 8 * i + 8)
    if num(redis.call('HGET', KEYS[5], host)) < budget then
      new = redis.call('DCSEEN.ADD', KEYS[6], fp) == '1'
    elseif redis.call('DCSEEN.CHECK', KEYS[6], fp) == '1' then
      over = over + 1
      res[i + 1] = 2
    end
  end
  if res[i + 1] then
    -- refused by the budget
  elseif new then
    enqueue(KEYS[k], KEYS[k + 1], ARGV[a], host, ARGV[a + 2])
    if budget > 0 then redis.call('HINCRBY', KEYS[5], host, 1) end
    added = added + 1
    res[i + 1] = 1
  else
    seen = seen + 1
    res[i + 1] = 0
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'admitted', added) end
if seen > 0 then redis.call('HINCRBY', KEYS[2], 'seen', seen) end
if over > 0 then redis.call('HINCRBY', KEYS[2], 'budget', over) end
return res
