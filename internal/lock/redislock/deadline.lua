-- past_deadline(deadline): whether the server's clock (TIME, microseconds)
-- is past deadline, an acquire's caller's give-up time converted to this
-- server's clock by the client (redislock's clock.go); '0' means no
-- deadline. An acquire that Redis runs after its caller gave up (queued
-- during a stall: a long fork, SIGSTOP, a paused VM) must take nothing.
-- Prepended to the scripts that can create a lock key for a caller.
local function past_deadline(deadline)
  deadline = tonumber(deadline)
  if not deadline or deadline <= 0 then
    return false
  end
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000000 + tonumber(now[2]) > deadline
end
