-- MUTANT (read side): phase A/B lookup that reads only the NEW keyspace's lease
-- (a "B writes the new key, so read the new key" shortcut). The table says
-- "union (new wins)": an A-era lease on the old key is live authority, and
-- this lookup reports the session free. known_generation is still the max.
-- KEYS[1] old lease, KEYS[2] old generation, KEYS[3] new lease, KEYS[4] new generation.
local known = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0'))
local held = redis.call('GET', KEYS[3])
if held then
  local gen, owner = string.match(held, '^(%d+):(.*)$')
  return {tonumber(gen), owner, redis.call('PTTL', KEYS[3]), known}
end
return {0, '', -2, known}
