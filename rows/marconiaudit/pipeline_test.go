package marconiaudit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/rows/marconiaudit/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Archiver timing for the runs: a short block so incarnations stop and
// claim promptly; a claim idle time well above one entry's processing time,
// so a live archiver is never robbed (only one runs at a time anyway).
const (
	archiverBlock    = 200 * time.Millisecond
	claimMinIdle     = 300 * time.Millisecond
	claimEvery       = 100 * time.Millisecond
	archiverRetryMax = 100 * time.Millisecond
)

// healSettle is how long after a link is restored a pipeline error still
// belongs to the outage: the clients' own reconnect time. go-redis v9.23.0
// is the slower one — after PoolSize failed dials its pool stops dialing
// and returns the last dial error until a probe, once a second, succeeds
// (internal/pool/pool.go tryDial), on top of a command's own retries
// (MaxRetryBackoff 512 ms) and the pipeline's retry backoff (100 ms here).
// Measured: the last writer error 0.8 s after the heal.
const healSettle = 2 * time.Second

// pipelineSpec is one audit fan-out as data: its own queue, writer,
// archiver(s), metrics registry and PostgreSQL schema. The reference
// pipeline and every negative control are pipelines of this shape, run side
// by side against the same servers.
type pipelineSpec struct {
	Name    string
	Schema  string
	Tenants []string
	Queue   audit.QueueOptions
	// Mutant applies to the component it names (queue/…, writer/…,
	// archiver/…).
	Mutant audit.Mutant
	// Targets are the archiver's table sets.
	Targets audit.Targets
	// Plan kills the archiver at these points; it is restarted at once.
	Plan []workload.CrashPlan
	// Direct runs the legacy synchronous PG write for every signal.
	Direct bool
	// Rate and Max drive the load (per tenant).
	Rate float64
	Max  int

	// NoArchiver: the scenario runs the archiver itself (as a process).
	NoArchiver bool
	// WrapPool, when set, wraps every archiver pool (a ReadLog).
	WrapPool func(client.Pool) client.Pool
	// Retention and MaxLen are the writer's (0: its defaults).
	Retention time.Duration
	MaxLen    int
	// ClaimMinIdle overrides the archiver's claimMinIdle.
	ClaimMinIdle time.Duration
	// WriterCrash, when set, is the writer's crash hook; a crashed writer
	// is restarted after writerRestartDelay, as a supervisor would.
	WriterCrash func(tenant string, appended int) bool
}

// writerRestartDelay is how long a crashed writer stays down: a supervisor's
// restart backoff, during which the load keeps queueing — so a successor
// that skipped the queue instead of resuming at its offset leaves a gap.
const writerRestartDelay = 100 * time.Millisecond

type pipeline struct {
	spec    pipelineSpec
	backend client.Backend
	metrics *audit.Metrics
	queue   *audit.Queue
	errs    *workload.AuditErrors
	load    *workload.AuditLoad
	// calls times the writer's commands per key (its appends: the stream's).
	calls *workload.CallTimes
	sup   *workload.ArchiverSupervisor

	stopWriter context.CancelFunc
	writerDone chan struct{}

	mu             sync.Mutex
	writerRestarts []judge.WriterRestart
	// crashes are the archiver kills of supervisors already stopped.
	crashes []workload.AuditCrash
}

// restarts returns the writer restarts so far.
func (p *pipeline) restarts() []judge.WriterRestart {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]judge.WriterRestart(nil), p.writerRestarts...)
}

func mutantFor(m audit.Mutant, component string) audit.Mutant {
	if strings.HasPrefix(string(m), component+"/") {
		return m
	}
	return audit.MutantNone
}

// dialArchiver opens one archiver tenant loop's own pool.
func dialArchiver(b client.Backend, wrap func(client.Pool) client.Pool) func(ctx context.Context) (client.Pool, error) {
	return func(ctx context.Context) (client.Pool, error) {
		p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "marconi-archiver"}))
		if err != nil || wrap == nil {
			return p, err
		}
		return wrap(p), nil
	}
}

