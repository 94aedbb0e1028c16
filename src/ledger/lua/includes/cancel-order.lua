--[[
  Cancelling a queued (or taken-over in_flight) order of a cancelled campaign.
]]
--- @include "counts"
--- @include "unclear-mark"
--- @include "note-uncertain"

-- What a queued order of a cancelled campaign becomes: cancelled when nothing was sent under its
-- key, failed_uncertain when an attempt ended unclear (an order may exist under it).
local function cancelled_status(order)
  if unclear(order) then return 'failed_uncertain' end
  return 'cancelled'
end
local function cancel_order(orders_key, counts_key, meta_key, n, order, now, ended_key)
  local from = order.s
  if from == 'in_flight' then mark_unclear(order, 'interrupted') end
  local to = cancelled_status(order)
  if to == 'failed_uncertain' then
    order.em = 'campaign cancelled after an attempt that ended unclear (' .. order.uc .. '): an order may exist'
    order.et = 'cancelled_uncertain'
  end
  order.ak = nil
  order.s = to
  order.u = now
  redis.call('HSET', orders_key, n, cjson.encode(order))
  move_counts(counts_key, from, to, #order.i)
  note_uncertain(meta_key, order, from, to)
  count_ended(ended_key, from, to)
end
