-- common.lua: what most scripts start with. busy is the score of a host
-- at its connection limit (FRONTIER_BUSY, later than any clock); num reads
-- a missing field as 0; str formats a number with %.0f, as Lua's default
-- %.14g would round 13+ digit millisecond clocks.
local busy = 9000000000000000
local function num(x) return tonumber(x or '0') or 0 end
local function str(x) return string.format('%.0f', x) end
-- qn: the queue layout is native (frontier.h): h:<d> is one value of the
-- module's, written with DCFRONT.QZADD, not a ZSET, and the host fields
-- are a map of the module's (DCFRONT.SGET, .SSET, .SDEL); set by the scripts
-- that take it in ARGV (reclaim, orphans, own), false for the others,
-- which only run on the zset-list layout. zadd(k, xx, score, host) is
-- ZADD [XX] in either layout.
local qn = false
local function zadd(k, xx, score, host)
  local c = qn and 'DCFRONT.QZADD' or 'ZADD'
  if xx then return redis.call(c, k, 'XX', str(score), host) end
  return redis.call(c, k, str(score), host)
end
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
-- A host's state is one field of the partition's host HASH:
-- "<act>[@<td>[:<tn>]] <next>[ <marks>]", act = its URLs leased (in
-- flight, every depth), td = the deepest depth it has leases of and tn =
-- how many of them (act when left out), next = its politeness clock in ms
-- (0: none), marks = the depths ("1,3") whose ready set h:<d> gave the
-- host the busy score. A depth is gated by the host's leases at it or
-- below (low), never by deeper ones: leases of d + 1 taken while level d
-- drains (and held by their node until it ends, crawler/node-ahead.c) must
-- not hold back a URL of d that comes back (a retry, a reclaimed lease),
-- or level d would wait for their lease to expire. Only the deepest depth
-- is counted apart; leases of a third depth would count as lower ones (a
-- host is gated more, never less). A host may be marked busy at a depth
-- it has no lease of; the script that frees leases re-scores it at every
-- marked depth no longer at the limit (free_marks). One field, so a host
-- costs one hash lookup, not two. parse_st(v) reads a field's value
-- (act, next, marks, td or nil, tn); hget_st(k, host) reads the host's;
-- hset_st writes it, or deletes the field when act is 0 and neither clock
-- nor mark is kept, so the hash follows the live hosts.
local function parse_st(v)
  if not v then return 0, 0, '', nil, 0 end
  local a, td, tn, n, m =
    string.match(v, '^(%-?%d+)@?(%d*):?(%d*) (%d+) ?([%d,]*)$')
  a = tonumber(a) or 0
  td = tonumber(td)
  return a, tonumber(n) or 0, m or '', td, td and (tonumber(tn) or a) or 0
end
local function hget_st(k, host)
  return parse_st(redis.call(qn and 'DCFRONT.SGET' or 'HGET', k, host))
end
local function hset_st(k, host, act, nx, m, td, tn)
  m = m or ''
  if act <= 0 and nx <= 0 and m == '' then
    redis.call(qn and 'DCFRONT.SDEL' or 'HDEL', k, host)
    return
  end
  local a = str(math.max(act, 0))
  if act > 0 and td and tn > 0 then
    a = a .. '@' .. td .. (tn ~= act and ':' .. tn or '')
  end
  redis.call(qn and 'DCFRONT.SSET' or 'HSET', k, host,
             a .. ' ' .. str(nx) .. (m ~= '' and ' ' .. m or ''))
end
-- low(act, td, tn, d): the host's leases at depth d or below (at most)
local function low(act, td, tn, d)
  if td and d < td then return act - tn end
  return act
end
-- lease_add(act, td, tn, d, k): the state after k leases of depth d
local function lease_add(act, td, tn, d, k)
  if k <= 0 then return act, td, tn end
  if td == d then return act + k, td, tn + k end
  if not td or d > td then return act + k, d, k end
  return act + k, td, tn
end
-- lease_end(act, td, tn, d): the state after a lease of depth d ended
local function lease_end(act, td, tn, d)
  act = act - 1
  if td == d then tn = tn - 1 end
  if act <= 0 or tn <= 0 then return act, nil, 0 end
  return act, td, tn
end
-- mark(m, d): marks m with depth d added
local function mark(m, d)
  d = tostring(d)
  if m == '' or m == d then return d end
  if string.find(',' .. m .. ',', ',' .. d .. ',', 1, true) then return m end
  return m .. ',' .. d
end
-- free_one(pfx, host, d, score, act, td, tn, conns, k0, k1, left): the
-- host gets score in h:<d> (key prefix pfx "<prefix>:{p}:") if it still
-- holds it and its leases at or below d are under conns, except at depths
-- k0 and k1 (nil: none), which the caller scores anyway; returns the marks
-- left with d added when it is still at the limit
local function free_one(pfx, host, d, score, act, td, tn, conns, k0, k1,
                        left)
  local dn = tonumber(d)
  if low(act, td, tn, dn) >= conns then return mark(left, d) end
  if dn ~= k0 and dn ~= k1 then
    zadd(pfx .. 'h:' .. d, true, score, host)
  end
  return left
end
-- free_marks(pfx, host, m, score, act, td, tn, conns, k0, k1): free_one
-- for every depth marked in m; returns the marks left (the depths still
-- at the limit). One depth marked, the usual case, needs no iterator.
local function free_marks(pfx, host, m, score, act, td, tn, conns, k0, k1)
  if not string.find(m, ',', 1, true) then
    return free_one(pfx, host, m, score, act, td, tn, conns, k0, k1, '')
  end
  local left = ''
  for d in string.gmatch(m, '%d+') do
    left = free_one(pfx, host, d, score, act, td, tn, conns, k0, k1, left)
  end
  return left
end
-- after_end(pfx, host, act, td, tn, m, d, score, conns, nxt): once a
-- lease of depth d ended (act, td, tn after it), the host's scores for
-- h:<d> and h:<d+1> (busy while its leases at or below that depth are at
-- conns; d + 1 is marked only when nxt, its set existing) and its marks,
-- every other marked depth no longer at the limit freed (free_marks). The
-- caller writes the two scores: h:<d> always, h:<d+1> when nxt.
local function after_end(pfx, host, act, td, tn, m, d, score, conns, nxt)
  local s0, s1 = score, score
  if low(act, td, tn, d) >= conns then s0, m = busy, mark(m, d) end
  if nxt and low(act, td, tn, d + 1) >= conns then
    s1, m = busy, mark(m, d + 1)
  end
  if m ~= '' then
    m = free_marks(pfx, host, m, score, act, td, tn, conns, d,
                   nxt and d + 1 or nil)
  end
  return s0, s1, m
end
