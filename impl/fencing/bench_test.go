package fencing_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixtures.CleanupAll()
	os.Exit(code)
}

// BenchmarkRenewVsRawEvalSHA measures what impl's fencing path costs over
// the bare script: a renew through fencing.Directory (client seam, key
// layout, reply decoding, the EVALSHA→EVAL fallback check) against a raw
// EVALSHA of the very same C-phase renew script on the same node, in the
// same process, one call at a time. It reports raw/impl as "ratio" (1.0 =
// impl adds nothing; the bar is ≥ 0.5), so the figure reads the
// same on any machine. Not an assertion:
//
//	go test -run '^$' -bench RenewVsRawEvalSHA -benchtime 2000x ./impl/fencing
func BenchmarkRenewVsRawEvalSHA(b *testing.B) {
	ctx := context.Background()
	topo, err := fixtures.Run(ctx, fixtures.SingleShardSpec())
	if err != nil {
		b.Fatalf("start valkey: %v", err)
	}
	defer topo.Close()
	addr := topo.Addrs()[0]

	raw := redis.NewClient(&redis.Options{Addr: addr})
	defer raw.Close()
	renew := fencing.PhaseC().Renew
	if err := raw.ScriptLoad(ctx, renew.Source).Err(); err != nil {
		b.Fatalf("script load: %v", err)
	}

	runs := 0
	for _, backend := range []client.Backend{client.BackendGoRedis, client.BackendValkeyGo} {
		b.Run(string(backend), func(b *testing.B) {
			pool, err := client.NewPool(ctx, client.Options{Backend: backend, Mode: client.ModeCluster, Addrs: []string{addr}})
			if err != nil {
				b.Fatalf("pool: %v", err)
			}
			defer pool.Close()
			dir := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute})
			// A fresh session per invocation: the framework calls this
			// function more than once (N=1 first) on one node.
			runs++
			s := fencing.Session{Community: "bench", ID: fmt.Sprintf("%s-%d", backend, runs)}
			got, err := dir.Acquire(ctx, s, "pod-0")
			if err != nil || !got.OK {
				b.Fatalf("acquire: %v %+v", err, got)
			}
			keys := dir.KeyList(s)
			rawArgs := []any{"pod-0", fmt.Sprint(got.Generation), "60000"}

			// Interleave the two measurements in rounds so drift on a shared
			// runner hits both alike.
			const rounds = 4
			var rawTotal, implTotal time.Duration
			b.ResetTimer()
			for r := 0; r < rounds; r++ {
				n := b.N/rounds + 1
				start := time.Now()
				for i := 0; i < n; i++ {
					if err := raw.EvalSha(ctx, renew.SHA1, keys, rawArgs...).Err(); err != nil {
						b.Fatalf("raw evalsha: %v", err)
					}
				}
				rawTotal += time.Since(start)
				start = time.Now()
				for i := 0; i < n; i++ {
					ok, err := dir.Renew(ctx, s, "pod-0", got.Generation)
					if err != nil || !ok {
						b.Fatalf("impl renew: %v %v", err, ok)
					}
				}
				implTotal += time.Since(start)
			}
			b.StopTimer()
			calls := float64(rounds * (b.N/rounds + 1))
			b.ReportMetric(float64(rawTotal.Nanoseconds())/calls, "raw-ns/call")
			b.ReportMetric(float64(implTotal.Nanoseconds())/calls, "impl-ns/call")
			b.ReportMetric(float64(rawTotal)/float64(implTotal), "ratio")
		})
	}
}

// BenchmarkDurabilityCost measures what the durability mode costs: an
// acquire and a release through fencing.Directory with Durability{Replicas:
// 1} (script, barrier write and WAIT on one connection) against the same
// calls with the mode off, on one primary with one replica, interleaved in
// rounds in the same process. It reports plain/durable as "ratio" (1.0 = the
// mode is free; 0.5 = each call takes twice as long). Not an assertion:
//
//	go test -run '^$' -bench DurabilityCost -benchtime 2000x ./impl/fencing
func BenchmarkDurabilityCost(b *testing.B) {
	ctx := context.Background()
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(1, 1))
	if err != nil {
		if topo != nil {
			_ = topo.Close()
		}
		b.Fatalf("start cluster:1x1: %v", err)
	}
	defer topo.Close()
	runs := 0
	for _, backend := range client.Backends {
		b.Run(string(backend), func(b *testing.B) {
			pool, err := client.NewPool(ctx, client.Options{Backend: backend, Mode: client.ModeCluster, Addrs: topo.Addrs()})
			if err != nil {
				b.Fatalf("pool: %v", err)
			}
			defer pool.Close()
			plain := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute})
			durable := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute, Durability: fencing.Durability{Replicas: 1}})
			runs++
			cycle := func(dir *fencing.Directory, s fencing.Session) {
				got, err := dir.Acquire(ctx, s, "pod-0")
				if err != nil || !got.OK {
					b.Fatalf("acquire: %v %+v", err, got)
				}
				if ok, err := dir.Release(ctx, s, "pod-0", got.Generation); err != nil || !ok {
					b.Fatalf("release: %v %v", ok, err)
				}
			}
			const rounds = 4
			var plainTotal, durableTotal time.Duration
			b.ResetTimer()
			for r := 0; r < rounds; r++ {
				n := b.N/rounds + 1
				s := fencing.Session{Community: "bench", ID: fmt.Sprintf("%s-%d-%d", backend, runs, r)}
				start := time.Now()
				for i := 0; i < n; i++ {
					cycle(plain, s)
				}
				plainTotal += time.Since(start)
				start = time.Now()
				for i := 0; i < n; i++ {
					cycle(durable, s)
				}
				durableTotal += time.Since(start)
			}
			b.StopTimer()
			b.ReportMetric(float64(plainTotal)/float64(durableTotal), "ratio")
		})
	}
}
