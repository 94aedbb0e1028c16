/**
 * Lua scripts of the ledger. Each runs atomically in Redis, so row counts stay exact however
 * many workers update the same campaign. KEYS start with [orders, rows, counts] of one campaign
 * (same hash tag under a Cluster prefix); each script's header names the rest.
 *
 * Orders are stored under their number in the campaign (`next_order` in meta gives them out),
 * as JSON objects with the one-letter names of STORED_ORDER_FIELDS (ledger-codec.ts): `s` status, `i`
 * row identities, `g` generation, `k` idempotency key, `c`/`p`/`f` currency, price and face
 * value, `et`/`em` error type and message, `u` updated at. Rows are JSON arrays
 * `[line, order number, generation, ...]` (docs/architecture.md, "Redis keys").
 *
 * Sending (docs/architecture.md, "Campaigns and the dispatcher"): an order recorded `queued` is
 * put on its campaign's `pending` list in the same script; the dispatcher moves order numbers
 * from `pending` to the campaign's `window` set (and adds their BullMQ jobs) only while the
 * campaign is running; an order leaves the window in the script that ends its job.
 */

/** Shared helpers: decode an order, count its rows, move counts between statuses. */
const HELPERS = `
local function move_counts(counts_key, from, to, n)
  if from ~= to then
    if from ~= 'superseded' then redis.call('HINCRBY', counts_key, from, -n) end
    if to ~= 'superseded' then redis.call('HINCRBY', counts_key, to, n) end
  end
end
local function allowed(list, status)
  for s in string.gmatch(list, '[^,]+') do if s == status or s == '*' then return true end end
  return false
end
local function pending_rows(counts_key)
  local c = redis.call('HMGET', counts_key, 'queued', 'in_flight', 'submitted')
  return (tonumber(c[1]) or 0) + (tonumber(c[2]) or 0) + (tonumber(c[3]) or 0)
end
local function note_finished(counts_key, meta_key, now)
  if pending_rows(counts_key) == 0 then redis.call('HSET', meta_key, 'finished_at', now) end
end
-- The mark of an unclear attempt (docs/architecture.md, "One key while an order may exist"):
-- \`uc\` the error type of the first attempt under the order's key that ended unclear, \`uk\` the
-- fingerprint of the API key it was made with (\`ak\`: the attempt under way's). Set here or by a
-- patch; removed only by answered() or an operator's --force: never by a patch.
local function mark_unclear(order, why)
  if not order.uc then order.uc = why end
  if not order.uk then order.uk = order.ak end
end
-- The service answered under the order's key (an order, or a refusal it records under the key):
-- whatever an earlier attempt did, the key's record now says it.
local function answered(order)
  order.uc = nil
  order.uk = nil
end
-- The mark, also as recorded before \`uc\` existed: a queued order's \`et\` (only an unclear
-- attempt left one there), and any failed_uncertain order.
local function unclear(order)
  if order.uc then return order.uc end
  if (order.s == 'queued' and order.et) or order.s == 'failed_uncertain' then
    mark_unclear(order, order.et or 'uncertain')
  end
  return order.uc
end
-- What a queued order of a cancelled campaign becomes: cancelled when nothing was sent under its
-- key, failed_uncertain when an attempt ended unclear (an order may exist under it).
local function cancelled_status(order)
  if unclear(order) then return 'failed_uncertain' end
  return 'cancelled'
end
-- Money in minor units stays a string of digits here: Lua numbers are doubles, and a sum of
-- prices must be exact whatever its size.
local function int_add(a, b)
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d = d + string.byte(a, i) - 48 end
    if j > 0 then d = d + string.byte(b, j) - 48 end
    table.insert(out, 1, string.char(48 + d % 10))
    carry = math.floor(d / 10)
    i = i - 1
    j = j - 1
  end
  local s = (string.gsub(table.concat(out), '^0+', ''))
  if s == '' then return '0' end
  return s
end
local function int_le(a, b)
  a = (string.gsub(a, '^0+', ''))
  b = (string.gsub(b, '^0+', ''))
  if #a ~= #b then return #a < #b end
  return a <= b
end
-- Minor units as a decimal ("12345", 2 -> "123.45") for messages.
local function units_text(units, scale)
  if scale == 0 then return units end
  local s = string.rep('0', scale + 1 - #units) .. units
  return string.sub(s, 1, #s - scale) .. '.' .. string.sub(s, #s - scale + 1)
end
-- The price of orders that may have been made (failed_uncertain), per currency: \`uncertain:CUR\`
-- in meta beside \`spent:CUR\` (minor units), so that what was spent never hides what may be.
local function note_uncertain(meta_key, order, from, to)
  if from == to or not order.p or not order.c then return end
  if to == 'failed_uncertain' then redis.call('HINCRBY', meta_key, 'uncertain:' .. order.c, order.p) end
  if from == 'failed_uncertain' then
    redis.call('HINCRBY', meta_key, 'uncertain:' .. order.c, '-' .. order.p)
  end
end
-- Orders cancelled, for giftjobs_orders_total{outcome="cancelled"}: whichever process cancels
-- them (a worker, the cancel command, the dashboard), a metrics endpoint claims them once.
local function count_cancelled(cancelled_key, to)
  if to == 'cancelled' then redis.call('INCR', cancelled_key) end
end
local function cancel_order(orders_key, counts_key, meta_key, n, order, now, cancelled_key)
  local from = order.s
  if from == 'in_flight' then mark_unclear(order, 'interrupted') end
  local to = cancelled_status(order)
  if to == 'failed_uncertain' then
    order.em = 'campaign cancelled after an attempt that ended unclear (' .. order.uc .. '): an order may exist'
    order.et = 'cancelled_uncertain'
  end
  order.ak = nil
  order.s = to
  order.u = now
  redis.call('HSET', orders_key, n, cjson.encode(order))
  move_counts(counts_key, from, to, #order.i)
  note_uncertain(meta_key, order, from, to)
  count_cancelled(cancelled_key, to)
end
-- A running campaign that has orders to send again is in the dispatcher's running set (DISPATCH
-- drops a campaign with nothing pending, scheduled or out).
local function keep_dispatched(meta_key, running_key, campaign)
  if (redis.call('HGET', meta_key, 'state') or 'running') == 'running' then
    redis.call('SADD', running_key, campaign)
  end
end
-- A patch from ARGV (stored names) merged into an order; JSON null removes the field, except
-- the mark of an unclear attempt (see mark_unclear).
local function merge(order, patch)
  for k, v in pairs(patch) do
    if v ~= cjson.null then
      order[k] = v
    elseif k ~= 'uc' and k ~= 'uk' then
      order[k] = nil
    end
  end
  if order.uc and not order.uk then order.uk = order.ak end
end
-- The status an order really takes for \`to\`: while its key's last word is an unclear attempt,
-- it is never one that says nothing was made (failed_final, cancelled) but failed_uncertain,
-- and a failed_uncertain order always carries the mark.
local function checked_status(order, to)
  if (to == 'failed_final' or to == 'cancelled') and order.uc then
    order.em = (order.em or to) .. ' (an earlier attempt under this key ended unclear: ' ..
      order.uc .. '; an order may exist)'
    return 'failed_uncertain'
  end
  if to == 'failed_uncertain' then mark_unclear(order, order.et or 'uncertain') end
  return to
end
`;

