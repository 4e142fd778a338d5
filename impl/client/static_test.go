package client_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

// TestStaticSlotMapKeepsTheOldOwner: after a slot moved, a go-redis pool
// with StaticSlotMap still sends every command for it to the old owner
// (each answered MOVED there and followed, so it succeeds), while a pool
// with the library's own handling reloads its slot map after the first
// MOVED and goes to the new owner. This is what makes the failure-drills
// controls keep dialing a killed primary on every go-redis release.
//
// go-redis reloads asynchronously, so the library's own pool is first
// driven until a command draws no MOVED (the reload landed; bounded), the
// static one for as long; then the next commands are counted: all of the
// static pool's answered MOVED, none of the library's.
func TestStaticSlotMapKeepsTheOldOwner(t *testing.T) {
	ts := startTestServers(t)
	ctx := t.Context()
	const key, sends = "static-slot-map", 20
	for _, tc := range []struct {
		name   string
		static bool
		wantM  int64
	}{
		{"static slot map", true, sends},
		{"library's own", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeCluster, Addrs: ts.cluster.Addrs(), NaiveTopology: true, StaticSlotMap: tc.static})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			set := func(v int) error {
				_, err := p.Do(ctx, client.NewCmd("SET", []string{key}, strconv.Itoa(v)))
				return err
			}
			if err := set(0); err != nil {
				t.Fatal(err)
			}
			old, err := ts.cluster.NodeForSlot(ctx, slot.Of(key))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fault.Apply(ctx, ts.cluster, fault.MoveSlot{Slot: slot.Of(key), To: -1}); err != nil {
				t.Fatal(err)
			}
			// Settle: until a command draws no MOVED, at most 5 s.
			settled := wait.Within(ctx, 5*time.Second, 10*time.Millisecond, func(context.Context) error {
				before, err := movedReplies(ctx, old)
				if err != nil {
					t.Fatal(err)
				}
				if err := set(1); err != nil {
					t.Fatalf("set after the move: %v", err)
				}
				after, err := movedReplies(ctx, old)
				if err != nil {
					t.Fatal(err)
				}
				if after != before {
					return fmt.Errorf("a set drew MOVED")
				}
				return nil
			}) == nil
			if settled == tc.static {
				t.Fatalf("settled=%v within 5 s after the move (static slot map %v)", settled, tc.static)
			}
			before, err := movedReplies(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sends {
				if err := set(i + 2); err != nil {
					t.Fatalf("set %d after the move: %v", i+2, err)
				}
			}
			after, err := movedReplies(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			if m := after - before; m != tc.wantM {
				t.Errorf("the old owner answered MOVED %d times to %d commands after settling, want %d", m, sends, tc.wantM)
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
