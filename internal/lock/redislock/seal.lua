-- KEYS[1]: lock key. ARGV[1]: owner token. ARGV[2]: the seal's TTL in
-- milliseconds. ARGV[3]: the seal: 'sealed', or 'sealed:' and its note.
-- Replaces this owner's token with the seal and, in the same atomic step,
-- wakes the waiters on '<key>:released' (they find the seal). Returns 1 if
-- it did, 0 if the lock had expired or belongs to someone else.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
  redis.call('PUBLISH', KEYS[1] .. ':released', '1')
  return 1
end
return 0
