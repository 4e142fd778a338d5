package marconiaudit_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The writer alerts (spec 002 §4.1 Failure: "Operator alerts on
// marconi_redis_writer_lag_seconds and marconi_audit_queue_depth"), with
// the reference rules (audit.DefaultAlertRules: thresholds at the §3.6
// safety factor's headroom), evaluated as a rule manager does against the
// pipeline's registry through a Redis outage that overflows the queue and
// ends the burst.
// Judged against the truth read from the queue itself: each alert fires
// before the first loss and clears once the writer caught up. Controls: a
// depth rule at max_entries, a for-duration longer than the headroom, and
// the reference rules on a queue whose depth gauge is not published on
// Take.

const (
	alertRate       = 200.0 // signals per second
	alertMaxEntries = 400   // the queue's max_entries: the depth alert at 200, the lag alert at 1 s
	alertFor        = 300 * time.Millisecond
	alertEvery      = 50 * time.Millisecond
	alertMinLoss    = 50
)

var _ = Describe("marconi-loss-budget", Serial, func() {
	b := harness.BackendsFromEnv()[0] // the alerts read the pipeline's gauges, not the client library
	harness.Emit(harness.Scenario{
		Name: "marconi-loss-budget/writer-alerts/" + string(b), Row: report.RowMarconiLossBudget, Column: report.ColumnErrors,
		Spec: "through a Redis outage that overflows the queue, the writer-lag and queue-depth alerts (thresholds at the §3.6 safety factor's headroom) fire before the queue's first loss and clear once the writer caught up (002 §4.1 Failure, §3.6, §9)",
		Run:  func(ctx SpecContext) report.Check { return runWriterAlerts(ctx, b) },
	})
})

// alertWatch evaluates one rule set against one pipeline and keeps the
// samples, each with the truth read from the pipeline's queue.
type alertWatch struct {
	p      *pipeline
	tenant string
	eval   *audit.AlertEvaluator

	mu      sync.Mutex
	samples []judge.AlertSample
}

func (w *alertWatch) sample(at time.Duration, now time.Time) {
	st := w.p.queue.Stats(w.tenant)
	lost := int64(0)
	for _, n := range st.Dropped {
		lost += n
	}
	lag := 0.0
	if st.Depth > 0 && !st.Oldest.IsZero() {
		lag = now.Sub(st.Oldest).Seconds()
	}
	truth := map[string]float64{audit.AlertQueueDepth: float64(st.Depth), audit.AlertWriterLag: lag}
	_, firing := w.eval.Eval(w.tenant, now)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.eval.Rules {
		w.samples = append(w.samples, judge.AlertSample{At: at, Rule: r.Name, True: truth[r.Name], Firing: firing[r.Name], Lost: lost})
	}
}

func (w *alertWatch) all() []judge.AlertSample {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.AlertSample(nil), w.samples...)
}

