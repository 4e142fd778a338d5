package model_test

import (
	"errors"
	"testing"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/model"
)

func explore(t *testing.T, cfg model.Config) (*model.Model, model.Result) {
	t.Helper()
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, m.Explore()
}

// The correct protocol under the correct gate satisfies every invariant in
// every reachable state (spec 000 §Mechanized verification, Pods = 3,
// MaxGen = 4). The counts are pinned so an encoding change is noticed; the
// package comment says why they differ from TLC's 12,636 / 3,637.
func TestCorrectModelHoldsEveryInvariant(t *testing.T) {
	m, r := explore(t, model.Config{})
	for _, v := range r.Violations {
		t.Errorf("%s violated:\n%s", v.Invariant, m.FormatTrace(v.Trace))
	}
	if r.Generated != 17494 || r.Distinct != 5837 {
		t.Errorf("explored %d generated / %d distinct, want 17494 / 5837", r.Generated, r.Distinct)
	}
	// The migration is complete somewhere: every pod on C behind the one-way door.
	complete := false
	for _, s := range m.Reachable().States {
		if s.Gate.Mode == gate.Enabled && s.Pods[0] == fencing.C && s.Pods[1] == fencing.C && s.Pods[2] == fencing.C {
			complete = true
			break
		}
	}
	if !complete {
		t.Error("no reachable state has the migration complete (enabled, fleet on C): the model is vacuous")
	}
}

// Each of the spec's nine mutants is killed by the invariant the spec's
// table names (fencing.MigrationMutant.Trips), with a shortest
// counterexample that replays step by step through the model.
func TestEveryMutantKilledByThePredictedInvariant(t *testing.T) {
	wantLen := map[fencing.MigrationMutant]int{
		fencing.M1: 8, fencing.M2: 8, fencing.M3: 9, fencing.M4: 12, fencing.M5: 9,
		fencing.M6: 17, fencing.M7: 17, fencing.M8: 16, fencing.M9: 1,
	}
	for _, mu := range fencing.MigrationMutants {
		t.Run(string(mu), func(t *testing.T) {
			m, r := explore(t, model.Config{Mutant: mu})
			v, ok := r.Violated(mu.Trips())
			if !ok {
				t.Fatalf("%s survived %s (violations: %v)", mu, mu.Trips(), r.Violations)
			}
			if v.Trace.Len() != wantLen[mu] {
				t.Errorf("counterexample has %d steps, want %d:\n%s", v.Trace.Len(), wantLen[mu], m.FormatTrace(v.Trace))
			}
			s := v.Trace.Init
			for i, st := range v.Trace.Steps {
				next, _, ok := m.Apply(s, st.Action)
				if !ok || next != st.State {
					t.Fatalf("step %d %s does not replay", i+1, st.Action)
				}
				s = next
			}
			for _, inv := range model.Invariants {
				if inv.Name == mu.Trips() && inv.Holds(m, s) {
					t.Fatalf("the counterexample's last state satisfies %s", inv.Name)
				}
			}
		})
	}
}

// The model asks impl/gate, not a copy of its rules: at Init the gate
// refuses the C-gate, rollback and the mode door, and allows advance to A.
func TestGateDecisionsAreImplGates(t *testing.T) {
	m, err := model.New(model.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	for _, k := range []model.ActionKind{model.Rollback, model.Backfill, model.ReverseMerge, model.EnterCompatible, model.Enable, model.RevertMode} {
		if _, _, ok := m.Apply(s, model.Action{Kind: k}); ok {
			t.Errorf("%s allowed at Init", k)
		}
	}
	next, _, ok := m.Apply(s, model.Action{Kind: model.Advance})
	if !ok || next.Gate.Target != fencing.A {
		t.Fatalf("advance at Init: ok=%v target=%s", ok, next.Gate.Target)
	}
	// with a pod left on O, the gate refuses B (rule 2).
	up, _, _ := m.Apply(next, model.Action{Kind: model.Upgrade, Pod: 1})
	if _, _, ok := m.Apply(up, model.Action{Kind: model.Advance}); ok {
		t.Error("advance to B allowed with pods still on O")
	}
}

// Acquire mirrors the Lua scripts: a held lease is reported, not replaced;
// A writes the old keyspace with max(old,new)+1.
func TestAcquireMirrorsScripts(t *testing.T) {
	m, _ := model.New(model.Config{})
	s := m.Init()
	s, eff, ok := m.Apply(s, model.Action{Kind: model.Acquire, Pod: 1})
	if !ok || !eff.Acquired || eff.Gen != 1 || s.Old != (model.Lease{Owner: 1, Gen: 1}) || s.OldCtr != 1 {
		t.Fatalf("O acquire: %+v %+v", eff, s.Keyspace())
	}
	held, eff, ok := m.Apply(s, model.Action{Kind: model.Acquire, Pod: 2})
	if !ok || !eff.Held || eff.Gen != 1 || held != s {
		t.Fatalf("held acquire: %+v", eff)
	}
	s.Pods[1], s.Gate.Target, s.NewCtr, s.Old = fencing.A, fencing.A, 3, model.Lease{}
	s, eff, _ = m.Apply(s, model.Action{Kind: model.Acquire, Pod: 2})
	if eff.Gen != 4 || s.Old != (model.Lease{Owner: 2, Gen: 4}) || s.OldCtr != 4 || s.NewCtr != 3 {
		t.Fatalf("A acquire: %+v %s", eff, s.Keyspace())
	}
	s, _, _ = m.Apply(s, model.Action{Kind: model.ExpireOld})
	if _, _, ok := m.Apply(s, model.Action{Kind: model.Acquire, Pod: 2}); ok {
		t.Fatal("acquire of generation 5 enabled with MaxGen 4")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []model.Config{{Pods: -1}, {Pods: model.MaxPods + 1}, {MaxGen: -2}, {Mutant: "M10"}} {
		if _, err := model.New(cfg); !errors.Is(err, model.ErrConfig) {
			t.Errorf("%+v: err %v", cfg, err)
		}
	}
}
