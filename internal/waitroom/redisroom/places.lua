-- ARGV: tickets. Reply: reply() with a place for each (false: none).
local m = meta()
if not m then return false end
local now = now_ms()
local opensAt = tonumber(m[1])
local places = {}
for i, ticket in ipairs(ARGV) do places[i] = place(ticket, now, opensAt) or false end
return reply(m, now, places)
