package protocol

import (
	"fmt"
	"strconv"
)

// What the read side sees and answers (spec 000 §Per-phase operation table,
// rows lookup, known_generation, validate_fenced_header), as plain values:
// the explicit-state model computes them, the harness records them.

// Stored is one lease key as a node stores it ("gen:owner"): Gen 0 means no
// live lease. Owners are strings so the live fleet's pod names fit.
type Stored struct {
	Owner string
	Gen   int64
}

// Live says the lease is held.
func (l Stored) Live() bool { return l.Gen != 0 }

func (l Stored) String() string {
	if !l.Live() {
		return "-"
	}
	return strconv.FormatInt(l.Gen, 10) + ":" + l.Owner
}

// StoredKeyspace is one session's four fencing keys as stored: both lease
// keys and both counters (0 = absent).
type StoredKeyspace struct {
	Old, New       Stored
	OldCtr, NewCtr int64
}

func (k StoredKeyspace) String() string {
	return fmt.Sprintf("old=%s new=%s oldCtr=%d newCtr=%d", k.Old, k.New, k.OldCtr, k.NewCtr)
}

// View is what lookup and known_generation answer.
type View struct {
	Holder Stored
	Known  int64
}

func (v View) String() string { return fmt.Sprintf("holder=%s known=%d", v.Holder, v.Known) }

// Frame is a fenced header a probe presents.
type Frame struct {
	Owner string
	Gen   int64
}
