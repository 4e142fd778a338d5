package harness

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// TestUnconfirmedFaultIsInconclusive: a scenario whose fault.Apply was not
// confirmed ends with an inconclusive check naming the fault, never a
// failure of the implementation.
func TestUnconfirmedFaultIsInconclusive(t *testing.T) {
	s := Scenario{Name: "routing/x", Row: report.RowRouting, Column: report.ColumnErrors, Run: func(SpecContext) report.Check {
		MustConfirm(&fault.NotConfirmedError{Fault: "failover", Err: errors.New("p0r0 is still replica")}, 42)
		t.Fatal("MustConfirm returned on an unconfirmed fault")
		return report.Check{}
	}}
	c := run(nil, s)
	if c.Status != report.StatusInconclusive || c.Verdict() != report.StatusInconclusive {
		t.Fatalf("check = %s/%s, want inconclusive", c.Status, c.Verdict())
	}
	if !strings.Contains(c.Message, "fault failover not confirmed (p0r0 is still replica)") || c.Evidence.Seed != 42 {
		t.Errorf("check = %q seed %d", c.Message, c.Evidence.Seed)
	}
}

// TestOtherPanicsPass: run recovers only its own abort.
func TestOtherPanicsPass(t *testing.T) {
	defer func() {
		if v := recover(); v != "boom" {
			t.Errorf("recovered %v, want the scenario's own panic", v)
		}
	}()
	run(nil, Scenario{Run: func(SpecContext) report.Check { panic("boom") }})
}

func TestControlExercised(t *testing.T) {
	for _, tc := range []struct {
		st                check.Status
		exercised, caught bool
	}{
		{check.Fail, true, true},
		{check.Pass, true, false},
		{check.Unknown, false, false},
		{check.Inconclusive, false, false},
		{"ok", false, false},
	} {
		c := Variant("v", "why", check.Result{Status: tc.st, Message: "m"})
		if c.Kind != report.ControlVariant || c.Exercised != tc.exercised || c.Caught != tc.caught {
			t.Errorf("Variant(%s) = %+v, want exercised %v caught %v", tc.st, c, tc.exercised, tc.caught)
		}
	}
	if c := SelfTest("s", "why", check.Result{Status: check.Fail}); c.Kind != report.ControlSelfTest || !c.Caught {
		t.Errorf("SelfTest = %+v", c)
	}
	if c := NotExercised(Variant("v", "why", check.Result{Status: check.Fail}), "no traffic"); c.Exercised || c.Caught || !strings.Contains(c.Observed, "no traffic") {
		t.Errorf("NotExercised = %+v", c)
	}
}

// TestCrashedScenarioKeepsItsHistory: a scenario that ends before it is
// judged still leaves its history — the operations and fault windows
// recorded so far, and how it ended.
func TestCrashedScenarioKeepsItsHistory(t *testing.T) {
	rec := history.NewRecorder("routing/crashy", 0, nil)
	rec.Op(history.Op{Start: time.Millisecond, End: 2 * time.Millisecond, Kind: "set", Outcome: history.OK})
	rec.Op(history.Op{Start: 3 * time.Millisecond, End: 4 * time.Millisecond, Kind: "get", Outcome: history.Failed, ErrKind: "network", Err: "EOF"})
	rec.Fault(history.FaultWindow{Fault: "kill-primary", Target: "p0", Start: 2 * time.Millisecond, End: 5 * time.Millisecond})
	sr := types.SpecReport{State: types.SpecStatePanicked, Failure: types.Failure{Message: "Test Panicked", ForwardedPanic: "runtime error: invalid memory address",
		Location: types.CodeLocation{FileName: "/x/rows/routing/routing_test.go", LineNumber: 42}}}
	note := crashNote(sr)
	if want := "crashed before it was judged: panicked: Test Panicked (panic: runtime error: invalid memory address) at routing_test.go:42"; note != want {
		t.Fatalf("note = %q, want %q", note, want)
	}
	p, err := writeCrashed(t.TempDir(), rec, 7, note)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if h.Scenario != "routing/crashy" || h.Seed != 7 || h.Crashed != note || len(h.Ops) != 2 || len(h.Faults) != 1 || len(h.Judgements) != 0 {
		t.Fatalf("stored history = %+v", h)
	}
}

func TestDistinctSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		got := DistinctSlots(rng, 40)
		seen := map[int]bool{}
		for _, s := range got {
			if seen[s] || s < 0 || s >= 16384 {
				t.Fatalf("slot %d drawn twice or out of range: %v", s, got)
			}
			seen[s] = true
		}
	}
}
