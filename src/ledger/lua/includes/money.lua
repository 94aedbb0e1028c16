--[[
  Money in minor units as strings of digits: exact sums and comparisons, and the decimal text.
]]
-- Money in minor units stays a string of digits here: Lua numbers are doubles, and a sum of
-- prices must be exact whatever its size.
local function int_add(a, b)
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d = d + string.byte(a, i) - 48 end
    if j > 0 then d = d + string.byte(b, j) - 48 end
    table.insert(out, 1, string.char(48 + d % 10))
    carry = math.floor(d / 10)
    i = i - 1
    j = j - 1
  end
  local s = (string.gsub(table.concat(out), '^0+', ''))
  if s == '' then return '0' end
  return s
end
local function int_le(a, b)
  a = (string.gsub(a, '^0+', ''))
  b = (string.gsub(b, '^0+', ''))
  if #a ~= #b then return #a < #b end
  return a <= b
end
-- Minor units as a decimal ("12345", 2 -> "123.45") for messages.
local function units_text(units, scale)
  if scale == 0 then return units end
  local s = string.rep('0', scale + 1 - #units) .. units
  return string.sub(s, 1, #s - scale) .. '.' .. string.sub(s, #s - scale + 1)
end
