--[[
  Cancels up to `batch` orders of a cancelled campaign's pending list, then of its scheduled
  set, and then those of its window still queued (their jobs, when taken, find nothing to
  send).

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash (not read here)
      KEYS[3] counts hash
      KEYS[4] pending list
      KEYS[5] dispatch window
      KEYS[6] meta hash
      KEYS[7] scheduled sorted set
      KEYS[8] ended-orders counter (includes/counts.lua, count_ended)

      ARGV[1] JSON object of named fields:
        batch  the most orders taken (a number)
        now    ISO time

    Output:
      the number of pending or scheduled orders taken (0 once both are empty)
]]
--- @include "includes/counts"
--- @include "includes/cancel-order"

local a = cjson.decode(ARGV[1])
local taken = redis.call('LPOP', KEYS[4], a.batch) or {}
if #taken == 0 then
  taken = redis.call('ZRANGE', KEYS[7], 0, a.batch - 1)
  for _, n in ipairs(taken) do
    redis.call('ZREM', KEYS[7], n)
    local raw = redis.call('HGET', KEYS[1], n)
    if raw then redis.call('HINCRBY', KEYS[3], 'scheduled', -#cjson.decode(raw).i) end
  end
end
local function cancel(n)
  local raw = redis.call('HGET', KEYS[1], n)
  if not raw then return end
  local order = cjson.decode(raw)
  if order.s == 'queued' then cancel_order(KEYS[1], KEYS[3], KEYS[6], n, order, a.now, KEYS[8]) end
end
for _, n in ipairs(taken) do cancel(n) end
if #taken == 0 then
  for _, n in ipairs(redis.call('SMEMBERS', KEYS[5])) do cancel(n) end
end
note_finished(KEYS[3], KEYS[6], a.now)
return #taken
