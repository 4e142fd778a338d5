// Package failuredrills_test scores the failure-drills row (spec 000
// §Conformance, Failure drills; §Client Architecture: "a dead primary halts
// dispatch"): primary failover, graceful and by kill, under a write load on
// every shard, with each client backend — the dispatch-halt window of the
// failed shard and of the healthy ones, and the acknowledged writes lost —
// and replica repair: a replica killed and restarted under replica reads.
package failuredrills_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestFailureDrills(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "failure-drills")
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
