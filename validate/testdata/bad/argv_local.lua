-- want: lua/key-from-argv
local k = ARGV[1]
redis.call('PEXPIRE', k, 1000)
return 1
