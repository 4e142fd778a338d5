-- Phase B renew (§Per-phase operation table: "migrate-then-renew"): when the
-- caller's own lease is still on the old key (acquired while the pod ran A),
-- move it to the new key — same owner, same generation, no issuance — in this
-- one atomic script, then PEXPIRE the new key. This is what makes the old
-- keyspace drain while B pods live (§The protocol, C-gate).
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
-- Returns 2 when migrated and renewed, 1 when renewed, 0 when not the caller's lease.
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[1]) == want and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[3], want, 'PX', ARGV[3])
  return 2
end
if redis.call('GET', KEYS[3]) == want then
  return redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 0
