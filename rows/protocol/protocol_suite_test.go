// Package protocol_test scores the protocol row (spec 000 §Conformance,
// Protocol choice; Open Decision D3): the command pool is admitted under a
// RESP version only by test — per backend and per protocol, the connections
// really negotiated it, the fencing C-phase contention and the positional
// bulk read stay correct under it, and its reply shapes are decoded right.
package protocol_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestProtocol(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "protocol")
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
