package fault

import (
	"fmt"
	"strings"
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

// Until keeps the slot MIGRATING past Hold until it reports true: every call
// must find the slot still migrating on its owner, and the move goes on once
// it says so.
func TestMoveSlotHoldsUntil(t *testing.T) {
	ctx, topo := StartParallelCluster(t)
	const slot = 7001
	src, err := topo.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	calls, migrating := 0, 0
	until := func() bool {
		calls++
		if v, err := src.Do(ctx, "CLUSTER", "NODES"); err == nil && strings.Contains(fmt.Sprint(v), "[7001->-") {
			migrating++
		}
		return calls >= 5
	}
	if _, err := (MoveSlot{Slot: slot, To: -1, Until: until}).Inject(ctx, topo); err != nil {
		t.Fatal(err)
	}
	if calls != 5 || migrating != 5 {
		t.Fatalf("Until called %d times (want 5), the slot migrating at %d of them", calls, migrating)
	}
	if owner, err := topo.SlotOwner(ctx, slot); err != nil || owner == src {
		t.Fatalf("after the move the owner is %v (%v), was %s", owner, err, src.Name())
	}
}
