package marconiaudit_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/rows/marconiaudit/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The marconi-stream row: spec 002 §4.1 (Redis Stream writer) and §4.2 (PG
// archiver) read to the letter — XREADGROUP COUNT 1 without batching, the
// writer's restart from its Redis offset, the ~7 d trim against what the
// archiver has not consumed, the archiver-lag alert, and idempotent
// UPSERTs in primary mode across archiver processes SIGKILLed for real.
// The spec's durations are scaled down; each scenario keeps the ratio that
// matters (the archiver is away longer than the retention; the lag passes
// the alert bound several times over).

// departureBlock is the §4.2 departure the count-one check records.
const departureBlock = "departure from spec 002 §4.2: XREADGROUP … BLOCK %v instead of BLOCK 0 (audit.ArchiverOptions.Block; 500 ms by default) — " +
	"a finite block lets the loop claim a dead archiver's pending entries (XAUTOCLAIM) and stop cleanly, and an XADD still wakes it at once, " +
	"so archiving latency is unchanged; the cost is one empty read per block on an idle stream"

// lagGrace is how long the lag gauge may trail the true lag: one
// XREADGROUP block (an idle archiver resets it on its first empty read)
// plus one entry's processing and the sampling period.
const lagGrace = archiverBlock + 300*time.Millisecond

// departureTrim is the §4.1/§4.2 departure the trim check records.
const departureTrim = "departure from spec 002 §4.2 Recoverability: the writer's trim (MINID ~ now−retention, the \"MAXLEN ~7d\" by time) is clamped at the archiver group's " +
	"last-delivered id and lowest pending id, so it never removes an entry the archiver has not consumed; the spec accepts \"the trimmed window is the audit gap\" " +
	"past 7 d of lag, but entries trimmed before the group read them vanish without any trace (XREADGROUP > skips them), so that gap would not be operator-visible; " +
	"the cost is Redis memory while the archiver is down, which marconi_pg_archiver_lag_seconds alerts on. Time scaled: retention %v for 7 d"

type streamScale struct {
	// lag-alert and count-one
	LagRate     float64
	LagWarm     time.Duration // before the latency: the archiver keeps up
	LagLoad     time.Duration // under the latency: it falls behind
	PGLatencyMs int
	Bound, Tol  float64
	// writer-resume
	ResumeRate     float64
	ResumeSignals  int
	WriterRestarts int
	// trim
	TrimRate            float64
	Retention           time.Duration
	TrimBefore, TrimOff time.Duration
	TrimMaxLen          int
	// archiver SIGKILL
	KillRate           float64
	KillSignals        int
	Kills              int
	ControlKillSignals int
}

func streamScaleOf() streamScale {
	if cfg.Profile == harness.ProfileFull {
		return streamScale{
			LagRate: 150, LagWarm: 2 * time.Second, LagLoad: 8 * time.Second, PGLatencyMs: 40, Bound: 2, Tol: 0.4,
			ResumeRate: 500, ResumeSignals: 6_000, WriterRestarts: 12,
			TrimRate: 300, Retention: 3 * time.Second, TrimBefore: 2 * time.Second, TrimOff: 8 * time.Second, TrimMaxLen: 300,
			KillRate: 400, KillSignals: 8_000, Kills: 10, ControlKillSignals: 400,
		}
	}
	return streamScale{
		LagRate: 120, LagWarm: time.Second, LagLoad: 3 * time.Second, PGLatencyMs: 40, Bound: 1, Tol: 0.35,
		ResumeRate: 300, ResumeSignals: 900, WriterRestarts: 4,
		TrimRate: 200, Retention: time.Second, TrimBefore: 1200 * time.Millisecond, TrimOff: 2500 * time.Millisecond, TrimMaxLen: 100,
		KillRate: 200, KillSignals: 600, Kills: 3, ControlKillSignals: 200,
	}
}

func streamTag(b client.Backend) string {
	return fmt.Sprintf("%s-%d", map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[b], cfg.Seed%100_000)
}

var _ = Describe("marconi-stream", func() {
	b := harness.BackendsFromEnv()[0] // the archiver's wire behaviour is its own, not the client library's
	Context(string(b), Ordered, func() {
		var reads, lag report.Check
		// The run is the BeforeAll's, outside every scenario: each column
		// records its offers into its own history for its timeline.
		var clock *traffic.Clock
		var ops []history.Op
		BeforeAll(func(ctx SpecContext) { reads, lag, clock, ops = runLagAndReads(ctx, b) })
		harness.Emit(
			harness.Scenario{
				Name: "marconi-stream/count-one/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
				Spec: "the PG archiver reads the stream one entry at a time — every XREADGROUP on the wire carries COUNT 1 and no reply holds more than one entry, under a backlog; BLOCK's departure from 0 recorded (002 §4.2 \"No batching\", Stage 4)",
				Run: func(ctx SpecContext) report.Check {
					harness.RecordOps(ctx, clock, ops)
					return reads
				},
			},
			harness.Scenario{
				Name: "marconi-stream/lag-alert/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnErrors,
				Spec: "the archiver-lag alert (marconi_pg_archiver_lag_seconds > N) fires whenever the true lag — the oldest unacknowledged stream entry's age, read from Redis — is past N, and not before (002 §4.2 Failure, §9)",
				Run: func(ctx SpecContext) report.Check {
					harness.RecordOps(ctx, clock, ops)
					return lag
				},
			},
		)
	})
	harness.Emit(
		harness.Scenario{
			Name: "marconi-stream/writer-resume/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
			Spec: "the Redis Stream writer, killed right after an append and restarted mid-stream, resumes from its Redis offset: every accepted signal once in the stream, in queue order — no gap, no duplicate (002 §4.1 Restart)",
			Run:  func(ctx SpecContext) report.Check { return runWriterResume(ctx, b) },
		},
		harness.Scenario{
			Name: "marconi-stream/trim-keeps-unconsumed/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
			Spec: "the ~7 d trim (time-scaled) removes consumed entries and never one the archiver has not consumed: an archiver away longer than the retention still archives every signal exactly once (002 §4.1 MAXLEN ~7d, §4.2 Recoverability)",
			Run:  func(ctx SpecContext) report.Check { return runTrim(ctx, b) },
		},
		harness.Scenario{
			Name: "marconi-stream/archiver-sigkill-primary/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
			Spec: "PRIMARY mode (MARCONI_PG_ARCHIVER_PRIMARY): the archiver runs as its own OS process and is SIGKILLed mid-drain — between commit and XACK, between read and write, and at arbitrary moments — and restarted; signal_queue, signal_trace_events and signal_obligations hold every signal exactly once (002 §4.2 idempotent signal_id UPSERT, Stage 4)",
			Run:  func(ctx SpecContext) report.Check { return runProcessKills(ctx, b) },
		},
	)
})

// lagSampler samples, every 50 ms, each pipeline's lag gauge and its true
// lag read from Redis.
type lagSampler struct {
	mu      sync.Mutex
	samples map[*pipeline][]judge.LagSample
	stop    context.CancelFunc
	done    chan struct{}
}

func startLagSampler(ctx context.Context, pool client.Pool, clock *traffic.Clock, ps ...*pipeline) *lagSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &lagSampler{samples: map[*pipeline][]judge.LagSample{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			for _, p := range ps {
				tenant := p.spec.Tenants[0]
				truth, err := workload.TrueArchiverLag(ctx, pool, tenant, audit.DefaultGroup)
				if err != nil {
					continue // no group yet, or stopping
				}
				gauge, err := traffic.MetricSum(p.metrics.Gatherer(), audit.MetricArchiverLag, map[string]string{"tenant": tenant})
				if err != nil {
					continue
				}
				s.mu.Lock()
				s.samples[p] = append(s.samples[p], judge.LagSample{At: clock.Now(), Gauge: gauge, True: truth})
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *lagSampler) Stop() {
	s.stop()
	<-s.done
}

func (s *lagSampler) of(p *pipeline) []judge.LagSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]judge.LagSample(nil), s.samples[p]...)
}

