package gate_test

import (
	"errors"
	"testing"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
)

func fleet(phases ...fencing.Phase) gate.Observation {
	obs := gate.Observation{Pods: map[string]fencing.Phase{}}
	for i, p := range phases {
		obs.Pods[string(rune('a'+i))] = p
	}
	return obs
}

func all(p fencing.Phase) gate.Observation { return fleet(p, p, p) }

func drained(obs gate.Observation) gate.Observation { obs.OldLeases, obs.NewLeases = 0, 0; return obs }

func with(obs gate.Observation, old, new int) gate.Observation {
	obs.OldLeases, obs.NewLeases = old, new
	return obs
}

func allow(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
}

func refused(t *testing.T, err error, want gate.Reason) {
	t.Helper()
	if err == nil {
		t.Fatalf("allowed, want refusal %s", want)
	}
	if !errors.Is(err, gate.ErrRefused) || gate.ReasonOf(err) != want {
		t.Fatalf("refused with %v, want %s", err, want)
	}
}

// atB walks a correct gate O→A→B.
func atB(t *testing.T, m fencing.MigrationMutant) *gate.Gate {
	t.Helper()
	g := gate.New(gate.Options{Mutant: m})
	allow(t, g.Advance(drained(all(fencing.O)), fencing.A))
	allow(t, g.Advance(drained(all(fencing.A)), fencing.B))
	return g
}

// atC walks a correct gate to C, backfilled and drained.
func atC(t *testing.T, m fencing.MigrationMutant) *gate.Gate {
	t.Helper()
	g := atB(t, m)
	allow(t, g.RecordBackfill(all(fencing.B)))
	allow(t, g.Advance(drained(all(fencing.B)), fencing.C))
	return g
}

func TestAdvanceGate(t *testing.T) {
	g := gate.New(gate.Options{})
	refused(t, g.Advance(all(fencing.O), fencing.B), gate.ReasonNotAdjacent)
	refused(t, g.Advance(gate.Observation{}, fencing.A), gate.ReasonNoPods)
	refused(t, g.Advance(fleet(fencing.O, fencing.A), fencing.A), gate.ReasonFleetNotAtTarget)
	allow(t, g.Advance(all(fencing.O), fencing.A))
	// rule 2: B may not be applied while A is still rolling (an O pod left).
	refused(t, g.Advance(fleet(fencing.O, fencing.A, fencing.A), fencing.B), gate.ReasonFleetNotAtTarget)
	allow(t, g.Advance(all(fencing.A), fencing.B))
	if g.Target() != fencing.B {
		t.Fatalf("target %s", g.Target())
	}
}

func TestCGate(t *testing.T) {
	g := atB(t, "")
	refused(t, g.Advance(drained(all(fencing.B)), fencing.C), gate.ReasonNotBackfilled)
	refused(t, g.RecordBackfill(fleet(fencing.A, fencing.B)), gate.ReasonFleetNotAtTarget)
	allow(t, g.RecordBackfill(all(fencing.B)))
	refused(t, g.Advance(with(all(fencing.B), 3, 10), fencing.C), gate.ReasonOldLeasesLive)
	refused(t, g.Advance(with(all(fencing.B), -1, 10), fencing.C), gate.ReasonNotObserved)
	allow(t, g.Advance(with(all(fencing.B), 0, 10), fencing.C))

	a := gate.New(gate.Options{})
	allow(t, a.Advance(all(fencing.O), fencing.A))
	refused(t, a.RecordBackfill(all(fencing.A)), gate.ReasonWrongPhase)
}

func TestCGateMutantM4(t *testing.T) {
	g := atB(t, fencing.M4)
	allow(t, g.Advance(with(all(fencing.B), 7, 10), fencing.C)) // no backfill, old leases live
}

