package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// alertRun is a depth that rises 10/tick from 0 over threshold 50 to a cap
// of 100 (losses from there), holds, then drains; fire and clear say at
// which tick the alert went on and off (-1: never).
func alertRun(fire, clear int) []AlertSample {
	var out []AlertSample
	depth, lost := 0.0, int64(0)
	for i := range 40 {
		switch {
		case i < 10:
			depth = float64(i * 10)
		case i < 25:
			depth, lost = 100, lost+5
		default:
			depth = max(0, 100-float64(i-24)*20)
		}
		firing := fire >= 0 && i >= fire && (clear < 0 || i < clear)
		out = append(out, AlertSample{At: time.Duration(i) * 100 * time.Millisecond, Rule: "depth", True: depth, Firing: firing, Lost: lost})
	}
	return out
}

func TestMarconiAuditAlerts(t *testing.T) {
	bounds := map[string]AlertBound{"depth": {Threshold: 50, Tol: 5, Grace: 300 * time.Millisecond}}
	if r := alerts(alertRun(7, 28), bounds); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	if r := alerts(alertRun(15, 28), bounds); r.Status != check.Fail {
		t.Fatalf("fires after the loss: %s %s", r.Status, r.Message)
	}
	if r := alerts(alertRun(-1, -1), bounds); r.Status != check.Fail {
		t.Fatalf("never fires: %s %s", r.Status, r.Message)
	}
	if r := alerts(alertRun(7, -1), bounds); r.Status != check.Fail {
		t.Fatalf("never clears: %s %s", r.Status, r.Message)
	}
	// Premise: no loss, so "before the loss" is undecidable.
	noLoss := alertRun(7, 28)
	for i := range noLoss {
		noLoss[i].Lost = 0
	}
	if r := alerts(noLoss, bounds); r.Status != check.Unknown {
		t.Fatalf("no loss: %s %s", r.Status, r.Message)
	}
}
