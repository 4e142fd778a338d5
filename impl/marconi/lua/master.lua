-- Marconi master flag flip (claim_master / handoff_master). KEYS[1] the
-- project's master key. ARGV[1] the expected current master ('' to claim
-- unconditionally), ARGV[2] the new master session id. Returns 1 when the
-- flag moved, 0 when the expected master did not hold it.
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
