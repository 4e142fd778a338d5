package marconiaudit_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/rows/marconiaudit/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// completenessScale sizes the row. Archiver kills are spread evenly over
// the processed entries, alternating the two crash points.
type completenessScale struct {
	Signals        int     // reference pipeline, over all its tenants
	Rate           float64 // per tenant per second
	Kills          int
	ControlSignals int // per control
	ControlKills   int
}

func completenessScaleOf() completenessScale {
	if cfg.Profile == harness.ProfileFull {
		return completenessScale{Signals: 30_000, Rate: 800, Kills: 10, ControlSignals: 1_500, ControlKills: 4}
	}
	return completenessScale{Signals: 2_400, Rate: 500, Kills: 4, ControlSignals: 300, ControlKills: 2}
}

// killPlan spreads kills over n processed entries, alternating "between
// read and write" and "after the PG write, before XACK" unless only is set.
func killPlan(n, kills int, only audit.CrashPoint) []workload.CrashPlan {
	var plan []workload.CrashPlan
	for i := range kills {
		p := audit.CrashBeforeWrite
		if i%2 == 1 {
			p = audit.CrashBeforeAck
		}
		if only != "" {
			p = only
		}
		plan = append(plan, workload.CrashPlan{After: (i + 1) * n / (kills + 1), Point: p})
	}
	return plan
}

// shadowPairs maps each table the legacy direct write fills to its shadow.
var shadowPairs = map[string]string{
	audit.TableQueue: audit.TableQueueShadow, audit.TableTraceEvents: audit.TableTraceEventsShadow, audit.TableObligations: audit.TableObligationsShadow,
}

// shadowTables reads the direct and shadow tables of schema, rows as text.
func shadowTables(ctx context.Context, schema string) map[string]judge.AuditTable {
	GinkgoHelper()
	keys := map[string]string{
		audit.TableQueue: "signal_id", audit.TableQueueShadow: "signal_id",
		audit.TableTraceEvents: "signal_id || '/' || seq", audit.TableTraceEventsShadow: "signal_id || '/' || seq",
		audit.TableObligations: "signal_id", audit.TableObligationsShadow: "signal_id",
	}
	out := map[string]judge.AuditTable{}
	for table, key := range keys {
		t, err := workload.ReadAuditTable(ctx, pg.DirectDSN(), schema, table, key)
		Expect(err).NotTo(HaveOccurred())
		out[table] = t
	}
	return out
}

type completenessResult struct{ silent, errs report.Check }

var _ = Describe("marconi-audit-completeness", func() {
	for _, b := range harness.BackendsFromEnv() {
		Context(string(b), Ordered, func() {
			var res completenessResult
			BeforeAll(func(ctx SpecContext) { res = runCompleteness(ctx, b) })
			harness.Emit(
				harness.Scenario{
					Name: "marconi-audit-completeness/exactly-once/" + string(b), Row: report.RowMarconiAuditCompleteness, Column: report.ColumnSilentlyWrong,
					Spec: "every accepted signal lands in marconi:signals:{tenant_id} and exactly once in PG (signal_queue + signal_trace_events + signal_obligations); *_shadow equal to the legacy direct write byte for byte; archiver killed between read and write and between commit and XACK, restarted — no loss, no duplicate (002 §4.1, §4.2, Stages 3–4)",
					Run:  func(SpecContext) report.Check { return res.silent },
				},
				harness.Scenario{
					Name: "marconi-audit-completeness/pipeline/" + string(b), Row: report.RowMarconiAuditCompleteness, Column: report.ColumnErrors,
					Spec: "writer, archiver and legacy direct write error-free without an outage; every kill's pending entries recovered: the group ends with nothing pending or undelivered and both lag gauges back at zero (002 §4.2 pending recovery, §9)",
					Run:  func(SpecContext) report.Check { return res.errs },
				},
			)
		})
	}
})

