-- KEYS: 1 due (zset schedule -> when its queue is next due, ms; 0: now),
-- 2 counts (hash schedule -> "in line|active" as its last round left
-- them, and their totals under '#inLine' and '#active').
-- ARGV: how long a claim lasts (ms), the most queues to claim.
-- Claims the queues due now: their score moves to the claim's end, so that
-- no other round takes them meanwhile; a round that dies leaves them due
-- again then. Reply: {the claim's score, now, total in line, total active,
-- the schedules claimed...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local claim = now + tonumber(ARGV[1])
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], claim, id) end
local totals = redis.call('HMGET', KEYS[2], '#inLine', '#active')
local reply = {claim, now, tonumber(totals[1]) or 0, tonumber(totals[2]) or 0}
for _, id in ipairs(due) do reply[#reply + 1] = id end
return reply
