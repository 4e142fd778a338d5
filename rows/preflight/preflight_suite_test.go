// Package preflight_test scores the preflight row: the pre-G3 checklist
// (`slotgate preflight`, spec 000 §Deployment Gate rule 5; §Migration path
// G3–G5) run with its real gatherer against topologies the row starts,
// each item beside a real bad variant it must catch.
package preflight_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestPreflight(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "preflight")
}

var (
	cfg        harness.Config
	cluster    *fixtures.Topology // multi-shard (cfg.Topology): the compatible-mode endpoint
	standalone *fixtures.Topology // cluster support disabled: the A3 probe's bad endpoint
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	ts := harness.StartAll(ctx, cfg, cfg.Topology, "standalone")
	cluster, standalone = ts[0], ts[1]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, standalone) })
