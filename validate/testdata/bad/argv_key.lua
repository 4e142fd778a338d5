-- want: lua/key-from-argv
-- The key is passed as an argument instead of being declared: the server never slot-checks it.
return redis.call('GET', ARGV[1])
