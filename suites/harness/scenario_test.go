package harness

import (
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
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
