package marconi_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-restart", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "marconi-restart/rehydrate-and-drain/" + string(b), Row: report.RowMarconiRestart, Column: report.ColumnSilentlyWrong,
				Spec: "a new instance on the same Redis routes every active session before any shim reconnects; signals sent in the window are queued offline and each delivered exactly once after the reconnect; every signal the dead instance accepted is in the Marconi Cache stream or counted lost (002 §6)",
				Run:  func(ctx SpecContext) report.Check { return restartRuns.Get(ctx, b).silently(b) },
			},
			harness.Scenario{
				Name: "marconi-restart/reconnect-clean/" + string(b), Row: report.RowMarconiRestart, Column: report.ColumnErrors,
				Spec: "after the restart every reconnecting socket is accepted, every heartbeat reaches its registration, every window send answers 200 and its first read hits; marconi_invalidator_errors_total zero (002 §6 steps 2–4, §9)",
				Run:  func(ctx SpecContext) report.Check { return restartRuns.Get(ctx, b).loud(b) },
			},
		)
	}
})

// restartDrill is what one §6 drill recorded.
type restartDrill struct {
	window     judge.MeshHistory // the window sends and everything delivered after the restart
	rehydrated check.Result
	ledger     judge.MeshLedger
	inFlight   int // A's audit-queue depth at its death (reported, never scored)
	cache      judge.MeshCacheStats
	warm       marconi.Warmup
	metrics    map[string]float64
}

type restartRun struct {
	ev           report.Evidence
	main, noWarm restartDrill
}

// restartRuns runs each backend's drill and its control once, for both
// columns.
var restartRuns = harness.NewOnce(runRestart)

func runRestart(ctx SpecContext, b client.Backend) *restartRun {
	GinkgoHelper()
	s := scaleOf()
	r := &restartRun{ev: harness.Evidence(cfg, cluster, nil)}
	By(fmt.Sprintf("drill: instance A with %d receivers dies with entries in its audit queue; instance B starts on the same Redis", s.RestartReceivers))
	r.main = restartDrillRun(ctx, b, "restart", s.RestartReceivers, s.RestartPerSender, audit.MutantNone, marconi.MutantNone)
	// One control drill carries two independent mutants: B's skipped
	// warm-up only touches what B serves; A's uncounted shutdown only
	// touches A's ledger (accepted by A vs stream + A's counter).
	By("negative controls: the same drill with A's queue dropping its in-flight entries uncounted at shutdown and B skipping its warm-up")
	r.noWarm = restartDrillRun(ctx, b, "restart-cold", s.RestartReceivers/2, max(s.RestartPerSender/2, 2), audit.MutantUncountedShutdown, marconi.MutantSkipWarmup)
	r.ev.Client = b.Version()
	r.ev.Metrics = r.main.metrics
	return r
}

