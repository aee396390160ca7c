-- is_seal(value): whether a lock key's value is a seal (seal.lua): 'sealed'
-- alone (written by instances that knew no notes, or sealed without one)
-- or 'sealed:' and the seal's note. Never a token (32 hexadecimal digits).
-- Prepended to the scripts that must tell a seal from a holder.
local function is_seal(value)
  return value == 'sealed' or (type(value) == 'string' and string.sub(value, 1, 7) == 'sealed:')
end
