-- KEYS[1]: lock key. KEYS[2]: its fence counter (same hash tag).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds. ARGV[3]: the fence
-- counter's TTL in milliseconds. ARGV[4]: the caller's deadline in the
-- server's clock, microseconds ('0': none; past_deadline).
-- acquire.lua that also takes a sealed key, as if it were free. Returns
-- {1, fence, 1 if the key was sealed else 0} when the lock was taken,
-- {0, the holder's PTTL} when held by another owner. Idempotent per token
-- like acquire.lua (a retry reports the seal it lifted as not there).
-- Returns {2}, taking nothing, when run past the deadline.
if past_deadline(ARGV[4]) then
  return {2}
end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local fence = redis.call('GET', KEYS[2])
  if fence then
    return {1, tonumber(fence), 0}
  end
elseif holder and not is_seal(holder) then
  return {0, redis.call('PTTL', KEYS[1])}
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return {1, mint_fence(KEYS[2], ARGV[3]), is_seal(holder) and 1 or 0}
