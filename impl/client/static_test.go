package client_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// TestStaticSlotMapKeepsTheOldOwner: after a slot moved, a go-redis pool
// with StaticSlotMap still sends every command for it to the old owner
// (each answered MOVED there and followed, so it succeeds), while a pool
// with the library's own handling reloads its slot map on the first MOVED
// and goes to the new owner. This is what makes the failure-drills controls
// keep dialing a killed primary on every go-redis release.
func TestStaticSlotMapKeepsTheOldOwner(t *testing.T) {
	ts := startTestServers(t)
	ctx := t.Context()
	const key, sends = "static-slot-map", 20
	for _, tc := range []struct {
		name         string
		static       bool
		minM, maxM   int64
		wantRedirect string
	}{
		{"static slot map", true, sends, sends, "every command"},
		// go-redis reloads its slot map asynchronously after a MOVED, so
		// a few more commands may reach the old owner before the reload
		// lands; fewer than half is the library's own handling, all of
		// them the pinned map's.
		{"library's own", false, 1, sends / 2, "only the first commands"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeCluster, Addrs: ts.cluster.Addrs(), NaiveTopology: true, StaticSlotMap: tc.static})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Do(ctx, client.NewCmd("SET", []string{key}, "0")); err != nil {
				t.Fatal(err)
			}
			old, err := ts.cluster.NodeForSlot(ctx, slot.Of(key))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fault.Apply(ctx, ts.cluster, fault.MoveSlot{Slot: slot.Of(key), To: -1}); err != nil {
				t.Fatal(err)
			}
			before, err := movedReplies(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sends {
				if _, err := p.Do(ctx, client.NewCmd("SET", []string{key}, strconv.Itoa(i+1))); err != nil {
					t.Fatalf("set %d after the move: %v", i+1, err)
				}
			}
			after, err := movedReplies(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			if m := after - before; m < tc.minM || m > tc.maxM {
				t.Errorf("the old owner answered MOVED %d times to %d commands, want %s (%d..%d)", m, sends, tc.wantRedirect, tc.minM, tc.maxM)
			}
		})
	}
}

// movedReplies is how many MOVED replies n has sent (INFO errorstats).
func movedReplies(ctx context.Context, n *fixtures.Node) (int64, error) {
	v, err := n.Do(ctx, "INFO", "errorstats")
	if err != nil {
		return 0, fmt.Errorf("info errorstats on %s: %w", n.Name(), err)
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_MOVED:count="); ok {
			return strconv.ParseInt(rest, 10, 64)
		}
	}
	return 0, nil
}
