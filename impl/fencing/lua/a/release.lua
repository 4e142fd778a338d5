-- Phase A release (§Per-phase operation table: "old key"), owner+generation guarded.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation. Returns 1 when released, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
