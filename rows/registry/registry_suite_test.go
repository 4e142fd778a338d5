// Package registry_test scores the registry row (spec 000 §Mesh Registry
// Discovery; §Conformance, Registry index): the scored-expiry index against
// a known, churning population on a real multi-shard cluster, under latency
// and a failover; the legacy SCAN discovery as the negative control, on the
// cluster (silently incomplete) and on a standalone node (complete — so the
// check is about the cluster, not about SCAN).
package registry_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestRegistry(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "registry")
}

var (
	cfg        harness.Config
	cluster    *fixtures.Topology // the multi-shard cluster (cfg.Topology)
	standalone *fixtures.Topology // cluster mode disabled: where SCAN is complete
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	ts := harness.StartAll(ctx, cfg, cfg.Topology, "standalone")
	cluster, standalone = ts[0], ts[1]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, standalone) })
