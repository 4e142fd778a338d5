-- want: lua/key-unbound
local function bump(key)
  return redis.call('INCR', key)
end
return bump(KEYS[1])
