-- KEYS: lock keys. ARGV[1]: owner token.
-- Returns the smallest PTTL of the keys if the token holds every one (-1 if
-- none of them expires), -2 if it does not hold them all.
local shortest = -1
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return -2
  end
  local pttl = redis.call('PTTL', KEYS[i])
  if pttl >= 0 and (shortest < 0 or pttl < shortest) then
    shortest = pttl
  end
end
return shortest
