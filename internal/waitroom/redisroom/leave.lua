-- ARGV: ticket, user. Reply: reply() with the ticket's place after
-- leaving; false without a queue; {} when the user has no such ticket.
local m = meta()
if not m then return false end
local now = now_ms()
local rec = redis.call('HGET', KEYS[3], ARGV[1])
if not rec or owner(rec) ~= ARGV[2] then return {} end
if redis.call('HEXISTS', KEYS[6], ARGV[1]) == 0 then
  if redis.call('ZREM', KEYS[4], ARGV[1]) == 1 then
    redis.call('HSET', KEYS[6], ARGV[1], 'left|')
  else
    local exp = redis.call('ZSCORE', KEYS[5], ARGV[1])
    if exp then
      redis.call('ZREM', KEYS[5], ARGV[1])
      local state = 'left'
      if tonumber(exp) <= now then state = 'expired' end
      redis.call('HSET', KEYS[6], ARGV[1], state .. '|' .. exp)
    end
  end
end
return reply(m, now, {place(ARGV[1], now, tonumber(m[1]))})
