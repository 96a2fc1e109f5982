-- common.lua: what most scripts start with. busy is the score of a host
-- at its connection limit (FRONTIER_BUSY, later than any clock); num reads
-- a missing field as 0; str formats a number with %.0f, as Lua's default
-- %.14g would round 13+ digit millisecond clocks.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
-- rnow() is Redis's clock in ms (TIME). Every time another node relies
-- on (URL lease deadlines, heartbeats, expiry) is taken from it, never
-- from a node's ARGV now, so node clocks may disagree by any amount.
local function rnow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- qenc(url, host) is how a URL is kept in its host's queue q:<d>:<host>,
-- qdec(s, host) reads it back (exact inverses). The key names the host, so
-- a leading "http://<host>" or "https://<host>" is kept as one byte, \1 or
-- \2 (about 20 bytes less per queued URL); any other URL is kept as it is
-- (no URL starts with \1 or \2, so URLs queued whole read back unchanged).
local function qenc(url, host)
  local n = #host + 7
  if string.sub(url, 1, n) == 'http://' .. host then
    return '\1' .. string.sub(url, n + 1)
  end
  if string.sub(url, 1, n + 1) == 'https://' .. host then
    return '\2' .. string.sub(url, n + 2)
  end
  return url
end
local function qdec(s, host)
  local b = string.byte(s)
  if b == 1 then return 'http://' .. host .. string.sub(s, 2) end
  if b == 2 then return 'https://' .. host .. string.sub(s, 2) end
  return s
end
-- A host's state is one field of the partition's host HASH: "<act>
-- <next>[ <marks>]", act = its URLs leased (in flight), next = its
-- politeness clock in ms (0: none), marks = the depths ("1,3") whose
-- ready set h:<d> gave the host the busy score. act counts leases of every
-- depth, so a host may be marked busy at a depth it has no lease of (its
-- URLs queued at a lower depth while deeper ones are leased: admitted
-- again after a failover, a sitemap read again); the script that frees
-- the host re-scores it at every marked depth (free_marks), not only at
-- its lease's. One field, so a host costs one hash lookup, not two.
-- parse_st(v) reads a field's value (0, 0, '' when v is nil);
-- hget_st(k, host) reads the host's; hset_st writes it, or deletes the
-- field when act is 0 and neither clock nor mark is kept, so the hash
-- follows the live hosts.
local function parse_st(v)
  if not v then return 0, 0, '' end
  local a, n, m = string.match(v, '^(%-?%d+) (%d+) ?([%d,]*)$')
  return tonumber(a) or 0, tonumber(n) or 0, m or ''
end
local function hget_st(k, host)
  return parse_st(redis.call('HGET', k, host))
end
local function hset_st(k, host, act, nx, m)
  m = m or ''
  if act <= 0 and nx <= 0 and m == '' then
    redis.call('HDEL', k, host)
  else
    redis.call('HSET', k, host, str(math.max(act, 0)) .. ' ' .. str(nx) ..
               (m ~= '' and ' ' .. m or ''))
  end
end
-- mark(m, d): marks m with depth d added
local function mark(m, d)
  d = tostring(d)
  if string.find(',' .. m .. ',', ',' .. d .. ',', 1, true) then return m end
  if m == '' then return d end
  return m .. ',' .. d
end
-- free_marks(pfx, host, m, score): the host, no longer at its limit, gets
-- score in every marked h:<d> (key prefix pfx "<prefix>:{p}:") that still
-- holds it; returns the marks left (none)
local function free_marks(pfx, host, m, score)
  for d in string.gmatch(m, '%d+') do
    redis.call('ZADD', pfx .. 'h:' .. d, 'XX', str(score), host)
  end
  return ''
end
