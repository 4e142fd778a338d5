// Package presence_test scores the presence-mget row (spec 000
// §Conformance, Presence MGET: "nil/order preservation when split per
// node"): a known present/absent pattern over every shard, read in bulk with
// each client backend, also while a slot moves mid-read.
package presence_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestPresence(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "presence-mget")
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
