package workload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
)

// The drill workload: per key, seq 1, 2, … at its pace, each op
// attributed to its key and shard; a write that timed out is unknown.
func TestWritersRecord(t *testing.T) {
	pool := clienttest.Standalone(t, fixturestest.Get(t, server))
	scenario := history.NewRecorder("drill", 1, nil)
	ctx := history.With(t.Context(), scenario)
	w := &Writers{Pool: pool, Clock: scenario.Clock(), Keys: []Key{{Key: "tt:drill:1", Shard: 0}, {Key: "tt:drill:2", Shard: 2}},
		Timeout: 2 * time.Second, Pace: 15 * time.Millisecond}
	stop := make(chan struct{})
	began := time.Now()
	go stopWhen(t, stop, "two writes on each key", func() bool {
		per := map[string]int{}
		for _, o := range w.Ops() {
			per[o.Key]++
		}
		return per["tt:drill:1"] >= 2 && per["tt:drill:2"] >= 2
	})
	w.Run(ctx, stop)
	ran := time.Since(began)
	w.ReadBack(ctx, pool)
	seq := map[string]int64{}
	for _, o := range w.Ops() {
		if o.Err != "" {
			t.Fatalf("op %+v failed", o)
		}
		want := map[string]int{"tt:drill:1": 0, "tt:drill:2": 2}[o.Key]
		if o.Shard != want {
			t.Errorf("op on %s attributed to shard %d", o.Key, o.Shard)
		}
		if o.Final {
			if o.Seq != seq[o.Key] {
				t.Errorf("%s read back %d, last write %d", o.Key, o.Seq, seq[o.Key])
			}
			continue
		}
		if o.Seq != seq[o.Key]+1 {
			t.Errorf("%s: seq %d after %d", o.Key, o.Seq, seq[o.Key])
		}
		seq[o.Key] = o.Seq
	}
	for k, n := range seq {
		// Bounded by the time the run really took, so it judges the
		// pace, not how late a loaded machine woke the stop.
		if most := int64(ran/w.Pace) + 1; n < 2 || n > most {
			t.Errorf("%s: %d writes in %v at a %v pace (want 2..%d)", k, n, ran, w.Pace, most)
		}
	}
	// A write whose deadline passed is recorded as unknown.
	w.Timeout = time.Nanosecond
	stop = make(chan struct{})
	before := len(scenario.Snapshot().Ops)
	go stopWhen(t, stop, "recorded write past the deadline", func() bool { return len(scenario.Snapshot().Ops) > before })
	w.Run(ctx, stop)
	ops := scenario.Snapshot().Ops
	if o := ops[len(ops)-1]; o.Outcome != history.Unknown || o.ErrKind != "network" || o.Kind != "set" || o.Slot != slot.Of(o.Client) {
		t.Errorf("timed-out write recorded as %+v", o)
	}
}

// stopWhen closes stop once cond holds (polled every 2 ms, at most 10 s):
// a workload runs until it has done what the test needs, however late a
// loaded machine schedules it, instead of for a fixed time.
func stopWhen(t *testing.T, stop chan struct{}, what string, cond func() bool) {
	defer close(stop)
	err := wait.Within(t.Context(), 10*time.Second, 2*time.Millisecond, func(context.Context) error {
		if !cond() {
			return fmt.Errorf("no %s yet", what)
		}
		return nil
	})
	if err != nil {
		t.Errorf("stopWhen: %v", err)
	}
}

// The timelines leave out the read-back and name reads and writes apart; a
// timeout is unknown, a refusal failed.
func TestTimelineOps(t *testing.T) {
	drill := []judge.DrillOp{
		{Key: "k", Seq: 1, Call: 1, Return: 2},
		{Key: "k", Seq: 2, ErrKind: "network", Call: 3, Return: 4},
		{Key: "k", Seq: 3, ErrKind: "CLUSTERDOWN", Call: 5, Return: 6},
		{Key: "k", Seq: 3, Final: true, Call: 7, Return: 8},
	}
	got := TimelineOps("go-redis", drill)
	want := []history.Outcome{history.OK, history.Unknown, history.Failed}
	if len(got) != len(want) {
		t.Fatalf("%d timeline ops, want %d (read-back left out)", len(got), len(want))
	}
	for i, o := range got {
		if o.Outcome != want[i] || o.Backend != "go-redis" || o.Kind != "set" || o.Start != drill[i].Call || o.End != drill[i].Return {
			t.Errorf("op %d: %+v, want outcome %s", i, o, want[i])
		}
	}
	replica := []judge.ReplicaOp{{Key: "k", Call: 1, Return: 2}, {Key: "k", Read: true, ErrKind: "network", Call: 3, Return: 4}}
	rgot := ReplicaTimelineOps("valkey-go", replica)
	if len(rgot) != 2 || rgot[0].Backend != "valkey-go writes" || rgot[0].Kind != "set" || rgot[0].Outcome != history.OK ||
		rgot[1].Backend != "valkey-go reads" || rgot[1].Kind != "get" || rgot[1].Outcome != history.Unknown {
		t.Errorf("replica timeline %+v", rgot)
	}
}
