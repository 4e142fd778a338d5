-- want: lua/key-from-argv
-- MSET keys sit at odd positions; the value ARGV[1] is fine, the key ARGV[2] is not.
return redis.call('MSET', KEYS[1], ARGV[1], ARGV[2], 'v')
