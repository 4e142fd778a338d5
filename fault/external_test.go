package fault_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
)

// No fault reaches a target slotgate did not start. Every fault's
// Available refuses an attached topology with fixtures.ErrUncontrollable,
// so Apply never injects and a row that needs one reports not run.
func TestFaultsRefuseAttachedTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	local, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	if local != nil {
		t.Cleanup(func() { _ = local.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	topo, err := fixtures.Attach(ctx, fixtures.External{Endpoints: []string{local.Nodes()[0].Addr()}})
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	faults := []fault.Fault{
		fault.ScriptFlush{}, fault.RestartPrimary{}, fault.Failover{Mode: fault.FailoverKill},
		fault.MoveSlot{Slot: 1}, fault.Latency{Latency: time.Millisecond}, fault.ResetPeer{Duration: time.Millisecond},
		fault.KillClients{Client: "x"}, fault.Pause{Node: "standalone", Duration: time.Millisecond},
	}
	for _, f := range faults {
		if err := f.Available(topo); !errors.Is(err, fixtures.ErrUncontrollable) {
			t.Errorf("%s.Available(attached) = %v, want ErrUncontrollable", f.Name(), err)
		}
		if _, err := fault.Apply(ctx, topo, f); !errors.Is(err, fixtures.ErrUncontrollable) {
			t.Errorf("Apply(%s) on an attached target = %v, want ErrUncontrollable", f.Name(), err)
		}
		if f.Name() == "script-cache/flush" || f.Name() == "client/kill-x" {
			if err := f.Available(local); err != nil {
				t.Errorf("%s.Available(started) = %v", f.Name(), err)
			}
		}
	}
}
