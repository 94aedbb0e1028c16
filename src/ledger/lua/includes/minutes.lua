--[[
  A campaign's rows per minute, for the dashboard's chart (docs/architecture/ledger.md, "Redis
  keys"): the hash `<prefix>:campaign:<name>:minutes` (the caller's KEYS, beside the counts hash:
  same hash tag under a Cluster prefix, so the same slot), field `c:YYYY-MM-DDTHH:MM`
  (rows completed that minute, UTC) or `f:...` (rows failed). Only an order leaving sending
  (queued, in flight, submitted) for an end counts: a later change of an ended order (a reconcile
  of a failed_uncertain one) is not work of that minute. It expires 30 days after the last
  minute it counted, so an archived or deleted campaign's history goes by itself: the expiry is
  set by a minute's first count only (a field HINCRBY made), not by every order's, which would be
  a command per order for the same expiry to within a minute.
]]
local MINUTES_TTL = 30 * 24 * 3600
local function note_minute(key, from, to, n, now)
  if from ~= 'queued' and from ~= 'in_flight' and from ~= 'submitted' then return end
  local kind
  if to == 'completed' then kind = 'c:'
  elseif to == 'failed_final' or to == 'failed_uncertain' then kind = 'f:'
  else return end
  if redis.call('HINCRBY', key, kind .. string.sub(now, 1, 16), n) == n then
    redis.call('EXPIRE', key, MINUTES_TTL)
  end
end
