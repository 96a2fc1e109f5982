-- admit.lua (lib): what both admit scripts do with an answer.
-- enqueue(q, h, url, host, d) queues url of host at depth d (queue q,
-- ready set h); answer(i, new, ...) queues a new URL (counting it against
-- its host's budget) or counts a seen one, res[i + 1] = 1 or 0; finish()
-- adds the counts to stat and returns res. KEYS 1-5: pend, stat, next,
-- act, budget; needs common and the locals now, conns and budget.
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
local res, added, seen, over = {}, 0, 0, 0
local function answer(i, new, q, h, url, host, d)
  if new then
    enqueue(q, h, url, host, d)
    if budget > 0 then redis.call('HINCRBY', KEYS[5], host, 1) end
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
  return res
end
