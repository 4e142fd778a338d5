package audit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// tenantOnNode returns a tenant id whose stream slot n owns, so cutting n's
// link cuts exactly that stream.
func tenantOnNode(t *testing.T, ctx context.Context, s servers, prefix string, n *fixtures.Node) string {
	t.Helper()
	for i := range 10_000 {
		tenant := fmt.Sprintf("%s-%d", prefix, i)
		keys, err := KeysFor(tenant)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := s.cluster.NodeForSlot(ctx, slot.Of(keys.Stream))
		if err != nil {
			t.Fatal(err)
		}
		if owner == n {
			return tenant
		}
	}
	t.Fatalf("no tenant on %s", n.Name())
	return ""
}

// The archiver stays live through both outages of the loss-budget row (002
// §4.2 failure modes: "Redis down: the archiver retries; PG down: entries
// stay pending and are written after"), per backend: the stream's link is
// cut while the archiver sits in XREADGROUP … BLOCK on an idle stream (the
// read whose connection the cut leaves behind), then PostgreSQL's link is
// cut while entries are in flight. After each heal every entry must reach
// PostgreSQL and nothing may stay pending: neither a hung blocking read
// nor a pending entry never re-read.
func TestArchiverLiveAfterLinkCuts(t *testing.T) {
	s := startServers(t)
	for _, b := range []client.Backend{client.BackendGoRedis, client.BackendValkeyGo} {
		t.Run(string(b), func(t *testing.T) {
			ctx := t.Context()
			schema := fmt.Sprintf("cut_%s_%d", map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[b], time.Now().UnixNano())
			if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema}); err != nil {
				t.Fatal(err)
			}
			node := s.cluster.Primaries()[0]
			t.Cleanup(func() { _ = node.EnableProxy(); _ = s.pg.EnableProxy() })
			tenant := tenantOnNode(t, ctx, s, schema, node)
			q, err := NewQueue(QueueOptions{})
			if err != nil {
				t.Fatal(err)
			}
			runWriter(t, ctx, pool(t, s, client.BackendGoRedis, client.RESP3), q)
			m := NewMetrics(nil)
			var mu sync.Mutex
			errs := map[string]int{}
			a, err := NewArchiver(ArchiverOptions{
				Dial: func(ctx context.Context) (client.Pool, error) {
					return client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: s.cluster.Addrs()})
				},
				PostgresDSN: s.pg.DSN(), Schema: schema, Tenants: []string{tenant}, Consumer: "cut-1", Targets: Targets{Primary: true},
				Block: 200 * time.Millisecond, RetryMax: 100 * time.Millisecond, Metrics: m,
				OnError: func(e PipelineError) { mu.Lock(); errs[e.Op]++; mu.Unlock() },
			})
			if err != nil {
				t.Fatal(err)
			}
			actx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { _ = a.Run(actx) })
			t.Cleanup(func() { stop(); wg.Wait() })

			offered := 0
			offer := func(n int) {
				for range n {
					q.Offer(entry(tenant, offered))
					offered++
				}
			}
			// Liveness bound: an idle machine archives 20 entries in well
			// under a second; 30 s is a hung archiver, not a slow one.
			archived := func(what string) {
				t.Helper()
				waitFor(t, what, 30*time.Second, func() bool {
					rows, _ := countRows(t, s.pg.DSN(), schema, TableQueue)
					return rows >= offered && counterValue(t, m, MetricArchiverArchived, tenant) >= float64(offered)
				})
			}
			offer(20)
			archived("the first entries archived")

			// The stream is drained: the archiver parks in XREADGROUP
			// BLOCK (the only blocking command on the node). Cut its
			// node's link under it once the node counts it blocked.
			waitFor(t, "the archiver blocked in XREADGROUP on "+node.Name(), 10*time.Second, func() bool {
				info, err := node.Info(ctx, "clients")
				return err == nil && info["blocked_clients"] != "" && info["blocked_clients"] != "0"
			})
			node.DisableProxy()
			// Held until the archiver saw the cut (observed, not slept).
			waitFor(t, "the archiver's read to fail on the cut link", 10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return errs["read"] > 0
			})
			if err := node.EnableProxy(); err != nil {
				t.Fatal(err)
			}
			offer(20)
			archived("entries appended after the Redis heal archived")

			// PostgreSQL's link cut with entries in flight.
			offer(200)
			s.pg.DisableProxy()
			waitFor(t, "the archiver's write to fail on the cut PostgreSQL link", 10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return errs["write"] > 0
			})
			offer(20)
			if err := s.pg.EnableProxy(); err != nil {
				t.Fatal(err)
			}
			archived("entries in flight at the PostgreSQL outage archived")

			p := pool(t, s, b, client.RESP3)
			keys, _ := KeysFor(tenant)
			waitFor(t, "nothing pending", 10*time.Second, func() bool {
				v, err := p.Do(ctx, client.NewCmd("XPENDING", []string{keys.Stream}, DefaultGroup))
				if err != nil {
					return false
				}
				arr, ok := v.([]any)
				if !ok || len(arr) == 0 {
					return false
				}
				n, _ := client.AsInt64(arr[0])
				return n == 0
			})
			rows, distinct := countRows(t, s.pg.DSN(), schema, TableQueue)
			mu.Lock()
			t.Logf("%d offered, %d rows (%d distinct); archiver errors by op %v", offered, rows, distinct, errs)
			mu.Unlock()
			if rows != offered || distinct != offered {
				t.Errorf("%d rows (%d distinct), want %d", rows, distinct, offered)
			}
			if errs["read"] == 0 || errs["write"] == 0 {
				t.Errorf("archiver errors %v: want the Redis cut seen by a read and the PostgreSQL cut by a write (else the test cut nothing)", errs)
			}
		})
	}
}
