-- want: lua/key-unbound
-- k starts as a declared key but is rebound to a reply value: not provably KEYS[n].
local k = KEYS[1]
k = redis.call('GET', KEYS[2])
return redis.call('DEL', k)
