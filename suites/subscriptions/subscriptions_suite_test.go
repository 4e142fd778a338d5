// Package subscriptions_test scores the subscriptions row (spec 000
// §Conformance, Subscriptions; §Sharded Pub/Sub Conversion; §Client
// Architecture): the relay's subscription layer (impl/pubsub) on a real
// multi-shard cluster, on both client backends, under forced disconnects,
// slot migrations and failovers.
package subscriptions_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestSubscriptions(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "subscriptions")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // the multi-shard cluster (cfg.Topology)
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	cfg, err = harness.ConfigFromEnv()
	Expect(err).NotTo(HaveOccurred())
	cluster = harness.Start(ctx, cfg, cfg.Topology)
})

var _ = BeforeEach(func(ctx SpecContext) {
	Expect(cluster.Reset(ctx)).To(Succeed())
})
