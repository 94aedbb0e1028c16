--[[
  Empties the data keys of an archived campaign before a restore writes them (what a restore
  that stopped half way left is rewritten whole).

    Input:
      KEYS[1] meta hash
      KEYS[2] rows hash
      KEYS[3] orders hash
      KEYS[4] pending list
      KEYS[5] dispatch window
      KEYS[6] scheduled sorted set

      ARGV: none

    Output: a word of REPLIES (src/redis/replies.ts), then its values
      {'cleared'} when emptied
      {'not_allowed', state} when the campaign is not archived (nothing touched)
]]

local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'archived' then return {'not_allowed', state or 'running'} end
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
return {'cleared'}
