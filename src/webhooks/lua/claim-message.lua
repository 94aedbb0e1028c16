--[[
  Claims a message id and, for an order's message, reads the order index's entry for its order
  id, in one round trip. Every key it touches is in KEYS (docs/architecture/redis.md, "Redis
  Cluster"). The order the entry names is read in the next step, whose key is then known. The
  claim is its one write, made last: a script that fails before it has claimed nothing, so the
  service's retry is applied.

    Input:
      KEYS[1] the id's key (`<prefix>:webhook-id:<id>`)
      KEYS[2] the order index (`<prefix>:order-ids`)

      ARGV[1] what the id's key holds (the time, ms)
      ARGV[2] seconds it is kept
      ARGV[3] the service's order id ("" for a message of no order)

    Output:
      {0} when the id was claimed before
      {1} when there is no order id or it is not indexed
      {1, entry} otherwise
]]

local entry = false
if ARGV[3] ~= '' then entry = redis.call('HGET', KEYS[2], ARGV[3]) end
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then return {0} end
if not entry then return {1} end
return {1, entry}
