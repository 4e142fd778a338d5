-- MUTANT (negative control, paused pod): the fence as a bare generation
-- comparison with its bound off by one — stale only below counter - 1, as if
-- the counter held the NEXT generation to issue. The generation just
-- superseded (a paused pod's, after one takeover) and an expired holder's
-- frames pass the fence.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
local known = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[2]) < known - 1 then
  return {0, known}
end
return {1, known}
