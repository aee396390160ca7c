-- KEYS[1]: lock key. KEYS[2]: its fence counter (same hash tag).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds.
-- Returns {1, fence} when the lock was taken, {0, holder's PTTL} when held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    -- A lost counter restarts from the server clock in microseconds, above
    -- every token issued before (unless more than a million acquisitions a
    -- second were made on this key). Built as a string: Lua would print a
    -- 16-digit number in exponent form.
    local now = redis.call('TIME')
    redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
  end
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
