-- want: lua/key-literal
-- MGET/DEL take keys at every position: the second one must be declared too.
return redis.call('MGET', KEYS[1], 'undeclared')
