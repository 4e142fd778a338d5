// Package oncetest runs harness.Once through a real Ginkgo run, apart from
// the harness package's own tests (Ginkgo allows one RunSpecs a process).
package oncetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
)

// How each key's run behaves the first time it is run.
const (
	kBoth        = "both"        // returns; both scenarios selected
	kOnlySecond  = "only-second" // returns; the first scenario is filtered out
	kSkipped     = "skipped"     // skips the first time, returns the second
	kFails       = "fails"       // a failed assertion
	kPanics      = "panics"      // a panic
	kUnconfirmed = "unconfirmed" // a fault that was not confirmed
	kMultiA      = "multi-a"     // returns; one scenario asks for both multi keys
	kMultiB      = "multi-b"     // returns; ... and so does the next
	unselected   = "unselected"  // the label the run filters out
)

var (
	ran    = map[string]int{} // runs per key
	states = map[string]types.SpecState{}
	fails  = map[string]string{}
	checks = map[string]report.Check{}
)

var runs = harness.NewOnce(func(ctx SpecContext, k string) string {
	ran[k]++
	switch {
	case k == kSkipped && ran[k] == 1:
		Skip("not on this topology")
	case k == kFails:
		Expect(1).To(Equal(2), "the drill broke")
	case k == kPanics:
		panic("the drill crashed")
	case k == kUnconfirmed:
		harness.MustConfirm(&fault.NotConfirmedError{Fault: "failover", Err: errors.New("p0r0 is still replica")}, 7)
	}
	return "run of " + k // each key's own result: a Get must never answer with another key's
})

// pair emits k's two columns; each judges runs.Get(k).
func pair(k string, firstLabels ...string) {
	s := func(col report.Column) harness.Scenario {
		return harness.Scenario{Name: "routing/once/" + k + "/" + string(col), Row: report.RowRouting, Column: col, Spec: "harness self-test",
			Run: func(ctx SpecContext) report.Check {
				Expect(runs.Get(ctx, k)).To(Equal("run of " + k))
				caught := harness.Variant("stand-in", "harness self-test: a variant the check caught", check.Result{Status: check.Fail})
				return report.Check{Status: report.StatusPass, Message: "judged the shared run", Controls: []report.Control{caught}}
			}}
	}
	Describe(k, func() {
		Describe("first", Label(firstLabels...), func() { harness.Emit(s(report.ColumnErrors)) })
		harness.Emit(s(report.ColumnSilentlyWrong))
	})
}

// multi emits two scenarios that each ask for both multi keys, in
// opposite orders (a scenario judging several shared runs, as
// fencing-migration's read-probed mutant runs are).
func multi() {
	s := func(name string, keys ...string) harness.Scenario {
		return harness.Scenario{Name: "routing/once/multi/" + name, Row: report.RowRouting, Column: report.ColumnErrors, Spec: "harness self-test",
			Run: func(ctx SpecContext) report.Check {
				for _, k := range keys {
					Expect(runs.Get(ctx, k)).To(Equal("run of " + k))
				}
				caught := harness.Variant("stand-in", "harness self-test: a variant the check caught", check.Result{Status: check.Fail})
				return report.Check{Status: report.StatusPass, Message: "judged the shared runs", Controls: []report.Control{caught}}
			}}
	}
	Describe("multi", func() { // in declaration order (one top-level container): the second finds both runs done
		harness.Emit(s("first", kMultiA, kMultiB), s("second", kMultiB, kMultiA))
	})
}

var _ = Describe("harness.Once", func() {
	multi()
	pair(kBoth)
	pair(kOnlySecond, unselected)
	pair(kSkipped)
	pair(kFails)
	pair(kPanics)
	pair(kUnconfirmed)
	ReportAfterEach(func(sr types.SpecReport) {
		name := sr.ContainerHierarchyTexts[len(sr.ContainerHierarchyTexts)-1]
		if name == "multi" {
			name += "/second"
			if strings.Contains(sr.LeafNodeText, "multi/first") {
				name = "multi/first"
			}
		} else if name == "first" {
			name = sr.ContainerHierarchyTexts[len(sr.ContainerHierarchyTexts)-2] + "/first"
		} else {
			name += "/second"
		}
		states[name], fails[name] = sr.State, sr.Failure.Message
		for _, e := range sr.ReportEntries {
			if c, ok := e.GetRawValue().(report.Check); ok {
				checks[name] = c
			}
		}
	})
})

type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// TestOnce: the run happens once per key in whichever scenario asks
// first, also when only the second is selected, and every Get answers with
// its own key's result (also when one scenario asks for several keys); a skipped run is run
// again; a failed run fails the other column without running again; an
// unconfirmed fault leaves both columns inconclusive.
func TestOnce(t *testing.T) {
	ft := &failRecorder{}
	sc, rc := GinkgoConfiguration()
	rc.Succinct, rc.NoColor = true, true
	sc.LabelFilter = "!" + unselected
	RegisterFailHandler(Fail)
	RunSpecs(ft, "once", sc, rc) // reports the expected failures
	want := map[string]int{kBoth: 1, kOnlySecond: 1, kSkipped: 2, kFails: 1, kPanics: 1, kUnconfirmed: 1, kMultiA: 1, kMultiB: 1}
	for k, n := range want {
		if ran[k] != n {
			t.Errorf("%s ran %d times, want %d", k, ran[k], n)
		}
	}
	passed, skipped, failed := types.SpecStatePassed, types.SpecStateSkipped, types.SpecStateFailed
	for name, st := range map[string]types.SpecState{
		kBoth + "/first": passed, kBoth + "/second": passed,
		kOnlySecond + "/first": skipped, kOnlySecond + "/second": passed, // filtered out: reported skipped
		kSkipped + "/first": skipped, kSkipped + "/second": passed,
		kFails + "/first": failed, kFails + "/second": failed,
		kPanics + "/first": types.SpecStatePanicked, kPanics + "/second": failed,
		kUnconfirmed + "/first": failed, kUnconfirmed + "/second": failed,
		"multi/first": passed, "multi/second": passed,
	} {
		if states[name] != st {
			t.Errorf("%s ended %s, want %s (%s)", name, states[name], st, fails[name])
		}
	}
	if m := fails[kFails+"/second"]; !strings.Contains(m, "did not finish: routing/once/fails/errors failed") || !strings.Contains(m, "the drill broke") {
		t.Errorf("the second column of a failed run says %q", m)
	}
	if m := fails[kPanics+"/second"]; !strings.Contains(m, "did not finish: routing/once/panics/errors panicked") || !strings.Contains(m, "(panic: the drill crashed)") {
		t.Errorf("the second column of a crashed run says %q", m)
	}
	for _, name := range []string{kUnconfirmed + "/first", kUnconfirmed + "/second"} {
		if c := checks[name]; c.Status != report.StatusInconclusive || !strings.Contains(c.Message, "fault failover not confirmed") {
			t.Errorf("%s check = %s %q, want inconclusive on the fault", name, c.Status, c.Message)
		}
	}
	if !ft.failed {
		t.Error("the failing runs did not fail their specs")
	}
}
