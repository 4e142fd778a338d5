package judge

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// Histories written before these checkers were defined here stored each
// call under the reflective checker's Go function name, with one JSON
// input per argument. Every alias must replay such a call to exactly the
// result the checker gives on those arguments.
func TestStoredReflectiveCallsReplay(t *testing.T) {
	ttl, slack := 100*time.Millisecond, 5*time.Millisecond
	samples := []history.KeyspaceSample{{At: ms(0), OldLeases: 5, NewLeases: 2, Pods: map[string]int{"B": 3}}, {At: ms(10), OldLeases: 0, NewLeases: 0, Pods: map[string]int{"B": 2, "C": 1}}}
	ops := []history.MigrationOp{
		mop(history.OpAcquire, "a0", 1, true, 0, 2),
		mop(history.OpRenew, "a0", 1, true, 100, 101),
		mop(history.OpRenew, "a0", 1, true, 300, 301),
	}
	ops[2].Phase = "B"
	st := []history.Straggler{{Pod: "a0", Phase: "A", Left: ms(50), Gone: ms(400), Listed: true, Serving: true}}
	attempt := DrainAttempt{Step: "advance to C", Asked: ms(0), Ended: ms(8), Stuck: true, Err: "drain stuck"}
	div := &TraceDivergence{Steps: 3, What: "renew replied ok", Trace: "1. init\n"}
	mutant := ReadMutantReplay{Mutant: "R1", Divergence: div, SameCalls: 10}
	for _, c := range []struct {
		alias  string
		args   []any
		direct check.Result
	}{
		{"OldKeyspaceDrained", []any{samples, ms(0), ms(10)}, oldKeyspaceDrained(samples, ms(0), ms(10))},
		{"NewKeyspaceDrained", []any{samples, ms(0), ms(10)}, newKeyspaceDrained(samples, ms(0), ms(10))},
		{"DrainBounded", []any{attempt, samples, "C", ms(10), ms(1), 1}, drainBounded(attempt, samples, "C", ms(10), ms(1), 1)},
		{"GenerationsCarried", []any{ops, ms(0), ms(50), "A"}, generationsCarried(ops, ms(0), ms(50), "A")},
		{"ReleaseHandovers", []any{[]Handover{goodHandover("A", "B", true, 0)}, []string{"A→B"}, 1}, releaseHandovers([]Handover{goodHandover("A", "B", true, 0)}, []string{"A→B"}, 1)},
		{"PodValidates", []any{ops, ttl, slack, 1}, podValidates(ops, ttl, slack, 1)},
		{"PodValidatesOn", []any{"huddle", ops, ttl, slack, 1}, podValidatesOn("huddle", ops, ttl, slack, 1)},
		{"StragglerIssuesCarried", []any{ops, st, ms(200)}, stragglerIssuesCarried(ops, st, ms(200))},
		{"PhasesAdjacent", []any{samples, 1}, phasesAdjacent(samples, 1)},
		{"StragglersDrained", []any{ops, st, ms(200), ms(500), ttl, slack}, stragglersDrained(ops, st, ms(200), ms(500), ttl, slack)},
		{"GateModeDoors", []any{[]GateStep{{Step: "enable", Allowed: true, ModeFrom: "enabled", ModeTo: "disabled"}}}, gateModeDoors([]GateStep{{Step: "enable", Allowed: true, ModeFrom: "enabled", ModeTo: "disabled"}})},
		{"GateDoors", []any{[]DoorStep{{Action: "Enable", From: "compatible", To: "enabled", FleetC: true}}}, gateDoors([]DoorStep{{Action: "Enable", From: "compatible", To: "enabled", FleetC: true}})},
		{"TraceConformance", []any{TraceReplay{Steps: 9, MinSteps: 1, Divergence: div}}, traceConformance(TraceReplay{Steps: 9, MinSteps: 1, Divergence: div})},
		{"ScriptsDiverge", []any{ScriptReplay{Scripts: "M3", Divergence: div}}, scriptsDiverge(ScriptReplay{Scripts: "M3", Divergence: div})},
		{"ReadConformance", []any{ReadReplay{Calls: 2000, Invariant: "ReadSide", Mutants: []ReadMutantReplay{mutant}}}, readConformance(ReadReplay{Calls: 2000, Invariant: "ReadSide", Mutants: []ReadMutantReplay{mutant}})},
		{"ReadScriptsDiverge", []any{mutant, "ReadSide"}, readScriptsDiverge(mutant, "ReadSide")},
	} {
		call := history.Call{Checker: c.alias}
		for _, a := range c.args {
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			call.Input = append(call.Input, b)
		}
		got, err := check.Replay(call)
		if err != nil {
			t.Errorf("%s: %v", c.alias, err)
			continue
		}
		if got.Checker != c.direct.Checker || got.Status != c.direct.Status || got.Message != c.direct.Message || got.Counterexample != c.direct.Counterexample {
			t.Errorf("%s: stored call replays to %s %q, the checker gives %s %q", c.alias, got.Status, got.Message, c.direct.Status, c.direct.Message)
		}
		if got.Call == nil || got.Call.Checker != c.alias {
			t.Errorf("%s: the replay does not carry the stored call", c.alias)
		}
	}
}
