--[[
  Takes up to ARGV[2] followed orders due by ARGV[1] (ms) and leases them until ARGV[3]: a
  follower that dies holding them lets them fall due again then.

    Input:
      KEYS[1] follow set (members "<campaign> <order number>", scored by when they are due, ms)

      ARGV[1] now (ms): members due by then are taken
      ARGV[2] the most members to take
      ARGV[3] the end of the lease (ms): the members' new score

    Output:
      the members taken, as a list
]]

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[3], member) end
return due
