-- want: lua/unknown-command
-- A command the key table does not know is rejected (fail closed), not guessed.
return redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], KEYS[3])
