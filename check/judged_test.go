package check

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/validate"
)

// The compositions issue 16 moved out of the suites into checkers: each must
// reach the verdict the suite reached by hand, fail on a bad input, and
// replay through Judge to the identical result.

func judgedReplays(t *testing.T, fn any, args ...any) Result {
	t.Helper()
	r := Judge(fn, args...)
	if r.Call == nil || !r.Replayable() {
		t.Fatalf("%s: no replayable call (is it listed in replayable, do its inputs survive JSON?)", funcName(reflect.ValueOf(fn)))
	}
	again, err := Replay(*r.Call)
	if err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("replay differs (%v):\n%+v\n%+v", err, again, r)
	}
	return r
}

func TestLoudRefusal(t *testing.T) {
	refused := []history.OpOutcome{{Op: "eval", ErrKind: "CROSSSLOT", Err: "CROSSSLOT Keys in request don't hash to the same slot"}}
	r := judgedReplays(t, LoudRefusal, refused, "CROSSSLOT")
	if r.Status != Fail || r.Message != "all 1 operations refused with CROSSSLOT" {
		t.Fatalf("refused with CROSSSLOT: %s %q", r.Status, r.Message)
	}
	// Accepted silently (the hazard): the premise fails, never caught.
	silent := []history.OpOutcome{{Op: "eval"}}
	if r := LoudRefusal(silent, "CROSSSLOT"); r.Status != Unknown || !strings.HasPrefix(r.Message, "not refused with CROSSSLOT: ") {
		t.Fatalf("silent success: %s %q", r.Status, r.Message)
	}
	// Refused for another reason: not the refusal the variant models.
	timeout := []history.OpOutcome{{Op: "eval", ErrKind: "network", Err: "i/o timeout"}}
	if r := LoudRefusal(timeout, "CROSSSLOT"); r.Status != Unknown {
		t.Fatalf("a timeout counted as a loud refusal: %s", r.Status)
	}
	if r := LoudRefusal(nil, "CROSSSLOT"); r.Status != Unknown {
		t.Fatalf("no operations: %s", r.Status)
	}
}

func TestHappened(t *testing.T) {
	if r := judgedReplays(t, Happened, "noscript-fallback", 0, "never"); r.Status != Unknown || r.Message != "never" {
		t.Fatalf("none seen: %s %q", r.Status, r.Message)
	}
	if r := Happened("noscript-fallback", 3, "never"); r.Status != Pass {
		t.Fatalf("seen: %s", r.Status)
	}
}

func TestWithinBudget(t *testing.T) {
	r := judgedReplays(t, WithinBudget, "the whole repository", 6*time.Second, 5*time.Second)
	if r.Status != Fail || r.Message != "the whole repository took 6s, over the 5 s budget" {
		t.Fatalf("over budget: %s %q", r.Status, r.Message)
	}
	if r := WithinBudget("the whole repository", 5*time.Second, 5*time.Second); r.Status != Pass {
		t.Fatalf("at the budget: %s", r.Status)
	}
}

func TestHandTableAgrees(t *testing.T) {
	ok := TableAgreement{Source: "valkey 8.0.1 COMMAND", ServerCommands: 240, HandCommands: 60}
	if r := judgedReplays(t, HandTableAgrees, ok); r.Status != Pass || r.Message != "hand fallback (60 commands) agrees with valkey 8.0.1 COMMAND (240 commands)" {
		t.Fatalf("agreeing tables: %s %q", r.Status, r.Message)
	}
	ok.Disagreements = []string{"MSET: hand step 1, server step 2"}
	if r := HandTableAgrees(ok); r.Status != Fail || r.Counterexample != ok.Disagreements[0] {
		t.Fatalf("a disagreement must fail with it as counterexample: %s %q", r.Status, r.Counterexample)
	}
}

