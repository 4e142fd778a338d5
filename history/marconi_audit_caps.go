package history

// AuditCapHistory is one tenant queue offered fixed-size entries with no
// writer draining it: the configuration, each offer's answer, and the
// queue's state afterwards.
type AuditCapHistory struct {
	Name   string
	Policy string // AuditPolicyOldest or AuditPolicyRejectNew
	// MaxEntries and MaxBytes are the queue's caps; EntrySize the size
	// (audit.EntrySize) of every offered entry.
	MaxEntries int
	MaxBytes   int64
	EntrySize  int64
	// Kept is each offer's answer, in order.
	Kept []bool
	// Depth, Bytes and Dropped are the queue's state after the offers
	// (Stats: depth, bytes, every counted loss).
	Depth   int
	Bytes   int64
	Dropped int64
}
