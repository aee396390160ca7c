-- KEYS[1]: lock key. KEYS[2]: its fence counter (same hash tag).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds. ARGV[3]: the fence
-- counter's TTL in milliseconds. ARGV[4]: the caller's deadline in the
-- server's clock, microseconds ('0': none; past_deadline).
-- Returns 0, taking nothing and minting no fence, when run past the
-- deadline. Otherwise one integer: the fence (> 0) when the lock was taken; -2 - the
-- holder's PTTL (< 0) when held by another owner, so -1 stands for a key
-- without expiry. When the key is sealed (is_seal, written by seal.lua) it
-- returns the seal itself, a string, so that the seal's note comes back in
-- the same call. (One value, not an array: the cheapest reply to read.)
-- Re-running it with the token that holds the key (a retry whose first reply
-- was lost) renews the TTL and returns the tag's current fence: the one
-- first minted for it unless another key of the tag was taken since, and in
-- order either way (above every earlier holder's, below every later one's).
if past_deadline(ARGV[4]) then
  return 0
end
local holder = redis.call('GET', KEYS[1])
if is_seal(holder) then
  -- The hammered path of a sealed key (work done for good, asked for
  -- again and again): one read, one answer.
  return holder
elseif holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local fence = redis.call('GET', KEYS[2])
  if fence then
    return tonumber(fence)
  end
elseif holder then
  return -2 - redis.call('PTTL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return mint_fence(KEYS[2], ARGV[3])
