--[[
  Sets a campaign's state, when its current state is one of `from`, and keeps the running set
  in step. A campaign without a state (recorded before states existed) counts as running.

    Input:
      KEYS[1] meta hash
      KEYS[2] running set

      ARGV[1] JSON object of named fields:
        campaign  the campaign's name
        state     the new state
        from      allowed current states ("a,b", or "*" for any)
        fields    object of meta fields set with it (absent: none)

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'state_set', previous} when set
      {'not_allowed', current} when its state does not allow it
]]
--- @include "includes/allowed"

local a = cjson.decode(ARGV[1])
local current = redis.call('HGET', KEYS[1], 'state') or 'running'
if not allowed(a.from, current) then return {'not_allowed', current} end
redis.call('HSET', KEYS[1], 'state', a.state)
for field, value in pairs(a.fields or {}) do redis.call('HSET', KEYS[1], field, value) end
-- A pause's reason belongs to the paused state only (a cancelled campaign is not "paused").
if a.state ~= 'paused' then redis.call('HDEL', KEYS[1], 'paused_reason', 'paused_at') end
if a.state == 'running' then
  redis.call('SADD', KEYS[2], a.campaign)
else
  redis.call('SREM', KEYS[2], a.campaign)
end
return {'state_set', current}
