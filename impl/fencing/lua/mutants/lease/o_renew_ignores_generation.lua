-- MUTANT (negative control): phase O renew guarded by the owner only, not the
-- generation (§Per-phase operation table: renew is owner+generation guarded).
-- A delayed renew of the owner's old generation extends the newer lease it
-- re-acquired: renewed in another lease's name.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
