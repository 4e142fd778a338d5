package check

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
)

func rop(kind history.RoutingKind, key, v string, got string, n int64, at int, final bool, errKind string) history.RoutingOp {
	o := history.RoutingOp{Kind: kind, Keys: []string{key}, Value: v, Int: n, Final: final, ErrKind: errKind, Call: time.Duration(at) * time.Millisecond, Return: time.Duration(at)*time.Millisecond + 1}
	if got != "" {
		o.Got = []string{got}
	}
	return o
}

func TestRoutingAcknowledged(t *testing.T) {
	good := []history.RoutingOp{
		rop(history.RoutingSet, "r", "a", "", 0, 1, false, ""),
		rop(history.RoutingGet, "r", "", "a", 0, 2, false, ""),
		rop(history.RoutingSet, "r", "b", "", 0, 3, false, "network"), // unknown outcome
		rop(history.RoutingSet, "r", "c", "", 0, 4, false, "MOVED"),   // not executed
		rop(history.RoutingGet, "r", "", "b", 0, 5, false, ""),        // the unknown write landed
		rop(history.RoutingIncr, "c", "", "", 1, 6, false, ""),
		rop(history.RoutingIncr, "c", "", "", 0, 7, false, "network"),
		rop(history.RoutingGet, "c", "", "2", 2, 8, true, ""),
		rop(history.RoutingGet, "r", "", "b", 0, 9, true, ""),
	}
	if r := RoutingAcknowledged(good, 1); r.Status != Pass {
		t.Fatalf("good history: %s %s", r.Status, r.Message)
	}
	stale, ok := StaleRead(append(good[:1:1], rop(history.RoutingSet, "r", "z", "", 0, 2, false, ""), rop(history.RoutingGet, "r", "", "z", 0, 3, false, ""), rop(history.RoutingGet, "r", "", "z", 0, 4, true, "")))
	if r := RoutingAcknowledged(stale, 1); !ok || r.Status != Fail {
		t.Fatalf("stale read: planted %v, got %s %s", ok, r.Status, r.Message)
	}
	lost := []history.RoutingOp{rop(history.RoutingSet, "r", "a", "", 0, 1, false, ""), rop(history.RoutingGet, "r", "", "", 0, 2, true, "")}
	if r := RoutingAcknowledged(lost, 1); r.Status != Fail {
		t.Fatalf("lost write: %s %s", r.Status, r.Message)
	}
	unread := []history.RoutingOp{rop(history.RoutingSet, "r", "a", "", 0, 1, false, "")}
	if r := RoutingAcknowledged(unread, 1); r.Status != Unknown {
		t.Fatalf("unread key: %s %s", r.Status, r.Message)
	}
}

func dop(shard int, seq int64, at int, final bool, errKind string) history.DrillOp {
	return history.DrillOp{Key: "k" + string(rune('0'+shard)), Shard: shard, Seq: seq, Final: final, ErrKind: errKind, Call: time.Duration(at) * time.Millisecond, Return: time.Duration(at+1) * time.Millisecond}
}

func TestDrillHaltsAndAccounting(t *testing.T) {
	d := []Drill{{Shard: 0, Mode: "kill", Start: 100 * time.Millisecond, End: 3000 * time.Millisecond}}
	ops := []history.DrillOp{dop(0, 1, 50, false, ""), dop(0, 2, 99, false, ""), dop(0, 3, 200, false, "network"), dop(0, 4, 3500, false, "")}
	for at := 0; at < 4000; at += 100 {
		ops = append(ops, dop(1, int64(at+1), at, false, ""))
	}
	ops = append(ops, dop(0, 4, 4100, true, ""), dop(1, 3901, 4100, true, ""))
	h := DrillHalts(ops, d, 4000*time.Millisecond)
	if len(h) != 1 || !h[0].Recovered || h[0].Dead < 3*time.Second || h[0].Healthy > 200*time.Millisecond {
		t.Fatalf("halts: %+v", h)
	}
	if r := DrillDispatch(h, time.Second, 1); r.Status != Pass {
		t.Fatalf("dispatch: %s", r.Message)
	}
	if r := DrillAccounted(ops, d, time.Second, 1); r.Status != Pass {
		t.Fatalf("accounted: %s", r.Message)
	}
	planted, ok := PlantLoss(ops, d)
	if r := DrillAccounted(planted, d, time.Second, 1); !ok || r.Status != Fail {
		t.Fatalf("planted loss: %v %s", ok, r.Message)
	}
	// A halt-all client: the healthy shard stops too.
	var halted []history.DrillOp
	for _, o := range ops {
		if o.Shard == 1 && o.Call > 100*time.Millisecond && o.Call < 3400*time.Millisecond {
			continue
		}
		halted = append(halted, o)
	}
	if r := DrillDispatch(DrillHalts(halted, d, 4000*time.Millisecond), time.Second, 1); r.Status != Fail {
		t.Fatalf("halt-all: %s", r.Message)
	}
}

