--[[
  The mark of an unclear attempt on an order (`uc`, `uk`), and the order changes that must keep
  it: a patch merged in, the status an order really takes.
]]
-- The mark of an unclear attempt (docs/architecture/keys-and-exactly-once.md, "One key while an
-- order may exist"): `uc` the error type of the first attempt under the order's key that ended
-- unclear, `uk` the fingerprint of the API key it was made with (`ak`: the attempt under way's).
-- Set here or by a patch; removed only by answered() or an operator's clearance 'force' (retry
-- --include-uncertain or --any-api-key): never by a patch.
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
-- The mark, also as recorded before `uc` existed: a queued order's `et` (only an unclear
-- attempt left one there), and any failed_uncertain order.
local function unclear(order)
  if order.uc then return order.uc end
  if (order.s == 'queued' and order.et) or order.s == 'failed_uncertain' then
    mark_unclear(order, order.et or 'uncertain')
  end
  return order.uc
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
-- The status an order really takes for `to`: while its key's last word is an unclear attempt,
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
