--[[
  Records the state a `product.update` gave a product, unless the overrides hold one of that
  product as new or newer: the service's messages may arrive out of order, and an older one
  must never replace a newer one. The check and the write are one step, so two receivers
  recording the same product at once keep the newer message whichever runs last. A value that is
  not JSON with a numeric `at` (damaged) is replaced.

    Input:
      KEYS[1] the product overrides (`<prefix>:product-overrides`), a hash by product code

      ARGV[1] the product code
      ARGV[2] the message's `timestamp`, ms since the epoch
      ARGV[3] the value to store: JSON whose `at` is ARGV[2]

    Output:
      1 when recorded
      0 when the hash holds a state of the product as new or newer: nothing changed
]]

local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, known = pcall(cjson.decode, current)
  local at = ok and type(known) == 'table' and tonumber(known['at']) or nil
  if at and at >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
