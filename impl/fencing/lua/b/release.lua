-- Phase B release (§Per-phase operation table: "try new key; fall back old key"),
-- owner+generation guarded on both, so a wrong-key release is a no-op.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation. Returns 1 when released, 0 otherwise.
local want = ARGV[2] .. ':' .. ARGV[1]
for _, k in ipairs({KEYS[3], KEYS[1]}) do
  if redis.call('GET', k) == want then
    return redis.call('DEL', k)
  end
end
return 0
