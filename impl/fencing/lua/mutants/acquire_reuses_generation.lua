-- MUTANT (negative control): acquire reads the counter but never advances it,
-- the class of spec 000 mutants M3/M5 — a generation is issued twice, so a
-- stale frame passes the fence.
local held = redis.call('GET', KEYS[1])
if held then
  local gen, owner = string.match(held, '^(%d+):(.*)$')
  return {0, tonumber(gen), owner}
end
local gen = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
redis.call('SET', KEYS[1], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
