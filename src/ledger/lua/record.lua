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

      ARGV[1] JSON [ [orderJson, status, currency, face, price, [ [identity, line, rowTail], ...],
              sendAt], ...] where a row is stored as `[line,number` .. rowTail (see rowTail in
              codec.ts); currency, face, price and sendAt are '' when absent
      ARGV[2] the campaign (it joins the running set when it runs)

    Output:
      {rows added, rows left out, orders added}; nothing is written, and instead:
      {-1, state} when the campaign is cancelled or archived;
      {-2, currency, planned, batch, budget} when the new orders of one currency would take its
        planned price over the campaign's budget there (`budget:CUR`): checked here, in the step
        that adds to the planned price, so two imports running at once cannot both pass it.
]]
--- @include "includes/money"
--- @include "includes/keep-dispatched"

local orders = cjson.decode(ARGV[1])
local state = redis.call('HGET', KEYS[5], 'state')
if state == 'cancelled' or state == 'archived' then return {-1, state} end
local new = {}
local left_out = 0
local adding = {}
local currencies = {}
for _, o in ipairs(orders) do
  local known = false
  for _, r in ipairs(o[6]) do
    if redis.call('HEXISTS', KEYS[2], r[1]) == 1 then known = true break end
  end
  if known then
    left_out = left_out + #o[6]
  else
    table.insert(new, o)
    local c = o[3]
    if c ~= '' and o[5] ~= '' then
      if not adding[c] then
        adding[c] = '0'
        table.insert(currencies, c)
      end
      adding[c] = int_add(adding[c], o[5])
    end
  end
end
for _, c in ipairs(currencies) do
  local money = redis.call('HMGET', KEYS[5], 'budget:' .. c, 'planned_price:' .. c)
  if money[1] and not int_le(int_add(money[2] or '0', adding[c]), money[1]) then
    return {-2, c, money[2] or '0', adding[c], money[1]}
  end
end
local added = 0
for _, o in ipairs(new) do
  local n = redis.call('HINCRBY', KEYS[5], 'next_order', 1)
  redis.call('HSET', KEYS[1], n, o[1])
  for _, r in ipairs(o[6]) do
    redis.call('HSET', KEYS[2], r[1], '[' .. r[2] .. ',' .. n .. r[3])
  end
  added = added + #o[6]
  redis.call('HINCRBY', KEYS[3], o[2], #o[6])
  if o[2] == 'queued' and o[7] ~= '' then
    redis.call('ZADD', KEYS[6], o[7], n)
    redis.call('HINCRBY', KEYS[3], 'scheduled', #o[6])
  elseif o[2] == 'queued' then
    redis.call('RPUSH', KEYS[4], n)
  end
  local c = o[3]
  if c ~= '' then
    redis.call('HINCRBY', KEYS[5], 'planned_rows:' .. c, #o[6])
    if o[4] ~= '' then redis.call('HINCRBY', KEYS[5], 'planned_face:' .. c, o[4]) end
    if o[5] ~= '' then redis.call('HINCRBY', KEYS[5], 'planned_price:' .. c, o[5]) end
  end
end
redis.call('HINCRBY', KEYS[3], 'total', added)
if added > 0 then
  redis.call('HDEL', KEYS[5], 'finished_at')
  keep_dispatched(KEYS[5], KEYS[7], ARGV[2])
end
return {added, left_out, #new}
