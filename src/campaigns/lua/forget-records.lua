--[[
  Writes a batch of a campaign's rows and orders back without their people's data, only while
  its forget is marked (forget-mark.lua) and it is still ended, and only over records that are
  there: a record removed meanwhile (an archive) is not written again.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash
      KEYS[3] rows hash
      KEYS[4] orders hash

      ARGV[1] n, the number of rows in the batch
      ARGV[2 .. 1 + 2n] identity, row (stored form) pairs
      ARGV[2 + 2n ..] order number, order (stored form) pairs

    Output:
      {1, rows written, orders written}
      {0, "not_marked"} the forget was not begun
      {0, "not_ended"} rows are pending or failed_uncertain again
]]
if not redis.call('HGET', KEYS[1], 'forget_started_at') then return {0, 'not_marked'} end
local function count(status) return tonumber(redis.call('HGET', KEYS[2], status) or '0') end
local pending = count('queued') + count('in_flight') + count('submitted')
if pending > 0 or count('failed_uncertain') > 0 then return {0, 'not_ended'} end
local n = tonumber(ARGV[1])
local rows, orders = 0, 0
for i = 2, 1 + 2 * n, 2 do
  if redis.call('HEXISTS', KEYS[3], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    rows = rows + 1
  end
end
for i = 2 + 2 * n, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    orders = orders + 1
  end
end
return {1, rows, orders}
