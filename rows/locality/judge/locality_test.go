package judge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/validate"
)

// judged is checktest.Judged: c on in, its stored call replayed.
func judged[In any](t *testing.T, c check.Checker[In], in In) check.Result {
	t.Helper()
	return checktest.Judged(t, c, in)
}

var crossSlotCall = check.LocalityCall{Command: "MGET", Keys: []string{"a", "b"}, Slots: []int{15495, 3300},
	Violation: check.ViolationCrossSlot, Site: "impl/presence/mget.go:84"}

// The checkers must fail on a bad history, not only pass on a good one.
func TestCrossSlotFree(t *testing.T) {
	good := check.LocalityHistory{Calls: 40, MultiKey: 20, Scripts: 20, Errors: map[string]int{}}
	if r := crossSlotFree(good, 10); r.Status != check.Pass {
		t.Fatalf("clean history: %s %s", r.Status, r.Message)
	}
	thin := check.LocalityHistory{Calls: 40, MultiKey: 3, Errors: map[string]int{}}
	if r := crossSlotFree(thin, 10); r.Status != check.Unknown {
		t.Fatalf("too few multi-key calls must be unknown, got %s", r.Status)
	}
	bad := check.LocalityHistory{Calls: 40, MultiKey: 2, ViolationCount: 1, Errors: map[string]int{},
		Violations: []check.LocalityCall{crossSlotCall}}
	r := judged(t, CrossSlotFree, TwinRun{History: bad, MinMultiKey: 10})
	if r.Status != check.Fail || r.Counterexample == "" {
		t.Fatalf("a cross-slot call must fail with a counterexample (even below the traffic floor), got %s %q", r.Status, r.Counterexample)
	}
}

func TestStaticClean(t *testing.T) {
	if r := staticClean(validate.Result{Files: 30}, 10); r.Status != check.Pass {
		t.Fatalf("clean: %s", r.Status)
	}
	if r := staticClean(validate.Result{Files: 2}, 10); r.Status != check.Unknown {
		t.Fatalf("two files prove nothing: %s", r.Status)
	}
	bad := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleScriptKeys, Message: "m"}}}
	if r := judged(t, StaticClean, StaticRun{Result: bad, MinFiles: 10}); r.Status != check.Fail || r.Counterexample == "" {
		t.Fatalf("a finding must fail: %s", r.Status)
	}
}

// The shipped corpus, folded, fails staticClean and every fixture is flagged.
func TestCorpusResult(t *testing.T) {
	entries, err := validate.Corpus("../../../validate/testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	res, flagged, missed := CorpusResult(entries)
	if flagged != len(entries) || len(missed) != 0 {
		t.Fatalf("%d/%d flagged: %v", flagged, len(entries), missed)
	}
	if r := staticClean(res, 1); r.Status != check.Fail {
		t.Fatalf("corpus must fail the static checker: %s", r.Status)
	}
}

func TestWithinBudget(t *testing.T) {
	r := judged(t, WithinBudget, Timing{What: "the whole repository", Took: 6 * time.Second, Budget: 5 * time.Second})
	if r.Status != check.Fail || r.Message != "the whole repository took 6s, over the 5 s budget" {
		t.Fatalf("over budget: %s %q", r.Status, r.Message)
	}
	if r := withinBudget("the whole repository", 5*time.Second, 5*time.Second); r.Status != check.Pass {
		t.Fatalf("at the budget: %s", r.Status)
	}
	// Premise: a zero duration timed nothing.
	if r := withinBudget("the whole repository", 0, 5*time.Second); r.Status != check.Unknown {
		t.Fatalf("nothing timed: %s", r.Status)
	}
}

func TestHandTableAgrees(t *testing.T) {
	ok := TableAgreement{Source: "valkey 8.0.1 COMMAND", ServerCommands: 240, HandCommands: 60}
	if r := judged(t, HandTableAgrees, ok); r.Status != check.Pass || r.Message != "hand fallback (60 commands) agrees with valkey 8.0.1 COMMAND (240 commands)" {
		t.Fatalf("agreeing tables: %s %q", r.Status, r.Message)
	}
	ok.Disagreements = []string{"MSET: hand step 1, server step 2"}
	if r := handTableAgrees(ok); r.Status != check.Fail || r.Counterexample != ok.Disagreements[0] {
		t.Fatalf("a disagreement must fail with it as counterexample: %s %q", r.Status, r.Counterexample)
	}
	// Premise: an empty hand table agrees with anything.
	if r := handTableAgrees(TableAgreement{Source: "valkey 8.0.1 COMMAND", ServerCommands: 240}); r.Status != check.Unknown {
		t.Fatalf("an empty hand table compared nothing: %s", r.Status)
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
	r := judged(t, BadCorpus, all)
	if r.Status != check.Fail || r.Message != "2/2 fixtures flagged with their named rules (2 findings)" {
		t.Fatalf("every fixture flagged: %s %q", r.Status, r.Message)
	}
	// One fixture trips another rule: the validator failed, but not for
	// the reasons the corpus names — exercised, not caught.
	mislabelled := append([]validate.CorpusEntry{}, all...)
	mislabelled[1].Got = []validate.Finding{f(validate.RuleKeyLiteral)}
	if r := badCorpus(mislabelled); r.Status != check.Pass || !strings.Contains(r.Message, "; missed: b.go") {
		t.Fatalf("a missed fixture must not be caught: %s %q", r.Status, r.Message)
	}
	if r := badCorpus(nil); r.Status != check.Unknown {
		t.Fatalf("an empty corpus proves nothing: %s", r.Status)
	}
}

func TestDeclarationsNeeded(t *testing.T) {
	bare := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleRuntimeKeys, Message: "m"}}}
	r := judged(t, DeclarationsNeeded, StrippedRun{Bare: bare, Stripped: 12})
	if r.Status != check.Fail || !strings.HasPrefix(r.Message, "12 declarations stripped: 1 findings, 1 of them go/runtime-keys | ") {
		t.Fatalf("stripped declarations: %s %q", r.Status, r.Message)
	}
	other := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleScriptKeys, Message: "m"}}}
	if r := declarationsNeeded(other, 12); r.Status != check.Pass {
		t.Fatalf("a failure without a runtime-keys finding is not the reason modelled: %s", r.Status)
	}
	// Premises: a declaration was stripped, and the stripped tree examined.
	if r := declarationsNeeded(bare, 0); r.Status != check.Unknown {
		t.Fatalf("nothing stripped: %s", r.Status)
	}
	if r := declarationsNeeded(validate.Result{}, 12); r.Status != check.Unknown {
		t.Fatalf("no file examined: %s", r.Status)
	}
}

