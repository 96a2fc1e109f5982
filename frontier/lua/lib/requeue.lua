-- requeue.lua: requeue(e) puts lease entry e ("<node>\t<d>\t<host>\t<url>")
-- back at the front of its host queue; returns 1 when e was still leased.
-- KEYS 1-3: lease, host, key prefix "<prefix>:{p}:"; needs common and the
-- locals now and conns.
local function requeue(e)
  local _, d, host, url =
    string.match(e, '^([^\t]*)\t(%d+)\t([^\t]+)\t(.*)$')
  if redis.call('ZREM', KEYS[1], e) == 0 or not url then return 0 end
  redis.call('LPUSH', KEYS[3] .. 'q:' .. d .. ':' .. host, qenc(url, host))
  local act, nx, m = hget_st(KEYS[2], host)
  act = act - 1
  local score = math.max(now, nx)
  if act >= conns then
    score = busy
    m = mark(mark(m, d), tonumber(d) + 1)
  else
    m = free_marks(KEYS[3], host, m, score)
  end
  hset_st(KEYS[2], host, act, nx, m)
  redis.call('ZADD', KEYS[3] .. 'h:' .. d, str(score), host)
  redis.call('ZADD', KEYS[3] .. 'h:' .. (tonumber(d) + 1), 'XX', str(score),
             host)
  return 1
end