// runLagAndReads makes the archiver lag: PostgreSQL answers PGLatencyMs late
// while the load outruns the archiver, so its backlog — and the age of the
// oldest entry it has not acknowledged — grows past the alert bound; then
// the latency goes and it catches up. The reference and two controls run
// side by side: an archiver that reads in batches, and one whose gauge
// measures the wrong thing.
func runLagAndReads(ctx context.Context, b client.Backend) (reads, lag report.Check, clock *traffic.Clock, ops []history.Op) {
	GinkgoHelper()
	began := time.Now()
	s := streamScaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock = traffic.NewClock()
	tag := streamTag(b)
	// Each archiver's stream on its own primary, so that node's
	// commandstats count that archiver's XREADGROUPs alone.
	prim := cluster.Primaries()
	refNode, batchNode, sinceNode := prim[0], prim[0], prim[0]
	wireKnown := len(prim) >= 3
	if wireKnown {
		refNode, batchNode, sinceNode = prim[1], prim[0], prim[2]
	}
	primary := audit.Targets{Primary: true}
	signals := int(s.LagRate * (s.LagWarm + s.LagLoad).Seconds())
	refBefore, batchBefore := xreadgroupCalls(ctx, refNode), xreadgroupCalls(ctx, batchNode)

	By(fmt.Sprintf("%d signals at %.0f/s into the reference archiver and two controls; PostgreSQL %d ms late after %v", signals, s.LagRate, s.PGLatencyMs, s.LagWarm))
	refLog, batchLog := &workload.ReadLog{}, &workload.ReadLog{}
	ref := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "lag", Schema: "ms_lag_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-lag", refNode)},
		Targets: primary, WrapPool: refLog.Wrap, Rate: s.LagRate, Max: signals})
	batched := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "batched", Schema: "ms_batched_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-batched", batchNode)},
		Targets: primary, Mutant: audit.MutantBatchedRead, WrapPool: batchLog.Wrap, Rate: s.LagRate, Max: signals})
	sinceRead := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "lag-since-read", Schema: "ms_sinceread_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-sinceread", sinceNode)},
		Targets: primary, Mutant: audit.MutantLagSinceRead, Rate: s.LagRate, Max: signals})
	all := []*pipeline{ref, batched, sinceRead}
	DeferCleanup(func() { stopAll(all...) })
	sampler := startLagSampler(ctx, pool, clock, ref, sinceRead)
	DeferCleanup(sampler.Stop)
	sleepFor(ctx, s.LagWarm)
	Expect(pg.AddToxic(ctx, "ms-latency", "latency", "downstream", 1, map[string]any{"latency": s.PGLatencyMs})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { _ = pg.RemoveToxics(ctx) })
	slowPG := fault.Hold(ctx, fmt.Sprintf("latency/%dms", s.PGLatencyMs), "postgres")

	for _, p := range all {
		Expect(p.load.Wait()).To(Succeed())
	}
	By("load done: PostgreSQL back to full speed, the archivers catch up")
	Expect(pg.RemoveToxics(ctx)).To(Succeed())
	faults := harness.Windows(slowPG.End())
	waitDrained(ctx, pool, 4*claimMinIdle, 60*time.Second, all...)
	sleepFor(ctx, s.LagWarm) // idle: the true lag is 0, the alert must stay off
	sampler.Stop()
	stopAll(all...)

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults = faults
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Observed = append(ev.Observed, fmt.Sprintf(departureBlock, archiverBlock))

	refWire := judge.WireReads{Known: wireKnown, Calls: xreadgroupCalls(ctx, refNode) - refBefore, Entries: int64(rowCount(ctx, ref))}
	batchWire := judge.WireReads{Known: wireKnown, Calls: xreadgroupCalls(ctx, batchNode) - batchBefore, Entries: int64(rowCount(ctx, batched))}
	readsRes := judge.ReadsOneAtATime.Judge(judge.ReadsRun{Reads: refLog.Reads(), Wire: refWire, MinEntries: signals / 2})
	readsCtl := harness.Variant(string(audit.MutantBatchedRead),
		"XREADGROUP COUNT 16: under the backlog one read returns many entries — the v0.3 batching §4.2 replaced",
		judge.ReadsOneAtATime.Judge(judge.ReadsRun{Reads: batchLog.Reads(), Wire: batchWire, MinEntries: signals / 2}))
	reads = harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", readsRes, ev, readsCtl)

	refSamples := sampler.of(ref)
	lagRes := judge.LagAlert.Judge(judge.LagRun{Samples: refSamples, Bound: s.Bound, Tol: s.Tol, Grace: lagGrace})
	lagCtl := harness.Variant(string(audit.MutantLagSinceRead),
		"the gauge measures how long the entry in hand has been read, not its age in the stream: a backlog ageing for seconds shows as milliseconds and the alert never fires",
		judge.LagAlert.Judge(judge.LagRun{Samples: sampler.of(sinceRead), Bound: s.Bound, Tol: s.Tol, Grace: lagGrace}))
	early := append([]judge.LagSample(nil), refSamples...)
	for i := range early {
		if early[i].True < s.Bound-s.Tol {
			early[i].Gauge = s.Bound + 1
		}
	}
	earlyCtl := harness.SelfTest("alert-fires-early",
		"the reference samples with the gauge raised past the bound wherever the true lag was under it: an alert that fires before the lag passes N",
		judge.LagAlert.Judge(judge.LagRun{Samples: early, Bound: s.Bound, Tol: s.Tol, Grace: lagGrace}))
	lagEv := ev
	lagEv.Observed = []string{fmt.Sprintf("alert rule: %s > %.1f s (the spec's N, time-scaled; tolerance ± %.2f s for the gauge's update period and the sampling skew)", audit.MetricArchiverLag, s.Bound, s.Tol)}
	lag = harness.Check(report.RowMarconiStream, report.ColumnErrors, "", lagRes, lagEv, lagCtl, earlyCtl)
	return reads, lag, clock, harness.AuditOps("lag offers", ref.load.Offers())
}

