// Package fencing_test scores the fencing-scripts row (spec 000
// §Conformance, Fencing scripts): the C-phase scripts on a real multi-shard
// cluster and a single-shard cluster-enabled node, on both client backends.
package fencing_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestFencing(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing-scripts")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // the multi-shard cluster (cfg.Topology)
	single  *fixtures.Topology // one cluster-enabled node owning all 16384 slots
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	cfg, err = harness.ConfigFromEnv()
	Expect(err).NotTo(HaveOccurred())
	done := make(chan struct{})
	go func() { // the single-shard node's ~2 s writable delay overlaps the cluster's
		defer GinkgoRecover()
		defer close(done)
		single = harness.Start(ctx, cfg, "single-shard")
	}()
	cluster = harness.Start(ctx, cfg, cfg.Topology)
	<-done
})

var _ = BeforeEach(func(ctx SpecContext) {
	Expect(cluster.Reset(ctx)).To(Succeed())
	Expect(single.Reset(ctx)).To(Succeed())
})
