-- MUTANT (negative control): acquire skips the held-lease check, the class of
-- spec 000 mutant M1 — every contender wins, two owners for one session.
local gen = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], gen .. ':' .. ARGV[1], 'PX', ARGV[2])
return {1, gen}
