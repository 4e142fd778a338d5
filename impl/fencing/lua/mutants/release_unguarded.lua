-- MUTANT (negative control): release deletes whatever lease exists, without the
-- owner+generation guard — a stale holder frees the current owner's session.
return redis.call('DEL', KEYS[1])
