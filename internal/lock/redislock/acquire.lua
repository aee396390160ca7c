-- KEYS[1]: lock key. KEYS[2]: its fence counter (same hash tag).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds. ARGV[3]: the fence
-- counter's TTL in milliseconds.
-- Returns {1, fence} when the lock was taken, {0, holder's PTTL} when held.
-- Re-running it with the token that holds the key (a retry whose first reply
-- was lost) renews the TTL and returns the same fence.
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return {0, redis.call('PTTL', KEYS[1])}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if holder then
  local fence = redis.call('GET', KEYS[2])
  if fence then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
    return {1, tonumber(fence)}
  end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  -- A lost counter restarts from the server clock in microseconds, above
  -- every token issued before (unless more than a million acquisitions a
  -- second were made on this key). Built as a string: Lua would print a
  -- 16-digit number in exponent form.
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
end
local fence = redis.call('INCR', KEYS[2])
-- The counter expires when the key has not been locked for a long time;
-- losing it is safe (see above), keeping it forever is one key per seat.
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1, fence}
