// Package clientsurface_test scores the client-surface row (spec 000 §Client
// Architecture): the cluster surface a relay uses beyond single commands —
// pipelines across slots, MULTI/EXEC in one slot, RESP3 pushes on the
// subscription connection, dial timeouts against a blackholed node,
// connection accounting and the older topology reply — each judged on the
// library's own path (an admission entry) and through impl (the gate).
package clientsurface_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestClientSurface(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "client-surface")
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
