--[[
  The campaign's `uncertain:CUR` in meta, kept in step with its failed_uncertain orders.
]]
-- The price of orders that may have been made (failed_uncertain), per currency: `uncertain:CUR`
-- in meta beside `spent:CUR` (minor units), so that what was spent never hides what may be.
local function note_uncertain(meta_key, order, from, to)
  if from == to or not order.p or not order.c then return end
  if to == 'failed_uncertain' then redis.call('HINCRBY', meta_key, 'uncertain:' .. order.c, order.p) end
  if from == 'failed_uncertain' then
    redis.call('HINCRBY', meta_key, 'uncertain:' .. order.c, '-' .. order.p)
  end
end
