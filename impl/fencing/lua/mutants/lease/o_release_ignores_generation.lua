-- MUTANT (negative control): phase O release guarded by the owner only, not
-- the generation (§Per-phase operation table: release is owner+generation
-- guarded). A delayed release of the owner's old generation frees the newer
-- lease it re-acquired.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
