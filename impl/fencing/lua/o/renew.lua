-- Phase O (legacy) renew (§Per-phase operation table: "old key PEXPIRE"), guarded by
-- owner and generation so a stale holder can never extend another's lease.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
-- Returns 1 when renewed, 0 when the lease is not (or no longer) the caller's.
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
