--[[
  Sets a campaign's state, when its current state is one of ARGV[2], and keeps the running set
  in step. A campaign without a state (recorded before states existed) counts as running.

    Input:
      KEYS[1] meta hash
      KEYS[2] running set

      ARGV[1] new state
      ARGV[2] allowed current states ("a,b", or "*" for any)
      ARGV[3] campaign name
      ARGV[4..] field/value pairs to set with it

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'state_set', previous} when set
      {'not_allowed', current} when its state does not allow it
]]
--- @include "includes/allowed"

local current = redis.call('HGET', KEYS[1], 'state') or 'running'
if not allowed(ARGV[2], current) then return {'not_allowed', current} end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
-- A pause's reason belongs to the paused state only (a cancelled campaign is not "paused").
if ARGV[1] ~= 'paused' then redis.call('HDEL', KEYS[1], 'paused_reason', 'paused_at') end
if ARGV[1] == 'running' then
  redis.call('SADD', KEYS[2], ARGV[3])
else
  redis.call('SREM', KEYS[2], ARGV[3])
end
return {'state_set', current}
