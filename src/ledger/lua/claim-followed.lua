--[[
  Takes up to `max` followed orders due by `now` (ms) and leases them until `lease_end`: a
  follower that dies holding them lets them fall due again then.

    Input:
      KEYS[1] follow set (members "<campaign> <order number>", scored by when they are due, ms)

      ARGV[1] JSON object of named fields:
        now        ms (a string): members due by then are taken
        max        the most members to take (a number)
        lease_end  the end of the lease (ms, a string): the members' new score

    Output:
      the members taken, as a list
]]

local a = cjson.decode(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', a.now, 'LIMIT', 0, a.max)
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], a.lease_end, member) end
return due
