-- pop.lua: lease ready URLs of one depth from one partition
-- (frontier_pop). KEYS: h:<d>, host, lease, queue prefix
-- "<prefix>:{p}:q:<d>:", own. ARGV: now, depth, max, lease ms (the
-- deadline is Redis's clock + this: reclaim compares it with the same
-- clock, so no node's clock skew can expire a lease early), window (leases a host may have out), node, check (1: pop only while own
-- holds node), host_connections. A host whose last completion left a
-- politeness clock is leased up to host_connections + 1 (one URL at hand
-- when its gap ends; never past the window), any other up to the window
-- (frontier_set_lease_ahead); every ready host gets its host_connections
-- first, the window's extra leases come from the room left. Each host's
-- state field is read once and written once; its URLs leave the queue in
-- one LPOP (fewer than asked: the queue is empty, no LLEN needed); the
-- lease entries go into the lease ZSET in one ZADD. Returns { next ready
-- ms at d or -1, lease entry... }, or { -2 } when the partition is not
-- ours. A host's leases of deeper depths do not count against its limit
-- here (low, common.lua).
-- Native twin: DCFRONT.POP (seen/module/pop-module.c); keep the two equal.
--#include common
--#include ready
if ARGV[7] == '1' and redis.call('GET', KEYS[5]) ~= ARGV[6] then
  return { -2 }
end
local now, max = tonumber(ARGV[1]), tonumber(ARGV[3])
local window, conns = tonumber(ARGV[5]), tonumber(ARGV[8])
local out, lz = { -1 }, {}
local deadline = str(rnow() + tonumber(ARGV[4]))
local lead = ARGV[6] .. '\t' .. ARGV[2] .. '\t'
-- take(host, n): up to n URLs of host leased; returns how many and
-- whether its queue is now empty
local function take(host, n)
  if n <= 0 then return 0, false end
  local urls = redis.call('LPOP', KEYS[4] .. host, n)
  if not urls then return 0, true end
  for _, url in ipairs(urls) do
    local e = lead .. host .. '\t' .. qdec(url, host)
    out[#out + 1] = e
    lz[#lz + 1] = deadline
    lz[#lz + 1] = e
  end
  return #urls, #urls < n
end
local d, busy_s = tonumber(ARGV[2]), str(busy)
-- finish(...): a host's score in h:<d> and its state once it got its
-- leases (got, on top of lo) and its queue is empty or not (LLEN when
-- the last LPOP does not tell)
local function finish(host, act, lo, got, nx, limit, empty, m, td, tn)
  local m2 = m
  if empty or redis.call('LLEN', KEYS[4] .. host) == 0 then
    redis.call('ZREM', KEYS[1], host)
  elseif lo + got >= limit then
    redis.call('ZADD', KEYS[1], busy_s, host)
    m2 = mark(m, ARGV[2])
  else
    redis.call('ZADD', KEYS[1], ARGV[1], host)
  end
  if got > 0 or m2 ~= m then
    act, td, tn = lease_add(act, td, tn, d, got)
    hset_st(KEYS[2], host, act, nx, m2, td, tn)
  end
end
local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],
                         'LIMIT', 0, max)
-- Every ready host gets its host_connections first; one that may take
-- more (the window) waits in open for the room left, any other is
-- finished at once.
local open = {}
for _, host in ipairs(hosts) do
  if #out > max then break end
  local act, nx, m, td, tn = hget_st(KEYS[2], host)
  local lo = low(act, td, tn, d)
  local limit = nx > 0 and math.min(window, conns + 1) or window
  if lo >= limit then
    redis.call('ZADD', KEYS[1], busy_s, host)
    local m2 = mark(m, ARGV[2])
    if m2 ~= m then hset_st(KEYS[2], host, act, nx, m2, td, tn) end
  elseif nx > now then
    redis.call('ZADD', KEYS[1], str(nx), host)
  else
    local got, empty = take(host, math.min(conns - lo, max + 1 - #out))
    if lo + got < limit and not empty then
      open[#open + 1] = { host, act, lo, got, nx, limit, m, td, tn }
    else
      finish(host, act, lo, got, nx, limit, empty, m, td, tn)
    end
  end
end
for _, o in ipairs(open) do
  local host, act, lo, got, nx, limit, m, td, tn = unpack(o)
  local more, empty = take(host, math.min(limit - lo - got,
                                          max + 1 - #out))
  finish(host, act, lo, got + more, nx, limit, empty, m, td, tn)
end
for s = 1, #lz, 1000 do
  redis.call('ZADD', KEYS[3], unpack(lz, s, math.min(s + 999, #lz)))
end
out[1] = ready(KEYS[1])
return out
