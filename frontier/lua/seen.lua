-- seen.lua: the seen-set without the queues (seen_batch, seen/seen.c,
-- layout b256-i64). KEYS: the partition's bucket-key prefix
-- "<prefix>:{p}:s:"; the script appends the bucket number (the prefix
-- carries the hash tag, so every key it builds is in the partition's slot).
-- ARGV: mode ('1' check only, '0' insert), then groups: bucket, count,
-- count members (signed 64-bit decimals, no repeats; the client caps a
-- group at SEEN_GROUP_MAX so unpack stays within Lua's stack). Returns ONE
-- bulk string, a '1' (new) or '0' (seen) per member in ARGV order. A group
-- of one member costs one SADD (or SISMEMBER); a larger one SMISMEMBER,
-- then one SADD of the absent members.
local add, out, i, n = ARGV[1] == '0', {}, 2, #ARGV
while i < n do
  local key, cnt, first = KEYS[1] .. ARGV[i], tonumber(ARGV[i + 1]), i + 2
  if cnt == 1 then
    local r
    if add then r = redis.call('SADD', key, ARGV[first])
    else r = 1 - redis.call('SISMEMBER', key, ARGV[first]) end
    out[#out + 1] = r == 1 and '1' or '0'
  else
    local ms = redis.call('SMISMEMBER', key,
                          unpack(ARGV, first, first + cnt - 1))
    local new = {}
    for j = 1, cnt do
      if ms[j] == 0 then
        out[#out + 1] = '1'
        new[#new + 1] = ARGV[first + j - 1]
      else
        out[#out + 1] = '0'
      end
    end
    if add and #new > 0 then redis.call('SADD', key, unpack(new)) end
  end
  i = first + cnt
end
return table.concat(out)
