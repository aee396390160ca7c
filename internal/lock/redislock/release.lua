-- KEYS[1]: lock key. ARGV[1]: owner token.
-- Deletes the key only if it still holds this owner's token; returns 1 if it
-- did, 0 if the lock had expired or belongs to someone else.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
