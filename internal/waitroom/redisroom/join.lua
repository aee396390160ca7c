-- ARGV: user, a new ticket, its pre-queue key (in [0, 1)).
-- Reply: created (0/1), the user's ticket, then reply().
local m = meta()
if not m then return false end
local now = now_ms()
local opensAt = tonumber(m[1])
local created = 0
local ticket = redis.call('HGET', KEYS[2], ARGV[1])
if not ticket then
  ticket = ARGV[2]
  local score = ARGV[3]
  if now >= opensAt then score = redis.call('HINCRBY', KEYS[1], 'seq', 1) end
  redis.call('HSET', KEYS[2], ARGV[1], ticket)
  redis.call('HSET', KEYS[3], ticket, ARGV[1] .. '|' .. now)
  redis.call('ZADD', KEYS[4], score, ticket)
  created = 1
end
local r = reply(m, now, {place(ticket, now, opensAt)})
table.insert(r, 1, ticket)
table.insert(r, 1, created)
return r
