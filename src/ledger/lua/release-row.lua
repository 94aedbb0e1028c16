--[[
  Takes a row out of the ledger so that its changed content can be recorded anew under the same
  reference; allowed only when its order failed for good (failed_final: nothing was made).
  The row leaves its old order (superseded when emptied).

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash
      KEYS[3] counts hash

      ARGV[1] JSON object of named fields:
        identity  the row's identity

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'released', generation} when removed
      {'not_allowed', status} when its order's status forbids it
      {'unknown'} when the row is unknown
]]
--- @include "includes/counts"

local identity = cjson.decode(ARGV[1]).identity
local row_raw = redis.call('HGET', KEYS[2], identity)
if not row_raw then return {'unknown'} end
local row = cjson.decode(row_raw)
local order_raw = redis.call('HGET', KEYS[1], row[2])
if order_raw then
  local order = cjson.decode(order_raw)
  if order.s ~= 'failed_final' then return {'not_allowed', order.s} end
  local rest = {}
  for _, id in ipairs(order.i) do if id ~= identity then table.insert(rest, id) end end
  move_counts(KEYS[3], 'failed_final', 'superseded', 1)
  if #rest == 0 then order.s = 'superseded' else order.i = rest end
  redis.call('HSET', KEYS[1], row[2], cjson.encode(order))
end
redis.call('HDEL', KEYS[2], identity)
redis.call('HINCRBY', KEYS[3], 'total', -1)
return {'released', tostring(row[3] or 0)}
