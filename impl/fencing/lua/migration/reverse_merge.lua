-- Reverse max-merge (spec 000 §Deployment Gate rule 4: rolling back past A into
-- O needs "an operator-run reverse max-merge of the new counter into the old
-- one"), one session per call. KEYS[1] old generation, KEYS[2] new generation.
local merged = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'))
if merged > 0 then
  redis.call('SET', KEYS[1], merged)
end
return merged
