--[[
  Begins forgetting an ended campaign's people (docs/architecture/forgetting.md): when nothing
  of it is queued, in flight or submitted and no row is failed_uncertain, marks its meta with
  when the forget began (kept if it began before). Retry and import refuse a campaign so marked,
  so nothing is sent from rows whose e-mail is gone.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash

      ARGV[1] JSON object of named fields:
        now  ISO time

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'forget_marked'} marked (or marked before)
      {'unknown'} no such campaign
      {'not_ended'} rows are pending or failed_uncertain
]]
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown'} end
local function count(status) return tonumber(redis.call('HGET', KEYS[2], status) or '0') end
local pending = count('queued') + count('in_flight') + count('submitted')
if pending > 0 or count('failed_uncertain') > 0 then return {'not_ended'} end
redis.call('HSETNX', KEYS[1], 'forget_started_at', a.now)
return {'forget_marked'}
