--[[
  The daily limit across campaigns (docs/architecture/ledger.md, "The daily limit"): the day's
  spend per currency is a field `CUR:YYYY-MM-DD` of one hash, in minor units. Needs
  includes/money.lua.
]]
-- Counts an order's price in the day's spend of its currency, whether or not a limit is set (a
-- limit set at noon counts the morning), when the limit allows it. `limits` is the JSON
-- {CUR: units} of the limits ('' for none), `day` the day (YYYY-MM-DD; '' counts nothing) and
-- `oldest` the first day kept: a day's first count drops the fields of days before it.
-- Returns nil when the order may be sent (counted now, counted before, or no limit for its
-- currency), else {currency, spent, limit, price} (price '' when the order has none).
local function reserve_daily(key, order, limits, day, oldest)
  if day == '' or not order.c or order.dl then return nil end
  local limit = limits ~= '' and cjson.decode(limits)[order.c] or nil
  if not limit and not order.p then return nil end
  local field = order.c .. ':' .. day
  if limit then
    local spent = redis.call('HGET', key, field) or '0'
    -- An order of no recorded price cannot be held against the limit: it is not sent.
    if not order.p then return {order.c, spent, limit, ''} end
    if not int_le(int_add(spent, tostring(order.p)), limit) then
      return {order.c, spent, limit, tostring(order.p)}
    end
  end
  if redis.call('HSETNX', key, field, '0') == 1 then
    for _, f in ipairs(redis.call('HKEYS', key)) do
      if string.sub(f, 5) < oldest then redis.call('HDEL', key, f) end
    end
    redis.call('EXPIRE', key, 8 * 86400)
  end
  redis.call('HINCRBY', key, field, tostring(order.p))
  order.dl = day
  return nil
end
-- An order that ended made nothing (failed_final, cancelled): its price leaves the day it was
-- reserved in, if that day is still kept.
local function release_daily(key, order)
  if not order.dl or not order.c or not order.p then return end
  local field = order.c .. ':' .. order.dl
  if redis.call('HEXISTS', key, field) == 1 then
    redis.call('HINCRBY', key, field, '-' .. tostring(order.p))
  end
  order.dl = nil
end
