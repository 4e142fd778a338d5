package gate_test

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
)

// The DrainTimer variant is a known-bad C-gate (spec 000 §The protocol:
// "wait one TTL" drains nothing while renewers live): it opens C on elapsed
// time since the backfill whatever the old-keyspace count says.
func TestDrainTimerVariant(t *testing.T) {
	now := time.Duration(0)
	g := gate.New(gate.Options{DrainTimer: time.Second, Now: func() time.Duration { return now }})
	allow(t, g.Advance(drained(all(fencing.O)), fencing.A))
	allow(t, g.Advance(drained(all(fencing.A)), fencing.B))
	refused(t, g.Advance(with(all(fencing.B), 0, 0), fencing.C), gate.ReasonNotBackfilled)
	now = 5 * time.Second
	allow(t, g.RecordBackfill(all(fencing.B)))
	now += 500 * time.Millisecond
	refused(t, g.Advance(with(all(fencing.B), 0, 4), fencing.C), gate.ReasonDrainTimer)
	now += 500 * time.Millisecond
	allow(t, g.Advance(with(all(fencing.B), 12, 4), fencing.C)) // old leases live: the bug

	// Without a clock the option is ignored: the correct gate.
	c := gate.New(gate.Options{DrainTimer: time.Second})
	allow(t, c.Advance(drained(all(fencing.O)), fencing.A))
	allow(t, c.Advance(drained(all(fencing.A)), fencing.B))
	allow(t, c.RecordBackfill(all(fencing.B)))
	refused(t, c.Advance(with(all(fencing.B), 12, 4), fencing.C), gate.ReasonOldLeasesLive)
}
