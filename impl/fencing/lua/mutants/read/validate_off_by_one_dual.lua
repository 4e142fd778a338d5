-- MUTANT (read side): phase A/B validate_fenced_header whose stale comparison
-- is off by one (gen + 1 < known where the table means gen < known): a frame
-- exactly one generation behind the counter — the previous holder's, the
-- classic stale frame — is answered not-live instead of stale.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation.
local known = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
local want = ARGV[2] .. ':' .. ARGV[1]
if redis.call('GET', KEYS[3]) == want or redis.call('GET', KEYS[1]) == want then
  return {1, known}
end
if tonumber(ARGV[2]) + 1 < known then
  return {0, known}
end
return {-1, known}
