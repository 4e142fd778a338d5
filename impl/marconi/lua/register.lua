-- Marconi SessionStore register (spec 002 §5: controller_service.register
-- writes the SessionStore, then on_register updates the tables).
-- KEYS[1] session record, KEYS[2] the tenant's session index, KEYS[3] the
-- identity's session index (the Stage 1 SessionStore-read fallback's
-- routing source): one hash tag ({tenant}), so one slot on a cluster.
-- ARGV[1] record JSON, ARGV[2] TTL ms, ARGV[3] expiry (unix ms, the index
-- score), ARGV[4] session id, ARGV[5] registered_at (unix ms, the identity
-- index score: the newest registration of an identity is its route).
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
return 1
