-- KEYS[1..n]: lock keys. KEYS[n+1..2n]: their fence counters, in the same
-- order. All share one hash tag (one cluster slot).
-- ARGV[1]: owner token. ARGV[2]: TTL in milliseconds. ARGV[3]: the fence
-- counters' TTL in milliseconds. ARGV[4]: the caller's deadline in the
-- server's clock, microseconds ('0': none; past_deadline).
-- Takes every key or none. Returns {1, fence1, ..., fencen} when taken;
-- {0, i, pttl, j, pttl, ...} naming (1-based) each key held by another owner
-- otherwise. Keys the token already holds count as free and keep their fence.
-- Returns {2}, taking nothing and minting no fence, when run past the
-- deadline.
if past_deadline(ARGV[4]) then
  return {2}
end
local n = #KEYS / 2
local held = {0}
for i = 1, n do
  local holder = redis.call('GET', KEYS[i])
  if holder and holder ~= ARGV[1] then
    held[#held + 1] = i
    held[#held + 1] = redis.call('PTTL', KEYS[i])
  end
end
if #held > 1 then
  return held
end
local fences = {1}
for i = 1, n do
  local counter = KEYS[n + i]
  local fence = nil
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    fence = redis.call('GET', counter)
  end
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  if fence then
    fence = tonumber(fence)
  else
    fence = mint_fence(counter, ARGV[3])
  end
  fences[#fences + 1] = fence
end
return fences
