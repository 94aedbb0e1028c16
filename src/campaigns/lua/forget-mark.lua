--[[
  Begins forgetting an ended campaign's people (docs/architecture/forgetting.md): when nothing
  of it is queued, in flight or submitted and no row is failed_uncertain, marks its meta with
  when the forget began (kept if it began before). Retry and import refuse a campaign so marked,
  so nothing is sent from rows whose e-mail is gone.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash

      ARGV[1] now (ISO time)

    Output:
      {1} marked (or marked before)
      {0, "missing"} no such campaign
      {0, "not_ended"} rows are pending or failed_uncertain
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 'missing'} end
local function count(status) return tonumber(redis.call('HGET', KEYS[2], status) or '0') end
local pending = count('queued') + count('in_flight') + count('submitted')
if pending > 0 or count('failed_uncertain') > 0 then return {0, 'not_ended'} end
redis.call('HSETNX', KEYS[1], 'forget_started_at', ARGV[1])
return {1}
