package workload

import (
	"slices"
	"testing"
	"time"

	"github.com/slotgate/slotgate/rows/marconi/judge"
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

// MeshLiveReads counts only OK sends whose recipient had a session live
// across the whole send.
func TestMeshLiveReads(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := judge.MeshHistory{
		Sessions: []judge.MeshSession{
			{SessionID: "s1", Recipient: "t/p/alice", Registered: ms(10)},                                       // live from 10 on
			{SessionID: "s2", Recipient: "t/p/bob", Registered: ms(10), DeregisterStart: ms(50), Ended: ms(60)}, // live 10..50
		},
		Sends: []judge.MeshSend{
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
