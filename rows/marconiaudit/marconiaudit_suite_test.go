// Package marconiaudit_test scores the Marconi audit fan-out rows (spec 002
// §3.6 in-memory audit queue, §4.1 Redis Stream writer, §4.2 PG archiver,
// §8 Stages 3–4): marconi-audit-completeness (every accepted signal in the
// stream and exactly once in PostgreSQL, shadow tables equal to the legacy
// direct write, across archiver kills) and marconi-loss-budget (the
// three-way ledger balanced to the overwrite counter across Redis and
// PostgreSQL outages). Redis is a real multi-shard cluster, so the stream
// and the writer's offset key must share a slot; PostgreSQL is a real
// server behind a toxiproxy.
package marconiaudit_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestMarconiAudit(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "marconi-audit")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // cfg.Topology: the stream keys must co-locate for real
	pg      *fixtures.Postgres
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	cluster, pg = harness.StartWithPostgres(ctx, cfg, cfg.Topology)
})
