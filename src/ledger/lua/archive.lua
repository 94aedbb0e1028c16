--[[
  The last step of `orders archive` (docs/architecture/campaigns.md, "Archive"): removes a
  campaign's data and leaves its tombstone, in one step, only when the campaign is still exactly as
  it was when its archive was written: the same meta and counts hashes (a transition that ends with
  nothing pending rewrites `finished_at`, a retry removes it), and as many rows and orders.
  The tombstone is the meta hash (state archived, archived_at, archive_path; no pause) and the
  counts hash. A campaign already archived only loses data keys left behind (a restore that
  stopped half way), and returns {2}.

    Input:
      KEYS[1] meta hash
      KEYS[2] counts hash
      KEYS[3] rows hash
      KEYS[4] orders hash
      KEYS[5] pending list
      KEYS[6] dispatch window
      KEYS[7] running set
      KEYS[8] scheduled sorted set
      KEYS[9] rows-per-minute hash (the dashboard's chart; an archived campaign has no page)

      ARGV[1] expected meta (JSON object)
      ARGV[2] expected counts (JSON object)
      ARGV[3] expected number of rows
      ARGV[4] expected number of orders
      ARGV[5] archived_at
      ARGV[6] archive path
      ARGV[7] campaign name

    Output:
      {1} when removed
      {0, why} when the campaign changed (nothing removed)
      {2} when it was archived already
]]

local function drop_data()
  redis.call('UNLINK', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[8], KEYS[9])
  redis.call('SREM', KEYS[7], ARGV[7])
end
-- The field that differs between a hash and the expected object, or nil when they are equal.
local function differs(key, expected)
  local flat = redis.call('HGETALL', key)
  for i = 1, #flat, 2 do
    if expected[flat[i]] ~= flat[i + 1] then return flat[i] end
  end
  for field in pairs(expected) do
    if redis.call('HEXISTS', key, field) == 0 then return field end
  end
  return nil
end
if redis.call('HGET', KEYS[1], 'state') == 'archived' then
  drop_data()
  return {2}
end
local field = differs(KEYS[1], cjson.decode(ARGV[1]))
if field then return {0, 'its ' .. field .. ' changed'} end
field = differs(KEYS[2], cjson.decode(ARGV[2]))
if field then return {0, 'its count of ' .. field .. ' changed'} end
if redis.call('HLEN', KEYS[3]) ~= tonumber(ARGV[3]) then return {0, 'its rows changed'} end
if redis.call('HLEN', KEYS[4]) ~= tonumber(ARGV[4]) then return {0, 'its orders changed'} end
drop_data()
redis.call('HDEL', KEYS[1], 'paused_reason', 'paused_at')
redis.call('HSET', KEYS[1], 'state', 'archived', 'archived_at', ARGV[5], 'archive_path', ARGV[6])
return {1}
