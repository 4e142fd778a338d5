-- Phase O (legacy) validate_fenced_header (§Per-phase operation table: "old pair"): the
-- hop-by-hop fence. A frame is valid only while its (owner, generation) is the
-- live lease; a generation below the known counter is stale.
-- KEYS[1] lease, KEYS[2] generation. ARGV[1] owner, ARGV[2] generation.
-- Returns {code, known_generation}: 1 valid, 0 stale generation, -1 not the live lease.
local known = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  return {1, known}
end
if tonumber(ARGV[2]) < known then
  return {0, known}
end
return {-1, known}
