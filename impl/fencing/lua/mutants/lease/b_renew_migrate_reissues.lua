-- MUTANT (negative control): phase B renew-migrate that issues a fresh
-- generation for the moved lease, as an acquire would (max(old,new)+1), where
-- §The protocol says the move keeps owner and generation and issues nothing.
-- The owner still stamps its frames with the generation it was given, which
-- the lease no longer carries, and the counter advanced without an acquire.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation, ARGV[3] TTL ms.
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[1]) == want and redis.call('EXISTS', KEYS[3]) == 0 then
  local gen = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0')) + 1
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[4], gen)
  redis.call('SET', KEYS[3], gen .. ':' .. ARGV[1], 'PX', ARGV[3])
  return 2
end
if redis.call('GET', KEYS[3]) == want then
  return redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 0
