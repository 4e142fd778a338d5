-- MUTANT M3: AcquireB issues newGen+1 without the max-merge — the fresh
-- counter re-issues generations the old counter already issued.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] lease TTL in milliseconds.
-- Returns {1, generation} when acquired, {0, holder_generation, holder_owner} when held.
for _, k in ipairs({KEYS[3], KEYS[1]}) do
  local held = redis.call('GET', k)
  if held then
    local gen, owner = string.match(held, '^(%d+):(.*)$')
    return {0, tonumber(gen), owner}
  end
end
local gen = redis.call('INCR', KEYS[4])
redis.call('SET', KEYS[3], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
