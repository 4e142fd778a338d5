-- MUTANT (read side): phase A/B validate_fenced_header that checks the frame
-- against the NEW lease only (§Per-phase operation table: "union pair"): a
-- frame of a live A-era lease on the old key is refused as not live.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation.
local known = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
if redis.call('GET', KEYS[3]) == ARGV[2] .. ':' .. ARGV[1] then
  return {1, known}
end
if tonumber(ARGV[2]) < known then
  return {0, known}
end
return {-1, known}
