-- One key's shared budget, a generic cell rate algorithm (GCRA) on the
-- key's theoretical arrival time (TAT) in microseconds, by Redis's clock.
-- KEYS[1]  the key
-- ARGV[1]  emission interval: microseconds per place (1e6 / rate)
-- ARGV[2]  burst: places the budget may hold
-- ARGV[3]  charge: places an instance already admitted on its own; taken
--          whatever the budget says (the budget may owe), but it never
--          owes more than a second burst: a refusal then waits at most
--          two bursts' time
-- ARGV[4]  take: 1 to ask for a place now, 0 to charge only
-- Returns {allowed (0 or 1), microseconds until the next place when refused}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local tolerance = interval * tonumber(ARGV[2])
local charge = tonumber(ARGV[3])
local take = tonumber(ARGV[4])

local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
	tat = now
end
tat = math.min(tat + charge * interval, now + 2 * tolerance)

local allowed, retry = 0, 0
if take > 0 then
	if tat + interval - now <= tolerance then
		tat = tat + interval
		allowed = 1
	else
		retry = math.ceil(tat + interval - tolerance - now)
	end
end
if tat > now then
	redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
return {allowed, retry}