// runWriterResume kills the Redis Stream writer right after an append —
// before it released the batch it appended, which goes back to the queue —
// WriterRestarts times while the load runs, restarting it after a
// supervisor's backoff each time. The archiver is not involved: the stream
// itself is judged against the ledger.
func runWriterResume(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	s := streamScaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := streamTag(b)
	node := cluster.Primaries()[0]

	// crashEvery kills the writer at its first append after each
	// (n+1)-th of the load's duration: on the load's clock, not on what
	// the writer appended, which a gap-leaving variant never catches up on.
	loadTime := time.Duration(float64(s.ResumeSignals) / s.ResumeRate * float64(time.Second))
	crashEvery := func() func(string, int) bool {
		start, next := time.Now(), 0
		return func(string, int) bool {
			if next >= s.WriterRestarts || time.Since(start) < time.Duration(next+1)*loadTime/time.Duration(s.WriterRestarts+1) {
				return false
			}
			next++
			return true
		}
	}
	spec := func(name string, m audit.Mutant) pipelineSpec {
		return pipelineSpec{Name: name, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-"+name, node)}, Mutant: m, NoArchiver: true,
			WriterCrash: crashEvery(), Rate: s.ResumeRate, Max: s.ResumeSignals, Schema: "ms_resume_" + tag}
	}
	By(fmt.Sprintf("%d signals at %.0f/s; the writer killed after an append %d times and restarted; two controls alongside", s.ResumeSignals, s.ResumeRate, s.WriterRestarts))
	ref := startPipeline(ctx, b, pool, clock, spec("resume", audit.MutantNone))
	ignore := startPipeline(ctx, b, pool, clock, spec("ignore-offset", audit.MutantIgnoreOffset))
	tail := startPipeline(ctx, b, pool, clock, spec("from-tail", audit.MutantResumeFromTail))
	all := []*pipeline{ref, ignore, tail}
	DeferCleanup(func() { stopAll(all...) })
	for _, p := range all {
		Expect(p.load.Wait()).To(Succeed())
	}
	waitUntil(ctx, "every queue emptied into its stream", 30*time.Second, func() bool {
		for _, p := range all {
			if p.queue.Stats(p.spec.Tenants[0]).Depth > 0 {
				return false
			}
		}
		return true
	})
	stopAll(all...)

	judge := func(p *pipeline) check.Result {
		entries, err := traffic.ReadStreamEntries(ctx, pool, p.spec.Tenants[0])
		Expect(err).NotTo(HaveOccurred())
		return judge.StreamResume.Judge(judge.ResumeRun{Offers: p.load.Offers(), Stream: entries, Restarts: p.restarts(), MinRestarts: s.WriterRestarts})
	}
	res := judge(ref)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	for _, r := range ref.restarts() {
		ev.Observed = append(ev.Observed, fmt.Sprintf("writer killed at %v after appending a batch of %d (handed back to the queue unreleased)", r.At.Round(time.Millisecond), r.Requeued))
	}
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", res, ev,
		harness.Variant(string(audit.MutantIgnoreOffset), "the restarted writer ignores its Redis offset (and the append does not skip covered offsets): the batch its predecessor appended is appended again", judge(ignore)),
		harness.Variant(string(audit.MutantResumeFromTail), "the restarted writer starts \"from $\": it skips what is queued instead of what its offset covers, and the entries queued during the restart never reach the stream", judge(tail)),
	)
}

