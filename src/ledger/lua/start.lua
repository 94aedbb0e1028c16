--[[
  The start of an attempt, in one round trip.
  - An order found in_flight was taken over from a worker that died mid-attempt: it gets the
    mark of an unclear attempt (see mark_unclear) whatever happens next.
  - Campaign held or paused: the order goes back to the front of its pending list and out of
    the window (it was queued, or in flight on a worker that died: same key either way), and
    the job ends; the dispatcher sends it again once the campaign runs. Answers 'paused'.
  - Campaign cancelled: a queued order is cancelled (see cancelled_status). Answers
    'not_allowed'.
  - The campaign's planned price in the order's currency is over its budget there (`budget:CUR`,
    e.g. the budget was lowered): the campaign is paused with reason `budget_exceeded: ...` and
    the order given back as above (the dispatcher drops a campaign no longer running from its
    set). Answers 'over_budget'.
  - The order carries the mark of an unclear attempt made with another API key: the service may
    keep its idempotency records per API key, so this one might not replay that order. Nothing
    is sent; the order becomes failed_uncertain. Answers 'other_api_key'.
  - The order's currency has a daily limit (`limits`) and its price would take the day's spend
    across campaigns (KEYS[8], includes/daily-limit.lua) past it: nothing is sent, the order is
    given back as above, and the caller pauses the campaigns of that currency. Answers
    'daily_limit'. An order that may be sent has its price counted in the day's spend, limit or
    none (once: the order keeps the day in `dl`).
  - Otherwise moves the order to in_flight from queued or in_flight and answers 'started'
    with the campaign's execution mode (meta `execution_mode`: an order of that mode does not
    repeat it, see encodeOrder in codec.ts); 'not_allowed' when the order is past starting (it
    leaves the window), 'unknown' when there is no such order.

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash
      KEYS[3] counts hash
      KEYS[4] meta hash
      KEYS[5] dispatch window
      KEYS[6] pending list
      KEYS[7] ended-orders counter (includes/counts.lua, count_ended)
      KEYS[8] the day's spend across campaigns (includes/daily-limit.lua)

      ARGV[1] JSON object of named fields:
        number    the order number (a string)
        patch     object of stored names merged in
        now       ISO time
        decimals  object {CUR: decimals} of currencies without 2 decimals
        api_key   the fingerprint of the worker's API key (absent when it has none)
        limits    JSON text {CUR: minor units} of the daily limits ('' when none)
        day       the day the spend counts in (YYYY-MM-DD; '': not counted)
        oldest    the first day the day's spend keeps (older days' fields go)

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'started', orderJson, {rowJson, ...} (its rows, in its order), campaignCreatedAt,
        executionMode}
      {'paused', reason} when the campaign is held or paused (the order given back)
      {'over_budget', reason} when this start paused the campaign over its budget (the order
        given back)
      {'other_api_key', the mark} when an earlier attempt ended unclear under another API key
      {'daily_limit', currency, spent, limit, price, day} when the daily limit stops it (the
        order given back; minor units, price '' when the order has none)
      {'not_allowed', status} when the order is past starting, or cancelled with its campaign
      {'unknown'} when there is no such order
]]
--- @include "includes/counts"
--- @include "includes/unclear-mark"
--- @include "includes/money"
--- @include "includes/note-uncertain"
--- @include "includes/cancel-order"
--- @include "includes/daily-limit"

local a = cjson.decode(ARGV[1])
local number = a.number
local api_key = a.api_key or ''
local raw = redis.call('HGET', KEYS[1], number)
if not raw then
  redis.call('SREM', KEYS[5], number)
  return {'unknown'}
end
local order = cjson.decode(raw)
local current = order.s
if current ~= 'queued' and current ~= 'in_flight' then
  redis.call('SREM', KEYS[5], number)
  return {'not_allowed', current}
end
-- The campaign's state and, for the order's currency, its budget and planned price: one read.
local c = order.c or ''
local meta = redis.call('HMGET', KEYS[4], 'state', 'paused_reason', 'created_at', 'execution_mode',
  'budget:' .. c, 'planned_price:' .. c)
local state = meta[1] or 'running'
if current == 'in_flight' then mark_unclear(order, 'interrupted') end
if state == 'cancelled' or state == 'archived' then
  -- queued: cancelled (or failed_uncertain after an ambiguous attempt); in_flight here is a job
  -- taken over from a worker that died mid-attempt: an order may exist, so failed_uncertain.
  cancel_order(KEYS[1], KEYS[3], KEYS[4], number, order, a.now, KEYS[7])
  redis.call('SREM', KEYS[5], number)
  note_finished(KEYS[3], KEYS[4], a.now)
  return {'not_allowed', order.s}
end
local function give_back()
  if current == 'in_flight' then
    order.s = 'queued'
    order.ak = nil
    redis.call('HSET', KEYS[1], number, cjson.encode(order))
    move_counts(KEYS[3], 'in_flight', 'queued', #order.i)
  end
  if redis.call('SREM', KEYS[5], number) == 1 then redis.call('LPUSH', KEYS[6], number) end
end
if state == 'held' or state == 'paused' or meta[2] then
  give_back()
  return {'paused', meta[2] or state}
end
if order.c then
  local budget, planned = meta[5], meta[6]
  if budget and not int_le(planned or '0', budget) then
    local scale = a.decimals[c] or 2
    local reason = 'budget_exceeded: ' .. c .. ' planned ' .. units_text(planned, scale) ..
      ' is over the budget of ' .. units_text(budget, scale)
    redis.call('HSET', KEYS[4], 'state', 'paused', 'paused_reason', reason, 'paused_at', a.now)
    give_back()
    return {'over_budget', reason}
  end
end
if order.uc and order.uk and api_key ~= '' and order.uk ~= api_key then
  order.s = 'failed_uncertain'
  order.ak = nil
  order.et = 'api_key_changed'
  order.em = 'an earlier attempt under this key ended unclear (' .. order.uc .. ') under another ' ..
    'API key, which the service may not replay under this one: nothing was sent; an order may exist'
  order.u = a.now
  redis.call('HSET', KEYS[1], number, cjson.encode(order))
  move_counts(KEYS[3], current, 'failed_uncertain', #order.i)
  note_uncertain(KEYS[4], order, current, 'failed_uncertain')
  count_ended(KEYS[7], current, 'failed_uncertain')
  redis.call('SREM', KEYS[5], number)
  note_finished(KEYS[3], KEYS[4], a.now)
  return {'other_api_key', order.uc}
end
local over = reserve_daily(KEYS[8], order, a.limits or '', a.day or '', a.oldest or '')
if over then
  give_back()
  return {'daily_limit', over[1], over[2], over[3], over[4], a.day}
end
merge(order, a.patch)
if api_key ~= '' then order.ak = api_key end
order.s = 'in_flight'
local encoded = cjson.encode(order)
redis.call('HSET', KEYS[1], number, encoded)
move_counts(KEYS[3], current, 'in_flight', #order.i)
return {'started', encoded, redis.call('HMGET', KEYS[2], unpack(order.i)), meta[3] or '', meta[4] or ''}
