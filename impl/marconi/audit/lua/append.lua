-- Spec 002 §4.1 Redis Stream writer: append a batch of audit-queue entries
-- to the tenant's stream (the Marconi Cache) and advance the writer's resume
-- offset, atomically. Both keys carry the tenant's hash tag, so a cluster
-- runs this on one node.
--
-- KEYS[1]  marconi:signals:{tenant}                 the stream
-- KEYS[2]  marconi:signals:{tenant}:writer-offset   last appended offset "<gen>:<seq>"
-- ARGV[1]  retention in ms: entries older than now - retention are trimmed
--          (MINID ~, the spec's "MAXLEN ~7d (approximate trim by time)")
-- ARGV[2]  the audit queue's generation (fixed-width decimal)
-- ARGV[3…] four per entry: seq, signal_id, arrived_at, entry (JSON)
--
-- An entry at or below the stored offset of the same generation is already
-- in the stream (a retry after an unknown outcome, or a resumed writer) and
-- is skipped, so a retried batch never duplicates. An older generation than
-- the stored one is a writer of a previous process still running: refused.
-- Returns {appended, skipped}.
local stored = redis.call('GET', KEYS[2])
local sgen, sseq = '', -1
if stored then
  local g, s = string.match(stored, '^(%d+):(%d+)$')
  if g then
    sgen, sseq = g, tonumber(s)
  end
end
local gen = ARGV[2]
if string.len(sgen) == string.len(gen) and gen < sgen then
  return redis.error_reply('STALEGEN audit queue generation ' .. gen .. ' is older than the stored ' .. sgen)
end
local retention = tonumber(ARGV[1])
local now = redis.call('TIME')
local nowms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minid = '0'
if nowms > retention then
  minid = string.format('%.0f', nowms - retention)
end
local appended, skipped, last = 0, 0, nil
for i = 3, #ARGV, 4 do
  if gen ~= sgen or tonumber(ARGV[i]) > sseq then
    redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*',
      'offset', gen .. ':' .. ARGV[i], 'signal_id', ARGV[i + 1], 'arrived_at', ARGV[i + 2], 'entry', ARGV[i + 3])
    appended = appended + 1
    last = ARGV[i]
  else
    skipped = skipped + 1
  end
end
if last then
  redis.call('SET', KEYS[2], gen .. ':' .. last)
end
return {appended, skipped}
