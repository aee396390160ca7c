-- KEYS: as claim.lua's. ARGV: a schedule whose queue was deleted.
-- Takes it out of the due queues and its counts out of the totals.
redis.call('ZREM', KEYS[1], ARGV[1])
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  local inLine, active = string.match(old, '^(%d+)|(%d+)$')
  -- (0 - n, not -n: Lua's -0 is no integer to Redis.)
  redis.call('HINCRBY', KEYS[2], '#inLine', 0 - tonumber(inLine))
  redis.call('HINCRBY', KEYS[2], '#active', 0 - tonumber(active))
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return 1
