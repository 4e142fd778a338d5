-- Phase A acquire (spec 000 §Per-phase operation table: "union check; write old
-- key; max(old,new)+1 → old ctr"). Cross-slot: legal only in disabled mode.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] lease TTL in milliseconds.
-- Returns {1, generation} when acquired, {0, holder_generation, holder_owner} when held.
for _, k in ipairs({KEYS[1], KEYS[3]}) do
  local held = redis.call('GET', k)
  if held then
    local gen, owner = string.match(held, '^(%d+):(.*)$')
    return {0, tonumber(gen), owner}
  end
end
local gen = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0')) + 1
redis.call('SET', KEYS[2], gen)
redis.call('SET', KEYS[1], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
