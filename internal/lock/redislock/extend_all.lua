-- KEYS: lock keys. ARGV[1]: owner token. ARGV[2]: new TTL in milliseconds.
-- Sets the TTL of the keys the token still holds; returns how many.
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    n = n + 1
  end
end
return n
