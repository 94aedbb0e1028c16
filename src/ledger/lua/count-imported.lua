--[[
  Adds an import's new rows to what its importer imported on a day, in one currency (four eyes
  across campaigns, docs/architecture/audit.md), or gives them back (negative units). A field
  that comes back to nothing is removed, and with the last field the day's hash, so an import
  that recorded nothing leaves nothing behind; in the same step, so an import counted beside a
  give-back is never lost.

    Input:
      KEYS[1] the day's hash (<prefix>:imported-today:<day>)

      ARGV[1] JSON object of named fields:
        field    `CUR name-key`
        units    minor units to add, as a decimal string (negative to give back)
        seconds  how long the day's hash is kept after this change

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'counted', total} the importer's total for the day in that currency, minor units
]]
local args = cjson.decode(ARGV[1])
local total = redis.call('HINCRBY', KEYS[1], args.field, args.units)
if total <= 0 then
  redis.call('HDEL', KEYS[1], args.field)
  total = 0
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], args.seconds) end
return {'counted', total}
