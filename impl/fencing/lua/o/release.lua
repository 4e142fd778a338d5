-- Phase O (legacy) release (§Per-phase operation table: "old key"), owner+generation
-- guarded: a wrong or stale release is a no-op. The generation counter is
-- never touched: it is non-expiring fencing authority (§Why it exists).
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
-- Returns 1 when released, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
