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

      ARGV[1] archived_at of the archive restored
      ARGV[2] campaign name
      ARGV[3] meta (JSON object)
      ARGV[4] counts (JSON object)
      ARGV[5] rows written
      ARGV[6] orders written

    Output:
      {1, state} when restored
      {0, why} when the campaign is not that archive's tombstone
]]

local meta = redis.call('HMGET', KEYS[1], 'state', 'archived_at')
if meta[1] ~= 'archived' then return {0, 'it is ' .. (meta[1] or 'running') .. ', not archived'} end
if meta[2] ~= ARGV[1] then return {0, 'it was archived again since (archived_at ' .. tostring(meta[2]) .. ')'} end
if redis.call('HLEN', KEYS[4]) ~= tonumber(ARGV[5]) or redis.call('HLEN', KEYS[5]) ~= tonumber(ARGV[6]) then
  return {0, 'its rows or orders changed while it was restored; run orders restore again'}
end
local restored = cjson.decode(ARGV[3])
local counts = cjson.decode(ARGV[4])
redis.call('DEL', KEYS[1], KEYS[2])
for field, value in pairs(restored) do redis.call('HSET', KEYS[1], field, value) end
for field, value in pairs(counts) do redis.call('HSET', KEYS[2], field, value) end
local state = restored.state or 'running'
if state == 'running' then redis.call('SADD', KEYS[3], ARGV[2]) end
return {1, state}
