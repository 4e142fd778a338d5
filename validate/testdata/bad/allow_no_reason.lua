-- want: lua/unknown-command lua/bad-annotation
-- A declaration without a reason declares nothing.
-- slotgate:allow lua/unknown-command
return redis.call('FROBNICATE', KEYS[1])
