--[[
  Records new orders with their rows, numbering each order (`next_order` in meta), and puts
  each queued one on the pending list, adding what it costs to the campaign's planned totals
  (`planned_rows:CUR`, `planned_face:CUR`, `planned_price:CUR`, minor units).
  A queued order with a sendAt (ms) goes to the `scheduled` sorted set instead of the pending
  list (DISPATCH moves it when it is due), its rows counted `scheduled`.
  An order any of whose rows is recorded already is left out, rows and all: a re-import, or
  another import at the same time, recorded it (a re-import never overwrites what a worker
  recorded).

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash
      KEYS[3] counts hash
      KEYS[4] pending list
      KEYS[5] meta hash
      KEYS[6] scheduled sorted set
      KEYS[7] running set
      KEYS[8] the import's fence (optional, with `fence`): the number of its last batch recorded

      ARGV[1] JSON object of named fields:
        campaign  the campaign (it joins the running set when it runs)
        orders    the batch, an array of tuples (not objects: one per order of an import's hot
                  path, so no field names repeated per order)
                  [status, currency, face, price, sendAt, lines], lines being its rows'
                  line numbers; currency, face, price and sendAt are '' when absent
        fence     with KEYS[8]: the batch's number in its import, from 1. An import sends a
                  batch before the one before it has answered, so a batch is recorded only
                  when the one before it was (or when it was itself, sent again)
      ARGV[2...] the batch's texts, each order's in turn: its JSON, then each row's identity
                 and rowTail (see rowTail in codec.ts; a row is stored as `[line,number` ..
                 rowTail). Beside ARGV[1], not in it, the one script to take more than ARGV[1]:
                 as strings inside it they were escaped by the importer and decoded here, which
                 was a quarter of this script's time for an import's batch.

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'recorded', rows added, rows left out, orders added}; nothing is written, and instead:
      {'fenced'} when the fence does not hold the batch before this one;
      {'not_allowed', state} when the campaign is cancelled or archived;
      {'budget_exceeded', currency, planned, batch, budget} when the new orders of one currency
        would take its planned price over the campaign's budget there (`budget:CUR`): checked
        here, in the step that adds to the planned price, so two imports running at once cannot
        both pass it.
]]
--- @include "includes/money"
--- @include "includes/keep-dispatched"

-- Sums of minor units: Lua numbers while each part has at most 12 digits (a batch's sum then
-- stays far below 2^53, exact), int_add past that; `units_total` gives the digits.
local function add_units(sum, units)
  if #units <= 12 then sum.n = sum.n + tonumber(units) else sum.s = int_add(sum.s, units) end
end
local function units_total(sum)
  return int_add(sum.s, string.format('%.0f', sum.n))
