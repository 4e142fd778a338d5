package guard_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/guard"
)

// TestPerKeyAtomicity races contenders on the same keys of a real 3-shard
// cluster, on both backends: the replay guard admits each event id exactly
// once and the limiter admits exactly min(hits, limit) per key (spec 000
// §System Model, Replay guard / rate limit: "per-key atomic"). The
// read-then-write mutant is the negative control: the same check must
// catch it over-admitting.
func TestPerKeyAtomicity(t *testing.T) {
	topo, err := fixtures.Run(t.Context(), fixtures.ClusterSpec(3, 0))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatalf("run cluster: %v", err)
	}
	for _, b := range client.Backends {
		t.Run(string(b), func(t *testing.T) {
			pool, err := client.NewPool(t.Context(), client.Options{Backend: b, Mode: client.ModeCluster, Addrs: topo.Addrs()})
			if err != nil {
				t.Fatalf("pool: %v", err)
			}
			defer pool.Close()
			const keys, contenders, limit = 30, 12, 5

			replay := func(m guard.Mutant, tag string) (double int) {
				g := guard.NewReplay(pool, time.Minute, m)
				for k := range keys {
					var wins atomic.Int64
					race(contenders, func() {
						ok, err := g.First(t.Context(), "c-"+tag, fmt.Sprintf("ev-%s-%d", b, k))
						if err != nil {
							t.Errorf("replay: %v", err)
						}
						if ok {
							wins.Add(1)
						}
					})
					if wins.Load() != 1 && m == guard.MutantNone {
						t.Errorf("event %d admitted %d times, want exactly once", k, wins.Load())
					}
					if wins.Load() > 1 {
						double++
					}
				}
				return double
			}
			if n := replay(guard.MutantNone, "ok"); n != 0 {
				t.Errorf("replay guard admitted %d replays", n)
			}
			if n := replay(guard.MutantReadThenWrite, "mutant"); n == 0 {
				t.Errorf("negative control not caught: the read-then-write replay guard never admitted a replay over %d raced ids", keys)
			}

			limiter := func(m guard.Mutant, tag string) (over int) {
				l := guard.NewLimiter(pool, limit, time.Minute, m)
				for k := range keys {
					var allowed atomic.Int64
					race(contenders, func() {
						ok, err := l.Allow(t.Context(), "c-"+tag, fmt.Sprintf("sub-%s-%d", b, k))
						if err != nil {
							t.Errorf("limiter: %v", err)
						}
						if ok {
							allowed.Add(1)
						}
					})
					if allowed.Load() != limit && m == guard.MutantNone {
						t.Errorf("key %d allowed %d of %d hits, want exactly %d", k, allowed.Load(), contenders, limit)
					}
					if allowed.Load() > limit {
						over++
					}
				}
				return over
			}
			if n := limiter(guard.MutantNone, "ok"); n != 0 {
				t.Errorf("limiter over-admitted on %d keys", n)
			}
			if n := limiter(guard.MutantReadThenWrite, "mutant"); n == 0 {
				t.Errorf("negative control not caught: the read-then-write limiter never over-admitted over %d raced keys", keys)
			}
		})
	}
}

// race runs f on n goroutines released together.
func race(n int, f func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() { <-start; f() })
	}
	close(start)
	wg.Wait()
}
