-- MUTANT (negative control): acquire refuses a held lease correctly but does
-- not say who holds it — {0, holder_generation} without holder_owner — so a
-- pod cannot redirect the frame to the holder. Found by slotgate mutate: the
-- Go side's Directory.Acquire with its holder-owner read negated survived
-- every row, because nothing judged the owner a refused acquire reports.
local held = redis.call('GET', KEYS[1])
if held then
  local gen = string.match(held, '^(%d+):')
  return {0, tonumber(gen)}
end
local gen = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
