package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func rolloutOp(kind history.FencingOpKind, pod string, gen int64, call, ret int) history.MigrationOp {
	d := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return history.MigrationOp{FencingOp: history.FencingOp{Session: "c:s", Kind: kind, Owner: pod, Gen: gen, OK: true, Call: d(call), Return: d(ret)}, Pod: pod, Phase: "A"}
}

func TestStragglerIssuesCarried(t *testing.T) {
	st := []history.Straggler{{Pod: "a0", Phase: "A", Left: 50 * time.Millisecond, Gone: 300 * time.Millisecond, Listed: true, Serving: true}}
	before := rolloutOp(history.OpAcquire, "a0", 4, 100, 101)
	read := func(gen int64) history.MigrationOp {
		r := rolloutOp(history.OpKnown, "audit", gen, 900, 901)
		r.Phase = "C"
		return r
	}
	// The backfill ran after the straggler's last acquire and carried it.
	if r := judged(t, StragglerIssuesCarried, StragglerIssuesCarriedInput{Ops: []history.MigrationOp{before, read(4)}, Stragglers: st, BackfillAt: 400 * time.Millisecond}); r.Status != check.Pass {
		t.Fatalf("carried: %v", r)
	}
	// An acquire after the backfill, left above the counter C reads.
	late := rolloutOp(history.OpAcquire, "a0", 5, 450, 451)
	if r := stragglerIssuesCarried([]history.MigrationOp{before, late, read(4)}, st, 400*time.Millisecond); r.Status != check.Fail {
		t.Fatalf("issued behind the backfill: %v", r)
	}
	// Premises: an unlisted straggler, one that took nothing, no read-back.
	unlisted := []history.Straggler{{Pod: "a0", Phase: "A", Left: 50 * time.Millisecond, Serving: true}}
	if r := stragglerIssuesCarried([]history.MigrationOp{before, read(4)}, unlisted, 400*time.Millisecond); r.Status != check.Unknown {
		t.Fatalf("unlisted: %v", r)
	}
	if r := stragglerIssuesCarried([]history.MigrationOp{read(4)}, st, 400*time.Millisecond); r.Status != check.Unknown {
		t.Fatalf("no acquire: %v", r)
	}
	if r := stragglerIssuesCarried([]history.MigrationOp{before}, st, 400*time.Millisecond); r.Status != check.Unknown {
		t.Fatalf("no read-back: %v", r)
	}
}

func TestPhasesAdjacent(t *testing.T) {
	s := func(at int, pods map[string]int) history.KeyspaceSample {
		return history.KeyspaceSample{At: time.Duration(at) * time.Millisecond, Pods: pods}
	}
	ok := []history.KeyspaceSample{s(0, map[string]int{"O": 3}), s(10, map[string]int{"O": 1, "A": 2}), s(20, map[string]int{"A": 3}), s(30, map[string]int{"A": 1, "B": 2})}
	if r := judged(t, PhasesAdjacent, PhasesAdjacentInput{Samples: ok, MinSamples: 3}); r.Status != check.Pass {
		t.Fatalf("adjacent: %v", r)
	}
	skip := append(append([]history.KeyspaceSample(nil), ok...), s(40, map[string]int{"O": 1, "A": 1, "B": 1}))
	if r := phasesAdjacent(skip, 3); r.Status != check.Fail {
		t.Fatalf("O with B: %v", r)
	}
	if r := phasesAdjacent([]history.KeyspaceSample{s(0, map[string]int{"O": 3}), s(10, map[string]int{"A": 3}), s(20, map[string]int{"B": 3})}, 3); r.Status != check.Unknown {
		t.Fatalf("no rollout in flight: %v", r)
	}
	if r := phasesAdjacent(ok[:2], 3); r.Status != check.Unknown {
		t.Fatalf("too few observations: %v", r)
	}
}

func TestGateModeDoors(t *testing.T) {
	correct := []GateStep{
		{Step: "enter compatible", Allowed: true, From: "C", To: "C", ModeFrom: "disabled", ModeTo: "compatible"},
		{Step: "rollback to B", MovePhase: true, From: "C", To: "C", ModeFrom: "compatible", ModeTo: "compatible"},
		{Step: "enable", Allowed: true, From: "C", To: "C", ModeFrom: "compatible", ModeTo: "enabled"},
		{Step: "revert mode", From: "C", To: "C", ModeFrom: "enabled", ModeTo: "enabled"},
		{Step: "rollback to B", MovePhase: true, From: "C", To: "C", ModeFrom: "enabled", ModeTo: "enabled"},
	}
	if r := judged(t, GateModeDoors, correct); r.Status != check.Pass {
		t.Fatalf("correct: %v", r)
	}
	for name, s := range map[string]GateStep{
		"rollback in compatible": {Step: "rollback to B", MovePhase: true, Allowed: true, From: "C", To: "B", ModeFrom: "compatible", ModeTo: "compatible"},
		"phase with mode":        {Step: "rollback to B", MovePhase: true, Allowed: true, From: "C", To: "B", ModeFrom: "compatible", ModeTo: "disabled"},
		"revert enabled":         {Step: "revert mode", Allowed: true, From: "C", To: "C", ModeFrom: "enabled", ModeTo: "disabled"},
	} {
		bad := append(append([]GateStep(nil), correct...), s)
		if r := gateModeDoors(bad); r.Status != check.Fail {
			t.Fatalf("%s not caught: %v", name, r)
		}
	}
	// A log that never asked at the enabled door proves nothing about it.
	if r := gateModeDoors(correct[:3]); r.Status != check.Unknown {
		t.Fatalf("premise: %v", r)
	}
}
