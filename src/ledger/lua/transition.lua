--[[
  Moves an order (and all its rows) to a new status when its current status is allowed, and
  with it, atomically, the order's entry in the follow set (the status follower's entry changes
  with the status, so an accepted order can never be left unfollowed), or puts it back on the
  pending list (a retry).
  An order leaving queued/in_flight leaves the dispatch window: its job is over. A completed
  order adds its price to the campaign's spend; a replayed one counts as replayed. `to`
  failed_final or cancelled becomes failed_uncertain while the order carries the mark of an
  unclear attempt (see checked_status).
  An order ending failed_final or cancelled (nothing made) gives its price back to the day's
  spend it was reserved in (KEYS[11], includes/daily-limit.lua).
  With an order id (ARGV[11]: the end of an async order the service reported, a poll or a
  webhook), the order moves only when it holds that id, and KEYS[12], the order-id index, loses
  the id's entry once the order is known past `submitted` under it, or gone; item ids and payout
  URLs beyond the order's rows are dropped. With an order id to index (ARGV[13]: an async order
  the service accepted, webhooks on), KEYS[12] maps it to the follow-set member (ARGV[8]) first,
  whatever the move's outcome, as a webhook may come before any answer of ours.
  Rows leaving sending for an end count in the campaign's minutes hash (KEYS[10],
  includes/minutes.lua).
  With the time the service made the order (ARGV[14]), an order reaching completed is marked
  replayed when it was made before the campaign's `created_at` (KEYS[5]), read here: a worker
  that kept it from before a lost ledger's re-import would not know the new one.

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash (not read here)
      KEYS[3] counts hash
      KEYS[4] follow set
      KEYS[5] meta hash
      KEYS[6] dispatch window
      KEYS[7] pending list
      KEYS[8] running set
      KEYS[9] ended-orders counter (includes/counts.lua, count_ended): an order reaching an end
              is counted there, by whichever process moved it
      KEYS[10] the campaign's rows-per-minute hash (includes/minutes.lua)
      KEYS[11] the day's spend across campaigns (includes/daily-limit.lua)
      KEYS[12] the order-id index of webhooks (optional; used with ARGV[11] or ARGV[13])

      ARGV[1] order number
      ARGV[2] allowedFrom: the allowed current statuses ("queued,in_flight", or "*" for any)
      ARGV[3] to: the new status
      ARGV[4] patch: JSON object of stored names merged in (null removes a field)
      ARGV[5] now (ISO time)
      ARGV[6] '' (the follow set untouched), 'follow', 'unfollow', or 'pending': the order goes
              back on the pending list (a retry), never in a campaign cancelled or archived
      ARGV[7] with 'follow', the due time (ms); '0' otherwise
      ARGV[8] with 'follow' or 'unfollow', the follow-set member; '' otherwise
      ARGV[9] with 'pending', the campaign, which rejoins the running set if it runs; ''
              otherwise
      ARGV[10] 'answered' when the service answered under the order's key (the mark of an
               unclear attempt goes), 'force' when the operator sends it again under another API
               key after checking (the mark's API key goes), '' otherwise
      ARGV[11] the service's order id the change is for, or ''
      ARGV[12] the order's `u` (updated at) as the caller read it, or '': with it, the order moves
               only if no other change came since (`orders reconcile` recording an order absent:
               an attempt made after it read the order could have made one)
      ARGV[13] the service's order id to index under ARGV[8] in KEYS[12], or ''
      ARGV[14] when the service made the order (ISO time as toISOString writes it, comparable
               as a string with meta `created_at`), or ''

    Output:
      {1, previous, status reached, 1 if it is marked replayed else 0} when moved
      {0, current} when not allowed (or, with 'pending', when the campaign is cancelled or
        archived)
      {-1, ""} when unknown (or superseded, for an order id)
      {2, current, its order id} when it holds another order id
      {3, current} when it has none yet (queued or in flight)
      {4, current} when it changed since the caller read it (ARGV[12])
]]
--- @include "includes/allowed"
--- @include "includes/counts"
--- @include "includes/unclear-mark"
--- @include "includes/note-uncertain"
--- @include "includes/keep-dispatched"
--- @include "includes/minutes"
--- @include "includes/money"
--- @include "includes/daily-limit"

