-- MUTANT (read side): phase A/B lookup whose known_generation is the MIN of
-- the two counters instead of the max (§Per-phase operation table:
-- "max(old, new) ctrs"). While one counter is behind (before the backfill,
-- or absent) it reports a generation below ones already issued.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
local known = math.min(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
for _, k in ipairs({KEYS[3], KEYS[1]}) do
  local held = redis.call('GET', k)
  if held then
    local gen, owner = string.match(held, '^(%d+):(.*)$')
    return {tonumber(gen), owner, redis.call('PTTL', k), known}
  end
end
return {0, '', -2, known}