end
-- Commands with many arguments, a thousand at a time (Lua's stack has room for about 8,000).
local function call_chunked(command, key, args)
  for i = 1, #args, 1000 do
    redis.call(command, key, unpack(args, i, math.min(i + 999, #args)))
  end
end

local a = cjson.decode(ARGV[1])
local orders = a.orders
-- Where each order's texts start in ARGV: its JSON, then two a row.
local texts_at = {}
local at = 2
for k, o in ipairs(orders) do
  texts_at[k] = at
  at = at + 1 + 2 * #o[6]
end
local fence = a.fence
if fence and fence > 1 then
  local last = tonumber(redis.call('GET', KEYS[8]) or '0')
  if last ~= fence - 1 and last ~= fence then return {'fenced'} end
end
-- The fence moves with each batch recorded; it outlives a crashed import by an hour at most.
local function pass_fence()
  if fence then redis.call('SET', KEYS[8], fence, 'PX', 3600000) end
end
local state = redis.call('HGET', KEYS[5], 'state')
if state == 'cancelled' or state == 'archived' then return {'not_allowed', state} end
local new = {}
local left_out = 0
local adding = {}
local currencies = {}
for k, o in ipairs(orders) do
  local known = false
  local first = texts_at[k] + 1
  for i = 0, #o[6] - 1 do
    if redis.call('HEXISTS', KEYS[2], ARGV[first + 2 * i]) == 1 then known = true break end
  end
  if known then
    left_out = left_out + #o[6]
  else
    table.insert(new, k)
    local c = o[2]
    if c ~= '' and o[4] ~= '' then
      if not adding[c] then
        adding[c] = {n = 0, s = '0'}
        table.insert(currencies, c)
      end
      add_units(adding[c], o[4])
    end
  end
end
for _, c in ipairs(currencies) do
  adding[c] = units_total(adding[c])
  local money = redis.call('HMGET', KEYS[5], 'budget:' .. c, 'planned_price:' .. c)
  if money[1] and not int_le(int_add(money[2] or '0', adding[c]), money[1]) then
    return {'budget_exceeded', c, money[2] or '0', adding[c], money[1]}
  end
end
if #new == 0 then
  redis.call('HINCRBY', KEYS[3], 'total', 0)
  pass_fence()
  return {'recorded', 0, left_out, 0}
end

-- The batch's writes, gathered: one HSET of its orders, one of its rows, one RPUSH of the pending
-- numbers, and its counts and planned totals added once each, not once an order.
local last = redis.call('HINCRBY', KEYS[5], 'next_order', #new)
local order_fields, row_fields, pending = {}, {}, {}
local rows_by_status, statuses = {}, {}
local planned, planned_currencies = {}, {}
local added, scheduled = 0, 0
for j, k in ipairs(new) do
  local o = orders[k]
  local n = last - #new + j
  local lines = o[6]
  local rows = #lines
  local at_order = texts_at[k]
  table.insert(order_fields, n)
  table.insert(order_fields, ARGV[at_order])
  for i = 1, rows do
    local at_row = at_order + 2 * i - 1
    table.insert(row_fields, ARGV[at_row])
    table.insert(row_fields, '[' .. lines[i] .. ',' .. n .. ARGV[at_row + 1])
  end
  added = added + rows
  local status = o[1]
  if not rows_by_status[status] then
    rows_by_status[status] = 0
    table.insert(statuses, status)
  end
  rows_by_status[status] = rows_by_status[status] + rows
  if status == 'queued' and o[5] ~= '' then
    redis.call('ZADD', KEYS[6], o[5], n)
    scheduled = scheduled + rows
  elseif status == 'queued' then
    table.insert(pending, n)
  end
  local c = o[2]
  if c ~= '' then
    local p = planned[c]
    if not p then
      p = {rows = 0, face = {n = 0, s = '0'}, price = {n = 0, s = '0'}}
      planned[c] = p
      table.insert(planned_currencies, c)
    end
    p.rows = p.rows + rows
    if o[3] ~= '' then add_units(p.face, o[3]) p.has_face = true end
    if o[4] ~= '' then add_units(p.price, o[4]) p.has_price = true end
  end
end
call_chunked('HSET', KEYS[1], order_fields)
call_chunked('HSET', KEYS[2], row_fields)
call_chunked('RPUSH', KEYS[4], pending)
for _, status in ipairs(statuses) do
  redis.call('HINCRBY', KEYS[3], status, rows_by_status[status])
end
if scheduled > 0 then redis.call('HINCRBY', KEYS[3], 'scheduled', scheduled) end
for _, c in ipairs(planned_currencies) do
  local p = planned[c]
  redis.call('HINCRBY', KEYS[5], 'planned_rows:' .. c, p.rows)
  if p.has_face then redis.call('HINCRBY', KEYS[5], 'planned_face:' .. c, units_total(p.face)) end
  if p.has_price then redis.call('HINCRBY', KEYS[5], 'planned_price:' .. c, units_total(p.price)) end
end
redis.call('HINCRBY', KEYS[3], 'total', added)
redis.call('HDEL', KEYS[5], 'finished_at')
keep_dispatched(KEYS[5], KEYS[7], a.campaign)
pass_fence()
return {'recorded', added, left_out, #new}
