package traffic

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/fencing"
)

// The fencing recorders: every call is recorded with its pod, session,
// generation and answer, and its loud outcome; contention yields one
// winner per round, and only the winner's renew is honoured.
func TestFencingContentionRecords(t *testing.T) {
	pool := clienttest.Standalone(t, standalone(t))
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
