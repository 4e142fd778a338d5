package protocol

import "slices"

// ReadMutant names a known-bad variant of a read-side script (spec 000
// §Per-phase operation table, rows lookup, known_generation and
// validate_fenced_header): the rules the spec says are "specified and tested,
// not proved". Each is a changed .lua under lua/mutants/read, run against the
// real node so the read-side checker (check.ReadSide) and the trace
// conformance of the read actions can prove they fail. The explicit-state
// model mirrors each one (model.ReadRuleFor), as it mirrors M1–M3 and M5.
type ReadMutant string

const (
	ReadCorrect ReadMutant = ""
	// ReadLookupOneKeyspace: A/B lookup reads only the new keyspace's lease
	// (the table: union, new wins).
	ReadLookupOneKeyspace ReadMutant = "lookup-one-keyspace"
	// ReadKnownMin: A/B known_generation is min(old, new) (the table: max).
	ReadKnownMin ReadMutant = "known-min"
	// ReadValidateOnePair: A/B validate_fenced_header checks the new lease
	// only (the table: the union pair).
	ReadValidateOnePair ReadMutant = "validate-one-pair"
	// ReadValidateOffByOne: validate_fenced_header's stale comparison off by
	// one in every phase (gen+1 < known for gen < known): the frame one
	// generation behind is not called stale.
	ReadValidateOffByOne ReadMutant = "validate-off-by-one"
	// ReadKnownFromLease: O/C known_generation is the live lease's generation,
	// not the counter (0 once the lease is gone).
	ReadKnownFromLease ReadMutant = "known-from-lease"
)

// ReadMutants lists every read-side mutant.
var ReadMutants = []ReadMutant{ReadLookupOneKeyspace, ReadKnownMin, ReadValidateOnePair, ReadValidateOffByOne, ReadKnownFromLease}

// Phases lists the phases whose scripts the mutant replaces.
func (m ReadMutant) Phases() []Phase {
	switch m {
	case ReadLookupOneKeyspace, ReadKnownMin, ReadValidateOnePair:
		return []Phase{A, B}
	case ReadValidateOffByOne:
		return Phases
	case ReadKnownFromLease:
		return []Phase{O, C}
	}
	return nil
}

// Applies says the mutant changes phase p's scripts.
func (m ReadMutant) Applies(p Phase) bool { return slices.Contains(m.Phases(), p) }

// Op is the read operation the mutant breaks: "lookup", "known_generation"
// or "validate_fenced_header".
func (m ReadMutant) Op() string {
	switch m {
	case ReadLookupOneKeyspace:
		return "lookup"
	case ReadKnownMin, ReadKnownFromLease:
		return "known_generation"
	}
	return "validate_fenced_header"
}