// runTrim lets the archiver consume for a while, takes it away for longer
// than the (time-scaled) retention while the writer keeps appending and
// trimming, brings it back and lets it catch up.
func runTrim(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	s := streamScaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := streamTag(b)
	node := cluster.Primaries()[0]
	// The first archiver dies between commit and XACK halfway through its
	// run; its successor reads on past the entry it left pending and goes
	// away before claiming it (ClaimMinIdle is the absence), so the
	// group holds a pending entry older than its last-delivered id: the
	// trim must respect both. After the absence the entry is idle long
	// enough to be claimed at once.
	plan := []workload.CrashPlan{{After: int(s.TrimRate * s.TrimBefore.Seconds() / 2), Point: audit.CrashBeforeAck}}
	spec := func(name string, m audit.Mutant) pipelineSpec {
		return pipelineSpec{Name: name, Schema: "ms_trim_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-"+name, node)}, Mutant: m,
			Targets: audit.Targets{Primary: true}, Retention: s.Retention, MaxLen: s.TrimMaxLen, Rate: s.TrimRate,
			Plan: plan, ClaimMinIdle: s.TrimOff}
	}
	By(fmt.Sprintf("retention %v (7 d scaled); %.0f signals/s; the archiver consumes for %v, then is away for %v", s.Retention, s.TrimRate, s.TrimBefore, s.TrimOff))
	ref := startPipeline(ctx, b, pool, clock, spec("trim", audit.MutantNone))
	ignores := startPipeline(ctx, b, pool, clock, spec("trim-ignores-group", audit.MutantTrimIgnoresGroup))
	byCount := startPipeline(ctx, b, pool, clock, spec("trim-by-count", audit.MutantTrimByCount))
	all := []*pipeline{ref, ignores, byCount}
	DeferCleanup(func() { stopAll(all...) })
	sleepFor(ctx, s.TrimBefore)
	waitUntil(ctx, "every first archiver killed and its successor 50 entries further", 60*time.Second, func() bool {
		for _, p := range all {
			if len(p.sup.Crashes()) < len(plan) || p.sum(audit.MetricArchiverArchived, nil) < float64(plan[0].After+50) {
				return false
			}
		}
		return true
	})
	for _, p := range all {
		p.stopArchiver()
	}
	off := time.Now()
	sleepFor(ctx, s.TrimOff)
	for _, p := range all {
		_ = p.load.Stop()
	}
	By("archivers back: catching up")
	down := time.Since(off)
	for _, p := range all {
		p.startArchiver(ctx, clock, p.spec.Name+"-back", nil)
	}
	waitDrained(ctx, pool, 4*claimMinIdle, 60*time.Second, all...)
	stopAll(all...)

	judge := func(p *pipeline) check.Result {
		t := p.spec.Tenants[0]
		rows, err := traffic.ReadAuditCounts(ctx, pg.DirectDSN(), p.spec.Schema, audit.TableQueue)
		Expect(err).NotTo(HaveOccurred())
		added, length, err := workload.StreamInfo(ctx, pool, t)
		Expect(err).NotTo(HaveOccurred())
		return check.All("marconi-stream/trim", killPremise(p.spec.Name, p.crashes, len(plan)), judge.TrimKeepsUnconsumed.Judge(judge.TrimHistory{
			Offers: p.load.Offers(), Rows: rows, Added: added, Length: length, Down: down, Retention: s.Retention, End: p.end(ctx, pool)[t],
			TrimmedPending: p.sum(audit.MetricArchiverErrors, map[string]string{"tenant": t, "reason": "trimmed"}),
		}))
	}
	res := judge(ref)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began)), "archiver_away": report.Duration(down)}
	ev.Observed = append(ev.Observed, fmt.Sprintf(departureTrim, s.Retention))
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", res, ev,
		harness.Variant(string(audit.MutantTrimIgnoresGroup), "MINID ~ now−retention alone: what the absent archiver had not consumed is trimmed once it is older than the retention", judge(ignores)),
		harness.Variant(string(audit.MutantTrimByCount), fmt.Sprintf("MAXLEN ~%d: the naive reading of \"MAXLEN ~7d\" trims young, unconsumed entries as soon as the archiver falls that far behind", s.TrimMaxLen), judge(byCount)),
	)
}

