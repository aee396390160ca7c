-- KEYS[1]: lock key. ARGV[1]: owner token. ARGV[2]: new TTL in milliseconds.
-- Returns 1 if the TTL was set, 0 if the lock is gone or someone else's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