func TestBadCorpus(t *testing.T) {
	f := func(rule validate.Rule) validate.Finding {
		return validate.Finding{File: "bad.lua", Line: 1, Rule: rule, Message: "m"}
	}
	all := []validate.CorpusEntry{
		{File: "a.lua", Want: []validate.Rule{validate.RuleKeyFromARGV}, Got: []validate.Finding{f(validate.RuleKeyFromARGV)}},
		{File: "b.go", Want: []validate.Rule{validate.RuleMultiKeyCmd}, Got: []validate.Finding{f(validate.RuleMultiKeyCmd)}},
	}
	r := judgedReplays(t, BadCorpus, all)
	if r.Status != Fail || r.Message != "2/2 fixtures flagged with their named rules (2 findings)" {
		t.Fatalf("every fixture flagged: %s %q", r.Status, r.Message)
	}
	// One fixture trips another rule: the validator failed, but not for
	// the reasons the corpus names — exercised, not caught.
	mislabelled := append([]validate.CorpusEntry{}, all...)
	mislabelled[1].Got = []validate.Finding{f(validate.RuleKeyLiteral)}
	if r := BadCorpus(mislabelled); r.Status != Pass || !strings.Contains(r.Message, "; missed: b.go") {
		t.Fatalf("a missed fixture must not be caught: %s %q", r.Status, r.Message)
	}
	if r := BadCorpus(nil); r.Status != Unknown {
		t.Fatalf("an empty corpus proves nothing: %s", r.Status)
	}
}

func TestDeclarationsNeeded(t *testing.T) {
	bare := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleRuntimeKeys, Message: "m"}}}
	r := judgedReplays(t, DeclarationsNeeded, bare, 12)
	if r.Status != Fail || !strings.HasPrefix(r.Message, "12 declarations stripped: 1 findings, 1 of them go/runtime-keys | ") {
		t.Fatalf("stripped declarations: %s %q", r.Status, r.Message)
	}
	other := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleScriptKeys, Message: "m"}}}
	if r := DeclarationsNeeded(other, 12); r.Status != Pass {
		t.Fatalf("a failure without a runtime-keys finding is not the reason modelled: %s", r.Status)
	}
}

func TestWorkloadsExercised(t *testing.T) {
	ws := []LocalityWorkload{{"fencing-scripts", 40}, {"guards", 0}, {"presence-mget", 0}}
	if r := judgedReplays(t, WorkloadsExercised, ws); r.Status != Unknown || !strings.HasSuffix(r.Message, "from: guards, presence-mget") {
		t.Fatalf("idle workloads: %s %q", r.Status, r.Message)
	}
	if r := WorkloadsExercised(ws[:1]); r.Status != Pass {
		t.Fatalf("all exercised: %s", r.Status)
	}
}

func TestPodValidatesOn(t *testing.T) {
	r := judgedReplays(t, PodValidatesOn, "huddle", []history.MigrationOp(nil), time.Second, 100*time.Millisecond, 5)
	want := PodValidates(nil, time.Second, 100*time.Millisecond, 5)
	if r.Status != want.Status || r.Message != "huddle lane: "+want.Message {
		t.Fatalf("lane prefix: %s %q, want %s %q", r.Status, r.Message, want.Status, "huddle lane: "+want.Message)
	}
}

func TestTelemetryPhaseC(t *testing.T) {
	atC := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{{Name: "buzz_fencing_phase", Value: 3}}}
	if r := judgedReplays(t, TelemetryPhaseC, atC); r.Status != Pass || r.Message != "buzz_fencing_phase = 3: phase C" {
		t.Fatalf("phase C: %s %q", r.Status, r.Message)
	}
	stale := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{{Name: "buzz_fencing_phase", Value: 2}}}
	if r := TelemetryPhaseC(stale); r.Status != Fail || r.Message != "buzz_fencing_phase = 2, the pod runs phase C" {
		t.Fatalf("stale phase: %s %q", r.Status, r.Message)
	}
	if r := TelemetryPhaseC(history.TelemetryScrape{Status: 200}); r.Status != Fail {
		t.Fatalf("no gauge: %s", r.Status)
	}
}

