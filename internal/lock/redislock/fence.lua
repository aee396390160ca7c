-- mint_fence(counter, counter_ttl): the next fencing token of a lock, from
-- its counter key (same hash tag). Prepended to the scripts that take locks.
local function mint_fence(counter, counter_ttl)
  -- INCR keeps the counter's TTL.
  local fence = redis.call('INCR', counter)
  if fence == 1 then
    -- The counter was missing (new key, or lost): restart from the server
    -- clock in microseconds, above every token issued before (unless more
    -- than a million acquisitions a second were made on this key). Built
    -- as a string: Lua would print a 16-digit number in exponent form.
    local now = redis.call('TIME')
    fence = now[1] .. string.format('%06d', tonumber(now[2]))
    redis.call('SET', counter, fence, 'PX', counter_ttl)
  elseif fence % 64 == 0 then
    -- The counter expires when the key has not been locked for a long
    -- time; keeping it forever is one counter per key ever locked. Refreshing it on every
    -- 64th acquisition, not every one, saves a call: a counter that
    -- expires in use restarts from the clock, above every fence it handed
    -- out.
    redis.call('PEXPIRE', counter, counter_ttl)
  end
  return tonumber(fence)
end
