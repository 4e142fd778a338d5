package workload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/rows/routing/judge"
)

// The counter workload records every call with its worker, kind, key and
// the value it returned; a read-back is Final; every call also lands in
// the scenario history with its slot, backend and outcome.
func TestCountersRecord(t *testing.T) {
	pool := clienttest.Standalone(t, fixturestest.Get(t, server))
	scenario := history.NewRecorder("counter", 1, nil)
	ctx := history.With(t.Context(), scenario)
	w := &Counters{Pool: pool, Clock: scenario.Clock(), Keys: []string{"tt:ctr:{a}", "tt:ctr:{b}"}, OpTimeout: 2 * time.Second}
	for _, k := range w.Keys {
		if _, err := pool.Do(ctx, client.NewCmd("DEL", []string{k})); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	go stopWhen(t, stop, "two ops from each worker", func() bool {
		per := map[int]int{}
		for _, o := range w.Ops() {
			per[o.Worker]++
		}
		return per[0] >= 2 && per[1] >= 2
	})
	w.Run(ctx, stop)
	w.ReadBack(ctx, pool)
	ops := w.Ops()
	last := map[int]int64{}
	final := map[int]int64{}
	writes := map[int]int{}
	for _, o := range ops {
		if o.Err != "" || o.Return < o.Call || len(o.Keys) != 1 || o.Keys[0] != w.Keys[o.Worker] {
			t.Fatalf("op %+v", o)
		}
		if o.Final {
			final[o.Worker] = o.Int
			continue
		}
		writes[o.Worker]++
		if o.Int != last[o.Worker]+1 {
			t.Fatalf("worker %d: %s returned %d after %d (each call adds one)", o.Worker, o.Kind, o.Int, last[o.Worker])
		}
		last[o.Worker] = o.Int
	}
	for i := range w.Keys {
		if writes[i] < 2 || final[i] != int64(writes[i]) {
			t.Errorf("worker %d: %d writes, read back %d", i, writes[i], final[i])
		}
	}
	sops := scenario.Snapshot().Ops
	if len(sops) != len(ops) {
		t.Fatalf("scenario history %d ops, workload %d", len(sops), len(ops))
	}
	for _, o := range sops {
		if o.Outcome != history.OK || o.Backend != string(client.BackendGoRedis) || (o.Slot != slot.Of("a") && o.Slot != slot.Of("b")) {
			t.Fatalf("scenario op %+v", o)
		}
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

// The timeline leaves out the read-back; a timeout is unknown, a redirect
// failed.
func TestTimelineOps(t *testing.T) {
	ops := []judge.Op{
		{Kind: judge.Set, Keys: []string{"k"}, Call: 1, Return: 2},
		{Kind: judge.Get, Keys: []string{"k"}, ErrKind: "network", Call: 3, Return: 4},
		{Kind: judge.Incr, Keys: []string{"c"}, ErrKind: "MOVED", Call: 5, Return: 6},
		{Kind: judge.Get, Keys: []string{"k"}, Final: true, Call: 7, Return: 8},
	}
	got := TimelineOps("go-redis", ops)
	want := []history.Outcome{history.OK, history.Unknown, history.Failed}
	if len(got) != len(want) {
		t.Fatalf("%d timeline ops, want %d (read-back left out)", len(got), len(want))
	}
	for i, o := range got {
		if o.Outcome != want[i] || o.Backend != "go-redis" || o.Kind != string(ops[i].Kind) || o.Start != ops[i].Call || o.End != ops[i].Return {
			t.Errorf("op %d: %+v, want outcome %s", i, o, want[i])
		}
	}
}

// A reply above its worker's call count proves a double application; a
// timed-out call counts as a call (it may have run), a read-back does not.
func TestRepliesShowDouble(t *testing.T) {
	incr := func(worker int, got int64, errKind string) judge.Op {
		return judge.Op{Worker: worker, Kind: judge.Incr, Keys: []string{"c"}, Int: got, ErrKind: errKind}
	}
	for _, tc := range []struct {
		name string
		ops  []judge.Op
		want bool
	}{
		{"each reply its call count", []judge.Op{incr(0, 1, ""), incr(1, 1, ""), incr(0, 2, "")}, false},
		{"a timeout, then the reply that counts it", []judge.Op{incr(0, 0, "network"), incr(0, 2, "")}, false},
		{"a re-send applied twice", []judge.Op{incr(0, 1, ""), incr(0, 3, "")}, true},
		{"the other worker's calls do not count", []judge.Op{incr(1, 1, ""), incr(0, 2, "")}, true},
		{"a read-back is not a call", []judge.Op{incr(0, 1, ""), {Worker: 0, Kind: judge.Get, Keys: []string{"c"}, Final: true, Int: 1}, incr(0, 3, "")}, true},
	} {
		if got := RepliesShowDouble(tc.ops); got != tc.want {
			t.Errorf("%s: RepliesShowDouble = %v, want %v", tc.name, got, tc.want)
		}
	}
}
