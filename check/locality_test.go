package check_test

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/validate"
)

// The checkers must fail on a bad history, not only pass on a good one.
func TestCrossSlotFree(t *testing.T) {
	good := check.LocalityHistory{Calls: 40, MultiKey: 20, Scripts: 20, Errors: map[string]int{}}
	if r := check.CrossSlotFree(good, 10); r.Status != check.Pass {
		t.Fatalf("clean history: %s %s", r.Status, r.Message)
	}
	thin := check.LocalityHistory{Calls: 40, MultiKey: 3, Errors: map[string]int{}}
	if r := check.CrossSlotFree(thin, 10); r.Status != check.Unknown {
		t.Fatalf("too few multi-key calls must be unknown, got %s", r.Status)
	}
	bad := check.LocalityHistory{Calls: 40, MultiKey: 2, ViolationCount: 1, Errors: map[string]int{},
		Violations: []check.LocalityCall{{Command: "MGET", Keys: []string{"a", "b"}, Slots: []int{15495, 3300}, Violation: check.ViolationCrossSlot, Site: "impl/presence/mget.go:84"}}}
	r := check.CrossSlotFree(bad, 10)
	if r.Status != check.Fail || r.Counterexample == "" {
		t.Fatalf("a cross-slot call must fail with a counterexample (even below the traffic floor), got %s %q", r.Status, r.Counterexample)
	}
	t.Log(r.Message, "\n", r.Counterexample)
}

func TestStaticClean(t *testing.T) {
	if r := check.StaticClean(validate.Result{Files: 30}, 10); r.Status != check.Pass {
		t.Fatalf("clean: %s", r.Status)
	}
	if r := check.StaticClean(validate.Result{Files: 2}, 10); r.Status != check.Unknown {
		t.Fatalf("two files prove nothing: %s", r.Status)
	}
	bad := validate.Result{Files: 30, Findings: []validate.Finding{{File: "x.go", Line: 3, Rule: validate.RuleScriptKeys, Message: "m"}}}
	if r := check.StaticClean(bad, 10); r.Status != check.Fail || r.Counterexample == "" {
		t.Fatalf("a finding must fail: %s", r.Status)
	}
}

// The shipped corpus, folded, fails StaticClean and every fixture is flagged.
func TestCorpusResult(t *testing.T) {
	entries, err := validate.Corpus("../validate/testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	res, flagged, missed := check.CorpusResult(entries)
	if flagged != len(entries) || len(missed) != 0 {
		t.Fatalf("%d/%d flagged: %v", flagged, len(entries), missed)
	}
	if r := check.StaticClean(res, 1); r.Status != check.Fail {
		t.Fatalf("corpus must fail the static checker: %s", r.Status)
	}
}
