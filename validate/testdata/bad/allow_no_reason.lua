-- want: lua/unknown-command lua/bad-annotation
-- A declaration without a reason declares nothing.
-- slotgate:allow lua/unknown-command
return redis.call('OBJECT', 'FREQ', KEYS[1])
