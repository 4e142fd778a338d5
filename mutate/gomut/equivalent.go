package gomut

// KnownEquivalent maps a mutant ID to why it is equivalent: no run of any
// row can tell it from the original, so it is reported with the reason and
// left out of the kill rate. Each entry is argued from the code, not from a
// survived run; TestDefaultTargetsGenerate fails when an entry no longer
// names a generated mutant (the mutated code itself was edited: IDs hash it).
var KnownEquivalent = map[string]string{
	// Discover's lower score bound (ZRANGEBYSCORE now +inf → -inf +inf):
	// the index score and the record's PX come from the same TTL in the
	// same heartbeat, record first, so a record never expires before its
	// score; a dead score's record is gone and fetch counts it Missing.
	"impl/registry:Registry.Discover:drop-bound:4f8ad1e5": "a dead index score names a record that has expired too (Heartbeat sets PX ttl on the server after computing the score now+ttl, so the record outlives its score by at most the SET's latency): fetch skips it as Missing and only Candidates grows; the spec's contract (live runtimes found, nothing unattested returned) cannot tell — the bound only saves the MGET of ids the prune right after removes (survived a smoke run, seed 4242, both backends)",

	// fleetAt's truncation of the off-target list at three pods (> → >=):
	// with exactly three pods off target the Detail text gains a trailing
	// "…"; the string stays non-empty, so every caller refuses with the same
	// Reason, and Decision (what the report and the model see) carries no
	// Detail.
	"impl/gate:fleetAt:swap-cmp:296b24c6": "message-only: with exactly three off-target pods the refusal's human-readable Detail ends in \", …\"; fleetAt still returns a non-empty string, so every refusal, its Reason and every Decision field (which holds no Detail) are unchanged, and no row judges the Detail text",

	// Discover's dropped read-index error: the reply is nil on an error, so
	// the next statement's AsStrings(nil) fails and Discover returns an
	// error all the same — still loud, never a silently wrong discovery;
	// only the wrapped cause becomes client.ErrUnexpectedReply. The rows
	// judge loudness (errors column) and answers (silently-wrong), not the
	// cause. (Survived a smoke run, seed 4242, go-redis.)
	"impl/registry:Registry.Discover:drop-err-return:d956b440": "the dropped error is re-detected: Pool.Do's reply is nil on an error, AsStrings(nil) fails with ErrUnexpectedReply and Discover returns that error — still loud, only the wrapped cause differs, which no row's column judges",

	// Discover's dropped AsStrings error (the index read's reply shape):
	// reached only when Pool.Do succeeded with a reply that is not an array
	// of strings and nils. ZRANGEBYSCORE without WITHSCORES answers an array
	// of bulk strings (RESP2 and RESP3) or an error reply, which Do returns
	// as its error (the check above); both pools decode an array to []any
	// of strings — every discovery of every baseline decodes through here.
	"impl/registry:Registry.Discover:drop-err-return:d956b440#2": "unreachable against a Valkey server: the branch runs only when Pool.Do succeeded but ZRANGEBYSCORE's reply is not an array of strings/nils, and ZRANGEBYSCORE (no WITHSCORES) answers an array of bulk strings or an error reply (returned as Do's error, handled just above); both pools decode arrays to []any of strings",

	// The audit queue's ring: capacity policy only. resize copies every
	// live entry in order, so when it happens cannot change what is queued.
	"impl/marconi/audit:ring.pushFront:swap-cmp:bbd67b4f": "grows the ring when it is exactly full instead of only when it overflows: resize keeps every entry in order, only the capacity differs",
	"impl/marconi/audit:ring.popFront:swap-cmp:2e717a88":  "shrinks at exactly 1024 slots too: resize(c/2) holds the r.n < c/4 live entries, in order; only memory differs",
	"impl/marconi/audit:ring.popFront:swap-cmp:0f5a71f4":  "shrinks at r.n == c/4 too: c/4 entries fit in c/2 slots, resize keeps them in order; only memory differs",

	// Take's max <= 0 guard: its only caller (Writer.runTenant) passes
	// WriterOptions.Batch, which NewWriter forces positive.
	"impl/marconi/audit:Queue.Take:swap-cmp:ff56f6fe": "max == 0 is never passed (the writer's Batch is forced > 0 by NewWriter), and with max == 0 n = min(0, len) = 0 returns nil anyway",

	// DiscardThrough waking waiters when it freed nothing: a back-pressure
	// waiter re-checks fitsLocked under the lock and waits again until its
	// unchanged deadline (offer sets deadline once).
	"impl/marconi/audit:Queue.DiscardThrough:swap-cmp:ff3efb3e": "wakes back-pressure waiters when n == 0: a spurious wake re-checks fitsLocked and waits again until the same deadline, so no offer's outcome changes",

	// offer's stall and deadline comparisons are between wall-clock
	// durations in nanoseconds: the boundary is a single instant.
	"impl/marconi/audit:tenantQueue.offer:swap-cmp:21716f6f": "now.Sub(lastTake) equal to the stall bound to the nanosecond: > and >= differ at one instant of the wall clock, which no workload can aim at",
	"impl/marconi/audit:tenantQueue.offer:swap-cmp:71791e9b": "wait == 0 exactly: the mutant arms a zero timer that fires at once and the next pass drops with wait < 0 — the same drop, counted the same",

	// bySlot's sort: groups are keyed by slot (the idx map), so no two
	// groups share one, and for distinct slots < and <= agree.
	"impl/presence:bySlot:swap-cmp:405456ed": "no two groups have the same slot (bySlot keys them by slot), and for distinct slots < and <= order the same",

	// values' dropped AsStrings error: vals is nil on an error, and n ≥ 1
	// (Read returns early for no keys, and bySlot never makes an empty
	// group), so the length check right after returns an error all the
	// same — still loud, only the wrapped cause differs.
	"impl/presence:values:drop-err-return:39aca7d9": "the dropped error is re-detected: AsStrings returns nil values on an error, n is never 0 (Read returns early for no keys; every bySlot group holds a key), so `len(vals) != n` returns ErrUnexpectedReply — the read still fails loudly, only the wrapped cause differs, which no row's column judges; and an MGET reply is always an array of bulk strings and nils",

	// readPart's TRYAGAIN retry cadence by ±1 ms: the retries stop at the
	// same deadline; a row could only see the difference with a timed
	// assertion at the millisecond, which the house rules forbid.
	"impl/presence:readPart:ttl-off-by-one:f8cb7d48": "first TRYAGAIN backoff 4 ms instead of 5 ms: the retries still end at the same TryAgainBudget deadline with the same outcome; only the cadence differs by 1 ms",
	"impl/presence:readPart:ttl-off-by-one:c82bc68a": "first TRYAGAIN backoff 6 ms instead of 5 ms: the retries still end at the same TryAgainBudget deadline with the same outcome; only the cadence differs by 1 ms",
	// readPart's backoff growth (2× → 1× or 3×): the same cadence argument
	// as the ±1 ms ones above, one step further — the retries still stop at
	// the same TryAgainBudget deadline with the same outcome; only how many
	// retries fit before it changes, which the Retries counter shows but no
	// check bounds from above (presence-mget/retries-counted bounds it from
	// below: at least one retry per read that gave up, true of both).
	"impl/presence:readPart:ttl-off-by-one:a086950a": "backoff stays at 5 ms instead of doubling: the retries still end at the same TryAgainBudget deadline with the same outcome; only the cadence, and so the number of retries counted, differs — no check bounds it from above and a timed assertion is forbidden",
	"impl/presence:readPart:ttl-off-by-one:1ca75dcb": "backoff triples instead of doubling (to the same 100 ms cap): the retries still end at the same TryAgainBudget deadline with the same outcome; only the cadence, and so the number of retries counted, differs — no check bounds it from above and a timed assertion is forbidden",
	"impl/presence:readPart:ttl-off-by-one:ae99cb98": "backoff cap 99 ms instead of 100 ms: the retries still end at the same deadline; a 1 ms cadence change is not observable without a timed assertion",
	"impl/presence:readPart:ttl-off-by-one:b74d0cad": "backoff cap 101 ms instead of 100 ms: the retries still end at the same deadline; a 1 ms cadence change is not observable without a timed assertion",
}