/**
 * Moves an order (and all its rows) to a new status when its current status is allowed.
 * KEYS: orders, rows, counts, follow set, meta, window, pending, running set. ARGV: order number,
 * allowedFrom ("queued,in_flight" or "*"), to, patch (JSON object of stored names merged in;
 * null removes), now (ISO time), then '' or 'follow' with a due time (ms) or 'unfollow',
 * or 'pending', and the follow-set member: the status follower's entry changes with the status,
 * atomically, so an accepted order can never be left unfollowed. 'pending' puts the order back
 * on the pending list (a retry; ARGV[9] is then the campaign, which rejoins the running set if
 * it runs). ARGV[10]: 'answered' when the service answered under the order's key (the mark of an
 * unclear attempt goes), 'force' when the operator sends it again under another API key after
 * checking (the mark's API key goes), '' otherwise.
 * An order leaving queued/in_flight leaves the dispatch window:
 * its job is over. A completed order adds its price to the campaign's spend; a replayed one
 * counts as replayed. \`to\` failed_final or cancelled becomes failed_uncertain while the order
 * carries the mark of an unclear attempt (see checked_status).
 * ARGV[11]: the service's order id the change is for, or '' (the end of an async order the
 * service reported: a poll or a webhook). The order then moves only when it holds that id, and
 * KEYS[9], the order-id index, loses the id's entry once the order is known past \`submitted\`
 * under it, or gone; item ids and payout URLs beyond the order's rows are dropped.
 * Returns {1, previous, status reached} when moved, {0, current} when not allowed, {-1, ""} when
 * unknown (or superseded, for an order id), {2, current, its order id} when it holds another
 * order id, {3, current} when it has none yet (queued or in flight).
 */
