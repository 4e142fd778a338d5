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
	var err error
	cfg, err = harness.ConfigFromEnv()
	Expect(err).NotTo(HaveOccurred())
	spec, err := fixtures.ParseSpec(cfg.Replicated)
	Expect(err).NotTo(HaveOccurred())
	// A provider that cannot host the Sentinels skips the replicated
	// scenarios with that reason (replicatedAvailable); the cluster's run.
	replicatedErr = fixtures.Supported(spec, cfg.FixtureOptions()...)
	done := make(chan struct{})
	go func() { // the two bring-ups overlap
		defer GinkgoRecover()
		defer close(done)
		if replicatedErr == nil {
			replicated = harness.Start(ctx, cfg, cfg.Replicated)
		}
	}()
	cluster = harness.Start(ctx, cfg, cfg.Topology)
	<-done
})

var _ = BeforeEach(func(ctx SpecContext) {
	Expect(cluster.Reset(ctx)).To(Succeed())
	if replicated != nil {
		Expect(replicated.Reset(ctx)).To(Succeed())
	}
})

// replicatedAvailable is the replicated scenarios' precondition (harness.Requires).
func replicatedAvailable() error { return replicatedErr }
