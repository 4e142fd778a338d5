package fault

import (
	"testing"
)

// Back-to-back moves of one slot used to leave two primaries pointing at
// each other (the second move's owner lost the slot to a stale heartbeat
// of the first's): every node must name the mover's destination after each
// move.
func TestMoveSlotBackToBackConverges(t *testing.T) {
	ctx, topo := StartParallelCluster(t)
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
