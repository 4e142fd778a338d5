-- Marconi SessionStore heartbeat (stamp_heartbeat): extend the record's TTL
-- and move its index score; a record that already expired stays gone
-- (returns 0: the shim must register again).
-- KEYS[1] session record, KEYS[2] the tenant's session index (same tag).
-- ARGV[1] TTL ms, ARGV[2] expiry (unix ms), ARGV[3] session id.
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[3])
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