func TestRollbackMatrix(t *testing.T) {
	g := atC(t, "")
	refused(t, g.Rollback(all(fencing.C), fencing.A), gate.ReasonNotAdjacent)
	allow(t, g.Rollback(all(fencing.C), fencing.B))
	if g.Backfilled() {
		t.Fatal("rollback must invalidate the backfill")
	}
	// a second rollback while pods are still above the target (rule 4, M8).
	refused(t, g.Rollback(fleet(fencing.C, fencing.B, fencing.B), fencing.A), gate.ReasonFleetNotAtTarget)
	// the backfill must re-run before C again.
	refused(t, g.Advance(drained(all(fencing.B)), fencing.C), gate.ReasonNotBackfilled)
	allow(t, g.Rollback(all(fencing.B), fencing.A))
	// into O: new keyspace drained and reverse-merged.
	refused(t, g.Rollback(with(all(fencing.A), 5, 2), fencing.O), gate.ReasonNewLeasesLive)
	refused(t, g.Rollback(with(all(fencing.A), 5, -1), fencing.O), gate.ReasonNotObserved)
	refused(t, g.Rollback(with(all(fencing.A), 5, 0), fencing.O), gate.ReasonNotReverseMerged)
	refused(t, g.RecordReverseMerge(fleet(fencing.A, fencing.B)), gate.ReasonFleetNotAtTarget)
	allow(t, g.RecordReverseMerge(all(fencing.A)))
	allow(t, g.Rollback(with(all(fencing.A), 5, 0), fencing.O))
	refused(t, g.Rollback(all(fencing.O), fencing.O), gate.ReasonNotAdjacent)
	refused(t, g.RecordReverseMerge(all(fencing.O)), gate.ReasonWrongPhase)
}

func TestRollbackMutants(t *testing.T) {
	m8 := atC(t, fencing.M8)
	allow(t, m8.Rollback(all(fencing.C), fencing.B))
	allow(t, m8.Rollback(fleet(fencing.C, fencing.B, fencing.B), fencing.A))

	m6 := atB(t, fencing.M6)
	allow(t, m6.Rollback(all(fencing.B), fencing.A))
	allow(t, m6.RecordReverseMerge(all(fencing.A)))
	allow(t, m6.Rollback(with(all(fencing.A), 0, 9), fencing.O))

	m7 := atB(t, fencing.M7)
	allow(t, m7.Rollback(all(fencing.B), fencing.A))
	allow(t, m7.Rollback(with(all(fencing.A), 0, 0), fencing.O))
	// and the reverse merge is invalidated by a phase move: re-advancing and
	// rolling back again needs it again.
	g := atB(t, "")
	allow(t, g.Rollback(all(fencing.B), fencing.A))
	allow(t, g.RecordReverseMerge(all(fencing.A)))
	allow(t, g.Advance(all(fencing.A), fencing.B))
	allow(t, g.Rollback(all(fencing.B), fencing.A))
	refused(t, g.Rollback(drained(all(fencing.A)), fencing.O), gate.ReasonNotReverseMerged)
}

func TestModeDoors(t *testing.T) {
	b := atB(t, "")
	refused(t, b.EnterCompatible(drained(all(fencing.B))), gate.ReasonFleetNotC)
	refused(t, b.Enable(all(fencing.B)), gate.ReasonWrongMode)

	g := atC(t, "")
	refused(t, g.EnterCompatible(drained(fleet(fencing.C, fencing.B))), gate.ReasonFleetNotC)
	refused(t, g.EnterCompatible(with(all(fencing.C), 1, 0)), gate.ReasonOldLeasesLive)
	refused(t, g.RevertMode(all(fencing.C)), gate.ReasonWrongMode)
	allow(t, g.EnterCompatible(drained(all(fencing.C))))
	// no phase move while compatible.
	refused(t, g.Rollback(all(fencing.C), fencing.B), gate.ReasonModeNotDisabled)
	refused(t, g.EnterCompatible(drained(all(fencing.C))), gate.ReasonWrongMode)
	allow(t, g.RevertMode(all(fencing.C)))
	allow(t, g.Rollback(all(fencing.C), fencing.B))
	refused(t, g.EnterCompatible(drained(all(fencing.B))), gate.ReasonFleetNotC)
	allow(t, g.RecordBackfill(all(fencing.B)))
	allow(t, g.Advance(drained(all(fencing.B)), fencing.C))
	allow(t, g.EnterCompatible(drained(all(fencing.C))))
	refused(t, g.Enable(fleet(fencing.C, fencing.B)), gate.ReasonFleetNotC)
	allow(t, g.Enable(all(fencing.C)))
	if g.Mode() != gate.Enabled {
		t.Fatalf("mode %s", g.Mode())
	}
	refused(t, g.RevertMode(all(fencing.C)), gate.ReasonOneWayDoor)
	refused(t, g.Rollback(all(fencing.C), fencing.B), gate.ReasonModeNotDisabled)
	refused(t, g.Advance(all(fencing.C), fencing.C), gate.ReasonModeNotDisabled)

	// backfill invalidated by a rollback keeps the door shut at C (T3).
	h := atC(t, "")
	allow(t, h.Rollback(all(fencing.C), fencing.B))
	if h.Backfilled() {
		t.Fatal("backfilled after rollback")
	}
}

