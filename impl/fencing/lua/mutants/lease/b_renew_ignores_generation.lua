-- MUTANT (negative control): phase B renew whose in-place branch is guarded
-- by the owner only (§Per-phase operation table: renew is owner+generation
-- guarded); the migrate branch is B's own.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[1]) == want and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[3], want, 'PX', ARGV[3])
  return 2
end
local held = redis.call('GET', KEYS[3])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 0
