--[[
  Pauses the running campaigns that pay in a currency whose daily limit was reached
  (docs/architecture/ledger.md, "The daily limit"): each campaign of `campaigns` whose state is
  running (or unset), whose meta has `planned_rows:CUR` (it has orders in that currency) and
  which has rows still to send (`queued` in its counts, scheduled ones included) is paused with
  the reason `reason` followed by its own resume command, and leaves the running set,
  as SET_STATE's pause does.

    Input:
      KEYS[1] running set
      then for the i-th campaign of `campaigns`, KEYS[2 * i] and KEYS[2 * i + 1]: its meta hash
      and counts hash

      ARGV[1] JSON object of named fields:
        currency   the currency
        reason     the reason, without the resume command
        now        ISO time
        campaigns  the campaigns (an array: the running set as read just before, and the one
                   that met the limit)

    Output:
      the campaigns paused by this call
]]

local a = cjson.decode(ARGV[1])
local paused = {}
for i, campaign in ipairs(a.campaigns) do
  local meta = KEYS[2 * i]
  local state = redis.call('HGET', meta, 'state') or 'running'
  local queued = tonumber(redis.call('HGET', KEYS[2 * i + 1], 'queued') or '0')
  if state == 'running' and queued > 0 and
      redis.call('HEXISTS', meta, 'planned_rows:' .. a.currency) == 1 then
    redis.call('HSET', meta, 'state', 'paused', 'paused_at', a.now, 'paused_reason',
      a.reason .. '; then: giftjobs orders resume --campaign ' .. campaign)
    redis.call('SREM', KEYS[1], campaign)
    table.insert(paused, campaign)
  end
end
return paused