func runWriterAlerts(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := fmt.Sprintf("%s-%d", map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[b], cfg.Seed%100_000)
	cut := cluster.Primaries()[0]
	qc := audit.DefaultQueueConfig()
	qc.MaxEntries, qc.Policy = alertMaxEntries, audit.PolicyOldest
	rules := audit.DefaultAlertRules(qc, alertRate, alertFor)
	start := func(name string, m audit.Mutant) *pipeline {
		return startPipeline(ctx, b, pool, clock, pipelineSpec{Name: name, Schema: "lb_" + name + "_" + tag, Tenants: []string{tenantOn(ctx, "al-"+tag+"-"+name, cut)},
			Queue: audit.QueueOptions{Default: qc}, Mutant: m, NoArchiver: true, Rate: alertRate})
	}
	By(fmt.Sprintf("%.0f signals/s into a queue of max_entries %d on %s, and into one whose depth gauge is not published on Take", alertRate, alertMaxEntries, cut.Name()))
	ref, stale := start("alerts", audit.MutantNone), start("alerts-stale", audit.MutantStaleDepth)
	DeferCleanup(func() { stopAll(ref, stale) })
	with := func(mod func(r *audit.AlertRule)) []audit.AlertRule {
		out := append([]audit.AlertRule(nil), rules...)
		for i := range out {
			mod(&out[i])
		}
		return out
	}
	watch := func(p *pipeline, rs []audit.AlertRule) *alertWatch {
		return &alertWatch{p: p, tenant: p.spec.Tenants[0], eval: &audit.AlertEvaluator{Gatherer: p.metrics.Gatherer(), Rules: rs}}
	}
	refW := watch(ref, rules)
	atFull := watch(ref, with(func(r *audit.AlertRule) {
		if r.Name == audit.AlertQueueDepth {
			r.Threshold = alertMaxEntries
		}
	}))
	longFor := watch(ref, with(func(r *audit.AlertRule) { r.For = 10 * alertFor }))
	staleW := watch(stale, rules)
	watches := []*alertWatch{refW, atFull, longFor, staleW}
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(alertEvery)
		defer tick.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
			}
			at, now := clock.Now(), time.Now()
			for _, w := range watches {
				w.sample(at, now)
			}
		}
	}()
	DeferCleanup(func() { stopSampling(); <-sampled })

	sleepFor(ctx, time.Second) // steady: both alerts must stay off
	By(fmt.Sprintf("Redis outage: %s's link down until both queues lost %d entries", cut.Name(), alertMinLoss))
	wall := time.Now()
	cut.DisableProxy()
	DeferCleanup(cut.EnableProxy)
	lostOf := func(p *pipeline) int64 {
		n := int64(0)
		for _, d := range p.queue.Stats(p.spec.Tenants[0]).Dropped {
			n += d
		}
		return n
	}
	waitUntil(ctx, "both queues overflowed", 30*time.Second, func() bool {
		return lostOf(ref) >= alertMinLoss && lostOf(stale) >= alertMinLoss
	})
	Expect(cut.EnableProxy()).To(Succeed())
	// The burst ends with the outage: with no offer after it, each gauge
	// reads only what the writer's drain publishes.
	Expect(ref.load.Stop()).To(Succeed())
	Expect(stale.load.Stop()).To(Succeed())
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults = harness.Windows(fault.HoldSince(ctx, "link/down", cut.Name(), wall).End())
	By("healed: the writers catch up; the alerts must clear")
	waitUntil(ctx, "both queues caught up", 30*time.Second, func() bool {
		return ref.queue.Stats(ref.spec.Tenants[0]).Depth < alertMaxEntries/8 && stale.queue.Stats(stale.spec.Tenants[0]).Depth < alertMaxEntries/8
	})
	sleepFor(ctx, time.Second)
	stopSampling()
	<-sampled
	stopAll(ref, stale)

	// Depth may read one writer batch apart from the gauge (the batch in
	// the writer's hands during a failed append); the lag a sampling
	// period plus the writer's retry.
	bounds := map[string]judge.AlertBound{
		audit.AlertQueueDepth: {Threshold: rules[0].Threshold, Tol: audit.DefaultWriterBatch, Grace: alertFor + 4*alertEvery},
		audit.AlertWriterLag:  {Threshold: rules[1].Threshold, Tol: 0.3, Grace: alertFor + 4*alertEvery},
	}
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("reference rules: %s > %.0f for %v, %s > %.2f s for %v (max_entries %d at %.0f signals/s: §3.6 sizing, safety factor 2)",
		audit.MetricQueueDepth, rules[0].Threshold, rules[0].For, audit.MetricWriterLag, rules[1].Threshold, rules[1].For, alertMaxEntries, alertRate))
	res := judge.Alerts.Judge(judge.AlertRun{Samples: refW.all(), Bounds: bounds})
	ctls := []report.Control{
		harness.Variant("alert/depth-at-max-entries", "the queue-depth rule's threshold is max_entries: an oldest-policy queue sits at it while it overwrites, the alert never fires",
			judge.Alerts.Judge(judge.AlertRun{Samples: atFull.all(), Bounds: bounds})),
		harness.Variant("alert/for-too-long", fmt.Sprintf("both rules with for: %v, longer than the headroom between the threshold and the first overwrite", 10*alertFor),
			judge.Alerts.Judge(judge.AlertRun{Samples: longFor.all(), Bounds: bounds})),
		harness.Variant(string(audit.MutantStaleDepth), "marconi_audit_queue_depth is not published when the writer takes entries: it never comes down, the depth alert never clears",
			judge.Alerts.Judge(judge.AlertRun{Samples: staleW.all(), Bounds: bounds})),
	}
	return harness.Check(report.RowMarconiLossBudget, report.ColumnErrors, "", res, ev, ctls...)
}
