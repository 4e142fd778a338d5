-- MUTANT (negative control, paused pod): release guarded by the owner only,
-- not the generation. A paused pod's delayed release of its old generation
-- frees the newer lease the same owner re-acquired since.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