// procKill is one planned archiver-process kill: the process SIGKILLs
// itself at Point once it began After entries, or (Point "") the harness
// SIGKILLs it once signal_queue holds Rows rows.
type procKill struct {
	Point audit.CrashPoint
	After int
	Rows  int
}

// killPlanOf alternates kills between commit and XACK, between read and
// write, and at an arbitrary moment chosen by the harness.
func killPlanOf(signals, kills int) []procKill {
	var plan []procKill
	for i := range kills {
		switch i % 3 {
		case 0:
			plan = append(plan, procKill{Point: audit.CrashBeforeAck, After: max(1, signals/(4*kills))})
		case 1:
			plan = append(plan, procKill{Rows: (i + 1) * signals / (kills + 1)})
		case 2:
			plan = append(plan, procKill{Point: audit.CrashBeforeWrite, After: max(1, signals/(4*kills))})
		}
	}
	return plan
}

// runProcessKills runs the archiver as its own process in primary mode and
// SIGKILLs it per plan while the load runs (until the last kill: KillSignals
// sizes the plan, the load is at least that long), then lets a last one
// drain.
func runProcessKills(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	if cluster.Credentials().TLS != nil {
		return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "",
			judge.Unrunnable.Judge(judge.NotRun{Checker: "archiver-sigkill", Why: "the archiver process cannot be handed the topology's TLS configuration"}), report.Evidence{})
	}
	s := streamScaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := streamTag(b)
	node := cluster.Primaries()[0]
	dir := GinkgoT().TempDir()
	primary := audit.Targets{Primary: true}

	By(fmt.Sprintf("%d signals at %.0f/s; the archiver process (primary mode) SIGKILLed %d times mid-drain", s.KillSignals, s.KillRate, s.Kills))
	ref := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "sigkill", Schema: "ms_sigkill_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-sigkill", node)},
		Targets: primary, NoArchiver: true, Rate: s.KillRate})
	plain := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "sigkill-plain", Schema: "ms_sigkillplain_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-sigkillplain", node)},
		Targets: primary, NoArchiver: true, Mutant: audit.MutantPlainInsert, Rate: s.KillRate / 4})
	DeferCleanup(func() { stopAll(ref, plain) })

	refPlan := killPlanOf(s.KillSignals, s.Kills)
	refKills := driveProcKills(ctx, ref, pool, clock, dir, refPlan)
	By("negative control: a plain-INSERT archiver process SIGKILLed between commit and XACK")
	plainPlan := []procKill{{Point: audit.CrashBeforeAck, After: s.ControlKillSignals / 8}, {Point: audit.CrashBeforeAck, After: s.ControlKillSignals / 8}}
	plainKills := driveProcKills(ctx, plain, pool, clock, dir, plainPlan)
	stopAll(ref, plain)

	premise := judge.KillPremise.Judge(judge.KillRun{Kills: refKills, Want: len(refPlan)})
	res := check.All("marconi-stream/archiver-sigkill", premise, judge.ExactlyOnce.Judge(judge.ExactlyOnceRun{Ledgers: ref.ledgers(ctx, pool, canonicalSet, nil), MinOffers: s.KillSignals / 4}))
	plainRes := check.All("control", judge.KillPremise.Judge(judge.KillRun{Kills: plainKills, Want: len(plainPlan)}), judge.ExactlyOnce.Judge(judge.ExactlyOnceRun{Ledgers: plain.ledgers(ctx, pool, canonicalSet, nil), MinOffers: 1}))

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Metrics = map[string]float64{"archiver_process_kills": float64(len(refKills))}
	for _, k := range refKills {
		how := "by the harness at an arbitrary moment"
		if k.Self {
			how = "by itself at " + k.Point
		}
		ev.Observed = append(ev.Observed, fmt.Sprintf("archiver process %d SIGKILLed %s at %v; %d entries left pending", k.Pid, how, k.At.Round(time.Millisecond), k.Pending))
	}
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", res, ev,
		harness.Variant(string(audit.MutantPlainInsert)+"/primary",
			"plain INSERT into the canonical tables without their signal_id keys: the entry a process killed between commit and XACK left pending is written again by its successor",
			plainRes))
}

