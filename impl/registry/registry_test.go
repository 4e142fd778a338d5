package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/registry"
)

func TestRecordAttestation(t *testing.T) {
	key := []byte("k")
	rec := registry.Record{ID: "rt-1", Addr: "10.0.0.1:7000", Seq: 3}
	got, err := registry.Decode(key, "rt-1", registry.Encode(key, rec))
	if err != nil || got != rec {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for name, c := range map[string]struct {
		id, val string
		want    error
	}{
		"wrong key":     {"rt-1", registry.Encode([]byte("other"), rec), registry.ErrUnattested},
		"other id":      {"rt-2", registry.Encode(key, rec), registry.ErrUnattested},
		"unsigned":      {"rt-1", `{"id":"rt-1","addr":"x"}`, registry.ErrUndecodable},
		"garbage":       {"rt-1", "\x00\xff", registry.ErrUndecodable},
		"tampered body": {"rt-1", strings.Replace(registry.Encode(key, rec), "10.0.0.1", "6.6.6.6", 1), registry.ErrUnattested},
	} {
		if _, err := registry.Decode(key, c.id, c.val); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
	}
}

// TestDiscovery runs the scored index and the legacy SCAN on a real
// 3-shard cluster and a standalone node, with both backends.
func TestDiscovery(t *testing.T) {
	specs := []fixtures.Spec{fixtures.ClusterSpec(3, 0), fixtures.StandaloneSpec()}
	topos := make([]*fixtures.Topology, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() { topos[i], errs[i] = fixtures.Run(t.Context(), s) })
	}
	wg.Wait()
	for i := range specs {
		if topos[i] != nil {
			t.Cleanup(func() { _ = topos[i].Close() })
		}
		if errs[i] != nil {
			t.Fatalf("run %s: %v", specs[i], errs[i])
		}
	}
	for _, topo := range topos {
		for _, b := range client.Backends {
			t.Run(topo.Spec.String()+"/"+string(b), func(t *testing.T) {
				mode := client.ModeSingle
				if topo.Spec.IsCluster() {
					mode = client.ModeCluster
				}
				pool, err := client.NewPool(t.Context(), client.Options{Backend: b, Mode: mode, Addrs: topo.Addrs()})
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				testDiscovery(t, pool, topo, string(b))
			})
		}
	}
}

func testDiscovery(t *testing.T, pool client.Pool, topo *fixtures.Topology, ns string) {
	ctx := t.Context()
	prefix, index := ns+":mesh:ready:", ns+":mesh:{ready-index}"
	r, err := registry.New(pool, registry.Options{Interval: 200 * time.Millisecond, Key: []byte("mesh-key"), Prefix: prefix, Index: index})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	for i := range n {
		if err := r.Heartbeat(ctx, registry.Record{ID: fmt.Sprintf("rt%d", i), Addr: fmt.Sprintf("10.0.0.%d:7000", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A forged member: indexed, but its record is attested with another key.
	bad := registry.Encode([]byte("forger"), registry.Record{ID: "evil", Addr: "6.6.6.6:1"})
	mustDo(t, pool, client.NewCmd("SET", []string{prefix + "evil"}, bad))
	mustDo(t, pool, client.NewCmd("ZADD", []string{index}, "+inf", "evil"))
	d, err := r.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Runtimes) != n || d.Unattested != 1 {
		t.Fatalf("discover: %d runtimes (want %d), %d unattested (want 1)", len(d.Runtimes), n, d.Unattested)
	}
	if err := r.Deregister(ctx, "rt0"); err != nil {
		t.Fatal(err)
	}
	if d, _ = r.Discover(ctx); len(d.Runtimes) != n-1 {
		t.Fatalf("after deregister: %d runtimes, want %d", len(d.Runtimes), n-1)
	}

	// The legacy SCAN: say what it does on this topology and backend.
	var found []int
	calls := 0
	for range 6 {
		s, err := r.ScanReady(ctx)
		if err != nil {
			t.Fatalf("scan ready: %v", err)
		}
		found, calls = append(found, len(s.Runtimes)), calls+s.ScanCalls
	}
	t.Logf("%s %s: ScanReady found %v of %d runtimes in 6 calls (%d SCAN round trips), no error", topo.Spec, pool.Backend(), found, n-1, calls)
	complete := true
	for _, f := range found {
		complete = complete && f == n-1
	}
	if topo.Spec.Kind == fixtures.KindStandalone && !complete {
		t.Errorf("SCAN on a standalone node must be complete: %v", found)
	}
	if topo.Spec.Kind == fixtures.KindCluster && complete {
		t.Errorf("SCAN on a multi-shard cluster was complete every time: %v — the negative control would be blind", found)
	}

	// Expiry: stop heartbeating; after one TTL nothing is discoverable and
	// the prune removes every dead score.
	time.Sleep(r.Options().TTL + 20*time.Millisecond) // a duration: the heartbeat TTL must run out
	d, err = r.Discover(ctx)
	if err != nil || len(d.Runtimes) != 0 || d.Pruned != n-1 {
		t.Fatalf("after expiry: %d runtimes, pruned %d (want 0 and %d), err %v", len(d.Runtimes), d.Pruned, n-1, err)
	}
}

func mustDo(t *testing.T, p client.Pool, c client.Cmd) {
	t.Helper()
	if _, err := p.Do(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}