func TestModeDoorMutantM9(t *testing.T) {
	g := atB(t, fencing.M9)
	allow(t, g.EnterCompatible(with(fleet(fencing.A, fencing.B), 4, 4)))
	for _, d := range g.Log() {
		if d.Step == "enter compatible" && d.Allowed && d.FleetC {
			t.Fatal("log says fleet was C")
		}
	}
}

// The KeepBackfill variant admits C after C→B→A→B on the backfill of the
// first B, which the correct gate refuses (rule 4: any rollback invalidates
// the backfill).
func TestKeepBackfillAdmitsStaleC(t *testing.T) {
	for _, keep := range []bool{false, true} {
		g := gate.New(gate.Options{KeepBackfill: keep})
		allow(t, g.Advance(drained(all(fencing.O)), fencing.A))
		allow(t, g.Advance(drained(all(fencing.A)), fencing.B))
		allow(t, g.RecordBackfill(all(fencing.B)))
		allow(t, g.Advance(drained(all(fencing.B)), fencing.C))
		allow(t, g.Rollback(drained(all(fencing.C)), fencing.B))
		allow(t, g.Rollback(drained(all(fencing.B)), fencing.A))
		allow(t, g.Advance(drained(all(fencing.A)), fencing.B))
		err := g.Advance(drained(all(fencing.B)), fencing.C)
		if keep {
			allow(t, err)
		} else {
			refused(t, err, gate.ReasonNotBackfilled)
		}
	}
}

// Rule 2(b): a pod still terminating refuses the backfill and the advance;
// the IgnoreTerminating variant does not see it.
func TestOlderReplicaSets(t *testing.T) {
	term := func(obs gate.Observation) gate.Observation {
		obs.Terminating = map[string]fencing.Phase{"old": fencing.A}
		return obs
	}
	g := atB(t, fencing.MutantNone)
	refused(t, g.RecordBackfill(drained(term(all(fencing.B)))), gate.ReasonOlderPodsLive)
	allow(t, g.RecordBackfill(drained(all(fencing.B))))
	refused(t, g.Advance(drained(term(all(fencing.B))), fencing.C), gate.ReasonOlderPodsLive)
	allow(t, g.Advance(drained(all(fencing.B)), fencing.C))
	// A terminating non-C pod keeps the G3 door shut (T3).
	refused(t, g.EnterCompatible(drained(term(all(fencing.C)))), gate.ReasonFleetNotC)

	bad := gate.New(gate.Options{IgnoreTerminating: true})
	allow(t, bad.Advance(drained(term(all(fencing.O))), fencing.A))
}

// Rule 2(a): the AdvanceMajority variant admits B with an O pod live.
func TestAdvanceMajority(t *testing.T) {
	mid := drained(fleet(fencing.A, fencing.A, fencing.O))
	g := gate.New(gate.Options{Start: fencing.A})
	refused(t, g.Advance(mid, fencing.B), gate.ReasonFleetNotAtTarget)
	bad := gate.New(gate.Options{Start: fencing.A, AdvanceMajority: true})
	allow(t, bad.Advance(mid, fencing.B))
}

// The door variants each open one door the correct gate keeps shut, and
// the decision log records the move.
func TestDoorVariants(t *testing.T) {
	at := gate.State{Target: fencing.C, Mode: gate.Compatible, Backfilled: true}
	obs := drained(all(fencing.C))
	refused(t, gate.Restore(gate.Options{}, at).Rollback(obs, fencing.B), gate.ReasonModeNotDisabled)
	g := gate.Restore(gate.Options{Door: gate.DoorRollbackCompatible}, at)
	allow(t, g.Rollback(obs, fencing.B))
	if g.Mode() != gate.Compatible {
		t.Fatalf("rollback-in-compatible moved the mode: %s", g.Mode())
	}
	g = gate.Restore(gate.Options{Door: gate.DoorPhaseWithMode}, at)
	allow(t, g.Rollback(obs, fencing.B))
	d := g.Log()[0]
	if d.From != fencing.C || d.To != fencing.B || d.Mode != gate.Compatible || d.ModeAfter != gate.Disabled {
		t.Fatalf("phase-with-mode decision: %+v", d)
	}
	en := gate.State{Target: fencing.C, Mode: gate.Enabled, Backfilled: true}
	refused(t, gate.Restore(gate.Options{}, en).RevertMode(obs), gate.ReasonOneWayDoor)
	allow(t, gate.Restore(gate.Options{Door: gate.DoorRevertEnabled}, en).RevertMode(obs))
}
