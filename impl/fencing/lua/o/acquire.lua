-- Phase O (legacy) acquire (spec 000 §Per-phase operation table: "old key; INCR old ctr").
-- KEYS[1] lease, KEYS[2] generation: the legacy un-tagged pair (two slots; legal only with cluster mode disabled).
-- ARGV[1] owner, ARGV[2] lease TTL in milliseconds.
-- Returns {1, generation} when acquired, {0, holder_generation, holder_owner} when held.
local held = redis.call('GET', KEYS[1])
if held then
  local gen, owner = string.match(held, '^(%d+):(.*)$')
  return {0, tonumber(gen), owner}
end
local gen = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
