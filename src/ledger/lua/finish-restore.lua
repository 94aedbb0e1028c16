--[[
  The last step of `orders restore`, once rows and orders are back: the meta and counts hashes
  become what they were before the archive, and a running campaign rejoins the running set,
  provided the rows and orders hashes hold as many entries as were written.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash
      KEYS[3] running set
      KEYS[4] rows hash
      KEYS[5] orders hash

      ARGV[1] JSON object of named fields:
        campaign     the campaign's name
        archived_at  archived_at of the archive restored
        meta         the meta hash as archived (an object)
        counts       the counts hash as archived (an object)
        rows         the rows written
        orders       the orders written

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'restored', state} when restored
      {'not_allowed', state} when the campaign is not archived
      {'campaign_changed', why} when it is not that archive's tombstone any more (archived
        again since), or its rows or orders changed while it was restored
]]

local a = cjson.decode(ARGV[1])
local meta = redis.call('HMGET', KEYS[1], 'state', 'archived_at')
if meta[1] ~= 'archived' then return {'not_allowed', meta[1] or 'running'} end
if meta[2] ~= a.archived_at then
  return {'campaign_changed', 'it was archived again since (archived_at ' .. tostring(meta[2]) .. ')'}
end
if redis.call('HLEN', KEYS[4]) ~= a.rows or redis.call('HLEN', KEYS[5]) ~= a.orders then
  return {'campaign_changed', 'its rows or orders changed while it was restored; run orders restore again'}
end
local restored = a.meta
local counts = a.counts
redis.call('DEL', KEYS[1], KEYS[2])
for field, value in pairs(restored) do redis.call('HSET', KEYS[1], field, value) end
for field, value in pairs(counts) do redis.call('HSET', KEYS[2], field, value) end
local state = restored.state or 'running'
if state == 'running' then redis.call('SADD', KEYS[3], a.campaign) end
return {'restored', state}
