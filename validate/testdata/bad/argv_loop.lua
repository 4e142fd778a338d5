-- want: lua/key-from-argv
-- The spec's forbidden deadline fix: EVAL with numkeys=0, keys smuggled in ARGV and
-- iterated. Succeeds on one shard, breaks silently once slots split (A2).
for i, k in ipairs(ARGV) do redis.call('SET', k, 'written') end
return #ARGV
