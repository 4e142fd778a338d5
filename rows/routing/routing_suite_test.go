// Package routing_test scores the routing row (spec 000 §Conformance,
// Routing: "MOVED/ASK redirects under slot migration"): a seeded
// SET/GET/INCR/EVAL workload on known keys in the slots being moved, with
// each client backend, while slots migrate with a MIGRATING hold (so ASK
// happens) and then flip owner (so MOVED happens).
package routing_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestRouting(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "routing")
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