// driveProcKills runs archiver processes for p one after another, killing
// each per plan, then one more that drains everything and is stopped.
func driveProcKills(ctx context.Context, p *pipeline, pool client.Pool, clock *traffic.Clock, dir string, plan []procKill) []judge.ArchiverKill {
	GinkgoHelper()
	tenant := p.spec.Tenants[0]
	var kills []judge.ArchiverKill
	for i, k := range plan {
		consumer := fmt.Sprintf("%s-proc-%d", p.spec.Name, i+1)
		c := startArchiverProc(p, consumer, dir, k.Point, k.After)
		if k.Point == "" {
			waitUntil(ctx, fmt.Sprintf("%s archived %d rows", consumer, k.Rows), 60*time.Second, func() bool {
				return c.Exited() || rowCount(ctx, p) >= k.Rows
			})
			c.Kill()
		} else {
			select {
			case <-c.Done():
			case <-time.After(60 * time.Second):
				Fail(fmt.Sprintf("%s never reached %s after %d entries:\n%s", consumer, k.Point, k.After, childLog(dir, consumer)))
			}
		}
		Expect(killedBySIGKILL(c.ExitError())).To(BeTrue(), "%s ended otherwise than by SIGKILL (%v):\n%s", consumer, c.ExitError(), childLog(dir, consumer))
		g, err := traffic.ReadAuditGroup(ctx, pool, tenant, audit.DefaultGroup)
		Expect(err).NotTo(HaveOccurred())
		kills = append(kills, judge.ArchiverKill{At: clock.Now(), Pid: c.Pid(), Self: k.Point != "", Point: string(k.Point), Pending: g.Pending})
		Expect(c.Close()).To(Succeed())
	}
	// The load runs until the last kill, so every kill is mid-stream and a
	// process planned to die after n entries always gets them.
	Expect(p.load.Stop()).To(Succeed())
	consumer := p.spec.Name + "-proc-last"
	c := startArchiverProc(p, consumer, dir, "", 0)
	waitDrained(ctx, pool, time.Hour, 60*time.Second, p) // pending must reach 0: nothing in-process reports progress
	c.Stop(5 * time.Second)
	return kills
}

