-- One round of admission: expires the admissions whose time is up, then
-- admits, in line order, what the time since the last admission pays for
-- at the rate (at most a second's worth at once), within maxActive.
-- Reply: false without a queue; else {admitted now, in line, open (0/1),
-- active, admitted in all, when the queue is next due (ms; -1: not before
-- a join, a leave or a change of its settings marks it), then the waits
-- (ms) of those admitted}.
local m = redis.call('HMGET', KEYS[1], 'opensAt', 'rate', 'maxActive', 'ttl', 'clock', 'obsStart', 'obsCount', 'stalled')
if not m[1] then return false end
local now = now_ms()
local expired = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'WITHSCORES', 'LIMIT', 0, 10000)
for i = 1, #expired, 2 do
  redis.call('ZREM', KEYS[5], expired[i])
  redis.call('HSET', KEYS[6], expired[i], 'expired|' .. expired[i + 1])
end
local opensAt = tonumber(m[1])
local maxActive = tonumber(m[3]) or 0
local reply = {0, redis.call('ZCARD', KEYS[4]), 0, 0, 0, -1}
if now >= opensAt then
  reply[3] = 1
  local per = 1000 / tonumber(m[2])
  local clock = tonumber(m[5]) or opensAt
  -- A queue whose last round found nobody to admit (an empty line, or
  -- maxActive full) was not run since: the time it stood still paid for
  -- nothing, as if rounds had gone on, and the first admission due since
  -- it moved again is due now.
  if m[8] == '1' and clock < now - per then clock = now - per end
  if clock < now - 1000 then clock = now - 1000 end
  local due = math.floor((now - clock) / per)
  local room = due
  if maxActive > 0 then room = math.min(room, maxActive - redis.call('ZCARD', KEYS[5])) end
  local n = 0
  if room > 0 then
    local popped = redis.call('ZPOPMIN', KEYS[4], room)
    local exp = now + tonumber(m[4])
    for i = 1, #popped, 2 do
      local ticket = popped[i]
      redis.call('ZADD', KEYS[5], exp, ticket)
      local joined = tonumber(string.match(redis.call('HGET', KEYS[3], ticket) or '|0', '|(%d+)$')) or now
      reply[#reply + 1] = now - math.max(joined, opensAt)
      n = n + 1
    end
  end
  -- Time that paid for no admission (nobody waited, or maxActive was
  -- full) is not saved up for later.
  if n < due then clock = now else clock = clock + n * per end
  local obsStart = tonumber(m[6]) or now
  local obsCount = (tonumber(m[7]) or 0) + n
  if now - obsStart >= 10000 then
    redis.call('HSET', KEYS[1], 'obsRate', string.format('%.3f', obsCount * 1000 / (now - obsStart)))
    obsStart, obsCount = now, 0
  end
  local inLine = reply[2] - n
  local stalled = 0
  if inLine == 0 or (maxActive > 0 and redis.call('ZCARD', KEYS[5]) >= maxActive) then stalled = 1 end
  redis.call('HSET', KEYS[1], 'clock', string.format('%.3f', clock), 'obsStart', obsStart, 'obsCount', obsCount, 'stalled', stalled)
  if n > 0 then redis.call('HINCRBY', KEYS[1], 'admitted', n) end
  reply[1] = n
  reply[2] = inLine
end
reply[4] = redis.call('ZCARD', KEYS[5])
reply[5] = tonumber(redis.call('HGET', KEYS[1], 'admitted') or '0')
reply[6] = next_due(now, opensAt, tonumber(m[2]), maxActive, reply[2], reply[4])
return reply