func TestReplyShapesLoud(t *testing.T) {
	loud := []history.ShapeRead{{Op: "ZSCORE", Key: "k", Shape: "string", Want: "1.5", DecodeErr: "not a float64"}}
	if r := judgedReplays(t, ReplyShapesLoud, loud, 2, 1); r.Status != Fail {
		t.Fatalf("a loud decode error must fail: %s %q", r.Status, r.Message)
	}
	silent := []history.ShapeRead{{Op: "ZSCORE", Key: "k", Shape: "string", Want: "1.5", Got: "0"}}
	if plain := ReplyShapes(silent, 2, 1); plain.Status != Fail {
		t.Fatalf("premise: a silently wrong value fails ReplyShapes, got %s", plain.Status)
	}
	if r := ReplyShapesLoud(silent, 2, 1); r.Status != Pass {
		t.Fatalf("a silently wrong value is not the loud failure modelled: %s", r.Status)
	}
}

func TestScanSubset(t *testing.T) {
	complete := regHistory(correct)
	subset := regHistory(func(at time.Duration) []history.RegistryEntry { return correct(at)[:1] })
	if RegistryBounded(subset, regBounds).Status != Fail || RegistryBounded(complete, regBounds).Status != Pass {
		t.Fatal("premise: the subset history fails RegistryBounded, the complete one passes")
	}
	r := judgedReplays(t, ScanSubset, subset, complete, regBounds, "cluster:3x1")
	if r.Status != Fail || !strings.HasPrefix(r.Message, "on cluster:3x1: ") || !strings.Contains(r.Message, " | on standalone: ") {
		t.Fatalf("a silent subset on the cluster: %s %q", r.Status, r.Message)
	}
	// Incomplete on the standalone node too: not about the cluster.
	if r := ScanSubset(subset, subset, regBounds, "cluster:3x1"); r.Status != Unknown {
		t.Fatalf("incomplete everywhere: %s", r.Status)
	}
	// A scan that errors on the cluster is loud, not the silent subset.
	loud := regHistory(func(at time.Duration) []history.RegistryEntry { return correct(at)[:1] })
	for i := range loud.Ops {
		if loud.Ops[i].Kind == history.RegDiscover {
			loud.Ops[i].ErrKind, loud.Ops[i].Err = "network", "i/o timeout"
			break
		}
	}
	if r := ScanSubset(loud, complete, regBounds, "cluster:3x1"); r.Status != Unknown {
		t.Fatalf("an erroring scan: %s", r.Status)
	}
}

func TestTraceConformance(t *testing.T) {
	d := &TraceDivergence{Steps: 3, What: "after acquire the model has g=2, the node g=1", Trace: "1. init\n2. acquire\n3. acquire\ndiverged: …\n"}
	r := judgedReplays(t, TraceConformance, TraceReplay{Steps: 900, Transitions: 40, MinSteps: 500, Divergence: d})
	if r.Status != Fail || r.Message != "the real keyspace diverged from the model after 3 steps: "+d.What || r.Counterexample != d.Trace {
		t.Fatalf("a divergence: %s %q", r.Status, r.Message)
	}
	if r := TraceConformance(TraceReplay{Steps: 100, MinSteps: 500}); r.Status != Unknown {
		t.Fatalf("too few steps: %s", r.Status)
	}
	if r := TraceConformance(TraceReplay{Steps: 900, Transitions: 40, MinSteps: 500}); r.Status != Pass {
		t.Fatalf("agreement: %s", r.Status)
	}
}

