package fencing

import "github.com/slotgate/slotgate/impl/fencing/protocol"

// The protocol's vocabulary lives in package protocol, which links no client,
// so the persisted history, the explicit-state model and the checkers speak
// it without linking a client library; these names keep it at hand for the
// code that runs the scripts.
type (
	Phase           = protocol.Phase
	MigrationMutant = protocol.MigrationMutant
	ReadMutant      = protocol.ReadMutant
	Verdict         = protocol.Verdict
	Session         = protocol.Session
	Keys            = protocol.Keys
	KeyRule         = protocol.KeyRule
)

const (
	O = protocol.O
	A = protocol.A
	B = protocol.B
	C = protocol.C

	MutantNone = protocol.MutantNone
	M1         = protocol.M1
	M2         = protocol.M2
	M3         = protocol.M3
	M4         = protocol.M4
	M5         = protocol.M5
	M6         = protocol.M6
	M7         = protocol.M7
	M8         = protocol.M8
	M9         = protocol.M9

	ReadCorrect           = protocol.ReadCorrect
	ReadLookupOneKeyspace = protocol.ReadLookupOneKeyspace
	ReadKnownMin          = protocol.ReadKnownMin
	ReadValidateOnePair   = protocol.ReadValidateOnePair
	ReadValidateOffByOne  = protocol.ReadValidateOffByOne
	ReadKnownFromLease    = protocol.ReadKnownFromLease

	VerdictValid   = protocol.VerdictValid
	VerdictStale   = protocol.VerdictStale
	VerdictNotLive = protocol.VerdictNotLive

	PhaseGaugeName = protocol.PhaseGaugeName
)

var (
	// Phases lists the phases in deploy order.
	Phases = protocol.Phases
	// MigrationMutants lists M1–M9 in order.
	MigrationMutants = protocol.MigrationMutants
	// ReadMutants lists every read-side mutant.
	ReadMutants = protocol.ReadMutants
)

// PhaseFromIndex is protocol.PhaseFromIndex.
func PhaseFromIndex(i int) (Phase, bool) { return protocol.PhaseFromIndex(i) }

// OldKeys is protocol.OldKeys: the legacy, un-tagged key pair.
func OldKeys(s Session) Keys { return protocol.OldKeys(s) }

// NewKeys is protocol.NewKeys: the hash-tagged key pair.
func NewKeys(s Session) Keys { return protocol.NewKeys(s) }

// MisTaggedKeys is protocol.MisTaggedKeys, a known-bad key rule.
func MisTaggedKeys(s Session) Keys { return protocol.MisTaggedKeys(s) }

// ForPhase returns the script version of p, exactly per spec 000 §Per-phase
// operation table. It panics on an unknown phase (a programming error).
func ForPhase(p Phase) Scripts { return Embedded().Phase(p) }

// ForPhaseMutant returns phase p's scripts with script mutant m applied when
// m touches p (M1, M3: B's acquire; M2, M5: A's acquire). Gate mutants and
// mutants of another phase leave the scripts correct.
func ForPhaseMutant(p Phase, m MigrationMutant) Scripts { return Embedded().PhaseMutant(p, m) }
