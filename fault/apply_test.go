package fault_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
)

// dropSlot is a fault that leaves the cluster unable to serve: it deletes
// one slot from its owner, so cluster_state turns fail and stays so.
type dropSlot struct{ slot int }

func (dropSlot) Name() string                         { return "test/drop-slot" }
func (dropSlot) Available(t *fixtures.Topology) error { return t.Controllable() }
func (f dropSlot) Inject(ctx context.Context, t *fixtures.Topology) (fault.Window, error) {
	w := fault.Window{Fault: f.Name(), Target: "slot", Start: time.Now()}
	n, err := t.NodeForSlot(ctx, f.slot)
	if err != nil {
		return w, err
	}
	_, err = n.Do(ctx, "CLUSTER", "DELSLOTS", f.slot)
	w.End = time.Now()
	return w, err
}

// Apply records every window into the scenario history, and a topology that
// does not serve after the fault is reported on the window and as the error,
// never swallowed (etcd's failpoint.Inject pattern).
func TestApplyRecordsWindowsAndHealth(t *testing.T) {
	ctx, topo := fault.StartParallelCluster(t)
	rec := history.NewRecorder("fault/apply", 1, nil)
	ctx = history.With(ctx, rec)

	if _, err := fault.Apply(ctx, topo, fault.ScriptFlush{}); err != nil {
		t.Fatal(err)
	}
	_, err := fault.Apply(ctx, topo, dropSlot{slot: 7}, fault.HealthWait(time.Second))
	var nc *fault.NotConfirmedError
	if !errors.As(err, &nc) || !errors.Is(err, fault.ErrUnhealthy) || !strings.Contains(err.Error(), "after the fault") {
		t.Fatalf("unhealthy after the fault: Apply = %v, want a NotConfirmedError wrapping ErrUnhealthy", err)
	}
	ws := rec.Faults()
	if len(ws) != 2 || ws[0].Fault != "script-cache/flush" || ws[0].Unhealthy != "" || ws[1].Fault != "test/drop-slot" || ws[1].Unhealthy == "" {
		t.Fatalf("recorded windows %+v", ws)
	}
	if ws[0].Start < 0 || ws[0].End < ws[0].Start || ws[1].Start < ws[0].End {
		t.Fatalf("windows not on the scenario clock in order: %+v", ws)
	}
	// Before the next fault the topology must serve: it does not, so the
	// fault is not injected and nothing is recorded.
	_, err = fault.Apply(ctx, topo, fault.ScriptFlush{}, fault.HealthWait(500*time.Millisecond))
	if !errors.Is(err, fault.ErrUnhealthy) || !strings.Contains(err.Error(), "before the fault") || len(rec.Faults()) != 2 {
		t.Fatalf("unhealthy before: Apply = %v, %d windows", err, len(rec.Faults()))
	}
	// A held fault lands on the same clock.
	h := fault.Hold(ctx, "link/down", "postgres")
	h.End()
	if ws := rec.Faults(); len(ws) != 3 || ws[2].Fault != "link/down" {
		t.Fatalf("held fault not recorded: %+v", ws)
	}
}
