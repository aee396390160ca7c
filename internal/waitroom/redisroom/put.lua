-- ARGV: opensAt (ms), rate, maxActive (0: none), ttl (ms).
-- Reply: 1, or 0 when the queue has opened and opensAt would move.
local now = now_ms()
local old = redis.call('HGET', KEYS[1], 'opensAt')
if old and tonumber(old) <= now and old ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'opensAt', ARGV[1], 'rate', ARGV[2], 'maxActive', ARGV[3], 'ttl', ARGV[4])
return 1
