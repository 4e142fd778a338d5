package model

import (
	"fmt"

	"github.com/slotgate/slotgate/impl/fencing/protocol"
)

// The read side (spec 000 §Per-phase operation table, rows lookup,
// known_generation, validate_fenced_header). The spec's TLA+ model leaves
// these out on purpose — they are read-only, so they cannot break T1/T2 —
// and says they are "specified and tested, not proved". Here they are read
// actions over a State: each phase's rule as data (ReadRule, mirroring the
// Lua under impl/fencing/lua/{o,a,b,c}/{lookup,validate}.lua and the read
// mutants under lua/mutants/read), and an invariant over every reachable
// state, InvReadSide: every pod, whatever phase it runs, reads the one live
// authority and the highest generation ever issued, and fences a frame as
// the truth says. Reads change no state, so the state space (and every write
// invariant's counterexample) is exactly the same with them.

// InvReadSide names the read-side invariant.
const InvReadSide = "Inv_ReadSide"

// The read side's plain values live in impl/fencing/protocol, which the
// harness's history records without importing the model.
type (
	Stored         = protocol.Stored
	StoredKeyspace = protocol.StoredKeyspace
	View           = protocol.View
	Frame          = protocol.Frame
)

// Stored is the model keyspace as the node stores it (pod i as PodName(i)).
func (k Keyspace) Stored() StoredKeyspace {
	st := func(l Lease) Stored {
		if !l.Live() {
			return Stored{}
		}
		return Stored{Owner: PodName(l.Owner), Gen: int64(l.Gen)}
	}
	return StoredKeyspace{Old: st(k.Old), New: st(k.New), OldCtr: int64(k.OldCtr), NewCtr: int64(k.NewCtr)}
}

// ReadRule is one phase's read scripts as data.
type ReadRule struct {
	// LookupOld/LookupNew: the lease keys lookup consults; the new one is
	// read first and wins.
	LookupOld, LookupNew bool
	// KnownOld/KnownNew: the counters known_generation and validate read.
	KnownOld, KnownNew bool
	// KnownMin: lookup folds its counters with min, not max (mutant).
	KnownMin bool
	// KnownFromLease: lookup reports the live lease's generation (0 if
	// none) as known_generation, not a counter (mutant).
	KnownFromLease bool
	// ValidateOld/ValidateNew: the lease keys validate compares the frame with.
	ValidateOld, ValidateNew bool
	// StaleSlack: validate calls a frame stale when gen+StaleSlack < known
	// (0 correct; 1 is the off-by-one mutant).
	StaleSlack int64
}

// ReadRuleFor is phase p's read rule under read mutant m (protocol.ReadCorrect
// for the table). It mirrors the Lua exactly; the migration suite's trace
// conformance replays it against the real scripts.
func ReadRuleFor(p protocol.Phase, m protocol.ReadMutant) ReadRule {
	var r ReadRule
	switch p {
	case protocol.O: // old key, old ctr, old pair
		r = ReadRule{LookupOld: true, KnownOld: true, ValidateOld: true}
	case protocol.A, protocol.B: // union (new wins), max(old, new), union pair
		r = ReadRule{LookupOld: true, LookupNew: true, KnownOld: true, KnownNew: true, ValidateOld: true, ValidateNew: true}
	case protocol.C: // new key, new ctr, new pair
		r = ReadRule{LookupNew: true, KnownNew: true, ValidateNew: true}
	}
	if !m.Applies(p) {
		return r
	}
	switch m {
	case protocol.ReadLookupOneKeyspace:
		r.LookupOld = false
	case protocol.ReadKnownMin:
		r.KnownMin = true
	case protocol.ReadValidateOnePair:
		r.ValidateOld = false
	case protocol.ReadValidateOffByOne:
		r.StaleSlack = 1
	case protocol.ReadKnownFromLease:
		r.KnownFromLease = true
	}
	return r
}

func (r ReadRule) counters(k StoredKeyspace, fold func(a, b int64) int64) int64 {
	switch {
	case r.KnownOld && r.KnownNew:
		return fold(k.OldCtr, k.NewCtr)
	case r.KnownOld:
		return k.OldCtr
	case r.KnownNew:
		return k.NewCtr
	}
	return 0
}

func maxOf(a, b int64) int64 { return max(a, b) }
func minOf(a, b int64) int64 { return min(a, b) }

// Lookup is lookup + known_generation under the rule.
func (r ReadRule) Lookup(k StoredKeyspace) View {
	var v View
	switch {
	case r.LookupNew && k.New.Live():
		v.Holder = k.New
	case r.LookupOld && k.Old.Live():
		v.Holder = k.Old
	}
	fold := maxOf
	if r.KnownMin {
		fold = minOf
	}
	v.Known = r.counters(k, fold)
	if r.KnownFromLease {
		v.Known = v.Holder.Gen
	}
	return v
}

