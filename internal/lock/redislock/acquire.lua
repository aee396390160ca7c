-- KEYS[1]: lock key. ARGV[1]: owner token. ARGV[2]: TTL in milliseconds.
-- Returns {1, 0} when the lock was taken, {0, remaining PTTL} when held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, 0}
end
return {0, redis.call('PTTL', KEYS[1])}