export const TRANSITION = `${HELPERS}
local for_id = ARGV[11] or ''
local function forget_id()
  if for_id ~= '' and KEYS[9] then redis.call('HDEL', KEYS[9], for_id) end
end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  forget_id()
  return {-1, ''}
end
local order = cjson.decode(raw)
local current = order.s
if for_id ~= '' then
  if current == 'superseded' then
    forget_id()
    return {-1, ''}
  end
  if current == 'queued' or current == 'in_flight' then return {3, current} end
  if order.o ~= for_id then return {2, current, order.o or ''} end
end
if not allowed(ARGV[2], current) then
  forget_id()
  return {0, current}
end
if ARGV[6] == 'pending' then
  -- Back to sending (a retry): never in a campaign cancelled or archived meanwhile.
  local state = redis.call('HGET', KEYS[5], 'state')
  if state == 'cancelled' or state == 'archived' then return {0, current} end
end
local patch = cjson.decode(ARGV[4])
merge(order, patch)
if for_id ~= '' then
  -- The service answers items in request order: item i is row i; more than the rows is not ours.
  for _, field in ipairs({'ii', 'pu'}) do
    local list = order[field]
    if type(list) == 'table' then
      for j = #list, #order.i + 1, -1 do table.remove(list, j) end
    end
  end
end
if ARGV[10] == 'answered' then answered(order) end
if ARGV[10] == 'force' then order.uk = nil end
local to = checked_status(order, ARGV[3])
if to ~= 'in_flight' then order.ak = nil end
order.s = to
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(order))
move_counts(KEYS[3], current, to, #order.i)
note_uncertain(KEYS[5], order, current, to)
if to ~= 'queued' and to ~= 'in_flight' then redis.call('SREM', KEYS[6], ARGV[1]) end
if to == 'completed' and current ~= 'completed' and order.p and order.c then
  redis.call('HINCRBY', KEYS[5], 'spent:' .. order.c, order.p)
end
if patch.rd == true then redis.call('HINCRBY', KEYS[3], 'replayed', #order.i) end
if ARGV[6] == 'follow' then redis.call('ZADD', KEYS[4], ARGV[7], ARGV[8]) end
if ARGV[6] == 'unfollow' then redis.call('ZREM', KEYS[4], ARGV[8]) end
if ARGV[6] == 'pending' then
  redis.call('SREM', KEYS[6], ARGV[1])
  redis.call('RPUSH', KEYS[7], ARGV[1])
  redis.call('HDEL', KEYS[5], 'finished_at')
  keep_dispatched(KEYS[5], KEYS[8], ARGV[9])
end
note_finished(KEYS[3], KEYS[5], ARGV[5])
forget_id()
return {1, current, to}
`;

/**
 * Takes up to ARGV[2] followed orders due by ARGV[1] (ms) and leases them until ARGV[3]: a
 * follower that dies holding them lets them fall due again then. KEYS: the follow set.
 */
