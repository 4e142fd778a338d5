// Package telemetry_test scores the telemetry row (spec 000 §Conformance,
// Telemetry: "Per-shard/slot/channel metrics exist before G5: aggregate CPU
// cannot attribute a hot slot, and the phase gauge (buzz_fencing_phase)
// feeds the Deployment Gate"): the client metrics of impl/telemetry, scraped
// over HTTP as Prometheus would, are compared with the servers' own counters
// — INFO commandstats and errorstats per node, CLUSTER COUNTKEYSINSLOT per
// slot, SPUBLISH receiver counts and PUBSUB SHARDNUMSUB per channel — under
// a workload skewed onto one slot, and under slot migrations.
package telemetry_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestTelemetry(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "telemetry")
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
