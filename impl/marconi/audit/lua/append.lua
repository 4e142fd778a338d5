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
-- ARGV[3]  the PG archiver's consumer group
-- ARGV[4]  trim mode: "group" (the reference), "time" or "count:<n>" (the
--          known-bad variants MutantTrimIgnoresGroup, MutantTrimByCount)
-- ARGV[5]  "1": skip entries the stored offset covers; "0" (the known-bad
--          MutantIgnoreOffset): append them again
-- ARGV[6…] four per entry: seq, signal_id, arrived_at, entry (JSON)
--
-- An entry at or below the stored offset of the same generation is already
-- in the stream (a retry after an unknown outcome, or a resumed writer) and
-- is skipped, so a retried batch never duplicates. An older generation than
-- the stored one is a writer of a previous process still running: refused.
--
-- The trim never passes what the archiver group has not consumed: the
-- time-based MINID is clamped at the group's last-delivered id and its
-- lowest pending id (§4.2 "the trimmed window is the audit gap" — we keep
-- the window instead; see WriterOptions.Retention for why). A stream with
-- no group yet (Stage 3, before any archiver attached) trims by time alone.
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

-- idLess compares two stream ids "<ms>-<seq>" (ms fits a double exactly).
local function idLess(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, bm = tonumber(am), tonumber(bm)
  if am ~= bm then
    return am < bm
  end
  return tonumber(as) < tonumber(bs)
end

local retention = tonumber(ARGV[1])
local now = redis.call('TIME')
local nowms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minid = '0-0'
if nowms > retention then
  minid = string.format('%.0f', nowms - retention) .. '-0'
end
local mode = ARGV[4]
if mode == 'group' and redis.call('EXISTS', KEYS[1]) == 1 then
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    local f = {}
    for i = 1, #g, 2 do
      f[g[i]] = g[i + 1]
    end
    if f['name'] == ARGV[3] then
      -- Everything after last-delivered-id is undelivered: keep it.
      if idLess(f['last-delivered-id'], minid) then
        minid = f['last-delivered-id']
      end
      -- Delivered but not acknowledged: keep it (a dead archiver's
      -- entries wait for XAUTOCLAIM).
      if tonumber(f['pending']) > 0 then
        local p = redis.call('XPENDING', KEYS[1], ARGV[3])
        if p[2] and idLess(p[2], minid) then
          minid = p[2]
        end
      end
    end
  end
end
local trim = {'MINID', '~', minid}
local maxlen = string.match(mode, '^count:(%d+)$')
if maxlen then
  trim = {'MAXLEN', '~', maxlen}
end

local dedupe = ARGV[5] == '1'
local appended, skipped, last = 0, 0, nil
for i = 6, #ARGV, 4 do
  if not dedupe or gen ~= sgen or tonumber(ARGV[i]) > sseq then
    redis.call('XADD', KEYS[1], trim[1], trim[2], trim[3], '*',
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
