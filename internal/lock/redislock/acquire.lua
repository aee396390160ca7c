-- KEYS[1]: lock key. KEYS[2]: its fence counter (same hash tag).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds. ARGV[3]: the fence
-- counter's TTL in milliseconds. ARGV[4]: '1' to take a sealed key as if
-- it were free.
-- Returns one integer: the fence (> 0) when the lock was taken; 0 when the
-- key is sealed ('sealed', written by seal.lua); -2 - the holder's PTTL
-- (< 0) when held by another owner, so -1 stands for a key without expiry.
-- (One integer, not an array: the cheapest reply to read.)
-- Re-running it with the token that holds the key (a retry whose first reply
-- was lost) renews the TTL and returns the same fence.
local holder = redis.call('GET', KEYS[1])
if holder == 'sealed' and ARGV[4] ~= '1' then
  -- The hammered path of a booked seat: one read, one answer.
  return 0
elseif holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local fence = redis.call('GET', KEYS[2])
  if fence then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
    return tonumber(fence)
  end
elseif holder and holder ~= 'sealed' then
  return -2 - redis.call('PTTL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
-- INCR keeps the counter's TTL.
local fence = redis.call('INCR', KEYS[2])
if fence == 1 then
  -- The counter was missing (new key, or lost): restart from the server
  -- clock in microseconds, above every token issued before (unless more
  -- than a million acquisitions a second were made on this key). Built as
  -- a string: Lua would print a 16-digit number in exponent form.
  local now = redis.call('TIME')
  fence = now[1] .. string.format('%06d', tonumber(now[2]))
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
elseif fence % 64 == 0 then
  -- The counter expires when the key has not been locked for a long time;
  -- keeping it forever is one key per seat. Refreshing it on every 64th
  -- acquisition, not every one, saves a call: a counter that expires in
  -- use restarts from the clock, above every fence it handed out.
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return tonumber(fence)
