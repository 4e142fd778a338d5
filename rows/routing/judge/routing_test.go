package judge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func rop(kind Kind, key, v string, got string, n int64, at int, final bool, errKind string) Op {
	o := Op{Kind: kind, Keys: []string{key}, Value: v, Int: n, Final: final, ErrKind: errKind, Call: time.Duration(at) * time.Millisecond, Return: time.Duration(at)*time.Millisecond + 1}
	if got != "" {
		o.Got = []string{got}
	}
	return o
}

func TestAcknowledged(t *testing.T) {
	good := []Op{
		rop(Set, "r", "a", "", 0, 1, false, ""),
		rop(Get, "r", "", "a", 0, 2, false, ""),
		rop(Set, "r", "b", "", 0, 3, false, "network"), // unknown outcome
		rop(Set, "r", "c", "", 0, 4, false, "MOVED"),   // not executed
		rop(Get, "r", "", "b", 0, 5, false, ""),        // the unknown write landed
		rop(Incr, "c", "", "", 1, 6, false, ""),
		rop(Incr, "c", "", "", 0, 7, false, "network"),
		rop(Get, "c", "", "2", 2, 8, true, ""),
		rop(Get, "r", "", "b", 0, 9, true, ""),
	}
	if r := acknowledged(good, 1); r.Status != check.Pass {
		t.Fatalf("good history: %s %s", r.Status, r.Message)
	}
	stale, ok := StaleRead(append(good[:1:1], rop(Set, "r", "z", "", 0, 2, false, ""), rop(Get, "r", "", "z", 0, 3, false, ""), rop(Get, "r", "", "z", 0, 4, true, "")))
	if r := acknowledged(stale, 1); !ok || r.Status != check.Fail {
		t.Fatalf("stale read: planted %v, got %s %s", ok, r.Status, r.Message)
	}
	lost := []Op{rop(Set, "r", "a", "", 0, 1, false, ""), rop(Get, "r", "", "", 0, 2, true, "")}
	if r := acknowledged(lost, 1); r.Status != check.Fail {
		t.Fatalf("lost write: %s %s", r.Status, r.Message)
	}
	unread := []Op{rop(Set, "r", "a", "", 0, 1, false, "")}
	if r := acknowledged(unread, 1); r.Status != check.Unknown {
		t.Fatalf("unread key: %s %s", r.Status, r.Message)
	}
}

func TestCounters(t *testing.T) {
	good := []Op{
		rop(Incr, "c", "", "", 1, 1, false, ""),
		rop(EvalIncr, "c", "", "", 2, 2, false, ""),
		rop(Incr, "c", "", "", 0, 3, false, "network"),     // unknown: it ran
		rop(EvalIncr, "c", "", "", 0, 4, false, "network"), // unknown: it did not
		rop(Incr, "c", "", "", 0, 5, false, "MOVED"),       // not executed
		rop(Incr, "c", "", "", 4, 6, false, ""),
		rop(Get, "c", "", "4", 4, 9, true, ""),
	}
	if r := counters(good, 1, 1); r.Status != check.Pass {
		t.Fatalf("good history: %s %s", r.Status, r.Message)
	}
	if r := counters(good, 1, 3); r.Status != check.Unknown {
		t.Fatalf("too few timeouts: %s %s", r.Status, r.Message)
	}
	twice := append(append([]Op(nil), good[:6]...), rop(Get, "c", "", "6", 6, 9, true, ""))
	if r := counters(twice, 1, 1); r.Status != check.Fail {
		t.Fatalf("applied twice: %s %s", r.Status, r.Message)
	}
	lost := append(append([]Op(nil), good[:6]...), rop(Get, "c", "", "2", 2, 9, true, ""))
	if r := counters(lost, 1, 1); r.Status != check.Fail {
		t.Fatalf("lost: %s %s", r.Status, r.Message)
	}
	if r := counters(good[:6], 1, 1); r.Status != check.Unknown {
		t.Fatalf("unread: %s %s", r.Status, r.Message)
	}
}

func TestOnlyUnknown(t *testing.T) {
	ops := []Op{
		rop(Incr, "c", "", "", 1, 1, false, ""),
		rop(Incr, "c", "", "", 0, 2, false, "network"),
		rop(Get, "c", "", "1", 1, 3, true, "MOVED"), // read-back: not judged
	}
	if r := onlyUnknown(ops, 2); r.Status != check.Pass {
		t.Fatalf("timeouts only: %s %s", r.Status, r.Message)
	}
	if r := onlyUnknown(ops, 3); r.Status != check.Unknown {
		t.Fatalf("too few: %s %s", r.Status, r.Message)
	}
	moved := append(ops, rop(Incr, "c", "", "", 0, 4, false, "MOVED"))
	if r := onlyUnknown(moved, 1); r.Status != check.Fail {
		t.Fatalf("a redirect reached the caller: %s %s", r.Status, r.Message)
	}
}

// span is an operation on key "r" from worker w over [call, ret] ms.
func rspan(w int, kind Kind, v, got string, call, ret int) Op {
	o := Op{Worker: w, Kind: kind, Keys: []string{"r"}, Value: v, Call: time.Duration(call) * time.Millisecond, Return: time.Duration(ret) * time.Millisecond}
	if kind == Get {
		o.Got = []string{got}
	}
	return o
}

