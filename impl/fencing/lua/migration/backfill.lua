-- Backfill (spec 000 §The protocol: "fold oldGen into newGen by max-merge.
-- Idempotent."), one session per call. Cross-slot: disabled mode only.
-- KEYS[1] old generation, KEYS[2] new generation. Returns the merged value.
local merged = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'))
if merged > 0 then
  redis.call('SET', KEYS[2], merged)
end
return merged
