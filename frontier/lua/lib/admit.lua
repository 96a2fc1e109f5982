-- admit.lua (lib): what both admit scripts do with an answer.
-- enqueue(q, h, url, host, d) queues url of host at depth d (queue q,
-- ready set h); answer(i, new, ...) queues a new URL (counting it against
-- its host's budget) or counts a seen one, res[i + 1] = 1 or 0; finish()
-- adds the counts to stat and pend and returns res. KEYS 1-4: pend, stat,
-- host, budget; needs common and the locals now, conns and budget.
-- A queue that RPUSH makes one long was empty, so its host is not in h
-- (h holds the hosts with a non-empty queue) and gets its score; a longer
-- one's host is in h already.
local pend = {}
local function enqueue(q, h, url, host, d)
  pend[d] = (pend[d] or 0) + 1
  if redis.call('RPUSH', q, qenc(url, host)) == 1 then
    local act, nx, m, td, tn = hget_st(KEYS[3], host)
    local score = math.max(now, nx)
    if low(act, td, tn, tonumber(d)) >= conns then
      score = busy
      local m2 = mark(m, d)
      if m2 ~= m then hset_st(KEYS[3], host, act, nx, m2, td, tn) end
    end
    redis.call('ZADD', h, str(score), host)
  end
end
local res, added, seen, over = {}, 0, 0, 0
local function answer(i, new, q, h, url, host, d)
  if new then
    enqueue(q, h, url, host, d)
    if budget > 0 then redis.call('HINCRBY', KEYS[4], host, 1) end
    added = added + 1
    res[i + 1] = 1
  else
    seen = seen + 1
    res[i + 1] = 0
  end
end
local function finish()
  if added > 0 then redis.call('HINCRBY', KEYS[2], 'admitted', added) end
  if seen > 0 then redis.call('HINCRBY', KEYS[2], 'seen', seen) end
  if over > 0 then redis.call('HINCRBY', KEYS[2], 'budget', over) end
  for d, n in pairs(pend) do redis.call('HINCRBY', KEYS[1], d, n) end
  return res
end
