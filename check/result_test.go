package check_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestAllInconclusiveVoidsTheRest(t *testing.T) {
	p := check.Result{Status: check.Pass, Message: "a"}
	u := check.Result{Status: check.Unknown, Message: "b"}
	f := check.Result{Status: check.Fail, Message: "halt 40s"}
	inc := check.FaultNotConfirmed("drill", "node/failover-graceful", errors.New("p0r0 is still replica"))
	if inc.Status != check.Inconclusive || inc.Message != "fault node/failover-graceful not confirmed (p0r0 is still replica)" {
		t.Fatalf("FaultNotConfirmed = %s %q", inc.Status, inc.Message)
	}
	r := check.All("x", p, u, f, inc)
	if r.Status != check.Inconclusive || r.Message != inc.Message {
		t.Errorf("inconclusive wins: %s %q", r.Status, r.Message)
	}
	kept := false
	for _, o := range r.Observed {
		kept = kept || strings.Contains(o, "halt 40s")
	}
	if !kept {
		t.Errorf("the voided failure is not in Observed: %q", r.Observed)
	}
	if r := check.All("x", p, f); r.Status != check.Fail {
		t.Errorf("without an unconfirmed fault, fail stands: %s", r.Status)
	}
}

// A failure judged on the drills before an unconfirmed fault stands; a pass
// or unknown there is inconclusive — the run never reached its end.
func TestBeforeUnconfirmed(t *testing.T) {
	inc := check.FaultNotConfirmed("drill", "node/failover-kill", errors.New("replica never took over"))
	for _, c := range []struct {
		judged check.Status
		want   check.Status
	}{{check.Fail, check.Fail}, {check.Pass, check.Inconclusive}, {check.Unknown, check.Inconclusive}} {
		got := check.BeforeUnconfirmed(check.Result{Checker: "drill", Status: c.judged, Message: "m"}, inc)
		if got.Status != c.want {
			t.Errorf("judged %s: got %s, want %s", c.judged, got.Status, c.want)
		}
	}
	// A failure that stands is the judged result itself: it keeps its call
	// for slotgate check --from.
	judged := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set", Err: "boom", ErrKind: "other"}}, MinOps: 1})
	if judged.Status != check.Fail || !judged.Replayable() {
		t.Fatalf("setup: %+v", judged)
	}
	if got := check.BeforeUnconfirmed(judged, inc); !got.Replayable() || !reflect.DeepEqual(got, judged) {
		t.Errorf("a standing failure was edited: %+v", got)
	}
}

func TestAllNeverPassesOnNothing(t *testing.T) {
	if r := check.All("none"); r.Status != check.Unknown {
		t.Errorf("check.All() of no results = %s, want unknown", r.Status)
	}
	ok := check.Result{Status: check.Pass, Message: "held"}
	for _, st := range []check.Status{"", "ok", "blind"} {
		r := check.All("odd", ok, check.Result{Status: st, Message: "what"})
		if r.Status != check.Unknown || r.Message != "what" {
			t.Errorf("check.All(pass, %q) = %s %q, want unknown naming it", st, r.Status, r.Message)
		}
	}
	if r := check.All("fail", check.Result{Status: "ok"}, check.Result{Status: check.Fail, Message: "broke"}); r.Status != check.Fail {
		t.Errorf("a failure still beats an unrecognised status: %s", r.Status)
	}
	if r := check.All("pass", ok, ok); r.Status != check.Pass {
		t.Errorf("check.All(pass, pass) = %s", r.Status)
	}
}
