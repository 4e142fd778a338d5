-- MUTANT (negative control): phase B release that looks at the new key only,
-- where §Per-phase operation table says "try new key; fall back old key". A B
-- pod releasing a lease it took while it ran A leaves it on the old key until
-- its TTL: the release is refused, the session cannot be re-acquired, and the
-- old keyspace drains a TTL late.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation.
if redis.call('GET', KEYS[3]) == ARGV[2] .. ':' .. ARGV[1] then
  return redis.call('DEL', KEYS[3])
end
return 0
