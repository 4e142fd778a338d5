-- want: lua/key-computed
-- Deriving a second key from a declared one: KEYS[1]..':gen' is never declared, may hash elsewhere.
local held = redis.call('GET', KEYS[1])
return redis.call('INCR', KEYS[1] .. ':gen')
