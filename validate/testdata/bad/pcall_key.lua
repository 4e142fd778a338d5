-- want: lua/key-from-argv
-- redis.pcall is checked exactly like redis.call.
return redis.pcall("HSET", ARGV[1], 'f', 'v')
