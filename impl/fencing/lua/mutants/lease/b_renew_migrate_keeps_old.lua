-- MUTANT (negative control): phase B renew-migrate that copies the lease to
-- the new key without deleting the old one (§The protocol: the move is one
-- atomic DEL old + SET new). Two live leases for one session; the old
-- keyspace never drains while the owner lives.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[1]) == want and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], want, 'PX', ARGV[3])
  return 2
end
if redis.call('GET', KEYS[3]) == want then
  return redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 0
