-- KEYS: lock keys. ARGV[1]: owner token. ARGV[i+1]: the release channel of
-- KEYS[i]. Deletes the keys the token still holds and, in the same atomic
-- step, wakes each one's waiters. Returns how many it deleted.
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    redis.call('PUBLISH', ARGV[i + 1], '1')
    n = n + 1
  end
end
return n