// restartDrillRun runs §6 once:
//
//  1. A serves n receivers with its audit queue and Redis Stream writer;
//     a burst is delivered and appended.
//  2. A's writer stops (lagging), a second burst is delivered but stays in
//     A's audit queue; A dies: its queue's Close counts the in-flight
//     entries (reason "shutdown"), and A's last scrape is the counted loss.
//  3. B starts on the same Redis (warm-up); its tables are read before any
//     shim reconnects.
//  4. Window: a burst to B while no socket is attached (queued offline).
//  5. The shims reconnect their sockets to B (re-registering first if B
//     refuses a socket, as a shim does); heartbeats go to B.
func restartDrillRun(ctx context.Context, b client.Backend, project string, n, perSender int, aQueue audit.Mutant, bMutant marconi.Mutant) restartDrill {
	GinkgoHelper()
	s := scaleOf()
	var d restartDrill
	clock := traffic.NewClock()

	regA := prometheus.NewRegistry()
	pipeA := startPipeline(ctx, b, regA, project+"-a-"+string(b), false, aQueue)
	a := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-a"), Sink: pipeA.queue, Registry: regA})
	recA := workload.NewMeshRecorder(clock, a.api)
	recv := workload.NewMeshReceivers(recA, a.url)
	DeferCleanup(recv.Close)
	keys, sessions := registerReceivers(ctx, recA, recv, project, n, true)
	burst := workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: perSender, Kind: "restart", Rand: cfg.Rand("marconi-restart/" + project + "/" + string(b))}
	burst.Run(ctx, recA)
	Expect(workload.AwaitDeliveries(withTimeout(ctx, 10*time.Second), recA, "pushed")).To(BeZero(), "burst 1 delivered by A")
	Eventually(ctx, func() int { return pipeA.queue.Stats(tenant).Depth }).WithTimeout(10*time.Second).Should(BeZero(), "A's writer drained burst 1")

	pipeA.pause()
	burst.Rand = cfg.Rand("marconi-restart/" + project + "/lagging/" + string(b))
	burst.Run(ctx, recA)
	Expect(workload.AwaitDeliveries(withTimeout(ctx, 10*time.Second), recA, "pushed")).To(BeZero(), "burst 2 delivered by A")
	hA := recA.History()
	for _, snd := range hA.Sends {
		if snd.OK() {
			d.ledger.Accepted = append(d.ledger.Accepted, snd.SignalID)
		}
	}
	d.inFlight = pipeA.queue.Stats(tenant).Depth // for the report only: the ledger never reads it
	// The process exits: the instance stops, then its audit queue closes,
	// counting what it still held (reason "shutdown"); the counted loss is
	// the last scrape of A's own registry (§6, §9 overwrite counter), not
	// the harness's arithmetic.
	a.stop()
	pipeA.queue.Close()
	lost, err := traffic.MetricSum(regA, audit.MetricQueueOverwrite, map[string]string{"tenant": tenant})
	Expect(err).NotTo(HaveOccurred(), "scrape A's overwrite counter")
	d.ledger.CountedLost = int64(lost)
	recv.Wait(withTimeout(ctx, 10*time.Second))

	regB := prometheus.NewRegistry()
	pipeB := startPipeline(ctx, b, regB, project+"-b-"+string(b), false, audit.MutantNone)
	bEnv := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-b"), Sink: pipeB.queue, Registry: regB, Mutant: bMutant})
	d.warm = bEnv.warm
	tables := bEnv.mesh.Tables()
	active := map[string]string{}
	for _, sess := range sessions {
		active[sess.SessionID] = sess.Route().String()
	}
	routes := map[string]string{}
	for k, v := range tables.Routes {
		routes[k.String()] = v
	}
	d.rehydrated = judge.Rehydrated.Judge(judge.RehydratedInput{Active: active, Routes: routes})

	recB := workload.NewMeshRecorder(clock, bEnv.api)
	burst.Rand = cfg.Rand("marconi-restart/" + project + "/window/" + string(b))
	burst.Run(ctx, recB)
	first := map[string]string{}
	for _, snd := range recB.History().Sends {
		for _, sess := range sessions {
			if _, seen := first[sess.SessionID]; !seen && snd.Recipient == sess.Route().String() {
				first[sess.SessionID] = snd.SessionID
			}
		}
	}

	recvB := workload.NewMeshReceivers(recB, bEnv.url)
	DeferCleanup(recvB.Close)
	for _, sess := range sessions { // the shims reconnect; a refused socket makes a shim re-register
		if recvB.Connect(ctx, sess.SessionID) != nil {
			if _, err := recB.Register(ctx, sess); err == nil {
				_ = recvB.Connect(ctx, sess.SessionID)
			}
		}
	}
	for _, sess := range sessions {
		_, _ = recB.Heartbeat(ctx, sess)
	}
	missing := workload.AwaitDeliveries(withTimeout(ctx, 10*time.Second), recB, "pushed", "queued_offline")
	d.window = recB.History()
	d.window.Sessions = append(hA.Sessions, d.window.Sessions...) // registered on A

	streamed, err := streamedIDs(ctx, b)
	Expect(err).NotTo(HaveOccurred())
	d.ledger.Streamed = streamed
	hits := 0
	for sid, got := range first {
		if got == sid {
			hits++
		}
	}
	d.cache = judge.MeshCacheStats{Hits: hits, Misses: len(first) - hits, MinHitRate: 0.99, FirstReads: first, HookErrors: hookErrors(bEnv.mesh),
		ControlErrors: d.window.ControlErrors, MinReads: 1}
	queued := 0
	for _, snd := range d.window.Sends {
		if snd.Outcome == "queued_offline" {
			queued++
		}
	}
	d.metrics = map[string]float64{
		"receivers": float64(n), "accepted_by_a": float64(len(d.ledger.Accepted)), "a_audit_in_flight": float64(d.inFlight), "a_counted_lost": float64(lost),
		"stream_signals": float64(len(streamed)), "warmup_sessions": float64(d.warm.Sessions), "warmup_ms": ms(d.warm.Took),
		"window_sends": float64(len(d.window.Sends)), "window_queued_offline": float64(queued), "window_undelivered": float64(missing),
		"b_misses": bEnv.mesh.MetricSum("marconi_routing_cache_misses_total", nil),
	}
	return d
}

