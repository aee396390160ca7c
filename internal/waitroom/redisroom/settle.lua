-- KEYS: as claim.lua's. ARGV: the claim's score, the soonest a queue may
-- be due again (ms: one round of admission later, so that however many
-- instances run rounds a queue runs once a round), then for each claimed
-- schedule: its id, when it is next due (ms; -1: not until marked; -2:
-- its queue is gone), in line, active.
-- Sets each queue's next due time, unless it was marked (or claimed
-- again) since the claim: a join or a leave meanwhile must not be lost.
-- Keeps each queue's counts and their totals. Reply: {total in line,
-- total active}.
local claim, soonest = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 4 do
  local id, due = ARGV[i], tonumber(ARGV[i + 1])
  if tonumber(redis.call('ZSCORE', KEYS[1], id)) == claim then
    if due < 0 then
      redis.call('ZREM', KEYS[1], id)
    else
      redis.call('ZADD', KEYS[1], math.max(due, soonest), id)
    end
  end
  local inLine, active = 0, 0
  local old = redis.call('HGET', KEYS[2], id)
  if old then inLine, active = string.match(old, '^(%d+)|(%d+)$') end
  local newLine, newActive = 0, 0
  if due == -2 then
    redis.call('HDEL', KEYS[2], id)
  else
    newLine, newActive = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    redis.call('HSET', KEYS[2], id, newLine .. '|' .. newActive)
  end
  redis.call('HINCRBY', KEYS[2], '#inLine', newLine - tonumber(inLine))
  redis.call('HINCRBY', KEYS[2], '#active', newActive - tonumber(active))
end
local totals = redis.call('HMGET', KEYS[2], '#inLine', '#active')
return {tonumber(totals[1]) or 0, tonumber(totals[2]) or 0}
