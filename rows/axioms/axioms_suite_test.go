// Package axioms_test scores the axioms row: spec 000 §Axioms A1, A2 and A4
// measured on the real server, because every other row stands on them.
package axioms_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestAxioms(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "axioms")
}

var (
	cfg        harness.Config
	cluster    *fixtures.Topology // multi-shard (cfg.Topology)
	single     *fixtures.Topology // single-shard cluster-enabled node
	standalone *fixtures.Topology // cluster mode disabled: the negative control for A2
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	ts := harness.StartAll(ctx, cfg, cfg.Topology, "single-shard", "standalone")
	cluster, single, standalone = ts[0], ts[1], ts[2]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, single, standalone) })
