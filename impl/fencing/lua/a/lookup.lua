-- Phase A/B lookup (§Per-phase operation table: "union (new wins)") together with
-- known_generation ("max(old, new) ctrs"), read in one atomic cross-slot step.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- Returns {holder_generation or 0, holder_owner or '', pttl, known_generation}.
local known = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
for _, k in ipairs({KEYS[3], KEYS[1]}) do
  local held = redis.call('GET', k)
  if held then
    local gen, owner = string.match(held, '^(%d+):(.*)$')
    return {tonumber(gen), owner, redis.call('PTTL', k), known}
  end
end
return {0, '', -2, known}
