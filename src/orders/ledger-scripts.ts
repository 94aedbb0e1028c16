/**
 * Lua scripts of the ledger. Each runs atomically in Redis, so row counts stay exact however
 * many workers update the same campaign. KEYS are always [orders, rows, counts] of one campaign
 * (same hash tag under a Cluster prefix).
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
`;

/**
 * Moves an order (and all its rows) to a new status when its current status is allowed.
 * KEYS: orders, rows, counts, follow set. ARGV: orderKey, allowedFrom ("queued,in_flight" or
 * "*"), to, patch (JSON object merged in), then optionally 'follow' with a due time (ms) or
 * 'unfollow', and the follow-set member: the status follower's entry changes with the status,
 * atomically, so an accepted order can never be left unfollowed.
 * Returns {1, previous} when moved, {0, current} when not allowed, {-1, ""} when unknown.
 */
export const TRANSITION = `${HELPERS}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {-1, ''} end
local order = cjson.decode(raw)
local current = order.status
if not allowed(ARGV[2], current) then return {0, current} end
local patch = cjson.decode(ARGV[4])
for k, v in pairs(patch) do
  if v == cjson.null then order[k] = nil else order[k] = v end
end
order.status = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(order))
move_counts(KEYS[3], current, ARGV[3], #order.identities)
if ARGV[5] == 'follow' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[7]) end
if ARGV[5] == 'unfollow' then redis.call('ZREM', KEYS[4], ARGV[7]) end
return {1, current}
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
 * The start of an attempt, in one round trip: refuses while the campaign is paused, moves the
 * order to in_flight from queued or in_flight, and returns the order with its request body.
 * KEYS: orders, rows, counts, meta, requests. ARGV: orderKey, patch (JSON merged in).
 * Returns {2, reason} when paused, {1, orderJson, requestJson} when started, {0, status}
 * when the order is past starting, {-1, ""} when unknown.
 */
export const START = `${HELPERS}
local reason = redis.call('HGET', KEYS[4], 'paused_reason')
if reason then return {2, reason} end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {-1, ''} end
local order = cjson.decode(raw)
local current = order.status
if current ~= 'queued' and current ~= 'in_flight' then return {0, current} end
local patch = cjson.decode(ARGV[2])
for k, v in pairs(patch) do order[k] = v end
order.status = 'in_flight'
local encoded = cjson.encode(order)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
move_counts(KEYS[3], current, 'in_flight', #order.identities)
return {1, encoded, redis.call('HGET', KEYS[5], ARGV[1]) or ''}
`;

/**
 * Replaces an order by a new one under another key (next generation): the old record becomes
 * superseded (or keeps a status for the rows left in it), the new one is queued, and the moved
 * rows point at the new key. Used by `retry --new-key` and by a 422 that names one item.
 * ARGV: oldKey, newKey, movedIdentitiesJson, newGeneration, oldStatusForRest, restPatchJson, allowedFrom
 * Returns 1 when done, 0 when the old order's status is not allowed, -1 when it is unknown,
 * 2 when the new key already exists (done before: nothing changed).
 */
export const REKEY = `${HELPERS}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return -1 end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then return 2 end
local old = cjson.decode(raw)
if not allowed(ARGV[7], old.status) then return 0 end
local moved = cjson.decode(ARGV[3])
local is_moved = {}
for _, id in ipairs(moved) do is_moved[id] = true end
local rest = {}
for _, id in ipairs(old.identities) do
  if not is_moved[id] then table.insert(rest, id) end
end
local new_order = { identities = moved, generation = tonumber(ARGV[4]), status = 'queued', replaces = ARGV[1], mode = old.mode }
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(new_order))
move_counts(KEYS[3], old.status, 'queued', #moved)
for _, id in ipairs(moved) do
  local row_raw = redis.call('HGET', KEYS[2], id)
  if row_raw then
    local row = cjson.decode(row_raw)
    row.key = ARGV[2]
    row.generation = tonumber(ARGV[4])
    redis.call('HSET', KEYS[2], id, cjson.encode(row))
  end
end
if #rest == 0 then
  old.status = 'superseded'
  old.superseded_by = ARGV[2]
else
  old.identities = rest
  local status_for_rest = ARGV[5]
  move_counts(KEYS[3], old.status, status_for_rest, #rest)
  old.status = status_for_rest
  local patch = cjson.decode(ARGV[6])
  for k, v in pairs(patch) do old[k] = v end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(old))
return 1
`;

/**
 * Records new rows, their orders and the orders' request bodies, once. KEYS[4] is the requests
 * hash. ARGV: rowsJson ([[identity, rowJson], ...]), ordersJson ([[key, orderJson, requestJson], ...]).
 * A row or order already present is left as it is (a re-import never overwrites what a worker
 * recorded). Returns the number of rows added.
 */
export const RECORD = `
local rows = cjson.decode(ARGV[1])
local orders = cjson.decode(ARGV[2])
local added = 0
for _, pair in ipairs(rows) do
  if redis.call('HSETNX', KEYS[2], pair[1], pair[2]) == 1 then added = added + 1 end
end
for _, pair in ipairs(orders) do
  if redis.call('HSETNX', KEYS[1], pair[1], pair[2]) == 1 then
    redis.call('HSETNX', KEYS[4], pair[1], pair[3])
    local order = cjson.decode(pair[2])
    redis.call('HINCRBY', KEYS[3], order.status, #order.identities)
  end
end
redis.call('HINCRBY', KEYS[3], 'total', added)
return added
`;

/**
 * Takes a row out of the ledger so that its changed content can be recorded anew under the same
 * reference; allowed only when its order failed for good (failed_final: nothing was made).
 * The row leaves its old order (superseded when emptied).
 * ARGV: identity. Returns {1, generation} when removed, {0, status} when its status forbids it.
 */
export const RELEASE_ROW = `${HELPERS}
local row_raw = redis.call('HGET', KEYS[2], ARGV[1])
if not row_raw then return {-1, ''} end
local row = cjson.decode(row_raw)
local order_raw = redis.call('HGET', KEYS[1], row.key)
if order_raw then
  local order = cjson.decode(order_raw)
  if order.status ~= 'failed_final' then return {0, order.status} end
  local rest = {}
  for _, id in ipairs(order.identities) do if id ~= ARGV[1] then table.insert(rest, id) end end
  move_counts(KEYS[3], 'failed_final', 'superseded', 1)
  if #rest == 0 then order.status = 'superseded' else order.identities = rest end
  redis.call('HSET', KEYS[1], row.key, cjson.encode(order))
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'total', -1)
return {1, tostring(row.generation or 0)}
`;
