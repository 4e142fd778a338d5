// Package fencingscripts_test scores the fencing-scripts row (spec 000
// §Conformance, Fencing scripts): the C-phase scripts on a real multi-shard
// cluster and a single-shard cluster-enabled node, on both client backends.
package fencingscripts_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestFencingScripts(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing-scripts")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // the multi-shard cluster (cfg.Topology)
	single  *fixtures.Topology // one cluster-enabled node owning all 16384 slots
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	ts := harness.StartAll(ctx, cfg, cfg.Topology, "single-shard")
	cluster, single = ts[0], ts[1]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster, single) })
