package fault_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/internal/wait"
)

// TestSentinelFailoverContainers fails a replicated topology in containers
// over by Sentinel (kill, then a cut of the primary's peers) while a
// Sentinel-following client on the host writes, and sees the client write
// to the new primary; lag-kill is refused there (no peer proxy to delay).
// It skips without a Docker engine.
func TestSentinelFailoverContainers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.ReplicatedSpec(1),
		fixtures.WithProvider(fixtures.ProviderContainers), fixtures.WithValkeyImage(valkeyImage(t, ctx)), fixtures.WithLogger(t.Logf))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := (fault.SentinelFailover{Mode: fault.SentinelLagKill}).Available(topo); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("lag-kill Available on containers = %v, want errors.ErrUnsupported", err)
	}
	pool, err := client.NewPool(ctx, client.Options{
		Backend: client.BackendGoRedis, Mode: client.ModeSentinel,
		Addrs: topo.SentinelAddrs(), MasterName: topo.MasterName(), AddrMap: topo.ClientAddr,
		ClientName: "fault-test", ReadTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	for _, mode := range []fault.SentinelMode{fault.SentinelKill, fault.SentinelCut} {
		if err := topo.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		f := fault.SentinelFailover{Mode: mode}
		w, err := fault.Apply(ctx, topo, f)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		t.Logf("%s: %s in %v", f.Name(), w.Target, w.End.Sub(w.Start).Round(time.Millisecond))
		key := "after-" + string(mode)
		if err := wait.Within(ctx, 30*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
			_, err := pool.Do(ctx, client.NewCmd("SET", []string{key}, "v"))
			return err
		}); err != nil {
			t.Fatalf("%s: SET through the sentinel client: %v", mode, err)
		}
		p, err := topo.CurrentPrimary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, promoted, _ := strings.Cut(w.Target, "→"); p.Name() != promoted {
			t.Errorf("%s: current primary %s, the fault promoted %s", mode, p.Name(), promoted)
		}
		if v, err := p.Do(ctx, "GET", key); err != nil || v != "v" {
			t.Errorf("%s: GET %s on the new primary %s = %v, %v", mode, key, p.Name(), v, err)
		}
		if err := f.Heal(ctx, topo, w); err != nil {
			t.Fatal(err)
		}
	}
}
