package judge

import (
	"fmt"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// oldKeyspaceDrained is the C-gate's fact (spec 000 §The protocol): between
// since and by, an observation saw old-keyspace leases to drain and then saw
// the count reach zero. Run on a fixed "wait one TTL" window while renewers
// are alive it fails: renew is PEXPIRE, renewed leases never expire.
//
// The first observation at or after by counts as inside the window: the
// gate decides on its own observation at by, and a sampler ticking beside
// it can miss the last expiries before by (a TTL drain ends in a step, many
// leases expiring in the same millisecond). The caller takes that witness
// right after the gate allowed and before the step acts (traffic.Operator's
// OnAllowed), so it shows the state the gate decided on. A sample more than
// drainWitnessTolerance after by is no witness (the witness call failed, and
// a later tick would show a state the gate never saw).
func oldKeyspaceDrained(samples []history.KeyspaceSample, since, by time.Duration) check.Result {
	return keyspaceDrained("old-keyspace-drained", "old", func(s history.KeyspaceSample) int { return s.OldLeases }, samples, since, by)
}

// newKeyspaceDrained is the fact a rollback into O needs (spec 000
// §Deployment Gate rule 4, absence is M6): between since and by, an
// observation saw new-keyspace leases and then saw the count reach zero.
func newKeyspaceDrained(samples []history.KeyspaceSample, since, by time.Duration) check.Result {
	return keyspaceDrained("new-keyspace-drained", "new", func(s history.KeyspaceSample) int { return s.NewLeases }, samples, since, by)
}

// drainWitnessTolerance bounds how late the witness of a gate decision may
// be: it is taken right after the decision, before the step acts.
const drainWitnessTolerance = 50 * time.Millisecond

func keyspaceDrained(name, ks string, count func(history.KeyspaceSample) int, samples []history.KeyspaceSample, since, by time.Duration) check.Result {
	var first, zero *history.KeyspaceSample
	last := history.KeyspaceSample{}
	n := 0
	witnessed := false // the first sample at or after by
	for i := range samples {
		s := samples[i]
		if s.At < since {
			continue
		}
		if s.At >= by {
			if witnessed || s.At > by+drainWitnessTolerance {
				continue
			}
			witnessed = true
		}
		n++
		last = s
		if first == nil {
			first = &samples[i]
		}
		if count(s) == 0 && zero == nil {
			zero = &samples[i]
		}
	}
	if n == 0 || count(*first) == 0 {
		return check.Unknownf(name, "no %s-keyspace lease to drain in [%v, %v]", ks, since.Round(time.Millisecond), by.Round(time.Millisecond))
	}
	if zero == nil {
		return check.Failf(name, fmt.Sprintf("first %v\nlast  %v", *first, last), "%s keyspace not drained in [%v, %v]: %d live %s-key leases at the start, %d at the end", ks, since.Round(time.Millisecond), by.Round(time.Millisecond), count(*first), ks, count(last))
	}
	return check.Passf(name, "%s keyspace drained from %d leases to 0 in %v (observed %v)", ks, count(*first), (zero.At - first.At).Round(time.Millisecond), *zero)
}
