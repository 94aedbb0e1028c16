--[[
  The status of each row's order, for the repeats check (src/campaigns/earlier-payments.ts): a
  sheet paid again asks it of every row, so the rows and orders are read here, beside the data,
  and only their statuses cross to the import, not each row and order as text to parse there.

    Input:
      KEYS[1] rows hash
      KEYS[2] orders hash

      ARGV[1] JSON object of named fields:
        identities  the rows' identities

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'statuses', status, ...} one a row, in the order asked: its order's status, '' for a row
        the ledger does not have, 'unknown' for a row whose order it does not have
      {'format_1', 'row' or 'order'} when a row or an order is of ledger format 1 (an earlier
        giftjobs), which this script does not read
]]
local identities = cjson.decode(ARGV[1]).identities
-- Asked at most 1,000 rows a call (LedgerOrders.rowStatuses): unpack's stack holds about 8,000.
local statuses = {}
-- An order of several rows is read once.
local of_order = {}
for i, identity in ipairs(identities) do
  local row = redis.call('HGET', KEYS[1], identity)
  local status = ''
  if row then
    -- A row is an array, `[line,order,...` (encodeRow, src/ledger/codec.ts).
    local order = string.match(row, '^%[%-?%d+,(%d+)[,%]]')
    if not order then return {'format_1', 'row'} end
    status = of_order[order]
    if not status then
      local text = redis.call('HGET', KEYS[2], order)
      if not text then
        status = 'unknown'
      else
        local stored = cjson.decode(text)
        if stored.k == nil then return {'format_1', 'order'} end
        status = stored.s
      end
      of_order[order] = status
    end
  end
  statuses[i] = status
end
return {'statuses', unpack(statuses)}
