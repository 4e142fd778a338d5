package model_test

import (
	"testing"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

// The read side holds in every reachable state of the correct protocol:
// every pod of every phase reads the one live authority and the highest
// generation issued, and fences every frame as the authority says.
func TestReadSideHoldsInEveryReachableState(t *testing.T) {
	m, err := model.New(model.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := m.CheckReads(m.Reachable())
	if r.Violation != nil {
		t.Fatalf("%s: %s\n%s", r.Violation.Invariant, r.Why, m.FormatTrace(r.Violation.Trace))
	}
	if r.States != 5837 || r.Reads == 0 {
		t.Fatalf("checked %d states / %d reads, want the 5837 reachable states", r.States, r.Reads)
	}
	t.Logf("%d states, %d read evaluations", r.States, r.Reads)
}

// Each read mutant is killed by InvReadSide, with a shortest trace that
// ends in a phase the mutant touches; the transitions are unchanged.
func TestEveryReadMutantKilled(t *testing.T) {
	for _, rm := range fencing.ReadMutants {
		t.Run(string(rm), func(t *testing.T) {
			m, err := model.New(model.Config{Read: rm})
			if err != nil {
				t.Fatal(err)
			}
			g := m.Reachable()
			if len(g.States) != 5837 {
				t.Fatalf("a read mutant changed the state space: %d states", len(g.States))
			}
			r := m.CheckReads(g)
			if r.Violation == nil {
				t.Fatalf("%s survived %s over %d states", rm, model.InvReadSide, r.States)
			}
			t.Logf("%s killed after %d steps: %s", rm, r.Violation.Trace.Len(), r.Why)
		})
	}
}

// The write mutants that let a pod read a keyspace its phase does not
// consult (C over a live old lease, O over a live new one) break the read
// side too: the read rules are safe only under E1.
func TestReadSideNeedsTheGate(t *testing.T) {
	for _, mu := range []fencing.MigrationMutant{fencing.M4, fencing.M6, fencing.M7} {
		m, err := model.New(model.Config{Mutant: mu})
		if err != nil {
			t.Fatal(err)
		}
		r := m.CheckReads(m.Reachable())
		if r.Violation == nil {
			t.Errorf("%s: the read side held in every state", mu)
			continue
		}
		t.Logf("%s: read side broken after %d steps: %s", mu, r.Violation.Trace.Len(), r.Why)
	}
}