// xreadgroupCalls is node's INFO commandstats count of XREADGROUP calls.
func xreadgroupCalls(ctx context.Context, node *fixtures.Node) int64 {
	GinkgoHelper()
	info, err := node.Info(ctx, "commandstats")
	Expect(err).NotTo(HaveOccurred())
	for _, kv := range strings.Split(info["cmdstat_xreadgroup"], ",") {
		if v, ok := strings.CutPrefix(kv, "calls="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return n
		}
	}
	return 0
}

// rowCount is how many signal_queue rows p's schema holds.
func rowCount(ctx context.Context, p *pipeline) int {
	m, err := traffic.ReadAuditCounts(ctx, pg.DirectDSN(), p.spec.Schema, audit.TableQueue)
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// killedBySIGKILL reports whether a process's wait error says SIGKILL ended
// it.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// sleepFor waits d or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// offerBatch offers n pushed entries of kind to q for tenant, their signal
// ids "<tenant>-<phase>-<i>", and returns the ids (the stream scenarios
// that drive a writer by hand: lost-reply-once, stale-writer-fenced).
func offerBatch(q *audit.Queue, tenant, phase, kind string, n int) []string {
	GinkgoHelper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%s-%d", tenant, phase, i)
		now := time.Now()
		Expect(q.Offer(audit.Entry{Envelope: audit.Envelope{SignalID: ids[i], TenantID: tenant, ProjectID: "p", Sender: "s", Recipient: "r",
			Kind: kind, CreatedAt: now}, ArrivedAt: now, Outcome: audit.OutcomePushed})).To(BeTrue())
	}
	return ids
}

// runWriter runs w until the returned stop is called; stop cancels the run
// once, waits for it and returns Run's error (the same on every call).
func runWriter(ctx context.Context, w *audit.Writer) (stop func() error) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
}
