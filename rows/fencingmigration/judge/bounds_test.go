package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func liveOld(from, to, every int, old int) []history.KeyspaceSample {
	var out []history.KeyspaceSample
	for at := from; at <= to; at += every {
		out = append(out, history.KeyspaceSample{At: ms(at), OldLeases: old, Pods: map[string]int{"B": 3}})
	}
	return out
}

func TestDrainBounded(t *testing.T) {
	bound, tol := 1000*time.Millisecond, 100*time.Millisecond
	samples := liveOld(0, 2000, 10, 2)
	good := DrainAttempt{Step: "advance to C", Asked: ms(100), Ended: ms(1150), Stuck: true, Err: "drain stuck"}
	if r := judged(t, DrainBounded, DrainBoundedInput{Attempt: good, Samples: samples, Target: "C", Bound: bound, Tolerance: tol, MinSamples: 20}); r.Status != check.Pass {
		t.Fatalf("bounded drain: %v", r)
	}
	for name, a := range map[string]DrainAttempt{
		"cut by the scenario": {Step: "advance to C", Asked: ms(100), Ended: ms(1600), Cut: true, Err: "context deadline exceeded"},
		"generic timeout":     {Step: "advance to C", Asked: ms(100), Ended: ms(1050), Err: "still refused after 15s"},
		"late":                {Step: "advance to C", Asked: ms(100), Ended: ms(1500), Stuck: true},
		"admitted":            {Step: "advance to C", Asked: ms(100), Ended: ms(700), Admitted: true},
	} {
		if r := drainBounded(a, samples, "C", bound, tol, 20); r.Status != check.Fail {
			t.Errorf("%s not caught: %v", name, r)
		}
	}
	// A C pod seen while the old keyspace is live fails even if the step
	// itself ended well.
	ranC := append(liveOld(0, 2000, 10, 2), history.KeyspaceSample{At: ms(500), OldLeases: 2, Pods: map[string]int{"C": 1}})
	if r := drainBounded(good, ranC, "C", bound, tol, 20); r.Status != check.Fail {
		t.Errorf("C pod not caught: %v", r)
	}
	// Premise: the old keyspace drained meanwhile (the stuck pod died), or
	// too few observations — nothing stuck to bound.
	drained := append(liveOld(0, 400, 10, 2), liveOld(410, 2000, 10, 0)...)
	if r := drainBounded(good, drained, "C", bound, tol, 20); r.Status != check.Unknown {
		t.Errorf("drained keyspace: %v", r)
	}
	if r := drainBounded(good, liveOld(0, 2000, 500, 2), "C", bound, tol, 20); r.Status != check.Unknown {
		t.Errorf("too few observations: %v", r)
	}
}

func phased(op history.MigrationOp, phase string) history.MigrationOp { op.Phase = phase; return op }

func TestGenerationsCarried(t *testing.T) {
	// B issued 5 from the new counter (old counter at 3); the backfill at
	// 100; C then acquires.
	before := []history.MigrationOp{
		phased(mop(history.OpAcquire, "p0", 3, true, 0, 2), "A"),
		phased(mop(history.OpAcquire, "p1", 5, true, 50, 52), "B"),
	}
	good := append(append([]history.MigrationOp(nil), before...), phased(mop(history.OpAcquire, "p2", 6, true, 150, 152), "C"))
	if r := judged(t, GenerationsCarried, GenerationsCarriedInput{Ops: good, Since: ms(40), At: ms(100), Ahead: "B"}); r.Status != check.Pass {
		t.Fatalf("max-merged backfill: %v", r)
	}
	overwrite := append(append([]history.MigrationOp(nil), before...), phased(mop(history.OpAcquire, "p2", 4, true, 150, 152), "C"))
	if r := generationsCarried(overwrite, ms(40), ms(100), "B"); r.Status != check.Fail {
		t.Fatalf("overwrite backfill not caught: %v", r)
	}
	// Premise: the highest issue before the step came from another phase,
	// or before since, or the session was never acquired after it.
	if r := generationsCarried(good, ms(40), ms(100), "A"); r.Status != check.Unknown {
		t.Errorf("no A-ahead session: %v", r)
	}
	if r := generationsCarried(good, ms(60), ms(100), "B"); r.Status != check.Unknown {
		t.Errorf("B issue before since: %v", r)
	}
	if r := generationsCarried(before, ms(40), ms(100), "B"); r.Status != check.Unknown {
		t.Errorf("nothing acquired after the step: %v", r)
	}
}
