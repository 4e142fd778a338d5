package history

import (
	"fmt"
	"time"
)

// MigrationOp is one directory call made by a relay pod during the fencing
// migration: the FencingOp plus who made it, under which script phase, on
// which tunnel lane, and how it failed (spec 000 §Conformance, Fencing
// migration).
type MigrationOp struct {
	FencingOp
	Pod   string
	Phase string
	Lane  string
	// ErrKind/Err: the loud outcome ("" when the call succeeded).
	ErrKind string
	Err     string
	// Abandoned: the call failed because its pod was killed or stopped
	// while it was in flight (no release, pool closed). Its effect is unknown.
	Abandoned bool
}

// KeyspaceSample is one atomic observation of both keyspaces over every
// session of a scenario (one Lua script on the standalone node), with the
// fleet's phase mix at that moment.
type KeyspaceSample struct {
	At time.Duration
	// OldLeases, NewLeases count live leases per keyspace.
	OldLeases, NewLeases int
	// Forks lists sessions that had a live lease on BOTH keyspaces: two
	// authorities (T1 broken), with both lease values.
	Forks []string
	// Pods counts live pods per reported phase.
	Pods map[string]int
}

func (s KeyspaceSample) String() string {
	return fmt.Sprintf("@%v old=%d new=%d pods=%v", s.At.Round(time.Millisecond), s.OldLeases, s.NewLeases, s.Pods)
}
