--[[
  Claims a message id and, for an order's message, reads the order index's entry for its order
  id, in one round trip. Every key it touches is in KEYS (docs/architecture/redis.md, "Redis
  Cluster"). The order the entry names is read in the next step, whose key is then known. The
  claim is its one write, made last: a script that fails before it has claimed nothing, so the
  service's retry is applied.

    Input:
      KEYS[1] the id's key (`<prefix>:webhook-id:<id>`)
      KEYS[2] the order index (`<prefix>:order-ids`)

      ARGV[1] JSON object of named fields:
        at        what the id's key holds (the time, ms, a string)
        ttl       seconds it is kept (a number)
        order_id  the service's order id (absent for a message of no order)

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'claimed_before'} when the id was claimed before
      {'claimed'} when there is no order id or it is not indexed
      {'claimed', entry} otherwise
]]

local a = cjson.decode(ARGV[1])
local entry = false
if a.order_id then entry = redis.call('HGET', KEYS[2], a.order_id) end
if not redis.call('SET', KEYS[1], a.at, 'EX', a.ttl, 'NX') then return {'claimed_before'} end
if not entry then return {'claimed'} end
return {'claimed', entry}
