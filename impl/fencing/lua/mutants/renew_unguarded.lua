-- MUTANT (negative control): renew extends whatever lease exists, without the
-- owner+generation guard — a stale holder keeps another owner's lease alive.
return redis.call('PEXPIRE', KEYS[1], ARGV[3])
