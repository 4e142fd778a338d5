-- MUTANT (negative control): phase A renew guarded by the owner only, not the
-- generation (§Per-phase operation table: renew is owner+generation guarded).
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
