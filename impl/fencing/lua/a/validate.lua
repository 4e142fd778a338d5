-- Phase A/B validate_fenced_header (§Per-phase operation table: "union pair, max
-- of counters"): valid while (owner, generation) is the live lease on either
-- keyspace; stale below the max of both counters.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation. Returns {code, known}: 1 valid, 0 stale, -1 not live.
local known = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[3]) == want or redis.call('GET', KEYS[1]) == want then
  return {1, known}
end
if tonumber(ARGV[2]) < known then
  return {0, known}
end
return {-1, known}