// Two writers on one key: a read that overlaps the later write may return
// the earlier value (the later one can take effect after it) — the walk in
// call order calls it stale, the checker must not. Once a read saw the
// newer value, the older one is stale.
func TestAcknowledgedTwoWritersPerKey(t *testing.T) {
	overlapping := []Op{
		rspan(1, Set, "a", "", 0, 10),
		rspan(2, Set, "b", "", 5, 15),
		rspan(3, Get, "", "a", 12, 13),
		rspan(3, Get, "", "b", 20, 21),
	}
	overlapping[3].Final = true
	if w := walkRoutingKey(overlapping, []int{0, 1, 2, 3}, "r"); w.stale == 0 {
		t.Fatal("premise of the test: the call-order walk should flag the overlapping read")
	}
	if r := acknowledged(overlapping, 1); r.Status != check.Pass {
		t.Fatalf("concurrent writers, legal history: %s %s", r.Status, r.Message)
	}
	// Once a read saw b (after both writes returned), a read of a is stale.
	stale := append(overlapping[:2:2], rspan(3, Get, "", "b", 16, 17), rspan(3, Get, "", "a", 20, 21))
	stale[3].Final = true
	if r := acknowledged(stale, 1); r.Status != check.Fail {
		t.Fatalf("read of the older value after both writes returned: %s %s", r.Status, r.Message)
	}
	// Overlapping operations the walk accepts in call order but no
	// real-time order allows: b's write returned before the read began,
	// the read saw a, and a's write (which started earlier) returned
	// before b's began.
	hidden := []Op{
		rspan(1, Set, "a", "", 0, 4),
		rspan(2, Set, "b", "", 5, 8),
		rspan(1, Get, "", "b", 6, 30), // overlaps b's write: fine
		rspan(3, Get, "", "a", 9, 10), // after b returned: stale
		rspan(3, Get, "", "b", 40, 41),
	}
	hidden[4].Final = true
	if r := acknowledged(hidden, 1); r.Status != check.Fail {
		t.Fatalf("stale read among overlapping operations: %s %s", r.Status, r.Message)
	}
}

// A history that breaks the checker's premise is unknown, named.
func TestAcknowledgedPremise(t *testing.T) {
	bad := []Op{rspan(1, Set, "a", "", 10, 5), rspan(1, Get, "", "a", 20, 21)}
	bad[1].Final = true
	if r := acknowledged(bad, 1); r.Status != check.Unknown || !strings.Contains(r.Message, "premise") {
		t.Fatalf("return before call: %s %s", r.Status, r.Message)
	}
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: an old call holds one
// JSON input per argument of the reflective checker.
func TestRoutingCheckersReplay(t *testing.T) {
	lost := []Op{rop(Set, "r", "a", "", 0, 1, false, ""), rop(Get, "r", "", "", 0, 2, true, "")}
	r := Acknowledged.Judge(AcknowledgedInput{Ops: lost, MinOps: 1})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "routing/acknowledged" {
		t.Fatalf("Judge = %+v", r)
	}
	checktest.Replays(t, r)
	op := `{"Worker":0,"Kind":"%s","Keys":["c"],"Value":"","Got":%s,"Int":%d,"Final":%t,"ErrKind":"%s","Err":"","Call":%d,"Return":%d}`
	ops := json.RawMessage("[" + strings.Join([]string{
		fmt.Sprintf(op, "incr", "null", 1, false, "", 1000000, 1000001),
		fmt.Sprintf(op, "incr", "null", 0, false, "network", 2000000, 2000001),
		fmt.Sprintf(op, "get", `["3"]`, 3, true, "", 9000000, 9000001),
	}, ",") + "]")
	for _, c := range []struct {
		old    history.Call
		status check.Status
	}{
		// Two increments (one unknown) read back as 3: one applied twice.
		{history.Call{Checker: "RoutingCounters", Input: []json.RawMessage{ops, json.RawMessage(`1`), json.RawMessage(`1`)}}, check.Fail},
		{history.Call{Checker: "RoutingOnlyUnknown", Input: []json.RawMessage{ops, json.RawMessage(`2`)}}, check.Pass},
		{history.Call{Checker: "RoutingAcknowledged", Input: []json.RawMessage{ops, json.RawMessage(`5`)}}, check.Unknown},
	} {
		got, err := check.Replay(c.old)
		if err != nil || got.Status != c.status {
			t.Errorf("%s: replay = %s %q, %v; want %s", c.old.Checker, got.Status, got.Message, err, c.status)
		}
	}
	want := counters([]Op{
		rop(Incr, "c", "", "", 1, 1, false, ""),
		rop(Incr, "c", "", "", 0, 2, false, "network"),
		rop(Get, "c", "", "3", 3, 9, true, ""),
	}, 1, 1)
	got, _ := check.Replay(history.Call{Checker: "RoutingCounters", Input: []json.RawMessage{ops, json.RawMessage(`1`), json.RawMessage(`1`)}})
	if got.Message != want.Message || got.Counterexample != want.Counterexample {
		t.Errorf("old three-argument call = %q, direct = %q", got.Message, want.Message)
	}
}