local for_id = ARGV[11] or ''
if (ARGV[13] or '') ~= '' and KEYS[12] then redis.call('HSET', KEYS[12], ARGV[13], ARGV[8]) end
local function forget_id()
  if for_id ~= '' and KEYS[12] then redis.call('HDEL', KEYS[12], for_id) end
end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  forget_id()
  return {-1, ''}
end
local order = cjson.decode(raw)
local current = order.s
if for_id ~= '' then
  if current == 'superseded' then
    forget_id()
    return {-1, ''}
  end
  if current == 'queued' or current == 'in_flight' then return {3, current} end
  if order.o ~= for_id then return {2, current, order.o or ''} end
end
if not allowed(ARGV[2], current) then
  forget_id()
  return {0, current}
end
if (ARGV[12] or '') ~= '' and (order.u or '') ~= ARGV[12] then return {4, current} end
if ARGV[6] == 'pending' then
  -- Back to sending (a retry): never in a campaign cancelled or archived meanwhile.
  local state = redis.call('HGET', KEYS[5], 'state')
  if state == 'cancelled' or state == 'archived' then return {0, current} end
end
local patch = cjson.decode(ARGV[4])
merge(order, patch)
if for_id ~= '' then
  -- The service answers items in request order: item i is row i; more than the rows is not ours.
  for _, field in ipairs({'ii', 'pu', 'px'}) do
    local list = order[field]
    if type(list) == 'table' then
      for j = #list, #order.i + 1, -1 do table.remove(list, j) end
    end
  end
end
if ARGV[10] == 'answered' then answered(order) end
if ARGV[10] == 'force' then order.uk = nil end
local to = checked_status(order, ARGV[3])
if (ARGV[14] or '') ~= '' and to == 'completed' and current ~= 'completed' then
  local created = redis.call('HGET', KEYS[5], 'created_at')
  if created and ARGV[14] < created then
    patch.rd = true
    order.rd = true
  end
end
if to ~= 'in_flight' then order.ak = nil end
-- What `orders reconcile` found of a failed_uncertain order holds only while it stays one: an
-- attempt made after (a retry under the same key) may make the order.
if to ~= 'failed_uncertain' then
  order.ra = nil
  order.rk = nil
end
if to == 'failed_final' or to == 'cancelled' then release_daily(KEYS[11], order) end
order.s = to
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(order))
move_counts(KEYS[3], current, to, #order.i)
note_uncertain(KEYS[5], order, current, to)
count_ended(KEYS[9], current, to)
note_minute(KEYS[10], current, to, #order.i, ARGV[5])
if to ~= 'queued' and to ~= 'in_flight' then redis.call('SREM', KEYS[6], ARGV[1]) end
if to == 'completed' and current ~= 'completed' and order.p and order.c then
  redis.call('HINCRBY', KEYS[5], 'spent:' .. order.c, order.p)
end
if patch.rd == true then redis.call('HINCRBY', KEYS[3], 'replayed', #order.i) end
if ARGV[6] == 'follow' then redis.call('ZADD', KEYS[4], ARGV[7], ARGV[8]) end
if ARGV[6] == 'unfollow' then redis.call('ZREM', KEYS[4], ARGV[8]) end
if ARGV[6] == 'pending' then
  redis.call('SREM', KEYS[6], ARGV[1])
  redis.call('RPUSH', KEYS[7], ARGV[1])
  redis.call('HDEL', KEYS[5], 'finished_at')
  keep_dispatched(KEYS[5], KEYS[8], ARGV[9])
end
-- Only a change of status can finish the campaign (a refresh of a completed order's payouts
-- must not move its finished_at), and only to a status past sending: an order that is queued,
-- in flight or submitted is a row still to send, so the counts need no reading.
if current ~= to and to ~= 'queued' and to ~= 'in_flight' and to ~= 'submitted' then
  note_finished(KEYS[3], KEYS[5], ARGV[5])
end
forget_id()
return {1, current, to, order.rd == true and 1 or 0}
