--[[
  Whether a status is in a list of allowed ones ("queued,in_flight", or "*" for any).
]]
local function allowed(list, status)
  for s in string.gmatch(list, '[^,]+') do if s == status or s == '*' then return true end end
  return false
end
