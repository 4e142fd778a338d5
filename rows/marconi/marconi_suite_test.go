// Package marconi_test scores the Marconi mesh rows of spec 002 (SPEC-101
// v0.4) against a real multi-shard Valkey cluster (the SessionStore and
// the Marconi Cache streams), a real PostgreSQL (the PG audit) and the
// mesh's real HTTP and WebSocket endpoints:
//
//   - marconi-hot-path (§2): a send touches no Redis and no PostgreSQL
//     before its 200 — counted at the client seams with the audit writers
//     running and on the servers with them paused — and keeps answering
//     and delivering while Redis and PostgreSQL are unreachable;
//   - marconi-cache-lifecycle (§5, Stage 2): every hook's transition,
//     warm-up hits, the stale-route bound under churn, hit rate ≥ 99%;
//   - marconi-restart (§6): a new instance rehydrates from the
//     SessionStore, window signals are queued and drained on reconnect,
//     in-flight audit loss is counted.
//   - marconi-obligations (§3.4, §9): the obligation index and its SLA
//     sweepers through a PG outage, a Redis outage and a restart, judged
//     against the harness's ledger, the stream and signal_obligations.
package marconi_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/suites/harness"
)

func TestMarconi(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "marconi")
}

var (
	cfg     harness.Config
	cluster *fixtures.Topology // the multi-shard cluster (cfg.Topology): SessionStore and Marconi Cache
	pg      *fixtures.Postgres // the PG audit
)

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg = harness.MustConfig()
	cluster, pg = harness.StartWithPostgres(ctx, cfg, cfg.Topology)
	Expect(audit.Migrate(ctx, pg.DirectDSN(), audit.MigrateOptions{})).To(Succeed())
})

var _ = BeforeEach(func(ctx SpecContext) {
	Expect(cluster.Reset(ctx)).To(Succeed())
	Expect(pg.RemoveToxics(ctx)).To(Succeed())
	Expect(pg.EnableProxy()).To(Succeed())
})
