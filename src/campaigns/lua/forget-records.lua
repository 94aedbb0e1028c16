--[[
  Writes a batch of a campaign's rows and orders back without their people's data, only while
  its forget is marked (forget-mark.lua) and it is still ended, and only over records that are
  there: a record removed meanwhile (an archive) is not written again.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash
      KEYS[3] rows hash
      KEYS[4] orders hash

      ARGV[1] JSON object of named fields:
        rows    array of [identity, row (stored form)]
        orders  array of [order number (a string), order (stored form)]

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'forgotten', rows written, orders written}
      {'not_marked'} the forget was not begun
      {'not_ended'} rows are pending or failed_uncertain again
]]
if not redis.call('HGET', KEYS[1], 'forget_started_at') then return {'not_marked'} end
local function count(status) return tonumber(redis.call('HGET', KEYS[2], status) or '0') end
local pending = count('queued') + count('in_flight') + count('submitted')
if pending > 0 or count('failed_uncertain') > 0 then return {'not_ended'} end
local a = cjson.decode(ARGV[1])
-- Writes each [field, value] of `entries` the hash `key` holds already; answers how many.
local function rewrite(key, entries)
  local written = 0
  for _, entry in ipairs(entries) do
    if redis.call('HEXISTS', key, entry[1]) == 1 then
      redis.call('HSET', key, entry[1], entry[2])
      written = written + 1
    end
  end
  return written
end
return {'forgotten', rewrite(KEYS[3], a.rows), rewrite(KEYS[4], a.orders)}
