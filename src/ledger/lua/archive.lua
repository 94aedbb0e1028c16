--[[
  The last step of `orders archive` (docs/architecture/campaigns.md, "Archive"): removes a
  campaign's data and leaves its tombstone, in one step, only when the campaign is still exactly as
  it was when its archive was written: the same meta and counts hashes (a transition that ends with
  nothing pending rewrites `finished_at`, a retry removes it), and as many rows and orders.
  The tombstone is the meta hash (state archived, archived_at, archive_path; no pause) and the
  counts hash. A campaign already archived only loses data keys left behind (a restore that
  stopped half way), and answers 'already_archived'.

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

      ARGV[1] JSON object of named fields:
        campaign      the campaign's name
        meta          the expected meta hash (an object)
        counts        the expected counts hash (an object)
        rows          the expected number of rows
        orders        the expected number of orders
        archived_at   ISO time, for the tombstone
        archive_path  the archive's path, for the tombstone

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'archived'} when removed
      {'campaign_changed', why} when the campaign changed (nothing removed)
      {'already_archived'} when it was archived already
]]

local a = cjson.decode(ARGV[1])
local function drop_data()
  redis.call('UNLINK', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[8], KEYS[9])
  redis.call('SREM', KEYS[7], a.campaign)
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
  return {'already_archived'}
end
local field = differs(KEYS[1], a.meta)
if field then return {'campaign_changed', 'its ' .. field .. ' changed'} end
field = differs(KEYS[2], a.counts)
if field then return {'campaign_changed', 'its count of ' .. field .. ' changed'} end
if redis.call('HLEN', KEYS[3]) ~= a.rows then return {'campaign_changed', 'its rows changed'} end
if redis.call('HLEN', KEYS[4]) ~= a.orders then
  return {'campaign_changed', 'its orders changed'}
end
drop_data()
redis.call('HDEL', KEYS[1], 'paused_reason', 'paused_at')
redis.call('HSET', KEYS[1], 'state', 'archived', 'archived_at', a.archived_at,
  'archive_path', a.archive_path)
return {'archived'}
