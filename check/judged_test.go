package check

import (
	"reflect"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/history"
)

// The compositions moved out of the suites into checkers: each must
// reach the verdict the suite reached by hand, fail on a bad input, and
// replay by the checker's stable name to the identical result.

func judgedReplays[In any](t *testing.T, c Checker[In], in In) Result {
	t.Helper()
	r := c.Judge(in)
	if r.Call == nil || !r.Replayable() || r.Call.Checker != c.Name() {
		t.Fatalf("%s: no replayable call under its name (do its inputs survive JSON?): %+v", c.Name(), r.Call)
	}
	again, err := Replay(*r.Call)
	if err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("replay differs (%v):\n%+v\n%+v", err, again, r)
	}
	return r
}

func TestLoudRefusal(t *testing.T) {
	refused := []history.OpOutcome{{Op: "eval", ErrKind: "CROSSSLOT", Err: "CROSSSLOT Keys in request don't hash to the same slot"}}
	r := judgedReplays(t, LoudRefusalCheck, LoudRefusalInput{Outcomes: refused, Want: "CROSSSLOT"})
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
	if r := judgedReplays(t, HappenedCheck, HappenedInput{Name: "noscript-fallback", Count: 0, None: "never"}); r.Status != Unknown || r.Message != "never" {
		t.Fatalf("none seen: %s %q", r.Status, r.Message)
	}
	if r := Happened("noscript-fallback", 3, "never"); r.Status != Pass {
		t.Fatalf("seen: %s", r.Status)
	}
}
