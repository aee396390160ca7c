-- Shared by every script of the waiting room (prepended to each).
-- KEYS of a schedule's queue, in this order everywhere:
-- 1 meta (hash), 2 users (hash user -> ticket), 3 tickets (hash ticket ->
-- "user|joinedMs"), 4 line (zset: pre-queue in [0, 1), later arrivals by
-- their sequence number from 1), 5 active (zset ticket -> admission's
-- expiry, ms), 6 gone (hash ticket -> "left|expiryMs" or "expired|expiryMs").
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local META_FIELDS = {'opensAt', 'rate', 'maxActive', 'ttl', 'obsRate'}

local function meta()
  local m = redis.call('HMGET', KEYS[1], unpack(META_FIELDS))
  if not m[1] then return nil end
  return m
end

-- owner: the user of a ticket's record ("user|joinedMs"; a user id may
-- hold '|': the joining time is after the last one).
local function owner(rec)
  return string.match(rec, '^(.*)|')
end

-- place: {user, state, position, expiryMs} of a ticket, or nil.
local function place(ticket, now, opensAt)
  local rec = redis.call('HGET', KEYS[3], ticket)
  if not rec then return nil end
  local user = owner(rec)
  local gone = redis.call('HGET', KEYS[6], ticket)
  if gone then
    local state, exp = string.match(gone, '^(%a+)|(%d*)$')
    return {user, state, 0, tonumber(exp) or 0}
  end
  local rank = redis.call('ZRANK', KEYS[4], ticket)
  if rank then
    if now < opensAt then return {user, 'prequeue', 0, 0} end
    return {user, 'waiting', rank + 1, 0}
  end
  local exp = redis.call('ZSCORE', KEYS[5], ticket)
  if exp then
    exp = tonumber(exp)
    if exp > now then return {user, 'admitted', 0, exp} end
    return {user, 'expired', 0, exp}
  end
  return {user, 'left', 0, 0}
end

-- reply: the queue's settings, the admissions that hold now (counted only
-- under a maxActive: a place past its free ones waits on them), then each
-- place (or false).
local function reply(m, now, places)
  local active = 0
  if tonumber(m[3] or '0') > 0 then active = redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf') end
  local r = {now, m[1], m[2], m[3] or '0', m[4], m[5] or '0', active}
  for _, p in ipairs(places) do
    if p then
      for _, v in ipairs(p) do r[#r + 1] = v end
    else
      for _ = 1, 4 do r[#r + 1] = false end
    end
  end
  return r
end

-- next_due: when a queue next has work for a round of admission (ms), or
-- -1 when it has none before a join, a leave or a change of its settings
-- marks it due. Before the opening, a pre-queue's counts are read again
-- every second until it opens. Once open, a line is admitted at its pace,
-- or, with maxActive full, when the first admission ends; admissions still
-- running are expired (and counted) at most once a second.
local function next_due(now, opensAt, rate, maxActive, inLine, active)
  if now < opensAt then
    if inLine > 0 then return math.min(opensAt, now + 1000) end
    return -1
  end
  local due = -1
  local first = -1
  if active > 0 then first = tonumber(redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')[2]) end
  if inLine > 0 then
    if maxActive > 0 and active >= maxActive then
      due = first
    else
      due = (tonumber(redis.call('HGET', KEYS[1], 'clock')) or now) + 1000 / rate
    end
  end
  if active > 0 then
    local expiry = math.max(first, now + 1000)
    if due < 0 or expiry < due then due = expiry end
  end
  if due < 0 then return -1 end
  return math.ceil(due)
end
