-- MUTANT (negative control, paused pod): renew guarded by the owner only, not
-- the generation. A paused pod's delayed renew of its old generation extends
-- whatever lease the same owner holds now — including the newer lease it
-- re-acquired after the old one expired: renewed in another lease's name.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
