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
)
