package fault_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

// Every fault runs against a real 3×1 cluster, does what it says, and the
// topology's Reset undoes it.
func TestFaultsOnRealCluster(t *testing.T) {
	ctx, topo := fault.StartParallelCluster(t)
	const key = "fault-test-key"
	s := slot.Of(key)
	owner, err := topo.NodeForSlot(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Do(ctx, "SET", key, "v"); err != nil {
		t.Fatal(err)
	}

	t.Run("move-slot", func(t *testing.T) {
		if _, err := fault.Apply(ctx, topo, fault.MoveSlot{Slot: s, To: -1}); err != nil {
			t.Fatal(err)
		}
		now, err := topo.NodeForSlot(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if now == owner {
			t.Fatalf("slot %d still on %s", s, owner.Name())
		}
		if v, err := now.Do(ctx, "GET", key); err != nil || v != "v" {
			t.Fatalf("key after move on %s: %v %v", now.Name(), v, err)
		}
	})
	for _, mode := range []fault.FailoverMode{fault.FailoverTakeover, fault.FailoverGraceful, fault.FailoverKill} {
		t.Run("failover-"+string(mode), func(t *testing.T) {
			if err := topo.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			w, err := fault.Apply(ctx, topo, fault.Failover{Shard: 1, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s took %v", w.Target, w.End.Sub(w.Start))
		})
	}
	// NOTE: a graceful failover of a shard asked for seconds after a kill
	// failover of it (and Reset's takeover
	// back) falls inside the primaries' vote quarantine; Failover waits it
	// out, and the takeover still happens.
	t.Run("graceful-after-kill", func(t *testing.T) {
		if err := topo.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := fault.Apply(ctx, topo, fault.Failover{Shard: 1, Mode: fault.FailoverGraceful})
		if err != nil {
			t.Fatal(err)
		}
		if q := topo.VoteQuarantine(1); !q.After(w.End) {
			t.Errorf("no quarantine noted after the election: %v", q)
		}
		t.Logf("%s took %v", w.Target, w.End.Sub(w.Start))
	})
	t.Run("not-confirmed", func(t *testing.T) {
		_, err := fault.Apply(ctx, topo, fault.Failover{Shard: 7, Mode: fault.FailoverGraceful})
		e, ok := fault.NotConfirmed(err)
		if !ok || !e.Unavailable || e.Fault != "node/failover-graceful" {
			t.Errorf("Apply on a missing shard: %#v", err)
		}
	})
	t.Run("refuse-writes", func(t *testing.T) {
		if err := topo.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		node, err := topo.NodeForSlot(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := fault.Apply(ctx, topo, fault.RefuseWrites{Node: node.Name(), Duration: 500 * time.Millisecond})
			done <- err
		}()
		// Within the fault's 500 ms: a bound passing leaves setErr nil or
		// not an OOM, which the check below reports. The commands run on
		// the test's context, not the wait's, so the bound never cancels
		// the GET that follows a refused SET.
		var setErr, getErr error
		_ = wait.Within(ctx, 400*time.Millisecond, 20*time.Millisecond, func(context.Context) error {
			if _, setErr = node.Do(ctx, "SET", key, "w"); setErr == nil {
				return errors.New("SET still accepted")
			}
			_, getErr = node.Do(ctx, "GET", key)
			return nil
		})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if setErr == nil || !strings.Contains(setErr.Error(), "OOM") {
			t.Errorf("SET while %s refuses writes: %v, want an OOM error", node.Name(), setErr)
		}
		if getErr != nil {
			t.Errorf("GET while %s refuses writes: %v, want it served", node.Name(), getErr)
		}
		if _, err := node.Do(ctx, "SET", key, "v"); err != nil {
			t.Errorf("SET after the fault: %v (memory limit not restored)", err)
		}
	})
	t.Run("links", func(t *testing.T) {
		if err := topo.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		for _, f := range []fault.Fault{
			fault.Latency{Latency: 5 * time.Millisecond},
			fault.ResetPeer{Nodes: []string{"p0"}, Duration: 50 * time.Millisecond},
			fault.KillClients{Client: "nobody"},
			fault.Pause{Node: "p2", Duration: 50 * time.Millisecond},
			fault.ScriptFlush{},
			fault.RestartPrimary{Index: 2},
		} {
			if _, err := fault.Apply(ctx, topo, f); err != nil {
				t.Errorf("%s: %v", f.Name(), err)
			}
		}
	})
	if err := topo.Reset(ctx); err != nil {
		t.Fatalf("reset after faults: %v", err)
	}
	if n, err := topo.NodeForSlot(ctx, s); err != nil || n != owner {
		t.Errorf("reset did not restore slot %d to %s: %v %v", s, owner.Name(), n, err)
	}
}
