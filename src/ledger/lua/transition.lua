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
  With an order id (`order_id`: the end of an async order the service reported, a poll or a
  webhook), the order moves only when it holds that id, and KEYS[12], the order-id index, loses
  the id's entry once the order is known past `submitted` under it, or gone; item ids and payout
  URLs beyond the order's rows are dropped. With an order id to index (`index_id`: an async order
  the service accepted, webhooks on), KEYS[12] maps it to the follow-set member (`member`) first,
  whatever the move's outcome, as a webhook may come before any answer of ours.
  Rows leaving sending for an end count in the campaign's minutes hash (KEYS[10],
  includes/minutes.lua).
  With the time the service made the order (`made_at`), an order reaching completed is marked
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
      KEYS[12] the order-id index of webhooks (optional; used with `order_id` or `index_id`)

      ARGV[1] JSON object of named fields:
        number    the order number (a string)
        from      the allowed current statuses ("queued,in_flight", or "*" for any)
        to        the new status
        patch     object of stored names merged in (null removes a field)
        now       ISO time
        follow    absent (the follow set untouched), 'follow', 'unfollow', or 'pending': the
                  order goes back on the pending list (a retry), never in a campaign cancelled
                  or archived
        at        with 'follow', the due time (ms, a string)
        member    with 'follow' or 'unfollow', the follow-set member
        campaign  with 'pending', the campaign, which rejoins the running set if it runs
        clearance 'answered' when the service answered under the order's key (the mark of an
                  unclear attempt goes), 'force' when the operator sends it again under another
                  API key after checking (the mark's API key goes), absent otherwise
        order_id  the service's order id the change is for, if any
        if_updated_at  the order's `u` (updated at) as the caller read it, if any: with it, the
                  order moves only if no other change came since (`orders reconcile` recording
                  an order absent: an attempt made after it read the order could have made one)
        index_id  the service's order id to index under `member` in KEYS[12], if any
        made_at   when the service made the order (ISO time as toISOString writes it,
                  comparable as a string with meta `created_at`), if known

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'moved', previous, status reached, 1 if it is marked replayed else 0}
      {'not_allowed', current} (or, with 'pending', when the campaign is cancelled or archived)
      {'unknown'} (or superseded, for an order id)
      {'other_order_id', current, its order id}
      {'no_order_id', current} when it has none yet (queued or in flight)
      {'changed', current} when it changed since the caller read it (`if_updated_at`)
]]
--- @include "includes/allowed"
--- @include "includes/counts"
--- @include "includes/unclear-mark"
--- @include "includes/note-uncertain"
--- @include "includes/keep-dispatched"
--- @include "includes/minutes"
--- @include "includes/money"
--- @include "includes/daily-limit"

local a = cjson.decode(ARGV[1])
local number = a.number
local for_id = a.order_id or ''
if (a.index_id or '') ~= '' and KEYS[12] then redis.call('HSET', KEYS[12], a.index_id, a.member) end
local function forget_id()
  if for_id ~= '' and KEYS[12] then redis.call('HDEL', KEYS[12], for_id) end
end
local raw = redis.call('HGET', KEYS[1], number)
if not raw then
  forget_id()
  return {'unknown'}
end
local order = cjson.decode(raw)
local current = order.s
if for_id ~= '' then
  if current == 'superseded' then
    forget_id()
    return {'unknown'}
  end
  if current == 'queued' or current == 'in_flight' then return {'no_order_id', current} end
  if order.o ~= for_id then return {'other_order_id', current, order.o or ''} end
end
if not allowed(a.from, current) then
  forget_id()
  return {'not_allowed', current}
end
if (a.if_updated_at or '') ~= '' and (order.u or '') ~= a.if_updated_at then
  return {'changed', current}
end
if a.follow == 'pending' then
  -- Back to sending (a retry): never in a campaign cancelled or archived meanwhile.
  local state = redis.call('HGET', KEYS[5], 'state')
  if state == 'cancelled' or state == 'archived' then return {'not_allowed', current} end
end
local patch = a.patch
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
if a.clearance == 'answered' then answered(order) end
if a.clearance == 'force' then order.uk = nil end
local to = checked_status(order, a.to)
if (a.made_at or '') ~= '' and to == 'completed' and current ~= 'completed' then
  local created = redis.call('HGET', KEYS[5], 'created_at')
  if created and a.made_at < created then
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
redis.call('HSET', KEYS[1], number, cjson.encode(order))
move_counts(KEYS[3], current, to, #order.i)
note_uncertain(KEYS[5], order, current, to)
count_ended(KEYS[9], current, to)
note_minute(KEYS[10], current, to, #order.i, a.now)
if to ~= 'queued' and to ~= 'in_flight' then redis.call('SREM', KEYS[6], number) end
if to == 'completed' and current ~= 'completed' and order.p and order.c then
  redis.call('HINCRBY', KEYS[5], 'spent:' .. order.c, order.p)
end
if patch.rd == true then redis.call('HINCRBY', KEYS[3], 'replayed', #order.i) end
if a.follow == 'follow' then redis.call('ZADD', KEYS[4], a.at, a.member) end
if a.follow == 'unfollow' then redis.call('ZREM', KEYS[4], a.member) end
if a.follow == 'pending' then
  redis.call('SREM', KEYS[6], number)
  redis.call('RPUSH', KEYS[7], number)
  redis.call('HDEL', KEYS[5], 'finished_at')
  keep_dispatched(KEYS[5], KEYS[8], a.campaign)
end
-- Only a change of status can finish the campaign (a refresh of a completed order's payouts
-- must not move its finished_at), and only to a status past sending: an order that is queued,
-- in flight or submitted is a row still to send, so the counts need no reading.
if current ~= to and to ~= 'queued' and to ~= 'in_flight' and to ~= 'submitted' then
  note_finished(KEYS[3], KEYS[5], a.now)
end
forget_id()
return {'moved', current, to, order.rd == true and 1 or 0}
