// Package judge holds the presence-mget row's records and pure checkers
// (spec 000 §Conformance, Presence MGET): a bulk read of presence keys split
// per slot, recorded with the answer at every position and judged against
// what acknowledged writes left behind. Each checker is defined under a
// stable name (check.Define), so a scenario's judgement replays offline
// (`slotgate check --from`); the aliases are the names earlier histories
// stored it under. The protocol and locality rows read through the same
// records and Positional.
package judge

import "time"

// Want is what a presence key must read as, from acknowledged writes only:
// Present with Value, absent, or Unknown when its last write failed (it may
// or may not have landed; either answer is accepted).
type Want struct {
	Present bool
	Value   string
	Unknown bool
	// ExpiresAt is, for a present key written with a TTL, the earliest
	// scenario-clock time the server may have expired it (the write's call
	// plus the TTL): a read that returned after it may answer nil or the
	// value. Zero: the key does not expire while it is read.
	ExpiresAt time.Duration `json:",omitempty"`
}

// Got is one position of a bulk read's answer.
type Got struct {
	Present bool
	Value   string
}

// Read is one recorded bulk read: the keys asked, in order (with
// duplicates), and the answer, or the error.
type Read struct {
	Keys    []string
	Got     []Got
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}
