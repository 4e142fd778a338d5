package harness

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
)

// TestPremise: an unmet premise makes a control not exercised (it neither
// counts nor blinds), a met one leaves the verdict as judged; a check whose
// only variant's premise failed is blind, never pass.
func TestPremise(t *testing.T) {
	failed := check.Result{Status: check.Fail, Message: "1 error"}
	passed := check.Result{Status: check.Pass, Message: "no error"}
	for _, c := range []struct {
		name              string
		r                 check.Result
		ok                bool
		exercised, caught bool
	}{
		{"caught with premise", failed, true, true, true},
		{"caught without premise", failed, false, false, false},
		{"uncaught with premise", passed, true, true, false},
		{"uncaught without premise", passed, false, false, false},
		{"unknown stays unexercised", check.Result{Status: check.Unknown}, true, false, false},
	} {
		got := Premise(Variant("v", "why", c.r), c.ok, "premise unmet")
		if got.Exercised != c.exercised || got.Caught != c.caught {
			t.Errorf("%s: exercised %v caught %v, want %v %v (%s)", c.name, got.Exercised, got.Caught, c.exercised, c.caught, got.Observed)
		}
	}

	pass := check.Result{Status: check.Pass, Message: "ok"}
	if v := Check("routing", report.ColumnErrors, "s", pass, report.Evidence{}, Premise(Variant("v", "why", failed), false, "no MOVED")).Verdict(); v != report.StatusBlind {
		t.Errorf("a check whose only variant did not meet its premise: %s, want blind", v)
	}
	withSecond := Check("routing", report.ColumnErrors, "s", pass, report.Evidence{},
		Premise(Variant("v", "why", passed), false, "no MOVED"), Variant("w", "why", failed))
	if v := withSecond.Verdict(); v != report.StatusPass {
		t.Errorf("an unmet premise must not blind a check another variant proves: %s (%s)", v, withSecond.Reason())
	}
}

func TestErrorsOf(t *testing.T) {
	out := []history.OpOutcome{{ErrKind: "TRYAGAIN"}, {ErrKind: "network"}, {}, {ErrKind: "TRYAGAIN"}}
	if n := ErrorsOf(out, client.KindTryAgain); n != 2 {
		t.Errorf("TRYAGAIN: %d, want 2", n)
	}
	if n := ErrorsOf(out, client.KindNoScript); n != 0 {
		t.Errorf("NOSCRIPT: %d, want 0", n)
	}
}