export const CLAIM_FOLLOWED = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[3], member) end
return due
`;

/**
 * The start of an attempt, in one round trip. KEYS: orders, rows, counts, meta, window,
 * pending, cancelled-orders counter. ARGV: order number, patch (JSON of stored names merged in), now (ISO time),
 * JSON {CUR: decimals} of currencies without 2 decimals, the fingerprint of the worker's API key
 * ('' when it has none).
 * - An order found in_flight was taken over from a worker that died mid-attempt: it gets the
 *   mark of an unclear attempt (see mark_unclear) whatever happens next.
 * - Campaign held or paused: the order goes back to the front of its pending list and out of
 *   the window (it was queued, or in flight on a worker that died: same key either way), and
 *   the job ends; the dispatcher sends it again once the campaign runs. Returns {2, reason}.
 * - Campaign cancelled: a queued order is cancelled (see cancelled_status). Returns {0, status}.
 * - The campaign's planned price in the order's currency is over its budget there (`budget:CUR`,
 *   e.g. the budget was lowered): the campaign is paused with reason `budget_exceeded: ...` and
 *   the order given back as above (the dispatcher drops a campaign no longer running from its
 *   set). Returns {3, reason}.
 * - The order carries the mark of an unclear attempt made with another API key: the service may
 *   keep its idempotency records per API key, so this one might not replay that order. Nothing
 *   is sent; the order becomes failed_uncertain. Returns {4, the mark}.
 * - Otherwise moves the order to in_flight from queued or in_flight and returns
 *   {1, orderJson, {rowJson, ...} (its rows, in its order), campaignCreatedAt}; {0, status}
 *   when the order is past starting (it leaves the window), {-1, ""} when unknown.
 */
export const START = `${HELPERS}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  redis.call('SREM', KEYS[5], ARGV[1])
  return {-1, ''}
end
local order = cjson.decode(raw)
local current = order.s
local meta = redis.call('HMGET', KEYS[4], 'state', 'paused_reason', 'created_at')
local state = meta[1] or 'running'
if current ~= 'queued' and current ~= 'in_flight' then
  redis.call('SREM', KEYS[5], ARGV[1])
  return {0, current}
end
if current == 'in_flight' then mark_unclear(order, 'interrupted') end
if state == 'cancelled' or state == 'archived' then
  -- queued: cancelled (or failed_uncertain after an ambiguous attempt); in_flight here is a job
  -- taken over from a worker that died mid-attempt: an order may exist, so failed_uncertain.
  cancel_order(KEYS[1], KEYS[3], KEYS[4], ARGV[1], order, ARGV[3], KEYS[7])
  redis.call('SREM', KEYS[5], ARGV[1])
  note_finished(KEYS[3], KEYS[4], ARGV[3])
  return {0, order.s}
