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

      ARGV[1] old order number
      ARGV[2] new key
      ARGV[3] moved identities (JSON array)
      ARGV[4] new generation
      ARGV[5] status for the rows left
      ARGV[6] patch for them (JSON object of stored names)
      ARGV[7] allowed statuses of the old order ("a,b", or "*" for any)
      ARGV[8] campaign (it rejoins the running set if it runs)
      ARGV[9] why a new key is allowed: 'answered' (the service answered under the old key:
              nothing was made), 'force' (the operator checked), 'absent' (`orders reconcile`
              found no order under it: allowed only for a failed_uncertain order it recorded
              absent, `ra`, listing with the API key of the unclear attempt, `rk` == `uk`), or
              '' (an old order that carries the mark of an unclear attempt is then refused: an
              order may exist under its key)

    Output:
      {1, new order number} when done
      {0, status} when the old order's status is not allowed
      {-2, mark} when it carries the mark
      {-1, ""} when it is unknown
]]
--- @include "includes/allowed"
--- @include "includes/counts"
--- @include "includes/unclear-mark"
--- @include "includes/note-uncertain"
--- @include "includes/keep-dispatched"

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {-1, ''} end
local old = cjson.decode(raw)
if not allowed(ARGV[7], old.s) then return {0, old.s} end
if ARGV[9] == '' and unclear(old) then return {-2, old.uc} end
if ARGV[9] == 'absent' then
  local same_key = old.uk ~= nil and old.uk ~= '' and old.rk == old.uk
  if old.s ~= 'failed_uncertain' or not old.ra or not same_key then
    return {-2, old.uc or 'uncertain'}
  end
  answered(old)
end
if ARGV[9] == 'answered' then answered(old) end
old.ak = nil
local moved = cjson.decode(ARGV[3])
local is_moved = {}
for _, id in ipairs(moved) do is_moved[id] = true end
local rest = {}
for _, id in ipairs(old.i) do
  if not is_moved[id] then table.insert(rest, id) end
end
local n = redis.call('HINCRBY', KEYS[6], 'next_order', 1)
local new_order = { k = ARGV[2], i = moved, g = tonumber(ARGV[4]), s = 'queued', rp = tonumber(ARGV[1]),
  m = old.m, c = old.c, d = old.d, md = old.md, t = old.t }
-- An order that names its key in its metadata (src/ledger/order-tags.ts) names the new one: one
-- stored with `t` by itself (its tags are made from `k` when it is read, see codec.ts), one
-- written before `t` existed by its `md`.
if type(old.md) == 'table' and old.md.giftjobs_key then
  local md = {}
  for name, value in pairs(old.md) do md[name] = value end
  md.giftjobs_key = ARGV[2]
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
redis.call('SREM', KEYS[4], ARGV[1])
if new_order.s == 'queued' then
  redis.call('LPUSH', KEYS[5], n)
  redis.call('HDEL', KEYS[6], 'finished_at')
  keep_dispatched(KEYS[6], KEYS[7], ARGV[8])
end
for _, id in ipairs(moved) do
  local row_raw = redis.call('HGET', KEYS[2], id)
  if row_raw then
    local row = cjson.decode(row_raw)
    row[2] = n
    row[3] = tonumber(ARGV[4])
    redis.call('HSET', KEYS[2], id, cjson.encode(row))
  end
end
if #rest == 0 then
  note_uncertain(KEYS[6], old, old.s, 'superseded')
  old.s = 'superseded'
  old.sb = n
else
  old.i = rest
  local status_for_rest = ARGV[5]
  merge(old, cjson.decode(ARGV[6]))
  status_for_rest = checked_status(old, status_for_rest)
  move_counts(KEYS[3], old.s, status_for_rest, #rest)
  note_uncertain(KEYS[6], old, old.s, status_for_rest)
  count_ended(KEYS[8], old.s, status_for_rest)
  old.s = status_for_rest
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(old))
return {1, n}
