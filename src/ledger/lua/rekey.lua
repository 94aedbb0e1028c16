--[[
  Moves some or all rows of an order to a new order of the next generation: the old record
  becomes superseded (or keeps a status for the rows left in it), the new one is queued under
  the next order number with the key given, and the moved rows point at it. Used by `retry
  --new-key` and by a 422 that names one item. The new order goes to the front of the pending
  list (the dispatcher sends it next); the old one leaves the window.

    Input:
      KEYS[1] orders hash
      KEYS[2] rows hash
      KEYS[3] counts hash
      KEYS[4] dispatch window
      KEYS[5] pending list
      KEYS[6] meta hash
      KEYS[7] running set
      KEYS[8] ended-orders counter (includes/counts.lua, count_ended)

      ARGV[1] JSON object of named fields:
        number      the old order number (a string)
        key         the new key
        identities  the moved identities (an array)
        generation  the new generation (a number)
        rest_status the status for the rows left
        rest_patch  object of stored names for them
        from        allowed statuses of the old order ("a,b", or "*" for any)
        campaign    the campaign (it rejoins the running set if it runs)
        clearance   why a new key is allowed: 'answered' (the service answered under the old
                    key: nothing was made), 'force' (the operator checked), 'absent' (`orders
                    reconcile` found no order under it: allowed only for a failed_uncertain order
                    it recorded absent, `ra`, listing with the API key of the unclear attempt,
                    `rk` == `uk`), or absent (an old order that carries the mark of an unclear
                    attempt is then refused: an order may exist under its key)

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'rekeyed', new order number} when done
      {'not_allowed', status} when the old order's status is not allowed
      {'unclear', mark} when it carries the mark
      {'unknown'} when there is no such order
]]
--- @include "includes/allowed"
--- @include "includes/counts"
--- @include "includes/unclear-mark"
--- @include "includes/note-uncertain"
--- @include "includes/keep-dispatched"

local a = cjson.decode(ARGV[1])
local clearance = a.clearance or ''
local raw = redis.call('HGET', KEYS[1], a.number)
if not raw then return {'unknown'} end
local old = cjson.decode(raw)
if not allowed(a.from, old.s) then return {'not_allowed', old.s} end
if clearance == '' and unclear(old) then return {'unclear', old.uc} end
if clearance == 'absent' then
  local same_key = old.uk ~= nil and old.uk ~= '' and old.rk == old.uk
  if old.s ~= 'failed_uncertain' or not old.ra or not same_key then
    return {'unclear', old.uc or 'uncertain'}
  end
  answered(old)
end
if clearance == 'answered' then answered(old) end
old.ak = nil
local moved = a.identities
local is_moved = {}
for _, id in ipairs(moved) do is_moved[id] = true end
local rest = {}
for _, id in ipairs(old.i) do
  if not is_moved[id] then table.insert(rest, id) end
end
local n = redis.call('HINCRBY', KEYS[6], 'next_order', 1)
local new_order = { k = a.key, i = moved, g = a.generation, s = 'queued', rp = tonumber(a.number),
  m = old.m, c = old.c, d = old.d, md = old.md, t = old.t }
-- An order that names its key in its metadata (src/ledger/order-tags.ts) names the new one: one
-- stored with `t` by itself (its tags are made from `k` when it is read, see codec.ts), one
-- written before `t` existed by its `md`.
if type(old.md) == 'table' and old.md.giftjobs_key then
  local md = {}
  for name, value in pairs(old.md) do md[name] = value end
  md.giftjobs_key = a.key
  new_order.md = md
end
-- The price goes with the order when all its rows move (a packed order split by a 422 is not
-- re-priced: its spend is then not counted).
if #rest == 0 then
  new_order.p = old.p
  new_order.f = old.f
end
-- A campaign cancelled meanwhile sends nothing more: the new order (nothing was made for
-- its rows: a 4xx moved them) is cancelled at once instead of waiting on the pending list.
local closed = redis.call('HGET', KEYS[6], 'state')
if closed == 'cancelled' or closed == 'archived' then
  new_order.s = 'cancelled'
  count_ended(KEYS[8], 'queued', 'cancelled')
end
redis.call('HSET', KEYS[1], n, cjson.encode(new_order))
move_counts(KEYS[3], old.s, new_order.s, #moved)
redis.call('SREM', KEYS[4], a.number)
if new_order.s == 'queued' then
  redis.call('LPUSH', KEYS[5], n)
  redis.call('HDEL', KEYS[6], 'finished_at')
  keep_dispatched(KEYS[6], KEYS[7], a.campaign)
end
for _, id in ipairs(moved) do
  local row_raw = redis.call('HGET', KEYS[2], id)
  if row_raw then
    local row = cjson.decode(row_raw)
    row[2] = n
    row[3] = a.generation
    redis.call('HSET', KEYS[2], id, cjson.encode(row))
  end
end
if #rest == 0 then
  note_uncertain(KEYS[6], old, old.s, 'superseded')
  old.s = 'superseded'
  old.sb = n
else
  old.i = rest
  local status_for_rest = a.rest_status
  merge(old, a.rest_patch)
  status_for_rest = checked_status(old, status_for_rest)
  move_counts(KEYS[3], old.s, status_for_rest, #rest)
  note_uncertain(KEYS[6], old, old.s, status_for_rest)
  count_ended(KEYS[8], old.s, status_for_rest)
  old.s = status_for_rest
end
redis.call('HSET', KEYS[1], a.number, cjson.encode(old))
return {'rekeyed', n}
