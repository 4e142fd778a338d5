// Package judge holds the guards row's records and pure checkers (spec 000
// §System Model, "Replay guard / rate limit": SET NX EX and a single-key Lua
// script, "per-key atomic; safe once routed"). Each checker is defined under
// a stable name (check.Define) and judges one recorded run of contended
// calls made while the keys' slots migrated.
package judge

import "time"

// Guard names which per-key guard a call went through.
type Guard string

const (
	// GuardReplay is the NIP-98 replay guard (SET NX PX): each event id is
	// admitted once.
	GuardReplay Guard = "replay"
	// GuardLimit is the fixed-window rate limiter (INCR + PEXPIRE in one
	// script): at most the limit per window per subject.
	GuardLimit Guard = "limit"
)

// Call is one guarded call as a caller saw it, on the run's clock.
type Call struct {
	Guard Guard
	// Key is the guard's key (the event id's or the subject's); every call
	// of one key contends for the same admission.
	Key  string
	Slot int
	// Caller tells concurrent callers apart (backend and worker).
	Caller       string
	Call, Return time.Duration
	// Admitted is the guard's answer; meaningless when ErrKind is set.
	Admitted bool
	// ErrKind and Err are the call's error: its outcome is unknown (the
	// command may have run before the reply was lost).
	ErrKind string `json:",omitempty"`
	Err     string `json:",omitempty"`
}

// Move is a confirmed slot move (fault.MoveSlot: MIGRATING/IMPORTING,
// MIGRATE of every key, SETSLOT NODE, every node agreeing), on the run's
// clock. Only a move fault.Apply confirmed is recorded.
type Move struct {
	Slot       int
	Start, End time.Duration
}

// covers reports whether c, a call on m's slot, overlapped m (extended by
// settle). A move of another slot excuses nothing: a call on a slot that is
// not moving has no redirect to meet.
func (m Move) covers(c Call, settle time.Duration) bool {
	return c.Slot == m.Slot && c.Call <= m.End+settle && c.Return >= m.Start
}
