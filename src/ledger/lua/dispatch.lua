--[[
  Moves order numbers of running campaigns from their pending lists into their dispatch windows.
  The running campaigns with work share a budget of `budget` jobs: each one's window is an equal
  part of it, at least `least`. So the jobs in BullMQ stay about the budget whatever the
  campaigns' sizes, and a campaign that starts waits behind about one budget of the others'
  jobs, however many there are. The orders come one campaign at a time in turn, in the order
  the jobs are to be added, so the campaigns' jobs alternate in the FIFO queue. A campaign in
  the running set whose state is no longer running leaves the set, and so does one with nothing
  pending, scheduled or out (the scripts that give it orders again put it back: RECORD,
  TRANSITION to pending, REKEY, SET_STATE, FINISH_RESTORE). Scheduled orders that are
  due (score at most `now`) move to the end of their pending list first.
  Every key it touches is passed, as Redis asks of a script. A campaign no longer in the set is
  passed over.

    Input:
      KEYS[1] running set
      then for the i-th campaign of `campaigns` (the running set as read just before), six keys
      from KEYS[2 + 6 * (i - 1)]:
        its meta hash, pending list, dispatch window, scheduled sorted set, orders hash and
        counts hash

      ARGV[1] JSON object of named fields:
        budget     the jobs shared by the running campaigns (a number)
        least      the least window (a number)
        now        ms, a string
        campaigns  the campaigns (an array)

    Output:
      {campaign, number, campaign, number, ...}: the orders now in a window, in the order their
      jobs are to be added
]]

local a = cjson.decode(ARGV[1])
local PER = 6
local function keys_of(i)
  local k = 1 + (i - 1) * PER
  return { meta = KEYS[k + 1], pending = KEYS[k + 2], window = KEYS[k + 3],
    scheduled = KEYS[k + 4], orders = KEYS[k + 5], counts = KEYS[k + 6] }
end
-- Scheduled orders now due join the end of their campaign's pending list.
local function release_due(k)
  local due = redis.call('ZRANGEBYSCORE', k.scheduled, '-inf', a.now, 'LIMIT', 0, 1000)
  for _, n in ipairs(due) do
    local raw = redis.call('HGET', k.orders, n)
    if raw then redis.call('HINCRBY', k.counts, 'scheduled', -#cjson.decode(raw).i) end
    redis.call('ZREM', k.scheduled, n)
    redis.call('RPUSH', k.pending, n)
  end
end
-- The running campaigns with work: orders waiting, or jobs out.
local active = {}
local out_now = {}
local waiting = {}
local keys = {}
for i, campaign in ipairs(a.campaigns) do
  local k = keys_of(i)
  local state = redis.call('HGET', k.meta, 'state') or 'running'
  if redis.call('SISMEMBER', KEYS[1], campaign) == 0 then
    -- Left the set since it was read: not ours to dispatch.
  elseif state ~= 'running' then
    redis.call('SREM', KEYS[1], campaign)
  else
    release_due(k)
    local jobs = redis.call('SCARD', k.window)
    local pending = redis.call('LLEN', k.pending)
    if jobs > 0 or pending > 0 then
      table.insert(active, campaign)
      out_now[campaign] = jobs
      waiting[campaign] = pending
      keys[campaign] = k
    elseif redis.call('ZCARD', k.scheduled) == 0 then
      redis.call('SREM', KEYS[1], campaign)
    end
  end
end
if #active == 0 then return {} end
-- The budget is shared: each active campaign's window is an equal part of it (at least `least`).
local size = math.max(a.least, math.ceil(a.budget / #active))
local free = {}
local names = {}
for _, campaign in ipairs(active) do
  local room = size - out_now[campaign]
  if room > 0 and waiting[campaign] > 0 then
    table.insert(names, campaign)
    free[campaign] = room
  end
end
-- One order of each campaign in turn, so their jobs alternate in the FIFO queue rather than
-- following each other a window at a time.
local out = {}
local taking = true
while taking do
  taking = false
  for _, campaign in ipairs(names) do
    if free[campaign] > 0 then
      local k = keys[campaign]
      local n = redis.call('LPOP', k.pending)
      if n then
        redis.call('SADD', k.window, n)
        table.insert(out, campaign)
        table.insert(out, n)
        free[campaign] = free[campaign] - 1
        taking = true
      else
        free[campaign] = 0
      end
    end
  end
end
return out
