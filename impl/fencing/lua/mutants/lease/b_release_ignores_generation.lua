-- MUTANT (negative control): phase B release guarded by the owner only, on
-- both keys (§Per-phase operation table: release is owner+generation guarded).
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
-- ARGV[1] owner, ARGV[2] generation.
for _, k in ipairs({KEYS[3], KEYS[1]}) do
  local held = redis.call('GET', k)
  if held and string.match(held, '^%d+:(.*)$') == ARGV[1] then
    return redis.call('DEL', k)
  end
end
return 0
