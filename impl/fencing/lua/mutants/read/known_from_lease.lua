-- MUTANT (read side): phase O/C lookup whose known_generation is the live
-- lease's generation instead of the counter (§Per-phase operation table:
-- "new ctr"): once the lease is released or expired it reports 0, below
-- every generation ever issued.
-- KEYS[1] lease, KEYS[2] generation.
local held = redis.call('GET', KEYS[1])
if not held then
  return {0, '', -2, 0}
end
local gen, owner = string.match(held, '^(%d+):(.*)$')
return {tonumber(gen), owner, redis.call('PTTL', KEYS[1]), tonumber(gen)}