func TestWorkloadsExercised(t *testing.T) {
	ws := []Workload{{"fencing-scripts", 40}, {"guards", 0}, {"presence-mget", 0}}
	if r := judged(t, WorkloadsExercised, ws); r.Status != check.Unknown || !strings.HasSuffix(r.Message, "from: guards, presence-mget") {
		t.Fatalf("idle workloads: %s %q", r.Status, r.Message)
	}
	if r := workloadsExercised(ws[:1]); r.Status != check.Pass {
		t.Fatalf("all exercised: %s", r.Status)
	}
	if r := workloadsExercised(nil); r.Status != check.Unknown {
		t.Fatalf("no workload: %s", r.Status)
	}
}

// Histories written before the checkers were defined here stored the
// reflective calls under the old Go names, one input per argument: each
// replays through its alias to what the typed checker gives.
func TestStoredCallsReplayThroughAliases(t *testing.T) {
	raw := func(v ...any) []json.RawMessage { return checktest.Inputs(t, v...) }
	bad := check.LocalityHistory{Calls: 40, MultiKey: 2, ViolationCount: 1, Errors: map[string]int{}, Violations: []check.LocalityCall{crossSlotCall}}
	finding := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleRuntimeKeys, Message: "m"}}}
	corpus := []validate.CorpusEntry{{File: "a.lua", Want: []validate.Rule{validate.RuleKeyFromARGV},
		Got: []validate.Finding{{File: "a.lua", Line: 1, Rule: validate.RuleKeyFromARGV, Message: "m"}}}}
	agreement := TableAgreement{Source: "server (valkey 8.0.1)", ServerCommands: 241, HandCommands: 114, Disagreements: []string{"MSET: hand keys 1..-1 step 1, server keys 1..-1 step 2"}}
	for _, c := range []struct {
		old   string
		input []json.RawMessage
		want  check.Result
	}{
		{"CrossSlotFree", raw(bad, 2000), CrossSlotFree.Judge(TwinRun{History: bad, MinMultiKey: 2000})},
		{"StaticClean", raw(finding, 20), StaticClean.Judge(StaticRun{Result: finding, MinFiles: 20})},
		{"DeclarationsNeeded", raw(finding, 12), DeclarationsNeeded.Judge(StrippedRun{Bare: finding, Stripped: 12})},
		{"WithinBudget", raw("the whole repository", 6*time.Second, 5*time.Second), WithinBudget.Judge(Timing{What: "the whole repository", Took: 6 * time.Second, Budget: 5 * time.Second})},
		{"HandTableAgrees", raw(agreement), HandTableAgrees.Judge(agreement)},
		{"BadCorpus", raw(corpus), BadCorpus.Judge(corpus)},
		{"WorkloadsExercised", raw([]Workload{{"guards", 0}}), WorkloadsExercised.Judge([]Workload{{"guards", 0}})},
	} {
		checktest.ReplaysTo(t, history.Call{Checker: c.old, Input: c.input}, c.want)
	}
}
