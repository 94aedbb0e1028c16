--[[
  Records the state a `product.update` gave a product, unless the overrides hold one of that
  product as new or newer: the service's messages may arrive out of order, and an older one
  must never replace a newer one. The check and the write are one step, so two receivers
  recording the same product at once keep the newer message whichever runs last. A value that is
  not JSON with a numeric `at` (damaged) is replaced.

    Input:
      KEYS[1] the product overrides (`<prefix>:product-overrides`), a hash by product code

      ARGV[1] JSON object of named fields:
        code   the product code
        at     the message's `timestamp`, ms since the epoch (a number)
        value  the value to store: JSON text whose `at` is `at` (kept as given, not re-encoded)

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'product_recorded'} when recorded
      {'stale'} when the hash holds a state of the product as new or newer: nothing changed
]]

local a = cjson.decode(ARGV[1])
local current = redis.call('HGET', KEYS[1], a.code)
if current then
  local ok, known = pcall(cjson.decode, current)
  local at = ok and type(known) == 'table' and tonumber(known['at']) or nil
  if at and at >= a.at then return {'stale'} end
end
redis.call('HSET', KEYS[1], a.code, a.value)
return {'product_recorded'}