// streamedIDs reads every signal id in the tenant's Marconi Cache stream
// (XRANGE over the whole 7-day window: one key, one slot).
func streamedIDs(ctx context.Context, b client.Backend) (map[string]int, error) {
	return traffic.ReadAuditStream(ctx, newPool(ctx, b, "marconi-ledger"), tenant)
}

func (r *restartRun) silently(b client.Backend) report.Check {
	m := r.main
	result := check.All("marconi-restart", m.rehydrated, judge.SendsDelivered.Judge(judge.DeliveredInput{History: m.window, MinSends: 1, RequireQueued: true}), judge.AuditLedger.Judge(m.ledger))
	cold := r.noWarm.rehydrated
	ctl := harness.Variant(string(marconi.MutantSkipWarmup), "B skips warm_caches_from_store: until the shims re-register, every active session is unroutable", cold)
	// The control drill's A ran audit.MutantUncountedShutdown: its queue
	// discards the in-flight entries at Close without counting them, so
	// its own counter under-reports what the stream misses. Caught only
	// if it actually died holding entries (the paused writer forces it).
	hideCtl := harness.Variant(string(audit.MutantUncountedShutdown), "A's audit queue drops its in-flight entries at shutdown without counting them", judge.AuditLedger.Judge(r.noWarm.ledger))
	if r.noWarm.inFlight == 0 {
		hideCtl = harness.NotExercised(hideCtl, "A died holding no entries, so there was nothing to drop")
	}
	hideCtl.Observed += fmt.Sprintf(" (%d entries in flight at the death)", r.noWarm.inFlight)
	ev := r.ev
	ev.Observed = []string{
		fmt.Sprintf("warm-up: %d sessions in %v", m.warm.Sessions, m.warm.Took.Round(time.Microsecond)),
		fmt.Sprintf("A accepted %d signals; %d were in A's audit queue when it died; A's overwrite counter (last scrape) says %d lost; the stream holds %d signals (A's and B's)", len(m.ledger.Accepted), m.inFlight, m.ledger.CountedLost, len(m.ledger.Streamed)),
	}
	return harness.Check(report.RowMarconiRestart, report.ColumnSilentlyWrong, "", result, ev, ctl, hideCtl)
}

func (r *restartRun) loud(b client.Backend) report.Check {
	m := r.main
	result := check.All("marconi-restart", judge.CacheHealth.Judge(m.cache), judge.SendsAnswered.Judge(m.window))
	cold := judge.CacheHealth.Judge(r.noWarm.cache)
	ctl := harness.Variant(string(marconi.MutantSkipWarmup), "B skips warm_caches_from_store: reconnecting sockets are refused (unknown session) and the window's first reads miss", cold)
	refused := 0
	for _, e := range r.noWarm.cache.ControlErrors {
		if marconiRefusal(e) {
			refused++
		}
	}
	ctl = harness.Premise(ctl, refused > 0, "no socket was refused")
	ctl.Observed += fmt.Sprintf(" (%d sockets refused)", refused)
	return harness.Check(report.RowMarconiRestart, report.ColumnErrors, "", result, r.ev, ctl)
}

// marconiRefusal reports a recorded socket refusal for an unknown session.
func marconiRefusal(e string) bool {
	return strings.HasPrefix(e, "ws attach") && strings.Contains(e, marconi.CodeUnknownSession)
}