func TestScriptsDiverge(t *testing.T) {
	d := &TraceDivergence{Steps: 4, What: "renew replied ok"}
	r := judgedReplays(t, ScriptsDiverge, ScriptReplay{Scripts: "M3", Divergence: d, Walked: true})
	if r.Status != Fail || r.Message != "diverged after 4 steps: renew replied ok; the random walks did not reach it" {
		t.Fatalf("a caught mutant: %s %q", r.Status, r.Message)
	}
	if r := ScriptsDiverge(ScriptReplay{Scripts: "release-unguarded C"}); r.Status != Pass || r.Message != "the correct model and the release-unguarded C scripts agree on every transition" {
		t.Fatalf("an agreeing mutant is not caught: %s %q", r.Status, r.Message)
	}
}

func TestReadConformance(t *testing.T) {
	ok := ReadReplay{Calls: 4000, States: 120, Invariant: "ReadSide"}
	if r := judgedReplays(t, ReadConformance, ok); r.Status != Pass {
		t.Fatalf("agreement: %s %q", r.Status, r.Message)
	}
	errored := ok
	errored.Divergence = &TraceDivergence{What: "lookup: i/o timeout", Errored: true}
	if r := ReadConformance(errored); r.Status != Unknown {
		t.Fatalf("an errored call is no divergence: %s", r.Status)
	}
	// A mutant whose own model rule disagrees with its scripts breaks the
	// one-switch premise of its control: the row fails.
	oneSwitch := ok
	oneSwitch.Mutants = []ReadMutantReplay{{Mutant: "R1", Same: &TraceDivergence{What: "validate replied true"}}}
	if r := ReadConformance(oneSwitch); r.Status != Fail || r.Message != "the R1 model rule and the R1 scripts disagree: validate replied true" {
		t.Fatalf("a mutant rule disagreeing with its scripts: %s %q", r.Status, r.Message)
	}
	broken := ok
	broken.Broken = &TraceDivergence{What: "pod 2 trusts a stale lease", Trace: "…"}
	if r := ReadConformance(broken); r.Status != Fail || r.Message != "ReadSide broken: pod 2 trusts a stale lease" {
		t.Fatalf("a broken invariant: %s %q", r.Status, r.Message)
	}
	if r := ReadScriptsDiverge(ReadMutantReplay{Mutant: "R1", Divergence: &TraceDivergence{Errored: true, What: "x"}}, "ReadSide"); r.Status != Unknown {
		t.Fatalf("an erroring mutant is not caught: %s", r.Status)
	}
	m := ReadMutantReplay{Mutant: "R1", Divergence: &TraceDivergence{Steps: 2, What: "lookup answered g=1"}, SameCalls: 300, Killed: &TraceDivergence{Steps: 5, What: "stale"}}
	r := judgedReplays(t, ReadScriptsDiverge, m, "ReadSide")
	if r.Status != Fail || r.Message != "diverged: lookup answered g=1 (shortest trace to that keyspace: 2 steps); the R1 model rule = the R1 scripts over 300 calls (agree); in the model ReadSide kills it after 5 steps: stale" {
		t.Fatalf("a caught read mutant: %s %q", r.Status, r.Message)
	}
}

// The locality verdicts moved into check replay on the twin's and the
// validator's records.
func TestLocalityVerdictsReplay(t *testing.T) {
	bad := LocalityHistory{Calls: 40, MultiKey: 2, ViolationCount: 1, Errors: map[string]int{},
		Violations: []LocalityCall{{Command: "MGET", Keys: []string{"a", "b"}, Slots: []int{15495, 3300}, Violation: ViolationCrossSlot, Site: "impl/presence/mget.go:84"}}}
	if r := judgedReplays(t, CrossSlotFree, bad, 10); r.Status != Fail {
		t.Fatalf("a cross-slot call: %s", r.Status)
	}
	res := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleScriptKeys, Message: "m"}}}
	if r := judgedReplays(t, StaticClean, res, 10); r.Status != Fail {
		t.Fatalf("a finding: %s", r.Status)
	}
}
