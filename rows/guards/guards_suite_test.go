// Package guards_test scores the guards row: the relay's per-key atomic
// guards (spec 000 §System Model, "Replay guard / rate limit: per-key
// atomic; safe once routed") raced on keys whose slot migrates mid-run.
package guards_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestGuards(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "guards")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // multi-shard (cfg.Topology)
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	cluster = harness.StartAll(ctx, cfg, cfg.Topology)[0]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, cluster) })
