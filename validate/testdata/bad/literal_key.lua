-- want: lua/key-literal
-- A hard-coded key in a script that otherwise declares KEYS[1].
local gen = redis.call('INCR', 'fencing:generation')
redis.call('SET', KEYS[1], gen)
return gen
