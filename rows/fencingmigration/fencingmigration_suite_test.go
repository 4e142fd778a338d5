// Package fencingmigration_test scores the fencing-migration row (spec 000
// §Conformance, Fencing migration; §The Fencing Migration; §Deployment
// Gate): a staged O→A→B→backfill→drain→C deploy of a relay pod fleet under
// live traffic, pod kills, link faults and rollbacks along the whole
// matrix (B→A, A→O, C→B), on a STANDALONE node — disabled
// mode is the only place the cross-slot A/B scripts legally run — plus a
// single-shard cluster-enabled node where slot rules are on (T3).
package fencingmigration_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestFencingMigration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing-migration")
}

var (
	cfg        harness.Config
	standalone *fixtures.Topology // disabled mode: where O/A/B run
	single     *fixtures.Topology // one cluster-enabled node: slot rules on (compatible/enabled)
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	ts := harness.StartAll(ctx, cfg, "standalone", "single-shard")
	standalone, single = ts[0], ts[1]
})
