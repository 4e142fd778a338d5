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
	cfg = harness.MustConfig()
	cluster = harness.StartAll(ctx, cfg, cfg.Topology)[0]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster) })
