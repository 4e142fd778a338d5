package traffic

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/impl/slot"
)

// untilStopped: a stop already closed runs no round; with a pace every
// round waits it first, so a run of d makes at most d/pace rounds per
// worker, numbered 0, 1, … with no gap.
func TestUntilStoppedPace(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	var n atomic.Int64
	untilStopped(context.Background(), stop, 4, 0, func(int, int) { n.Add(1) })
	untilStopped(context.Background(), stop, 4, time.Millisecond, func(int, int) { n.Add(1) })
	if n.Load() != 0 {
		t.Fatalf("%d rounds ran after stop", n.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	untilStopped(ctx, make(chan struct{}), 4, 0, func(int, int) { n.Add(1) })
	if n.Load() != 0 {
		t.Fatalf("%d rounds ran after ctx ended", n.Load())
	}

	const pace, run = 20 * time.Millisecond, 110 * time.Millisecond
	stop = make(chan struct{})
	var mu sync.Mutex
	rounds := map[int][]int{}
	began := time.Now()
	time.AfterFunc(run, func() { close(stop) })
	untilStopped(context.Background(), stop, 3, pace, func(w, r int) {
		mu.Lock()
		rounds[w] = append(rounds[w], r)
		mu.Unlock()
	})
	// The bound follows the time the run really took (a loaded machine
	// fires the stop late), so it judges the pace, not the scheduler.
	ran := time.Since(began)
	if len(rounds) != 3 {
		t.Fatalf("workers that ran: %d, want 3", len(rounds))
	}
	for w, rs := range rounds {
		if most := int(ran/pace) + 1; len(rs) < 1 || len(rs) > most {
			t.Errorf("worker %d ran %d rounds in %v at pace %v (want 1..%d)", w, len(rs), ran, pace, most)
		}
		for i, r := range rs {
			if r != i {
				t.Errorf("worker %d rounds %v: not 0, 1, …", w, rs)
				break
			}
		}
	}
}

// Key generation per slot: every key of a worker lands in the asked slot
// (one hash tag), and different slots get different tags.
func TestRoutingKeysIn(t *testing.T) {
	seen := map[string]int{}
	for _, s := range []int{0, 5461, 16383} {
		k := RoutingKeysIn("run7", s)
		if k.Slot != s {
			t.Fatalf("slot %d: keys say slot %d", s, k.Slot)
		}
		for _, key := range []string{k.Reg, k.Ctr, k.A, k.B} {
			if got := slot.Of(key); got != s {
				t.Errorf("key %q hashes to %d, asked %d", key, got, s)
			}
			if !strings.Contains(key, "run7") {
				t.Errorf("key %q does not name the run", key)
			}
			if prev, dup := seen[key]; dup {
				t.Errorf("key %q given for slots %d and %d", key, prev, s)
			}
			seen[key] = s
		}
	}
	if RoutingKeysIn("run7", 42) != RoutingKeysIn("run7", 42) {
		t.Fatal("RoutingKeysIn is not deterministic")
	}
}

// parsePayload inverts payload; anything else is not this format.
func TestParsePayload(t *testing.T) {
	s := &Subscriptions{run: "r9"}
	run, pub, seq, ok := parsePayload(s.payload(3, 41))
	if !ok || run != "r9" || pub != 3 || seq != 41 {
		t.Fatalf("round trip = %q %d %d %v", run, pub, seq, ok)
	}
	for _, bad := range []string{"", "hello", "r1:2", "r1:x:3", "r1:2:y"} {
		if _, _, _, ok := parsePayload(bad); ok {
			t.Errorf("parsePayload(%q) accepted", bad)
		}
	}
}

// Step.String names each refusal reason once, with its count, in the
// order first seen.
func TestStepString(t *testing.T) {
	s := Step{Name: "advance to C", Asked: 1500 * time.Microsecond, At: 7 * time.Millisecond, Allowed: true,
		Refused: []gate.Reason{gate.ReasonOldLeasesLive, gate.ReasonFleetNotAtTarget, gate.ReasonOldLeasesLive, gate.ReasonOldLeasesLive}}
	if got, want := s.String(), "advance to C@7ms (refused 3×old-leases-live, 1×fleet-not-at-target)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	s.Allowed, s.Refused = false, []gate.Reason{gate.ReasonNotAdjacent}
	if got, want := s.String(), "advance to C@2ms NOT allowed (refused 1×not-adjacent)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// cleared: which refusals an observation can clear, and when.
func TestOperatorCleared(t *testing.T) {
	o := &Operator{Gate: gate.New(gate.Options{Start: fencing.C})}
	atC := gate.Observation{Pods: map[string]fencing.Phase{"a": fencing.C, "b": fencing.C}, OldLeases: 0, NewLeases: 3}
	mixed := gate.Observation{Pods: map[string]fencing.Phase{"a": fencing.C, "b": fencing.B}, OldLeases: 2, NewLeases: 0}
	for _, c := range []struct {
		reason         gate.Reason
		obs            gate.Observation
		ok, observable bool
	}{
		{gate.ReasonFleetNotAtTarget, atC, true, true}, // the gate's target is C
		{gate.ReasonFleetNotAtTarget, mixed, false, true},
		{gate.ReasonNoPods, gate.Observation{}, false, true},
		{gate.ReasonFleetNotC, atC, true, true},
		{gate.ReasonFleetNotC, mixed, false, true},
		{gate.ReasonFleetNotC, gate.Observation{}, false, true}, // no pods is not "all at C"
		{gate.ReasonOldLeasesLive, atC, true, true},
		{gate.ReasonOldLeasesLive, mixed, false, true},
		{gate.ReasonNewLeasesLive, atC, false, true},
		{gate.ReasonNewLeasesLive, mixed, true, true},
		{gate.ReasonNotObserved, gate.Observation{OldLeases: -1, NewLeases: 0}, false, true},
		{gate.ReasonNotObserved, atC, true, true},
		{gate.ReasonNotBackfilled, atC, false, false},
		{gate.ReasonNotAdjacent, atC, false, false},
	} {
		ok, observable := o.cleared(c.reason, c.obs)
		if ok != c.ok || observable != c.observable {
			t.Errorf("cleared(%s, %v) = %v, %v; want %v, %v", c.reason, c.obs, ok, observable, c.ok, c.observable)
		}
	}
}
