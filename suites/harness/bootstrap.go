package harness

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
)

// The three calls every suite's bootstrap is made of:
//
//	var _ = BeforeSuite(func(ctx SpecContext) {
//		cfg = harness.MustConfig()
//		ts := harness.StartAll(ctx, cfg, cfg.Topology, "single-shard")
//		cluster, single = ts[0], ts[1]
//	})
//	var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, single) })

// MustConfig reads the run's configuration from the environment
// (ConfigFromEnv); a bad environment fails the suite before anything starts.
func MustConfig() Config {
	GinkgoHelper()
	c, err := ConfigFromEnv()
	Expect(err).NotTo(HaveOccurred())
	return c
}

// StartAll starts the topology of each spec (Start) side by side and
// returns them in order: a cluster-enabled node's bring-up floor (~2 s to
// cluster_state:ok) overlaps the others' instead of adding to them. A spec
// that fails to start fails the suite as Start does.
func StartAll(ctx context.Context, cfg Config, specs ...string) []*fixtures.Topology {
	GinkgoHelper()
	// Before any goroutine: Start registers the cleanup at most once, and a
	// registration from a goroutine that outlives the node would abort
	// the suite process (see Start).
	registerCleanup.Do(func() { DeferCleanup(fixtures.CleanupAll) })
	out := make([]*fixtures.Topology, len(specs))
	if len(specs) == 0 {
		return out
	}
	var wg sync.WaitGroup
	for i := 1; i < len(specs); i++ {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			out[i] = Start(ctx, cfg, specs[i])
		}()
	}
	out[0] = Start(ctx, cfg, specs[0])
	wg.Wait()
	return out
}

// StartWithPostgres starts the topology of spec and a PostgreSQL server
// side by side (the Marconi rows' audit archive) and returns both; the
// server is closed after the suite, and by fixtures.CleanupAll on an
// interrupt.
func StartWithPostgres(ctx context.Context, cfg Config, spec string) (*fixtures.Topology, *fixtures.Postgres) {
	GinkgoHelper()
	registerCleanup.Do(func() { DeferCleanup(fixtures.CleanupAll) })
	began := time.Now()
	var pg *fixtures.Postgres
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		p, err := fixtures.RunPostgres(ctx, cfg.FixtureOptions()...)
		if err != nil && p != nil {
			_ = p.Close() // now: this goroutine may outlive the node and its cleanups
			p = nil
		}
		pg = p
		done <- err
	}()
	t := Start(ctx, cfg, spec)
	err := <-done
	Expect(err).NotTo(HaveOccurred(), "start postgres")
	DeferCleanup(pg.Close)
	fmt.Fprintf(os.Stderr, "  %s up in %v\n", pg.Version(), time.Since(began).Round(time.Millisecond))
	return t, pg
}

// ResetAll brings each started topology back to its built state for the
// next spec (fixtures.Topology.Reset); nil entries (a topology the provider
// could not host) are skipped.
func ResetAll(ctx context.Context, topos ...*fixtures.Topology) {
	GinkgoHelper()
	for _, t := range topos {
		if t != nil {
			Expect(t.Reset(ctx)).To(Succeed())
		}
	}
}
