package traffic

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
)

func standalonePool(t *testing.T) client.Pool {
	t.Helper()
	topo := standalone(t)
	p, err := client.NewPool(t.Context(), client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// The counter workload records every call with its worker, kind, key and
// the value it returned; a read-back is Final; every call also lands in
// the scenario history with its slot, backend and outcome.
func TestCounterWorkloadRecords(t *testing.T) {
	pool := standalonePool(t)
	scenario := history.NewRecorder("counter", 1, nil)
	ctx := history.With(t.Context(), scenario)
	w := &CounterWorkload{Pool: pool, Clock: scenario.Clock(), Keys: []string{"tt:ctr:{a}", "tt:ctr:{b}"}, OpTimeout: 2 * time.Second}
	for _, k := range w.Keys {
		if _, err := pool.Do(ctx, client.NewCmd("DEL", []string{k})); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	go stopWhen(t, stop, func() bool {
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

// The drill workload: per key, seq 1, 2, … at its pace, each op
// attributed to its key and shard; a write that timed out is unknown.
func TestDrillWorkloadRecords(t *testing.T) {
	pool := standalonePool(t)
	scenario := history.NewRecorder("drill", 1, nil)
	ctx := history.With(t.Context(), scenario)
	w := &DrillWorkload{Pool: pool, Clock: scenario.Clock(), Keys: []DrillKey{{Key: "tt:drill:1", Shard: 0}, {Key: "tt:drill:2", Shard: 2}},
		Timeout: 2 * time.Second, Pace: 15 * time.Millisecond}
	stop := make(chan struct{})
	began := time.Now()
	go stopWhen(t, stop, func() bool {
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
	go stopWhen(t, stop, func() bool { return len(scenario.Snapshot().Ops) > before })
	w.Run(ctx, stop)
	ops := scenario.Snapshot().Ops
	if o := ops[len(ops)-1]; o.Outcome != history.Unknown || o.ErrKind != "network" || o.Kind != "set" || o.Slot != slot.Of(o.Client) {
		t.Errorf("timed-out write recorded as %+v", o)
	}
}

// The fencing recorders: every call is recorded with its pod, session,
// generation and answer, and its loud outcome; contention yields one
// winner per round, and only the winner's renew is honoured.
func TestFencingContentionRecords(t *testing.T) {
	pool := standalonePool(t)
	scenario := history.NewRecorder("fencing", 1, nil)
	ctx := history.With(t.Context(), scenario)
	dir := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute})
	var rec Recorder
	sessions := []fencing.Session{{Community: "tt-fence", ID: "a"}, {Community: "tt-fence", ID: "b"}}
	w := Contention{Sessions: sessions, Rounds: 2, Contenders: 3, Workers: 2}
	if err := w.Run(ctx, dir, scenario.Clock(), &rec); err != nil {
		t.Fatal(err)
	}
	ops := rec.FencingHistory()
	// Per session and round: 3 acquires; the winner's renew and validate
	// (and a stale validate of gen-1 once the generation is past 1); 2
	// losers × 3 calls; then release, release, renew. 2 sessions × 2 rounds.
	stale := 0
	for _, op := range ops {
		if op.Kind == history.OpAcquire && op.OK && op.Gen > 1 {
			stale++
		}
	}
	if want := 2*2*(3+2+6+3) + stale; len(ops) != want {
		t.Fatalf("%d fencing ops, want %d", len(ops), want)
	}
	if len(rec.Outcomes()) != len(ops) || len(scenario.Snapshot().Ops) != len(ops) {
		t.Fatalf("%d outcomes, %d scenario ops for %d fencing ops", len(rec.Outcomes()), len(scenario.Snapshot().Ops), len(ops))
	}
	winners := map[string]int{}
	gens := map[string]int64{}
	for _, op := range ops {
		if op.Unknown || op.Return < op.Call || op.Owner != pod(op.Client) && op.Kind != history.OpAcquire {
			t.Errorf("op %+v", op)
		}
		if op.Kind == history.OpAcquire && op.OK {
			winners[op.Session]++
			if op.Gen <= gens[op.Session] {
				t.Errorf("acquire %+v: generation not above %d", op, gens[op.Session])
			}
			gens[op.Session] = op.Gen
		}
	}
	for _, s := range sessions {
		if winners[s.String()] != 2 {
			t.Errorf("%s: %d winning acquires in 2 rounds", s, winners[s.String()])
		}
	}
	for _, o := range rec.Outcomes() {
		if o.ErrKind != "" {
			t.Errorf("outcome %+v", o)
		}
	}
}

// WritePresence writes the pattern it says it wrote: present keys with
// their values, the rest nil; the reader records each bulk read in order.
func TestPresenceRecords(t *testing.T) {
	pool := standalonePool(t)
	ctx := t.Context()
	store := presence.New(pool, presence.Options{})
	p := WritePresence(ctx, store, rand.New(rand.NewPCG(5, 6)), PresenceLayout{Community: "tt-pres", Keys: 40, ShortTTL: 30 * time.Millisecond, Pinned: map[int]int{100: 2}, Workers: 3})
	if len(p.Keys) != 42 || len(p.Want) != 42 {
		t.Fatalf("%d keys, %d wants, want 42", len(p.Keys), len(p.Want))
	}
	n := 0
	for _, c := range p.States {
		n += c
	}
	if n != 42 || p.States[PresenceSet] == 0 || p.States[PresenceNever] == 0 || p.States[PresenceCleared] == 0 || p.States[PresenceExpired] == 0 {
		t.Fatalf("states %v", p.States)
	}
	// One loud outcome per written key (a cleared key's is its clear).
	if want := p.States[PresenceSet] + p.States[PresenceExpired] + p.States[PresenceCleared]; len(p.Outcomes) != want {
		t.Errorf("%d write outcomes, want %d", len(p.Outcomes), want)
	}
	r := &PresenceReader{Store: store, Clock: NewClock()}
	r.Read(ctx, p.Keys)
	reads := r.Reads()
	if len(reads) != 1 || len(reads[0].Got) != len(p.Keys) || reads[0].Err != "" {
		t.Fatalf("reads %+v", reads)
	}
	present := 0
	for i, k := range p.Keys {
		want, got := p.Want[k], reads[0].Got[i]
		if want.Present != got.Present || want.Value != got.Value {
			t.Errorf("%s: wrote %+v, read %+v", k, want, got)
		}
		if want.Present {
			present++
		}
	}
	if present != p.States[PresenceSet] {
		t.Errorf("%d present keys, states say %d", present, p.States[PresenceSet])
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	r.Read(ctx2, p.Keys[:3])
	if rd := r.Reads()[1]; rd.ErrKind != "network" || rd.Err == "" {
		t.Errorf("cancelled read recorded as %+v", rd)
	}
}

// stopWhen closes stop once cond holds (polled every 2 ms, at most 10 s):
// a workload runs until it has done what the test needs, however late a
// loaded machine schedules it, instead of for a fixed time.
func stopWhen(t *testing.T, stop chan struct{}, cond func() bool) {
	defer close(stop)
	for until := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(until) {
			t.Errorf("stopWhen: condition not met in 10 s")
			return
		}
	}
}
