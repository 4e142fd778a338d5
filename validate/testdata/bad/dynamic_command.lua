-- want: lua/dynamic-command
-- A command name from ARGV hides which arguments are keys.
return redis.call(ARGV[1], KEYS[1])
