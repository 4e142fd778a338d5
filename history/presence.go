package history

import "time"

// PresenceWant is what a presence key must read as, from acknowledged
// writes only: Present with Value, absent, or Unknown when its last write
// failed (it may or may not have landed; either answer is accepted).
type PresenceWant struct {
	Present bool
	Value   string
	Unknown bool
	// ExpiresAt is, for a present key written with a TTL, the earliest
	// scenario-clock time the server may have expired it (the write's call
	// plus the TTL): a read that returned after it may answer nil or the
	// value. Zero: the key does not expire while it is read.
	ExpiresAt time.Duration `json:",omitempty"`
}

// PresenceGot is one position of a bulk read's answer.
type PresenceGot struct {
	Present bool
	Value   string
}

// PresenceRead is one recorded bulk read: the keys asked, in order (with
// duplicates), and the answer, or the error.
type PresenceRead struct {
	Keys    []string
	Got     []PresenceGot
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}
