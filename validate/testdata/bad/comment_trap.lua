-- want: lua/key-from-argv
--[[ A long comment that mentions KEYS[1] and redis.call('GET', KEYS[1]) must not
     hide or satisfy anything. ]]
local s = "redis.call('GET', KEYS[1])" -- a string, not a call
return redis.call('GET', ARGV[1])
