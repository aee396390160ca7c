-- Reply: false without a queue; else reply() then {in line, active,
-- admitted in all}.
local m = meta()
if not m then return false end
local now = now_ms()
local r = reply(m, now, {})
r[#r + 1] = redis.call('ZCARD', KEYS[4])
r[#r + 1] = redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf')
r[#r + 1] = tonumber(redis.call('HGET', KEYS[1], 'admitted') or '0')
return r
