package traffic

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
)

// Quantile is nearest rank (ceil(q·n)-th smallest) over an unsorted input
// it leaves alone; the latency figures of the mesh rows are read with it.
func TestQuantileNearestRank(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	in := ms(7, 3, 10, 1, 9, 2, 8, 4, 6, 5) // 1..10 shuffled
	orig := slices.Clone(in)
	for _, c := range []struct {
		q    float64
		want int
	}{{0, 1}, {0.1, 1}, {0.5, 5}, {0.9, 9}, {0.95, 10}, {0.99, 10}, {1, 10}} {
		if got := Quantile(in, c.q); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("Quantile(1..10, %v) = %v, want %dms", c.q, got, c.want)
		}
	}
	if !slices.Equal(in, orig) {
		t.Fatal("Quantile reordered its input")
	}
	if got := Quantile(nil, 0.99); got != 0 {
		t.Fatalf("Quantile of nothing = %v", got)
	}
	if got := Quantile(ms(42), 0.5); got != 42*time.Millisecond {
		t.Fatalf("Quantile of one = %v", got)
	}
	// p50 of an even count is the lower middle (rank n/2).
	if got := Quantile(ms(4, 1, 3, 2), 0.5); got != 2*time.Millisecond {
		t.Fatalf("p50 of 1..4 = %v, want 2ms", got)
	}
}

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

func TestPubkeyInSlot(t *testing.T) {
	for _, s := range []int{0, 777, 16383} {
		pk := PubkeyInSlot("comm", s, "pin-")
		if !strings.HasPrefix(pk, "pin-") {
			t.Errorf("pubkey %q lost its base", pk)
		}
		if got := slot.Of(presence.Key("comm", pk)); got != s {
			t.Errorf("presence key of %q hashes to %d, asked %d", pk, got, s)
		}
	}
}