// Validate is validate_fenced_header of frame (owner, gen) under the rule.
func (r ReadRule) Validate(k StoredKeyspace, owner string, gen int64) protocol.Verdict {
	frame := Stored{Owner: owner, Gen: gen}
	if gen != 0 && ((r.ValidateNew && k.New == frame) || (r.ValidateOld && k.Old == frame)) {
		return protocol.VerdictValid
	}
	if gen+r.StaleSlack < r.counters(k, maxOf) {
		return protocol.VerdictStale
	}
	return protocol.VerdictNotLive
}

// Authority is the truth a read must tell in a keyspace with at most one
// live lease (T1), where lastIssued is the highest generation ever issued
// (the model's LastIssued; max of both counters in every correct state):
// the live lease on whichever keyspace holds it, and lastIssued.
func Authority(k StoredKeyspace, lastIssued int64) View {
	v := View{Known: lastIssued}
	if k.New.Live() {
		v.Holder = k.New
	} else if k.Old.Live() {
		v.Holder = k.Old
	}
	return v
}

// AuthorityVerdict is the fence's truth for frame (owner, gen): valid when
// it is the live authority, stale when a later generation was issued,
// not-live otherwise (§Per-phase operation table: "a frame that passes
// validation under A/B would pass under whichever single keyspace currently
// holds authority").
func AuthorityVerdict(k StoredKeyspace, lastIssued int64, owner string, gen int64) protocol.Verdict {
	if a := Authority(k, lastIssued); a.Holder.Live() && a.Holder == (Stored{Owner: owner, Gen: gen}) {
		return protocol.VerdictValid
	}
	if gen < lastIssued {
		return protocol.VerdictStale
	}
	return protocol.VerdictNotLive
}

// Frames are the headers the read checks present in a state: every live
// lease's own frame, and for every pod a stale (lastIssued-1 and 1), current
// (lastIssued) and future (lastIssued+1) generation.
func (m *Model) Frames(s State) []Frame {
	k := s.Keyspace().Stored()
	var out []Frame
	for _, l := range []Stored{k.Old, k.New} {
		if l.Live() {
			out = append(out, Frame{Owner: l.Owner, Gen: l.Gen})
		}
	}
	last := int64(s.LastIssued)
	for i := 1; i <= m.cfg.Pods; i++ {
		for _, g := range []int64{1, last - 1, last, last + 1} {
			if g >= 1 {
				out = append(out, Frame{Owner: PodName(i), Gen: g})
			}
		}
	}
	return out
}

// ReadsHold is InvReadSide in s: wherever T1 holds, every pod's phase rule
// (under the model's read mutant) answers lookup, known_generation and
// validate_fenced_header of every Frame as Authority says. It returns what
// went wrong, "" when nothing did.
func (m *Model) ReadsHold(s State) string {
	k := s.Keyspace().Stored()
	if k.Old.Live() && k.New.Live() {
		return "" // two authorities: T1's violation, not a read's
	}
	last := int64(s.LastIssued)
	truth := Authority(k, last)
	frames := m.Frames(s)
	for i := 0; i < m.cfg.Pods; i++ {
		p := s.Pods[i]
		r := ReadRuleFor(p, m.cfg.Read)
		if got := r.Lookup(k); got != truth {
			return fmt.Sprintf("%s (phase %s) lookup/known_generation reads %s, the authority is %s", PodName(i+1), p, got, truth)
		}
		for _, f := range frames {
			if got, want := r.Validate(k, f.Owner, f.Gen), AuthorityVerdict(k, last, f.Owner, f.Gen); got != want {
				return fmt.Sprintf("%s (phase %s) validate_fenced_header(%s, %d) = %s, the authority says %s", PodName(i+1), p, f.Owner, f.Gen, got, want)
			}
		}
	}
	return ""
}

// ReadResult is InvReadSide checked over a reachable state space.
type ReadResult struct {
	// States checked, and the read evaluations made (per pod: one lookup
	// and one validate per frame).
	States, Reads int
	// Violation is the shortest trace to a state breaking InvReadSide, with
	// Why saying which read.
	Violation *Violation
	Why       string
}

// CheckReads checks InvReadSide in every state of g (BFS order, so the first
// violation has a shortest trace).
func (m *Model) CheckReads(g *Graph) ReadResult {
	var res ReadResult
	for i, s := range g.States {
		res.States++
		res.Reads += m.cfg.Pods * (1 + len(m.Frames(s)))
		if why := m.ReadsHold(s); why != "" {
			res.Violation = &Violation{Invariant: InvReadSide, Trace: g.Trace(i)}
			res.Why = why
			return res
		}
	}
	return res
}