// startPipeline migrates the schema and starts the writer, the archiver
// supervisor and the load, all on clock.
func startPipeline(ctx context.Context, b client.Backend, pool client.Pool, clock *traffic.Clock, s pipelineSpec) *pipeline {
	GinkgoHelper()
	Expect(audit.Migrate(ctx, pg.DSN(), audit.MigrateOptions{Schema: s.Schema, Mutant: mutantFor(s.Mutant, "archiver"), Primary: s.Targets.Primary && !s.Direct})).To(Succeed())
	p := &pipeline{spec: s, backend: b, metrics: audit.NewMetrics(nil), errs: &workload.AuditErrors{Clock: clock}, calls: &workload.CallTimes{}}
	qo := s.Queue
	qo.Metrics, qo.Mutant = p.metrics, mutantFor(s.Mutant, "queue")
	var err error
	p.queue, err = audit.NewQueue(qo)
	Expect(err).NotTo(HaveOccurred())
	wo := audit.WriterOptions{Pool: p.calls.Wrap(pool), Queue: p.queue, OnError: p.errs.Record, Mutant: mutantFor(s.Mutant, "writer"), RetryMax: archiverRetryMax,
		Retention: s.Retention, MaxLen: s.MaxLen}
	if s.WriterCrash != nil {
		wo.Crash = func(tenant string, appended int) bool {
			if !s.WriterCrash(tenant, appended) {
				return false
			}
			p.mu.Lock()
			p.writerRestarts = append(p.writerRestarts, judge.WriterRestart{At: clock.Now(), Requeued: appended})
			p.mu.Unlock()
			return true
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	p.stopWriter, p.writerDone = cancel, make(chan struct{})
	go func() {
		defer close(p.writerDone)
		for wctx.Err() == nil {
			w, err := audit.NewWriter(wo)
			if err != nil {
				return
			}
			if err := w.Run(wctx); !errors.Is(err, audit.ErrWriterCrashed) {
				return
			}
			select { // a supervisor's restart backoff
			case <-wctx.Done():
			case <-time.After(writerRestartDelay):
			}
		}
	}()

	if !s.NoArchiver {
		p.startArchiver(ctx, clock, s.Name+"-archiver", s.Plan)
	}

	p.load = &workload.AuditLoad{Sink: p.queue, Tenants: s.Tenants, Rate: s.Rate, Max: s.Max, Clock: clock,
		Rand: func(tenant string) *rand.Rand {
			return cfg.Rand(fmt.Sprintf("marconi-audit/%s/%s/%s", b, s.Name, tenant))
		}}
	if s.Direct {
		p.load.Direct = func(ctx context.Context, _ string) (*audit.DirectWriter, error) {
			return audit.NewDirectWriter(ctx, audit.DirectWriterOptions{PostgresDSN: pg.DSN(), Schema: s.Schema})
		}
	}
	p.load.Start(ctx)
	return p
}

// startArchiver starts an archiver supervisor whose incarnations are named
// name-1, name-2… (a restarted archiver takes a new name, so what its
// predecessor left pending is claimed, not re-read as its own).
func (p *pipeline) startArchiver(ctx context.Context, clock *traffic.Clock, name string, plan []workload.CrashPlan) {
	s := p.spec
	claimIdle := claimMinIdle
	if s.ClaimMinIdle > 0 {
		claimIdle = s.ClaimMinIdle
	}
	p.sup = &workload.ArchiverSupervisor{Name: name, Plan: plan, Clock: clock,
		New: func(consumer string, crash func(audit.CrashPoint, string, string) bool) (*audit.Archiver, error) {
			return audit.NewArchiver(audit.ArchiverOptions{
				Dial: dialArchiver(p.backend, s.WrapPool), PostgresDSN: pg.DSN(), Schema: s.Schema, Tenants: s.Tenants, Consumer: consumer,
				Targets: s.Targets, Block: archiverBlock, ClaimMinIdle: claimIdle, ClaimEvery: claimEvery,
				RetryMax: archiverRetryMax, Metrics: p.metrics, OnError: p.errs.Record,
				Mutant: mutantFor(s.Mutant, "archiver"), Crash: crash,
			})
		}}
	p.sup.Start(ctx)
}

// stopArchiver stops the running archiver supervisor (the archiver goes
// away; the group keeps its state in Redis).
func (p *pipeline) stopArchiver() {
	if p.sup != nil {
		_ = p.sup.Stop()
		p.crashes = append(p.crashes, p.sup.Crashes()...)
		p.sup = nil
	}
}

// stop ends the load, the writer and the archivers (idempotent enough for
// DeferCleanup after a normal stop).
func (p *pipeline) stop() {
	_ = p.load.Stop()
	if p.stopWriter != nil {
		p.stopWriter()
		<-p.writerDone
		p.stopWriter = nil
	}
	if p.sup != nil {
		_ = p.sup.Stop()
		p.sup = nil
	}
}

func (p *pipeline) sum(name string, labels map[string]string) float64 {
	v, err := traffic.MetricSum(p.metrics.Gatherer(), name, labels)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// lost is the overwrite counter of tenant, from the registry.
func (p *pipeline) lost(tenant string) float64 {
	return p.sum(audit.MetricQueueOverwrite, map[string]string{"tenant": tenant})
}

// backlog is what the stream holds that PostgreSQL does not: appended −
// archived.
func (p *pipeline) backlog(tenant string) float64 {
	sel := map[string]string{"tenant": tenant}
	return p.sum(audit.MetricWriterAppended, sel) - p.sum(audit.MetricArchiverArchived, sel)
}

// end reads every tenant's end state.
func (p *pipeline) end(ctx context.Context, pool client.Pool) map[string]judge.AuditEnd {
	GinkgoHelper()
	out := map[string]judge.AuditEnd{}
	for _, t := range p.spec.Tenants {
		g, err := traffic.ReadAuditGroup(ctx, pool, t, audit.DefaultGroup)
		Expect(err).NotTo(HaveOccurred())
		sel := map[string]string{"tenant": t}
		out[t] = judge.AuditEnd{
			QueueDepth: int64(p.queue.Stats(t).Depth), Pending: g.Pending, Undelivered: g.Undelivered,
			WriterLag: p.sum(audit.MetricWriterLag, sel), ArchiverLag: p.sum(audit.MetricArchiverLag, sel),
		}
	}
	return out
}

// settledLag is the lag (seconds) a drained pipeline's gauges must come
// back under, and lagSettle how long after draining they get to do so: a
// gauge is reset by the first empty read after the last entry, one Block
// (200 ms) later on an idle machine, seconds on a loaded 2-core runner.
const (
	settledLag = 1.0
	lagSettle  = 5 * time.Second
)

// waitDrained waits until every pipeline has nothing in flight, or — for a
// control that can never drain (a dead consumer's entries nobody claims) —
// until nothing is left to deliver and its archiver made no progress for
// quiet. It fails the spec once the pipelines made no progress for stall:
// no entry archived in-process and no new low of what is left in flight
// (queue depth + undelivered + pending, read from Redis, so an archiver
// running as a process counts too). The bound follows progress, not the
// clock: a drain's length is backlog ÷ COUNT 1 archiving rate (002 §4.2),
// and both follow the machine's load: under heavy CPU contention a
// full-profile drain outran a fixed 5 min while every archiver was still
// archiving (the last two tenants were 11 and 1151 entries from done).
func waitDrained(ctx context.Context, pool client.Pool, quiet, stall time.Duration, ps ...*pipeline) {
	GinkgoHelper()
	drainAtMost(ctx, pool, quiet, stall, 0, ps...)
}

// drainAtMost is waitDrained giving up (false, no failure) once bound
// (> 0) passed while still progressing: a run whose premise already failed
// (writers outpaced) drains only so its ledger can still catch a loss, and
// a drain on a runner that overloaded must not run into the suite's
// timeout instead.
func drainAtMost(ctx context.Context, pool client.Pool, quiet, stall, bound time.Duration, ps ...*pipeline) bool {
	GinkgoHelper()
	type progress struct {
		archived float64
		since    time.Time
	}
	last := map[*pipeline]*progress{}
	began := time.Now()
	var drainedAt time.Time
	watch := newProgressWatch()
	for {
		settled, lagging := true, false
		var why []string
		archivedAll, left := 0.0, 0.0
		for _, p := range ps {
			archived := p.sum(audit.MetricArchiverArchived, nil)
			archivedAll += archived
			pr := last[p]
			if pr == nil || pr.archived != archived {
				pr = &progress{archived: archived, since: time.Now()}
				last[p] = pr
			}
			for t, e := range p.end(ctx, pool) {
				left += float64(e.QueueDepth + e.Undelivered + e.Pending)
				if e.QueueDepth == 0 && e.Undelivered == 0 && (e.Pending == 0 || time.Since(pr.since) >= quiet) {
					// Drained. The lag gauges still show the age of the last
					// entry until the next empty read resets them (§9): give
					// them lagSettle to settle before the checker judges.
					lagging = lagging || e.WriterLag > settledLag || e.ArchiverLag > settledLag
					continue
				}
				settled = false
				why = append(why, fmt.Sprintf("%s/%s %+v", p.spec.Name, t, e))
			}
		}
		if settled && drainedAt.IsZero() {
			drainedAt = time.Now()
		}
		if settled && (!lagging || time.Since(drainedAt) > lagSettle) {
			return true
		}
		if bound > 0 && time.Since(began) > bound {
			return false
		}
		// Settled pipelines waiting out lagSettle count as progressing.
		if watch.observe(archivedAll, left) > stall && !settled {
			Fail(fmt.Sprintf("pipelines made no progress for %v (draining for %v, %.0f entries left, %.0f archived): %s",
				stall, time.Since(began).Round(time.Second), left, archivedAll, strings.Join(why, "; ")))
		}
		if waited := time.Since(began); waited > progressCeiling && !settled {
			Fail(fmt.Sprintf("pipelines still draining after %v, though progressing (%.0f entries left, %.0f archived): %s",
				waited.Round(time.Second), left, archivedAll, strings.Join(why, "; ")))
		}
		select {
		case <-ctx.Done():
			Fail("interrupted while draining")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// progressWatch tells how long a wait went without progress: a count that
// grows (entries archived) or a remainder that reaches a new low (entries
// left). A remainder that goes back up (new traffic) is not progress until
// it passes its low again.
type progressWatch struct {
	done, low float64
	since     time.Time
}

func newProgressWatch() *progressWatch {
	return &progressWatch{done: math.Inf(-1), low: math.Inf(1), since: time.Now()}
}

// observe records one reading and returns how long ago progress was last
// seen.
func (w *progressWatch) observe(done, left float64) time.Duration {
	if done > w.done || left < w.low {
		w.done, w.low, w.since = max(w.done, done), min(w.low, left), time.Now()
	}
	return time.Since(w.since)
}

// waitProgress polls left every 20 ms until it reaches 0, calling
// progressed (when set) on each new low — the first reading is one — so
// the caller can mark where the stall it may have to judge begins. Once
// left made no new low for stall it asks stalled (when set) whose the
// stall is: a
// result Inconclusive (a premise of the run not met) ends the wait early,
// returned; anything else fails the spec with what, left's account of
// what is left and the result's. For a wait whose length follows the
// machine's load (a backlog worked off at whatever rate the runner
// allows): the bound is on the absence of progress, not on the total.
func waitProgress(ctx context.Context, what string, stall time.Duration, left func() (float64, string), progressed func(), stalled func() check.Result) (time.Duration, *check.Result) {
	GinkgoHelper()
	began := time.Now()
	watch := newProgressWatch()
	for {
		n, why := left()
		if n <= 0 {
			return time.Since(began), nil
		}
		low := watch.low
		quiet := watch.observe(0, n)
		if progressed != nil && n < low {
			progressed()
		}
		if quiet > stall {
			msg := fmt.Sprintf("no progress for %v waiting until %s (%.0f left, waiting for %v): %s", stall, what, n, time.Since(began).Round(time.Second), why)
			if stalled != nil {
				r := stalled()
				if r.Status == check.Inconclusive {
					return time.Since(began), &r
				}
				msg += fmt.Sprintf("\n%s: %s\n%s", r.Status, r.Message, r.Counterexample)
			}
			Fail(msg)
		}
		if waited := time.Since(began); waited > progressCeiling {
			Fail(fmt.Sprintf("still not done after %v waiting until %s, though progressing (%.0f left): %s", waited.Round(time.Second), what, n, why))
		}
		select {
		case <-ctx.Done():
			Fail("interrupted waiting until " + what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// progressCeiling bounds a progress-driven wait as a whole, so a pipeline
// that creeps forward forever (a writer outpaced by a hair) fails the spec
// rather than the whole suite at Ginkgo's timeout: four times the longest
// drain measured (5m29s, full profile on a heavily shared machine).
const progressCeiling = 22 * time.Minute

// waitUntil polls cond every 20 ms until it holds, failing the spec with
// what at the deadline or when ctx ends.
func waitUntil(ctx context.Context, what string, deadline time.Duration, cond func() bool) {
	GinkgoHelper()
	Eventually(ctx, cond).WithTimeout(deadline).WithPolling(20*time.Millisecond).Should(BeTrue(), "waiting until %s", what)
}

// tables names the table set a ledger reads.
type tables struct{ Queue, Trace, Obligations string }

var (
	shadowSet    = tables{audit.TableQueueShadow, audit.TableTraceEventsShadow, audit.TableObligationsShadow}
	canonicalSet = tables{audit.TableQueue, audit.TableTraceEvents, audit.TableObligations}
)

// ledgers reads each tenant's three-way ledger once the pipeline drained.
func (p *pipeline) ledgers(ctx context.Context, pool client.Pool, set tables, expectLoss func(tenant string) bool) []judge.AuditLedger {
	GinkgoHelper()
	offers := p.load.Offers()
	end := p.end(ctx, pool)
	var out []judge.AuditLedger
	read := func(table string) map[string]int {
		m, err := traffic.ReadAuditCounts(ctx, pg.DirectDSN(), p.spec.Schema, table)
		Expect(err).NotTo(HaveOccurred())
		return m
	}
	rows, trace, oblig := read(set.Queue), read(set.Trace), read(set.Obligations)
	for _, t := range p.spec.Tenants {
		stream, err := traffic.ReadAuditStream(ctx, pool, t)
		Expect(err).NotTo(HaveOccurred())
		l := judge.AuditLedger{Name: p.spec.Name + "/" + t, Tenant: t, Stream: stream, End: end[t],
			Rows: map[string]int{}, Trace: map[string]int{}, Obligations: map[string]int{}}
		for _, o := range offers {
			if o.Tenant == t {
				l.Offers = append(l.Offers, o)
			}
		}
		prefix := t + "-"
		for id, n := range rows {
			if strings.HasPrefix(id, prefix) {
				l.Rows[id] = n
			}
		}
		for id, n := range trace {
			if strings.HasPrefix(id, prefix) {
				l.Trace[id] = n
			}
		}
		for id, n := range oblig {
			if strings.HasPrefix(id, prefix) {
				l.Obligations[id] = n
			}
		}
		byReason, err := traffic.MetricByLabel(p.metrics.Gatherer(), audit.MetricQueueOverwrite, "reason", map[string]string{"tenant": t})
		Expect(err).NotTo(HaveOccurred())
		l.ByReason = byReason
		for _, v := range byReason {
			l.Overwrites += v
		}
		l.ExpectLoss = expectLoss != nil && expectLoss(t)
		out = append(out, l)
	}
	return out
}

// history is the pipeline's errors-column history.
func (p *pipeline) history(ctx context.Context, pool client.Pool, outages []judge.AuditOutage, samples []judge.AuditSample, bounds map[string]time.Duration) judge.AuditPipelineHistory {
	GinkgoHelper()
	return judge.AuditPipelineHistory{
		Name: p.spec.Name, Errors: p.errs.Errors(), Outages: outages, Settle: healSettle, Samples: samples,
		Offers: p.load.Offers(), OfferBound: bounds, End: p.end(ctx, pool), SettledLag: settledLag,
		Counted: map[judge.AuditStage]float64{
			string(audit.StageWriter):   p.sum(audit.MetricWriterErrors, nil),
			string(audit.StageArchiver): p.sum(audit.MetricArchiverErrors, nil),
		},
		CountedBy: p.countedBy(),
	}
}

// countedBy is every series of the two error counters, keyed
// "<stage>/<tenant>/<reason>" as judge.AuditPipelineHistory.CountedBy.
func (p *pipeline) countedBy() map[string]float64 {
	GinkgoHelper()
	out := map[string]float64{}
	for stage, name := range map[audit.Stage]string{audit.StageWriter: audit.MetricWriterErrors, audit.StageArchiver: audit.MetricArchiverErrors} {
		by, err := workload.MetricByLabels(p.metrics.Gatherer(), name, "tenant", "reason")
		Expect(err).NotTo(HaveOccurred())
		for k, v := range by {
			out[string(stage)+"/"+k] = v
		}
	}
	return out
}

// tenantOn returns a tenant id "<prefix>-<n>" whose stream slot node owns,
// so a fault on that node's link hits exactly the tenants chosen for it.
func tenantOn(ctx context.Context, prefix string, node *fixtures.Node) string {
	GinkgoHelper()
	for i := 0; i < 10_000; i++ {
		t := fmt.Sprintf("%s-%d", prefix, i)
		keys, err := audit.KeysFor(t)
		Expect(err).NotTo(HaveOccurred())
		owner, err := cluster.NodeForSlot(ctx, slot.Of(keys.Stream))
		Expect(err).NotTo(HaveOccurred())
		if owner == node {
			return t
		}
	}
	Fail("no tenant id found on " + node.Name())
	return ""
}

// stopAll stops pipelines in parallel.
func stopAll(ps ...*pipeline) {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(p.stop)
	}
	wg.Wait()
}
