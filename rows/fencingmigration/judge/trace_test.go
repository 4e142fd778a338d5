package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestTraceConformance(t *testing.T) {
	d := &TraceDivergence{Steps: 3, What: "after acquire the model has g=2, the node g=1", Trace: "1. init\n2. acquire\n3. acquire\ndiverged: …\n"}
	r := judged(t, TraceConformance, TraceReplay{Steps: 900, Transitions: 40, MinSteps: 500, Divergence: d})
	if r.Status != check.Fail || r.Message != "the real keyspace diverged from the model after 3 steps: "+d.What || r.Counterexample != d.Trace {
		t.Fatalf("a divergence: %s %q", r.Status, r.Message)
	}
	if r := traceConformance(TraceReplay{Steps: 100, MinSteps: 500}); r.Status != check.Unknown {
		t.Fatalf("too few steps: %s", r.Status)
	}
	if r := traceConformance(TraceReplay{Steps: 900, Transitions: 40, MinSteps: 500}); r.Status != check.Pass {
		t.Fatalf("agreement: %s", r.Status)
	}
}

func TestScriptsDiverge(t *testing.T) {
	d := &TraceDivergence{Steps: 4, What: "renew replied ok"}
	r := judged(t, ScriptsDiverge, ScriptReplay{Scripts: "M3", Divergence: d, Walked: true})
	if r.Status != check.Fail || r.Message != "diverged after 4 steps: renew replied ok; the random walks did not reach it" {
		t.Fatalf("a caught mutant: %s %q", r.Status, r.Message)
	}
	if r := scriptsDiverge(ScriptReplay{Scripts: "release-unguarded C"}); r.Status != check.Pass || r.Message != "the correct model and the release-unguarded C scripts agree on every transition" {
		t.Fatalf("an agreeing mutant is not caught: %s %q", r.Status, r.Message)
	}
	// Premise: a call that failed is no divergence, so no catch.
	if r := scriptsDiverge(ScriptReplay{Scripts: "M3", Divergence: &TraceDivergence{Steps: 2, What: "acquire: i/o timeout", Errored: true}}); r.Status != check.Unknown {
		t.Fatalf("an erroring mutant is not caught: %s %q", r.Status, r.Message)
	}
}

func TestReadConformance(t *testing.T) {
	ok := ReadReplay{Calls: 4000, States: 120, Invariant: "ReadSide"}
	if r := judged(t, ReadConformance, ok); r.Status != check.Pass {
		t.Fatalf("agreement: %s %q", r.Status, r.Message)
	}
	errored := ok
	errored.Divergence = &TraceDivergence{What: "lookup: i/o timeout", Errored: true}
	if r := readConformance(errored); r.Status != check.Unknown {
		t.Fatalf("an errored call is no divergence: %s", r.Status)
	}
	// A mutant whose own model rule disagrees with its scripts breaks the
	// one-switch premise of its control: the row fails.
	oneSwitch := ok
	oneSwitch.Mutants = []ReadMutantReplay{{Mutant: "R1", Same: &TraceDivergence{What: "validate replied true"}}}
	if r := readConformance(oneSwitch); r.Status != check.Fail || r.Message != "the R1 model rule and the R1 scripts disagree: validate replied true" {
		t.Fatalf("a mutant rule disagreeing with its scripts: %s %q", r.Status, r.Message)
	}
	broken := ok
	broken.Broken = &TraceDivergence{What: "pod 2 trusts a stale lease", Trace: "…"}
	if r := readConformance(broken); r.Status != check.Fail || r.Message != "ReadSide broken: pod 2 trusts a stale lease" {
		t.Fatalf("a broken invariant: %s %q", r.Status, r.Message)
	}
	if r := readScriptsDiverge(ReadMutantReplay{Mutant: "R1", Divergence: &TraceDivergence{Errored: true, What: "x"}}, "ReadSide"); r.Status != check.Unknown {
		t.Fatalf("an erroring mutant is not caught: %s", r.Status)
	}
	m := ReadMutantReplay{Mutant: "R1", Divergence: &TraceDivergence{Steps: 2, What: "lookup answered g=1"}, SameCalls: 300, Killed: &TraceDivergence{Steps: 5, What: "stale"}}
	r := judged(t, ReadScriptsDiverge, ReadScriptsDivergeInput{Mutant: m, Invariant: "ReadSide"})
	if r.Status != check.Fail || r.Message != "diverged: lookup answered g=1 (shortest trace to that keyspace: 2 steps); the R1 model rule = the R1 scripts over 300 calls (agree); in the model ReadSide kills it after 5 steps: stale" {
		t.Fatalf("a caught read mutant: %s %q", r.Status, r.Message)
	}
}
