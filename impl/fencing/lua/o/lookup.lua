-- Phase O (legacy) lookup (§Per-phase operation table: "old key") together with
-- known_generation ("old ctr"), read in one atomic step.
-- KEYS[1] lease, KEYS[2] generation.
-- Returns {holder_generation or 0, holder_owner or '', pttl, known_generation}.
local held = redis.call('GET', KEYS[1])
local known = tonumber(redis.call('GET', KEYS[2]) or '0')
if not held then
  return {0, '', -2, known}
end
local gen, owner = string.match(held, '^(%d+):(.*)$')
return {tonumber(gen), owner, redis.call('PTTL', KEYS[1]), known}