// Shuffled keeps every key and adds exactly dupes repeats; Sample holds
// every must key plus n drawn ones.
func TestShuffledAndSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "d", "e"}
	out := Shuffled(rng, keys, 3)
	if len(out) != 8 {
		t.Fatalf("Shuffled gave %d keys, want 8", len(out))
	}
	for _, k := range keys {
		if !slices.Contains(out, k) {
			t.Fatalf("Shuffled dropped %q: %v", k, out)
		}
	}
	s := Sample(rng, keys, 4, []string{"x", "y"})
	if len(s) != 6 || !slices.Contains(s, "x") || !slices.Contains(s, "y") {
		t.Fatalf("Sample = %v", s)
	}
	for _, k := range s {
		if k != "x" && k != "y" && !slices.Contains(keys, k) {
			t.Fatalf("Sample drew %q from nowhere", k)
		}
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

// readEntries counts XREADGROUP entries in both protocol shapes.
func TestReadEntries(t *testing.T) {
	entry := []any{"1-0", []any{"f", "v"}}
	resp2 := []any{
		[]any{"s1", []any{entry, entry}},
		[]any{"s2", []any{entry}},
	}
	resp3 := map[string]any{"s1": []any{entry, entry, entry}, "s2": []any{}}
	if n := readEntries(resp2); n != 3 {
		t.Errorf("RESP2 reply: %d entries, want 3", n)
	}
	if n := readEntries(resp3); n != 3 {
		t.Errorf("RESP3 reply: %d entries, want 3", n)
	}
	if n := readEntries(nil); n != 0 {
		t.Errorf("nil reply: %d entries", n)
	}
}

// settled: classic bursts must reach every other node, sharded ones only
// the sender's shard; the sender itself never counts.
func TestSettled(t *testing.T) {
	to, same, other := new(fixtures.Node), new(fixtures.Node), new(fixtures.Node)
	shardOf := map[*fixtures.Node]int{to: 0, same: 0, other: 1}
	before := map[*fixtures.Node]counters{to: {}, same: {publish: 5}, other: {shard: 2}}
	after := func(samePub, sameShard, otherPub, otherShard int64) map[*fixtures.Node]counters {
		return map[*fixtures.Node]counters{to: {}, same: {publish: samePub, shard: sameShard}, other: {publish: otherPub, shard: otherShard}}
	}
	// 10 messages: same saw 10 (5→15), other saw 9 (2→11 shard counter).
	a := after(15, 0, 0, 11)
	if settled(before, a, shardOf, to, 10, false) {
		t.Error("classic burst settled with a node 1 short")
	}
	if !settled(before, a, shardOf, to, 10, true) {
		t.Error("sharded burst not settled though its shard saw all 10")
	}
	if !settled(before, after(15, 0, 1, 11), shardOf, to, 10, false) {
		t.Error("classic burst not settled though every node saw 10 (publish+shard counters)")
	}
	if settled(before, after(14, 0, 20, 20), shardOf, to, 10, true) {
		t.Error("sharded burst settled with its own shard 1 short")
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

// AuditErrors places an error on the scenario clock at its own time and
// counts by stage and tenant.
func TestAuditErrors(t *testing.T) {
	clock := NewClock()
	time.Sleep(30 * time.Millisecond)
	r := &AuditErrors{Clock: clock}
	happened := time.Now().Add(-20 * time.Millisecond)
	r.Record(audit.PipelineError{At: happened, Stage: "sink", Tenant: "acme", Op: "append", Reason: "full"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tenant := "acme"
			if i%2 == 1 {
				tenant = "globex"
			}
			r.Record(audit.PipelineError{At: time.Now(), Stage: "archiver", Tenant: tenant, Op: "write"})
		})
	}
	wg.Wait()
	errs := r.Errors()
	if len(errs) != 9 {
		t.Fatalf("recorded %d errors, want 9", len(errs))
	}
	if at, want := errs[0].At, clock.Offset(happened); at < want-5*time.Millisecond || at > want+5*time.Millisecond {
		t.Errorf("error at %v on the clock, happened at %v", at, want)
	}
	for _, c := range []struct {
		stage  audit.Stage
		tenant string
		want   int
	}{{"archiver", "", 8}, {"archiver", "acme", 4}, {"archiver", "globex", 4}, {"sink", "", 1}, {"sink", "globex", 0}} {
		if got := r.Count(c.stage, c.tenant); got != c.want {
			t.Errorf("Count(%s, %q) = %d, want %d", c.stage, c.tenant, got, c.want)
		}
	}
}

// MeshLiveReads counts only OK sends whose recipient had a session live
// across the whole send.
func TestMeshLiveReads(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := history.MeshHistory{
		Sessions: []history.MeshSession{
			{SessionID: "s1", Recipient: "t/p/alice", Registered: ms(10)},                                       // live from 10 on
			{SessionID: "s2", Recipient: "t/p/bob", Registered: ms(10), DeregisterStart: ms(50), Ended: ms(60)}, // live 10..50
		},
		Sends: []history.MeshSend{
			{Recipient: "t/p/alice", Start: ms(20), Done: ms(25), Status: 200, SessionID: "s1"}, // hit
			{Recipient: "t/p/alice", Start: ms(30), Done: ms(35), Status: 200},                  // miss
			{Recipient: "t/p/alice", Start: ms(5), Done: ms(15), Status: 200},                   // before registration
			{Recipient: "t/p/alice", Start: ms(40), Done: ms(45), Status: 500},                  // not OK
			{Recipient: "t/p/bob", Start: ms(20), Done: ms(30), Status: 200, SessionID: "s2"},   // hit
			{Recipient: "t/p/bob", Start: ms(45), Done: ms(55), Status: 200},                    // across the deregister
			{Recipient: "t/p/carol", Start: ms(20), Done: ms(30), Status: 200},                  // nobody
		},
	}
	if hits, misses := MeshLiveReads(h); hits != 2 || misses != 1 {
		t.Fatalf("MeshLiveReads = %d hits, %d misses; want 2, 1", hits, misses)
	}
}
