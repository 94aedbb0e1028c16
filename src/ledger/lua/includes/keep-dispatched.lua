--[[
  The dispatcher's running set: a running campaign given orders to send again rejoins it.
]]
-- A running campaign that has orders to send again is in the dispatcher's running set (DISPATCH
-- drops a campaign with nothing pending, scheduled or out).
local function keep_dispatched(meta_key, running_key, campaign)
  if (redis.call('HGET', meta_key, 'state') or 'running') == 'running' then
    redis.call('SADD', running_key, campaign)
  end
end