func TestRoutingCounters(t *testing.T) {
	good := []history.RoutingOp{
		rop(history.RoutingIncr, "c", "", "", 1, 1, false, ""),
		rop(history.RoutingEvalIncr, "c", "", "", 2, 2, false, ""),
		rop(history.RoutingIncr, "c", "", "", 0, 3, false, "network"),     // unknown: it ran
		rop(history.RoutingEvalIncr, "c", "", "", 0, 4, false, "network"), // unknown: it did not
		rop(history.RoutingIncr, "c", "", "", 0, 5, false, "MOVED"),       // not executed
		rop(history.RoutingIncr, "c", "", "", 4, 6, false, ""),
		rop(history.RoutingGet, "c", "", "4", 4, 9, true, ""),
	}
	if r := RoutingCounters(good, 1, 1); r.Status != Pass {
		t.Fatalf("good history: %s %s", r.Status, r.Message)
	}
	if r := RoutingCounters(good, 1, 3); r.Status != Unknown {
		t.Fatalf("too few timeouts: %s %s", r.Status, r.Message)
	}
	twice := append(append([]history.RoutingOp(nil), good[:6]...), rop(history.RoutingGet, "c", "", "6", 6, 9, true, ""))
	if r := RoutingCounters(twice, 1, 1); r.Status != Fail {
		t.Fatalf("applied twice: %s %s", r.Status, r.Message)
	}
	lost := append(append([]history.RoutingOp(nil), good[:6]...), rop(history.RoutingGet, "c", "", "2", 2, 9, true, ""))
	if r := RoutingCounters(lost, 1, 1); r.Status != Fail {
		t.Fatalf("lost: %s %s", r.Status, r.Message)
	}
	if r := RoutingCounters(good[:6], 1, 1); r.Status != Unknown {
		t.Fatalf("unread: %s %s", r.Status, r.Message)
	}
}

func TestRoutingOnlyUnknown(t *testing.T) {
	ops := []history.RoutingOp{
		rop(history.RoutingIncr, "c", "", "", 1, 1, false, ""),
		rop(history.RoutingIncr, "c", "", "", 0, 2, false, "network"),
		rop(history.RoutingGet, "c", "", "1", 1, 3, true, "MOVED"), // read-back: not judged
	}
	if r := RoutingOnlyUnknown(ops, 2); r.Status != Pass {
		t.Fatalf("timeouts only: %s %s", r.Status, r.Message)
	}
	if r := RoutingOnlyUnknown(ops, 3); r.Status != Unknown {
		t.Fatalf("too few: %s %s", r.Status, r.Message)
	}
	moved := append(ops, rop(history.RoutingIncr, "c", "", "", 0, 4, false, "MOVED"))
	if r := RoutingOnlyUnknown(moved, 1); r.Status != Fail {
		t.Fatalf("a redirect reached the caller: %s %s", r.Status, r.Message)
	}
}

// span is an operation on key "r" from worker w over [call, ret] ms.
func rspan(w int, kind history.RoutingKind, v, got string, call, ret int) history.RoutingOp {
	o := history.RoutingOp{Worker: w, Kind: kind, Keys: []string{"r"}, Value: v, Call: time.Duration(call) * time.Millisecond, Return: time.Duration(ret) * time.Millisecond}
	if kind == history.RoutingGet {
		o.Got = []string{got}
	}
	return o
}

// Two writers on one key: a read that overlaps the later write may return
// the earlier value (the later one can take effect after it) — the walk in
// call order calls it stale, the checker must not. Once a read saw the
// newer value, the older one is stale.
func TestRoutingAcknowledgedTwoWritersPerKey(t *testing.T) {
	overlapping := []history.RoutingOp{
		rspan(1, history.RoutingSet, "a", "", 0, 10),
		rspan(2, history.RoutingSet, "b", "", 5, 15),
		rspan(3, history.RoutingGet, "", "a", 12, 13),
		rspan(3, history.RoutingGet, "", "b", 20, 21),
	}
	overlapping[3].Final = true
	if w := walkRoutingKey(overlapping, []int{0, 1, 2, 3}, "r"); w.stale == 0 {
		t.Fatal("premise of the test: the call-order walk should flag the overlapping read")
	}
	if r := RoutingAcknowledged(overlapping, 1); r.Status != Pass {
		t.Fatalf("concurrent writers, legal history: %s %s", r.Status, r.Message)
	}
	// Once a read saw b (after both writes returned), a read of a is stale.
	stale := append(overlapping[:2:2], rspan(3, history.RoutingGet, "", "b", 16, 17), rspan(3, history.RoutingGet, "", "a", 20, 21))
	stale[3].Final = true
	if r := RoutingAcknowledged(stale, 1); r.Status != Fail {
		t.Fatalf("read of the older value after both writes returned: %s %s", r.Status, r.Message)
	}
	// Overlapping operations the walk accepts in call order but no
	// real-time order allows: b's write returned before the read began,
	// the read saw a, and a's write (which started earlier) returned
	// before b's began.
	hidden := []history.RoutingOp{
		rspan(1, history.RoutingSet, "a", "", 0, 4),
		rspan(2, history.RoutingSet, "b", "", 5, 8),
		rspan(1, history.RoutingGet, "", "b", 6, 30), // overlaps b's write: fine
		rspan(3, history.RoutingGet, "", "a", 9, 10), // after b returned: stale
		rspan(3, history.RoutingGet, "", "b", 40, 41),
	}
	hidden[4].Final = true
	if r := RoutingAcknowledged(hidden, 1); r.Status != Fail {
		t.Fatalf("stale read among overlapping operations: %s %s", r.Status, r.Message)
	}
}

// A history that breaks the checker's premise is unknown, named.
func TestRoutingAcknowledgedPremise(t *testing.T) {
	bad := []history.RoutingOp{rspan(1, history.RoutingSet, "a", "", 10, 5), rspan(1, history.RoutingGet, "", "a", 20, 21)}
	bad[1].Final = true
	if r := RoutingAcknowledged(bad, 1); r.Status != Unknown || !strings.Contains(r.Message, "premise") {
		t.Fatalf("return before call: %s %s", r.Status, r.Message)
	}
}
