// Package fencingfailover_test scores the fencing-failover row: the C-phase
// fenced session directory judged across primary failovers on topologies
// that have replicas, as production does (spec 000 §Problem Statement:
// Valkey 8.0.1, one primary + one replica, automatic failover; after G4 a
// cluster with replicas). T1 and T2 (§Safety theorems) rest on a
// linearizable store; Valkey replicates asynchronously, so a failover can
// lose what a primary acknowledged. The row runs the directory with the
// durability mode on (it must pass) and the spec's scripts as written (a
// real variant: if they fork, the cell says how often and at which fault).
package fencingfailover_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestFencingFailover(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing-failover")
}

var (
	cfg        harness.Config
	cluster    *fixtures.Topology // the multi-shard cluster with replicas (cfg.Topology)
	replicated *fixtures.Topology // one primary + its replicas (cfg.Replicated; one, as buzz-001) + three Sentinels
	// replicatedErr is why the run's provider cannot host replicated (nil when it can).
	replicatedErr error
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	spec, err := fixtures.ParseSpec(cfg.Replicated)
	Expect(err).NotTo(HaveOccurred())
	// A provider that cannot host the Sentinels skips the replicated
	// scenarios with that reason (replicatedAvailable); the cluster's run.
	replicatedErr = fixtures.Supported(spec, cfg.FixtureOptions()...)
	specs := []string{cfg.Topology}
	if replicatedErr == nil {
		specs = append(specs, cfg.Replicated)
	}
	ts := harness.StartAll(ctx, cfg, specs...)
	cluster = ts[0]
	if len(ts) > 1 {
		replicated = ts[1]
	}
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, replicated) })

// replicatedAvailable is the replicated scenarios' precondition (harness.Requires).
func replicatedAvailable() error { return replicatedErr }
