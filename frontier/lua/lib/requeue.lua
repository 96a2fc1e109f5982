-- requeue.lua: requeue(e) puts lease entry e ("<node>\t<d>\t<host>\t<url>")
-- back at the front of its host queue; returns 1 when e was still leased.
-- KEYS 1-3: lease, host, key prefix "<prefix>:{p}:"; needs common (its
-- qn set: the queue layout) and the locals now and conns.
local function requeue(e)
  local _, d, host, url =
    string.match(e, '^([^\t]*)\t(%d+)\t([^\t]+)\t(.*)$')
  if redis.call('ZREM', KEYS[1], e) == 0 or not url then return 0 end
  if qn then
    redis.call('DCFRONT.QPUSH', KEYS[3] .. 'h:' .. d, host, 'head',
               qenc(url, host))
  else
    redis.call('LPUSH', KEYS[3] .. 'q:' .. d .. ':' .. host, qenc(url, host))
  end
  local dn = tonumber(d)
  local act, nx, m, td, tn = hget_st(KEYS[2], host)
  act, td, tn = lease_end(act, td, tn, dn)
  local s0, s1
  s0, s1, m = after_end(KEYS[3], host, act, td, tn, m, dn,
                        math.max(now, nx), conns, true)
  hset_st(KEYS[2], host, act, nx, m, td, tn)
  zadd(KEYS[3] .. 'h:' .. d, false, s0, host)
  zadd(KEYS[3] .. 'h:' .. (dn + 1), true, s1, host)
  return 1
end
