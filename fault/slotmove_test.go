package fault

import (
	"context"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// Back-to-back moves of one slot used to leave two primaries pointing at
// each other (the second move's owner lost the slot to a stale heartbeat
// of the first's): every node must name the mover's destination after each
// move.
func TestMoveSlotBackToBackConverges(t *testing.T) {
	// Parallel with the package's other topology tests: its own servers and
	// ports, faults only into them, and mostly waiting on Valkey's timers
	// (elections, cluster-node-timeout), so the waits overlap.
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 1))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	const slot = 3221
	for i := 0; i < 20; i++ {
		w, err := MoveSlot{Slot: slot, To: -1}.Inject(ctx, topo)
		if err != nil {
			t.Fatalf("move %d: %v", i, err)
		}
		owner, err := topo.SlotOwner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		id, err := owner.ID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if views, disagree := slotViews(ctx, topo, slot, id); len(disagree) > 0 {
			t.Fatalf("move %d (%s): views disagree: %v", i, w.Target, views)
		}
	}
}
