-- Known-bad backfill (a negative control of spec 000 §The protocol: "fold
-- oldGen into newGen by max-merge"): the old counter overwrites the new one.
-- A session B already issued from its new counter goes back to the old value,
-- and C's INCR re-issues B's generations (T2).
-- KEYS[1] old generation, KEYS[2] new generation. Returns the value written.
local old = tonumber(redis.call('GET', KEYS[1]) or '0')
if old > 0 then
  redis.call('SET', KEYS[2], old)
end
return old
