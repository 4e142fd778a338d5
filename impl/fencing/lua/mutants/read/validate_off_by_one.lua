-- MUTANT (read side): phase O/C validate_fenced_header whose stale comparison
-- is off by one (gen + 1 < known where the table means gen < known): a frame
-- exactly one generation behind the counter — the previous holder's, the
-- classic stale frame — is answered not-live instead of stale.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
local known = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return {1, known}
end
if tonumber(ARGV[2]) + 1 < known then
  return {0, known}
end
return {-1, known}
