--[[
  Row counts of a campaign (its counts hash: rows per status) and the counter of cancelled
  orders. Every change of an order's status moves its rows' counts in the same script, so the
  counts stay exact however many workers update the campaign.
]]
local function move_counts(counts_key, from, to, n)
  if from ~= to then
    if from ~= 'superseded' then redis.call('HINCRBY', counts_key, from, -n) end
    if to ~= 'superseded' then redis.call('HINCRBY', counts_key, to, n) end
  end
end
local function pending_rows(counts_key)
  local c = redis.call('HMGET', counts_key, 'queued', 'in_flight', 'submitted')
  return (tonumber(c[1]) or 0) + (tonumber(c[2]) or 0) + (tonumber(c[3]) or 0)
end
local function note_finished(counts_key, meta_key, now)
  if pending_rows(counts_key) == 0 then redis.call('HSET', meta_key, 'finished_at', now) end
end
-- Orders that reached an end, by end, for giftjobs_orders_total{outcome}: counted in the script
-- that moved them, whichever process ran it (a worker, the webhook receiver, the cancel command,
-- the dashboard, orders reconcile), so each move is counted once; a metrics endpoint claims them
-- (Ledger.claimEndedOrders). See docs/metrics.md, "Metrics and alerts".
local ORDER_ENDS = { completed = true, failed_final = true, failed_uncertain = true, cancelled = true }
local function count_ended(ended_key, from, to)
  if from ~= to and ORDER_ENDS[to] then redis.call('HINCRBY', ended_key, to, 1) end
end
