// Package locality_test scores the locality row (spec 000 §Conformance, "Locality
// contract"; Axiom A2): the static validator over the reference implementation with the
// command table read from the server (COMMAND key specs; errors column, with the hand
// fallback table's agreement judged, the known-bad corpus and the implementation with its
// call-site declarations stripped as variants), and the runtime twin around the reference
// implementation's real workloads — including the paths that only run on dead or expired
// entries — on a STANDALONE node (silently-wrong column): there the server accepts a
// cross-slot call, so only the twin can tell — the un-tagged and mis-tagged fencing
// layouts, the naive presence MGET and the one-MGET registry discovery are its controls,
// each caught with zero server errors.
package locality_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestLocality(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "locality")
}

var (
	cfg        harness.Config
	standalone *fixtures.Topology // cluster mode disabled: cross-slot calls succeed here
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	standalone = harness.StartAll(ctx, cfg, "standalone")[0]
})

var _ = BeforeEach(func(ctx SpecContext) { harness.ResetAll(ctx, standalone) })
