-- Phase A renew (§Per-phase operation table: "old key PEXPIRE"), owner+generation guarded.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms. Returns 1 when renewed, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