func runCompleteness(ctx context.Context, b client.Backend) completenessResult {
	GinkgoHelper()
	began := time.Now()
	s := completenessScaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := fmt.Sprintf("%s-%d", map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[b], cfg.Seed%100_000)
	var mainTenants []string
	for _, n := range cluster.Primaries() { // one tenant per shard
		mainTenants = append(mainTenants, tenantOn(ctx, "ac-"+tag+"-"+n.Name(), n))
	}
	node := cluster.Primaries()[0]
	shadow := audit.Targets{Shadow: true} // MARCONI_PG_ARCHIVER_SHADOW on, _PRIMARY off: Stage 4 shadow mode
	perTenant := s.Signals / len(mainTenants)

	By(fmt.Sprintf("reference pipeline: %d tenants × %d signals at %.0f/s each, legacy direct write in parallel, archiver in shadow mode killed %d times", len(mainTenants), perTenant, s.Rate, s.Kills))
	main := startPipeline(ctx, b, pool, clock, pipelineSpec{
		Name: "main", Schema: "ac_main_" + tag, Tenants: mainTenants, Targets: shadow, Direct: true,
		Plan: killPlan(s.Signals, s.Kills, ""), Rate: s.Rate, Max: perTenant,
	})
	By("negative controls alongside: a double-inserting archiver, one that acknowledges before it writes, one that never claims a dead consumer's entries")
	plain := startPipeline(ctx, b, pool, clock, pipelineSpec{
		Name: "plain-insert", Schema: "ac_plain_" + tag, Tenants: []string{tenantOn(ctx, "ac-"+tag+"-plain", node)}, Targets: shadow, Direct: true,
		Mutant: audit.MutantPlainInsert, Plan: killPlan(s.ControlSignals, s.ControlKills, audit.CrashBeforeAck), Rate: s.Rate / 2, Max: s.ControlSignals,
	})
	ackFirst := startPipeline(ctx, b, pool, clock, pipelineSpec{
		Name: "ack-first", Schema: "ac_ackfirst_" + tag, Tenants: []string{tenantOn(ctx, "ac-"+tag+"-ackfirst", node)}, Targets: shadow,
		Mutant: audit.MutantAckBeforeWrite, Plan: killPlan(s.ControlSignals, s.ControlKills, audit.CrashBeforeWrite), Rate: s.Rate / 2, Max: s.ControlSignals,
	})
	noRecovery := startPipeline(ctx, b, pool, clock, pipelineSpec{
		Name: "no-recovery", Schema: "ac_norecovery_" + tag, Tenants: []string{tenantOn(ctx, "ac-"+tag+"-norecovery", node)}, Targets: shadow,
		Mutant: audit.MutantNoRecovery, Plan: killPlan(s.ControlSignals, s.ControlKills, ""), Rate: s.Rate / 2, Max: s.ControlSignals,
	})
	all := []*pipeline{main, plain, ackFirst, noRecovery}
	DeferCleanup(func() { stopAll(all...) })

	for _, p := range all {
		Expect(p.load.Wait()).To(Succeed())
	}
	loadDone := clock.Now()
	By("every signal offered: waiting for the pipelines to drain")
	waitDrained(ctx, pool, 4*claimMinIdle, 60*time.Second, all...)
	drained := clock.Now()
	crashes := map[*pipeline][]workload.AuditCrash{}
	for _, p := range all {
		crashes[p] = p.sup.Crashes()
	}
	stopAll(all...)

	ledgers := main.ledgers(ctx, pool, shadowSet, nil)
	mainTables := shadowTables(ctx, main.spec.Schema)
	premise := killPremise("main", crashes[main], s.Kills)
	silent := check.All("marconi-audit-completeness", premise, judge.ExactlyOnce.Judge(judge.ExactlyOnceRun{Ledgers: ledgers, MinOffers: s.Signals / 2}), judge.ShadowEqual.Judge(judge.ShadowTables{Tables: mainTables, Pairs: shadowPairs}))
	errs := check.All("marconi-audit-completeness/pipeline", premise, judge.PipelineErrors.Judge(main.history(ctx, pool, nil, nil, nil)))

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"load": report.Duration(loadDone), "drain": report.Duration(drained - loadDone), "run": report.Duration(time.Since(began))}
	accepted := 0
	for _, l := range ledgers {
		accepted += len(l.Offers)
	}
	ev.Metrics = map[string]float64{
		"signals_accepted": float64(accepted), "archiver_kills": float64(len(crashes[main])),
		"recovered_entries":    main.sum(audit.MetricArchiverRecovered, nil),
		"archived_entries":     main.sum(audit.MetricArchiverArchived, nil),
		"shadow_rows_compared": float64(len(mainTables[audit.TableQueue]) + len(mainTables[audit.TableTraceEvents]) + len(mainTables[audit.TableObligations])),
	}
	for _, c := range crashes[main] {
		ev.Observed = append(ev.Observed, fmt.Sprintf("killed %s at %v (%s, %s)", c.Consumer, c.At.Round(time.Millisecond), c.Point, c.SignalID))
	}

	By("judging the controls with the same checkers")
	plainLedger := plain.ledgers(ctx, pool, shadowSet, nil)
	plainTables := shadowTables(ctx, plain.spec.Schema)
	plainCtl := harness.Variant(string(audit.MutantPlainInsert),
		"plain INSERT into tables without the signal_id unique key: an entry re-delivered after a kill between commit and XACK becomes a second row",
		judge.DoubleWriteSeen.Judge(judge.AuditDoubleWrite{Pipeline: "plain-insert", Kills: len(crashes[plain]), PlannedKills: s.ControlKills,
			Ledgers: plainLedger, MinOffers: 1, Tables: plainTables, Pairs: shadowPairs}))

	ackLedger := ackFirst.ledgers(ctx, pool, shadowSet, nil)
	ackCtl := harness.Variant(string(audit.MutantAckBeforeWrite),
		"XACK before the PG commit: a kill in between loses the entry (nothing pending, nothing in PG)",
		check.All("control", killPremise("ack-first", crashes[ackFirst], s.ControlKills), judge.ExactlyOnce.Judge(judge.ExactlyOnceRun{Ledgers: ackLedger, MinOffers: 1})))

	norecCtl := harness.Variant(string(audit.MutantNoRecovery),
		"no XAUTOCLAIM: the killed consumers' entries stay pending forever and never reach PG",
		check.All("control", killPremise("no-recovery", crashes[noRecovery], s.ControlKills), judge.PipelineErrors.Judge(noRecovery.history(ctx, pool, nil, nil, nil))))

	return completenessResult{
		silent: harness.Check(report.RowMarconiAuditCompleteness, report.ColumnSilentlyWrong, "", silent, ev, plainCtl, ackCtl),
		errs:   harness.Check(report.RowMarconiAuditCompleteness, report.ColumnErrors, "", errs, ev, norecCtl),
	}
}

// killPremise is Unknown unless the archiver was killed as often as
// planned: a run whose kills did not happen proves nothing about them.
func killPremise(name string, crashes []workload.AuditCrash, want int) check.Result {
	return judge.ArchiverKilled.Judge(judge.KillCount{Pipeline: name, Kills: len(crashes), Planned: want})
}
