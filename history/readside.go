package history

import (
	"fmt"
	"time"

	"github.com/slotgate/slotgate/impl/fencing/protocol"
)

// ReadKind is one read-side operation of the directory (spec 000 §Per-phase
// operation table).
type ReadKind string

const (
	ReadLookup          ReadKind = "lookup"
	ReadKnownGeneration ReadKind = "known_generation"
	ReadValidate        ReadKind = "validate_fenced_header"
)

// ReadKinds lists the read operations in table order.
var ReadKinds = []ReadKind{ReadLookup, ReadKnownGeneration, ReadValidate}

// GenClass is how a presented frame's generation compares with the highest
// generation issued when it was presented.
type GenClass string

const (
	GenStale   GenClass = "stale"   // below the highest issued
	GenCurrent GenClass = "current" // the highest issued (the live lease's own, or another owner's)
	GenFuture  GenClass = "future"  // above anything issued
)

// GenClasses lists the classes every phase must be probed with.
var GenClasses = []GenClass{GenStale, GenCurrent, GenFuture}

// ClassOf classifies gen against lastIssued. It is how a recorder fills
// ReadOp.Class (what kind of frame the probe presented), so it belongs to
// the record, not to a checker.
func ClassOf(gen, lastIssued int64) GenClass {
	switch {
	case gen < lastIssued:
		return GenStale
	case gen == lastIssued:
		return GenCurrent
	}
	return GenFuture
}

// ReadOp is one read-side call a relay pod made, with the session's four
// fencing keys as they stood during the call: the probe read them right
// before and right after (one MGET each, on the same node) and keeps the
// call only when both agree, so Keyspace is exactly what the script read
// (a stored value never comes back once changed — a generation is never
// reissued — and a lease present after was present throughout).
type ReadOp struct {
	Pod, Phase, Lane, Session string
	// Variant is the read mutant whose scripts answered ("" for the real
	// scripts): the probe runs the controls' scripts on the same snapshot.
	Variant string
	Kind    ReadKind
	// Frame is the header presented to validate_fenced_header, and Class
	// its generation against the highest issued.
	Frame protocol.Frame
	Class GenClass
	// Got is lookup's answer (known_generation: Got.Known); Verdict is
	// validate's.
	Got     protocol.View
	Verdict protocol.Verdict
	// Keyspace is the session's keys during the call.
	Keyspace protocol.StoredKeyspace
	// Mix is the fleet's running phases at the call, e.g. "AB" (one letter:
	// a uniform fleet).
	Mix          string
	Call, Return time.Duration
}

// Mixed says pods of more than one phase were running.
func (o ReadOp) Mixed() bool { return len(o.Mix) > 1 }

func (o ReadOp) String() string {
	ans := o.Got.String()
	switch o.Kind {
	case ReadKnownGeneration:
		ans = fmt.Sprintf("known=%d", o.Got.Known)
	case ReadValidate:
		ans = o.Verdict.String()
	}
	frame := ""
	if o.Kind == ReadValidate {
		frame = fmt.Sprintf("(%s, %d; %s)", o.Frame.Owner, o.Frame.Gen, o.Class)
	}
	v := ""
	if o.Variant != "" {
		v = " variant " + o.Variant
	}
	fleet := ""
	if o.Mix != "" {
		fleet = ", fleet " + o.Mix
	}
	return fmt.Sprintf("[%s] %s%s by %s (phase %s, lane %s%s%s) @%v → %s over %s", o.Session, o.Kind, frame, o.Pod, o.Phase, o.Lane, fleet, v, o.Call.Round(time.Millisecond), ans, o.Keyspace)
}
