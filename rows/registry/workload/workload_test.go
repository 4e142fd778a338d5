package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/registry"
	"github.com/slotgate/slotgate/internal/wait"
)

// The registry workload against a real registry on the standalone node:
// each runtime's life is heartbeats from its join, then exactly one end
// (a crash at one instant, or a deregister call), attributed to it; the
// observers' discoveries list only the population, at its addresses.
func TestRegistryMeshRecords(t *testing.T) {
	topo := standalone(t)
	ctx := t.Context()
	pool, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	reg, err := registry.New(pool, registry.Options{Interval: 40 * time.Millisecond, Key: []byte("tt-key"), Prefix: "tt-reg:" + uniq() + ":", Index: "tt-reg-index-" + uniq()})
	if err != nil {
		t.Fatal(err)
	}
	scenario := history.NewRecorder("registry", 1, nil)
	m := &Mesh{Registry: reg, Discover: reg.Discover, Initial: 3, Observers: 1, DiscoverEvery: 25 * time.Millisecond,
		Rand: rand.New(rand.NewPCG(3, 4)), Name: "tt"}
	m.Start(history.With(ctx, scenario), scenario.Clock())
	if m.Live() != 3 {
		t.Fatalf("Live = %d after start, want 3", m.Live())
	}
	// Observed, not slept: every runtime has heartbeated twice and the
	// observer discovered three times before the crash (a loaded machine
	// runs the 25 ms loops late), and once more after it.
	heartbeatsAndDiscoveries := func() (map[string]int, int) {
		beats, found := map[string]int{}, 0
		for _, op := range m.History().Ops {
			switch {
			case strings.HasPrefix(op.Runtime, "observer-") && string(op.Kind) == "discover":
				found++
			case string(op.Kind) == "heartbeat":
				beats[op.Runtime]++
			}
		}
		return beats, found
	}
	waitFor(t, "two heartbeats per runtime and three discoveries", func() bool {
		beats, found := heartbeatsAndDiscoveries()
		enough := len(beats) == 3 && found >= 3
		for _, n := range beats {
			enough = enough && n >= 2
		}
		return enough
	})
	churned := m.ChurnEvents()
	m.Crash(1)
	if m.Live() != 2 {
		t.Fatalf("Live = %d after a crash, want 2", m.Live())
	}
	if got := m.ChurnEvents(); got != churned+1 {
		t.Fatalf("ChurnEvents = %d after a crash, want %d", got, churned+1)
	}
	_, before := heartbeatsAndDiscoveries()
	waitFor(t, "a discovery after the crash", func() bool { _, found := heartbeatsAndDiscoveries(); return found > before })
	m.Stop(true)
	h := m.History()

	if len(h.Population) != 3 {
		t.Fatalf("population %v, want 3 runtimes", h.Population)
	}
	type life struct {
		kinds []string
		last  time.Duration
	}
	lives := map[string]*life{}
	discoveries := 0
	for _, op := range h.Ops {
		if op.Return < op.Call {
			t.Errorf("op %+v returned before its call", op)
		}
		if op.ErrKind != "" {
			t.Errorf("op %+v failed", op)
		}
		if strings.HasPrefix(op.Runtime, "observer-") {
			if string(op.Kind) == "discover" {
				discoveries++
				for _, f := range op.Found {
					if addr, ok := h.Population[f.ID]; !ok || addr != f.Addr {
						t.Errorf("discovered %s at %s: population has %q", f.ID, f.Addr, addr)
					}
				}
			}
			continue
		}
		if _, ok := h.Population[op.Runtime]; !ok {
			t.Fatalf("op %+v by a runtime not in the population", op)
		}
		l := lives[op.Runtime]
		if l == nil {
			l = &life{}
			lives[op.Runtime] = l
		}
		if op.Call < l.last {
			t.Errorf("%s: %s at %v before its previous op returned at %v", op.Runtime, op.Kind, op.Call, l.last)
		}
		l.kinds, l.last = append(l.kinds, string(op.Kind)), op.Return
		if string(op.Kind) == "crash" && op.Call != op.Return {
			t.Errorf("crash %+v spans time", op)
		}
	}
	crashed, left := 0, 0
	for id, l := range lives {
		n := len(l.kinds)
		if n < 3 || l.kinds[0] != "heartbeat" {
			t.Errorf("%s: life %v, want heartbeats from its join", id, l.kinds)
			continue
		}
		for _, k := range l.kinds[:n-1] {
			if k != "heartbeat" {
				t.Errorf("%s: life %v, want only heartbeats before its end", id, l.kinds)
			}
		}
		switch l.kinds[n-1] {
		case "crash":
			crashed++
		case "deregister":
			left++
		default:
			t.Errorf("%s: life %v ends without a crash or a leave", id, l.kinds)
		}
	}
	if crashed != 1 || left != 2 {
		t.Errorf("%d crashed and %d left, want 1 and 2", crashed, left)
	}
	if discoveries < 3 {
		t.Errorf("%d discoveries, want the 3 waited for", discoveries)
	}
	if n := len(scenario.Snapshot().Ops); n != len(h.Ops) {
		t.Errorf("scenario history has %d ops, registry history %d", n, len(h.Ops))
	}
}

// waitFor polls cond every 5 ms for up to 10 s and fails the test naming
// what did not happen.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.Within(t.Context(), 10*time.Second, 5*time.Millisecond, func(context.Context) error {
		if !cond() {
			return fmt.Errorf("still no %s", what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
