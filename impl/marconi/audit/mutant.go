package audit

// Mutant names a known-bad variant of the audit fan-out: each models a bug
// the conformance rows must catch (their negative controls). MutantNone is
// the reference behaviour; nothing outside the harness sets another.
type Mutant string

const (
	// MutantNone is the correct pipeline.
	MutantNone Mutant = ""
	// MutantUncountedDrop is a queue that evicts and refuses entries without
	// counting them: the loss budget is spent invisibly (§3.6).
	MutantUncountedDrop Mutant = "queue/uncounted-drop"
	// MutantUncountedShutdown is a queue whose Close discards what is still
	// queued without counting it: a restart's in-flight entries vanish from
	// the ledger (§6 "counted, not hidden").
	MutantUncountedShutdown Mutant = "queue/uncounted-shutdown"
	// MutantOldestEvictsNewest is PolicyOldest evicting the newest queued
	// entry instead of the oldest (and keeping the new one): the count of
	// losses is right and the overwrite counter matches, but the signals
	// lost are the wrong ones (§3.6 overwrite_policy=oldest).
	MutantOldestEvictsNewest Mutant = "queue/oldest-evicts-newest"
	// MutantStaleDepth is a queue whose Take does not publish the depth
	// gauge: marconi_audit_queue_depth rises with every offer and never
	// comes down as the writer drains (§9).
	MutantStaleDepth Mutant = "queue/depth-not-decremented"
	// MutantBytesCapExclusive is a queue that reads max_bytes as an
	// exclusive bound: an entry that would fill the queue to exactly
	// max_bytes does not fit, so the queue holds one entry fewer than its
	// configuration allows and loses (counts) one more (§3.6 max_bytes).
	// Every loss is still counted, so the ledger balances; found by
	// slotgate mutate (gomut's fitsLocked:swap-cmp#2 survived the rows).
	MutantBytesCapExclusive Mutant = "queue/bytes-cap-exclusive"
	// MutantSilentWriter is a Redis Stream writer that swallows its errors:
	// no error counter, no error report (§4.1, §9: the operator alerts on
	// writer errors and lag; this one only ever shows lag).
	MutantSilentWriter Mutant = "writer/silent-errors"
	// MutantPlainInsert is an archiver without idempotency: plain INSERT
	// into tables without the signal_id unique key, so a re-delivered entry
	// becomes a duplicate row (§4.2 "idempotent signal_id UPSERT").
	MutantPlainInsert Mutant = "archiver/plain-insert"
	// MutantAckBeforeWrite is an archiver that XACKs before the PostgreSQL
	// commit: a crash in between loses the entry for good.
	MutantAckBeforeWrite Mutant = "archiver/ack-before-write"
	// MutantNoRecovery is an archiver that never claims a dead consumer's
	// pending entries: they stay pending and never reach PostgreSQL.
	MutantNoRecovery Mutant = "archiver/no-pending-recovery"
	// MutantBatchedRead is an archiver that reads the stream in batches
	// (XREADGROUP COUNT 16) instead of one entry at a time: the v0.3
	// batching §4.2 explicitly replaced ("No batching"). PostgreSQL still
	// gets every entry; only the wire shows it.
	MutantBatchedRead Mutant = "archiver/batched-read"
	// MutantPollOnly is an archiver that polls: XREADGROUP without BLOCK,
	// and after an empty read it sleeps its Block before asking again. It
	// archives everything, in order, COUNT 1; only an append no longer
	// wakes it (§4.1 Handoff "every successful XADD wakes the PG
	// archiver's blocking consumer group read"), so an entry waits up to
	// the poll interval before it is read.
	MutantPollOnly Mutant = "archiver/poll-only"
	// MutantLagSinceRead is an archiver whose lag gauge measures how long
	// the current entry has been in its hands (since its read) instead of
	// its age in the stream: a backlog that ages for minutes shows as
	// milliseconds, so the §4.2 alert (marconi_pg_archiver_lag_seconds > N)
	// never fires.
	MutantLagSinceRead Mutant = "archiver/lag-since-read"
	// MutantResumeFromTail is a writer that restarts "from $": on resume it
	// skips everything queued instead of what its Redis offset covers, so
	// the entries queued at the restart never reach the stream (§4.1
	// Restart: a gap).
	MutantResumeFromTail Mutant = "writer/resume-from-tail"
	// MutantIgnoreOffset is a writer that ignores its Redis offset on
	// restart (and whose append does not skip covered offsets): the batch
	// it had appended but not released is appended again (§4.1 Restart: a
	// duplicate).
	MutantIgnoreOffset Mutant = "writer/ignore-offset"
	// MutantTrimIgnoresGroup trims the stream by time alone (MINID ~
	// now-retention), ignoring the archiver group: entries the archiver
	// has not consumed are trimmed once it lags past the retention.
	MutantTrimIgnoresGroup Mutant = "writer/trim-ignores-group"
	// MutantTrimByCount trims the stream by count (MAXLEN ~ WriterOptions.
	// MaxLen), the naive reading of "MAXLEN ~7d": a burst trims entries
	// the archiver has not consumed, however young.
	MutantTrimByCount Mutant = "writer/trim-by-count"
	// MutantAppendedPerCall is a writer whose
	// marconi_redis_writer_appended_total counts append calls, not the
	// entries each one appended: a batch of 40 counts 1.
	MutantAppendedPerCall Mutant = "writer/appended-per-call"
	// MutantOffsetPerGeneration is a writer that keeps its resume offset
	// under a key of its own generation (the offset key suffixed with it):
	// every process resumes from its own offset, none sees a newer one, so
	// a previous process's writer still running appends beside its
	// successor instead of being refused.
	MutantOffsetPerGeneration Mutant = "writer/offset-per-generation"
	// MutantLagNewest is a writer whose marconi_redis_writer_lag_seconds
	// is the age of the newest entry not yet in the stream instead of the
	// oldest: under steady load it reads milliseconds through a Redis
	// outage of any length, so the lag alert (§4.1, §9) never fires.
	MutantLagNewest Mutant = "writer/lag-newest"
	// MutantErrorLabelsSwapped is a writer that counts its errors with the
	// label values in the wrong order (tenant under reason, reason under
	// tenant): the total is right and every error is reported, but no
	// tenant's marconi_redis_writer_errors_total series moves — a
	// per-tenant alert (§9) never fires.
	MutantErrorLabelsSwapped Mutant = "writer/error-labels-swapped"
)
