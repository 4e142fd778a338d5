// Package checktest holds what the unit tests of checkers share, as
// fixturestest does for tests on a shared server: check itself takes no
// *testing.T.
package checktest

import (
	"encoding/json"
	"reflect"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Judged runs c on in and replays the stored call: the result must carry a
// replayable call under c's name (its inputs survive JSON) that reaches the
// identical result, which it returns.
func Judged[In any](t TB, c check.Checker[In], in In) check.Result {
	t.Helper()
	r := c.Judge(in)
	if r.Call == nil || !r.Replayable() || r.Call.Checker != c.Name() {
		t.Fatalf("%s: no replayable call under its name (%s: %s; do its inputs survive JSON?): %+v", c.Name(), r.Status, r.Message, r.Call)
	}
	again, err := check.Replay(*r.Call)
	if err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("%s: replay differs (%v):\n%+v\n%+v", c.Name(), err, again, r)
	}
	return r
}

// Replays replays each result's stored call: every result must carry a
// replayable call, and its replay must reach the same verdict.
func Replays(t TB, results ...check.Result) {
	t.Helper()
	for _, r := range results {
		if r.Call == nil || !r.Replayable() {
			t.Errorf("%s: not replayable (%s: %s): %+v", r.Checker, r.Status, r.Message, r.Call)
			continue
		}
		ReplaysTo(t, *r.Call, r)
	}
}

// ReplaysTo replays a stored call (an old name's, say, one input per
// argument) and wants want's verdict back: its status, checker, message,
// counterexample and observed facts. The call itself may differ, as an
// alias's does from the stable name's.
func ReplaysTo(t TB, call history.Call, want check.Result) {
	t.Helper()
	got, err := check.Replay(call)
	if err != nil {
		t.Errorf("%s: %v", call.Checker, err)
		return
	}
	if got.Status != want.Status || got.Checker != want.Checker || got.Message != want.Message ||
		got.Counterexample != want.Counterexample || !reflect.DeepEqual(got.Observed, want.Observed) {
		t.Errorf("%s replayed to %s %q, want %s %q", call.Checker, got.Status, got.Message, want.Status, want.Message)
	}
}

// Inputs encodes each argument as one stored input, as histories written
// before the checkers were defined stored a reflective call's arguments.
func Inputs(t TB, args ...any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("encode argument %d: %v", i, err)
		}
		out[i] = b
	}
	return out
}