end
local function give_back()
  if current == 'in_flight' then
    order.s = 'queued'
    order.ak = nil
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(order))
    move_counts(KEYS[3], 'in_flight', 'queued', #order.i)
  end
  if redis.call('SREM', KEYS[5], ARGV[1]) == 1 then redis.call('LPUSH', KEYS[6], ARGV[1]) end
end
if state == 'held' or state == 'paused' or meta[2] then
  give_back()
  return {2, meta[2] or state}
end
if order.c then
  local c = order.c
  local money = redis.call('HMGET', KEYS[4], 'budget:' .. c, 'planned_price:' .. c)
  if money[1] and not int_le(money[2] or '0', money[1]) then
    local scale = cjson.decode(ARGV[4])[c] or 2
    local reason = 'budget_exceeded: ' .. c .. ' planned ' .. units_text(money[2], scale) ..
      ' is over the budget of ' .. units_text(money[1], scale)
    redis.call('HSET', KEYS[4], 'state', 'paused', 'paused_reason', reason, 'paused_at', ARGV[3])
    give_back()
    return {3, reason}
  end
end
if order.uc and order.uk and ARGV[5] ~= '' and order.uk ~= ARGV[5] then
  order.s = 'failed_uncertain'
  order.ak = nil
  order.et = 'api_key_changed'
  order.em = 'an earlier attempt under this key ended unclear (' .. order.uc .. ') under another ' ..
    'API key, which the service may not replay under this one: nothing was sent; an order may exist'
  order.u = ARGV[3]
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(order))
  move_counts(KEYS[3], current, 'failed_uncertain', #order.i)
  note_uncertain(KEYS[4], order, current, 'failed_uncertain')
  redis.call('SREM', KEYS[5], ARGV[1])
  note_finished(KEYS[3], KEYS[4], ARGV[3])
  return {4, order.uc}
end
merge(order, cjson.decode(ARGV[2]))
if ARGV[5] ~= '' then order.ak = ARGV[5] end
order.s = 'in_flight'
local encoded = cjson.encode(order)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
move_counts(KEYS[3], current, 'in_flight', #order.i)
return {1, encoded, redis.call('HMGET', KEYS[2], unpack(order.i)), meta[3] or ''}
`;

/**
 * Moves some or all rows of an order to a new order of the next generation: the old record
 * becomes superseded (or keeps a status for the rows left in it), the new one is queued under
 * the next order number with the key given, and the moved rows point at it. Used by `retry
 * --new-key` and by a 422 that names one item. The new order goes to the front of the pending
 * list (the dispatcher sends it next); the old one leaves the window.
 * KEYS: orders, rows, counts, window, pending, meta, running set, cancelled-orders counter.
 * ARGV: old order number, new key, moved identities (JSON), new generation, status for the rows
 * left, patch for them (JSON of stored names), allowed statuses of the old order, campaign, and
 * why a new key is allowed: 'answered' (the service answered under the old key: nothing was
 * made), 'force' (the operator checked), or '' (an old order that carries the mark of an unclear
 * attempt is then refused: an order may exist under its key).
 * Returns {1, new order number} when done, {0, status} when the old order's status is not
 * allowed, {-2, mark} when it carries the mark, {-1, ""} when it is unknown.
 */
export const REKEY = `${HELPERS}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {-1, ''} end
local old = cjson.decode(raw)
if not allowed(ARGV[7], old.s) then return {0, old.s} end
if ARGV[9] == '' and unclear(old) then return {-2, old.uc} end
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
  m = old.m, c = old.c, d = old.d, md = old.md }
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
  count_cancelled(KEYS[8], 'cancelled')
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
  old.s = status_for_rest
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(old))
return {1, n}
`;

/**
 * Records new orders with their rows, numbering each order (`next_order` in meta), and puts
 * each queued one on the pending list, adding what it costs to the campaign's planned totals
 * (`planned_rows:CUR`, `planned_face:CUR`, `planned_price:CUR`, minor units).
 * KEYS: orders, rows, counts, pending, meta, scheduled, running set. ARGV[2]: the campaign (it
 * joins the running set when it runs). ARGV[1]: JSON [[orderJson, status, currency, face, price, [[identity, line, rowTail], ...],
 * sendAt], ...] where a row is stored as `[line,number` .. rowTail (see rowTail in
 * ledger-codec.ts). A queued order with a sendAt (ms) goes to the `scheduled` sorted set
 * instead of the pending list (DISPATCH moves it when it is due), its rows counted `scheduled`.
 * An order any of whose rows is recorded already is left out, rows and all: a re-import, or
 * another import at the same time, recorded it (a re-import never overwrites what a worker
 * recorded). Returns {rows added, rows left out, orders added}; nothing is written, and instead:
 * - {-1, state} when the campaign is cancelled or archived;
 * - {-2, currency, planned, batch, budget} when the new orders of one currency would take its
 *   planned price over the campaign's budget there (`budget:CUR`): checked here, in the step
 *   that adds to the planned price, so two imports running at once cannot both pass it.
 */
export const RECORD = `${HELPERS}
local orders = cjson.decode(ARGV[1])
local state = redis.call('HGET', KEYS[5], 'state')
if state == 'cancelled' or state == 'archived' then return {-1, state} end
local new = {}
local left_out = 0
local adding = {}
local currencies = {}
for _, o in ipairs(orders) do
  local known = false
  for _, r in ipairs(o[6]) do
    if redis.call('HEXISTS', KEYS[2], r[1]) == 1 then known = true break end
  end
  if known then
    left_out = left_out + #o[6]
  else
    table.insert(new, o)
    local c = o[3]
    if c ~= '' and o[5] ~= '' then
      if not adding[c] then
        adding[c] = '0'
        table.insert(currencies, c)
      end
      adding[c] = int_add(adding[c], o[5])
    end
  end
end
for _, c in ipairs(currencies) do
  local money = redis.call('HMGET', KEYS[5], 'budget:' .. c, 'planned_price:' .. c)
  if money[1] and not int_le(int_add(money[2] or '0', adding[c]), money[1]) then
    return {-2, c, money[2] or '0', adding[c], money[1]}
  end
end
local added = 0
for _, o in ipairs(new) do
  local n = redis.call('HINCRBY', KEYS[5], 'next_order', 1)
  redis.call('HSET', KEYS[1], n, o[1])
  for _, r in ipairs(o[6]) do
    redis.call('HSET', KEYS[2], r[1], '[' .. r[2] .. ',' .. n .. r[3])
  end
  added = added + #o[6]
  redis.call('HINCRBY', KEYS[3], o[2], #o[6])
  if o[2] == 'queued' and o[7] ~= '' then
    redis.call('ZADD', KEYS[6], o[7], n)
    redis.call('HINCRBY', KEYS[3], 'scheduled', #o[6])
  elseif o[2] == 'queued' then
    redis.call('RPUSH', KEYS[4], n)
  end
  local c = o[3]
  if c ~= '' then
    redis.call('HINCRBY', KEYS[5], 'planned_rows:' .. c, #o[6])
    if o[4] ~= '' then redis.call('HINCRBY', KEYS[5], 'planned_face:' .. c, o[4]) end
    if o[5] ~= '' then redis.call('HINCRBY', KEYS[5], 'planned_price:' .. c, o[5]) end
  end
end
redis.call('HINCRBY', KEYS[3], 'total', added)
if added > 0 then
  redis.call('HDEL', KEYS[5], 'finished_at')
  keep_dispatched(KEYS[5], KEYS[7], ARGV[2])
end
return {added, left_out, #new}
`;

/**
 * Takes a row out of the ledger so that its changed content can be recorded anew under the same
 * reference; allowed only when its order failed for good (failed_final: nothing was made).
 * The row leaves its old order (superseded when emptied). KEYS: orders, rows, counts.
 * ARGV: identity. Returns {1, generation} when removed, {0, status} when its status forbids it,
 * {-1, ""} when the row is unknown.
 */
export const RELEASE_ROW = `${HELPERS}
local row_raw = redis.call('HGET', KEYS[2], ARGV[1])
if not row_raw then return {-1, ''} end
local row = cjson.decode(row_raw)
local order_raw = redis.call('HGET', KEYS[1], row[2])
if order_raw then
  local order = cjson.decode(order_raw)
  if order.s ~= 'failed_final' then return {0, order.s} end
  local rest = {}
  for _, id in ipairs(order.i) do if id ~= ARGV[1] then table.insert(rest, id) end end
  move_counts(KEYS[3], 'failed_final', 'superseded', 1)
  if #rest == 0 then order.s = 'superseded' else order.i = rest end
  redis.call('HSET', KEYS[1], row[2], cjson.encode(order))
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'total', -1)
return {1, tostring(row[3] or 0)}
`;

/**
 * Moves order numbers of running campaigns from their pending lists into their dispatch windows.
 * The running campaigns with work share a budget of ARGV[1] jobs: each one's window is an equal
 * part of it, at least ARGV[2]. So the jobs in BullMQ stay about the budget whatever the
 * campaigns' sizes, and a campaign that starts waits behind about one budget of the others'
 * jobs, however many there are. The orders come one campaign at a time in turn, in the order
 * the jobs are to be added, so the campaigns' jobs alternate in the FIFO queue. A campaign in
 * the running set whose state is no longer running leaves the set, and so does one with nothing
 * pending, scheduled or out (the scripts that give it orders again put it back: RECORD,
 * TRANSITION to pending, REKEY, SET_STATE, FINISH_RESTORE). Scheduled orders that are
 * due (score at most ARGV[3]) move to the end of their pending list first.
 * KEYS: the running set, then for each campaign of ARGV[4..] (the running set as read just
 * before) its meta, pending, window, scheduled, orders and counts: every key it touches is
 * passed, as Redis asks of a script. A campaign no longer in the set is passed over.
 * ARGV: the budget, the least window, now (ms), the campaigns.
 * Returns {campaign, number, campaign, number, ...}.
 */
export const DISPATCH = `
local PER = 6
local function keys_of(i)
  local k = 1 + (i - 1) * PER
  return { meta = KEYS[k + 1], pending = KEYS[k + 2], window = KEYS[k + 3],
    scheduled = KEYS[k + 4], orders = KEYS[k + 5], counts = KEYS[k + 6] }
end
-- Scheduled orders now due join the end of their campaign's pending list.
local function release_due(k)
  local due = redis.call('ZRANGEBYSCORE', k.scheduled, '-inf', ARGV[3], 'LIMIT', 0, 1000)
  for _, n in ipairs(due) do
    local raw = redis.call('HGET', k.orders, n)
    if raw then redis.call('HINCRBY', k.counts, 'scheduled', -#cjson.decode(raw).i) end
    redis.call('ZREM', k.scheduled, n)
    redis.call('RPUSH', k.pending, n)
  end
end
-- The running campaigns with work: orders waiting, or jobs out.
local active = {}
local out_now = {}
local waiting = {}
local keys = {}
for i = 4, #ARGV do
  local campaign = ARGV[i]
  local k = keys_of(i - 3)
  local state = redis.call('HGET', k.meta, 'state') or 'running'
  if redis.call('SISMEMBER', KEYS[1], campaign) == 0 then
    -- Left the set since it was read: not ours to dispatch.
  elseif state ~= 'running' then
    redis.call('SREM', KEYS[1], campaign)
  else
    release_due(k)
    local jobs = redis.call('SCARD', k.window)
    local pending = redis.call('LLEN', k.pending)
    if jobs > 0 or pending > 0 then
      table.insert(active, campaign)
      out_now[campaign] = jobs
      waiting[campaign] = pending
      keys[campaign] = k
    elseif redis.call('ZCARD', k.scheduled) == 0 then
      redis.call('SREM', KEYS[1], campaign)
    end
  end
end
if #active == 0 then return {} end
-- The budget is shared: each active campaign's window is an equal part of it (at least ARGV[2]).
local size = math.max(tonumber(ARGV[2]), math.ceil(tonumber(ARGV[1]) / #active))
local free = {}
local names = {}
for _, campaign in ipairs(active) do
  local room = size - out_now[campaign]
  if room > 0 and waiting[campaign] > 0 then
    table.insert(names, campaign)
    free[campaign] = room
  end
end
-- One order of each campaign in turn, so their jobs alternate in the FIFO queue rather than
-- following each other a window at a time.
local out = {}
local taking = true
while taking do
  taking = false
  for _, campaign in ipairs(names) do
    if free[campaign] > 0 then
      local k = keys[campaign]
      local n = redis.call('LPOP', k.pending)
      if n then
        redis.call('SADD', k.window, n)
        table.insert(out, campaign)
        table.insert(out, n)
        free[campaign] = free[campaign] - 1
        taking = true
      else
        free[campaign] = 0
      end
    end
  end
end
return out
`;

/**
 * Sets a campaign's state, when its current state is one of ARGV[2], and keeps the running set
 * in step. KEYS: meta, running set. ARGV: new state, allowed current states ("*" any), campaign
 * name, then field/value pairs to set with it.
 * A campaign without a state (recorded before states existed) counts as running.
 * Returns {1, previous} when set, {0, current} when its state does not allow it.
 */
export const SET_STATE = `${HELPERS}
local current = redis.call('HGET', KEYS[1], 'state') or 'running'
if not allowed(ARGV[2], current) then return {0, current} end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
-- A pause's reason belongs to the paused state only (a cancelled campaign is not "paused").
if ARGV[1] ~= 'paused' then redis.call('HDEL', KEYS[1], 'paused_reason', 'paused_at') end
if ARGV[1] == 'running' then
  redis.call('SADD', KEYS[2], ARGV[3])
else
  redis.call('SREM', KEYS[2], ARGV[3])
end
return {1, current}
`;

/**
 * Cancels up to ARGV[1] orders of a cancelled campaign's pending list, then of its scheduled
 * set, and then those of its window still queued (their jobs, when taken, find nothing to
 * send). KEYS: orders, rows, counts, pending, window, meta, scheduled, cancelled-orders
 * counter. ARGV: batch size, now
 * (ISO time). Returns the number of pending or scheduled orders taken (0 once both are empty).
 */
export const CANCEL_PENDING = `${HELPERS}
local taken = redis.call('LPOP', KEYS[4], tonumber(ARGV[1])) or {}
if #taken == 0 then
  taken = redis.call('ZRANGE', KEYS[7], 0, tonumber(ARGV[1]) - 1)
  for _, n in ipairs(taken) do
    redis.call('ZREM', KEYS[7], n)
    local raw = redis.call('HGET', KEYS[1], n)
    if raw then redis.call('HINCRBY', KEYS[3], 'scheduled', -#cjson.decode(raw).i) end
  end
end
local function cancel(n)
  local raw = redis.call('HGET', KEYS[1], n)
  if not raw then return end
  local order = cjson.decode(raw)
  if order.s == 'queued' then cancel_order(KEYS[1], KEYS[3], KEYS[6], n, order, ARGV[2], KEYS[8]) end
end
for _, n in ipairs(taken) do cancel(n) end
if #taken == 0 then
  for _, n in ipairs(redis.call('SMEMBERS', KEYS[5])) do cancel(n) end
end
note_finished(KEYS[3], KEYS[6], ARGV[2])
return #taken
`;

/**
 * The last step of `orders archive` (docs/architecture.md, "Archive"): removes a campaign's
 * data and leaves its tombstone, in one step, only when the campaign is still exactly as it was
 * when its archive was written: the same meta and counts hashes (a transition that ends with
 * nothing pending rewrites `finished_at`, a retry removes it), and as many rows and orders.
 * KEYS: meta, counts, rows, orders, pending, window, running set, scheduled.
 * ARGV: expected meta (JSON object), expected counts (JSON object), expected number of rows and
 * of orders, archived_at, archive path, campaign name.
 * The tombstone is the meta hash (state archived, archived_at, archive_path; no pause) and the
 * counts hash. A campaign already archived only loses data keys left behind (a restore that
 * stopped half way), and returns {2}.
 * Returns {1} when removed, {0, why} when the campaign changed (nothing removed), {2} archived.
 */
export const ARCHIVE = `
local function drop_data()
  redis.call('UNLINK', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[8])
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
`;

/**
 * Empties the data keys of an archived campaign before a restore writes them (what a restore
 * that stopped half way left is rewritten whole). KEYS: meta, rows, orders, pending, window,
 * scheduled. Returns 1 when emptied, 0 when the campaign is not archived (nothing touched).
 */
export const CLEAR_ARCHIVED = `
if redis.call('HGET', KEYS[1], 'state') ~= 'archived' then return 0 end
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
return 1
`;

/**
 * The last step of `orders restore`, once rows and orders are back: the meta and counts hashes
 * become what they were before the archive, and a running campaign rejoins the running set,
 * provided the rows and orders hashes hold as many entries as were written.
 * KEYS: meta, counts, running set, rows, orders. ARGV: archived_at of the archive restored,
 * campaign name, meta (JSON object), counts (JSON object), rows and orders written.
 * Returns {1, state} when restored, {0, why} when the campaign is not that archive's tombstone.
 */
export const FINISH_RESTORE = `
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
`;
