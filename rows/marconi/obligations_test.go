package marconi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
)

// marconi-obligations (spec 002 §3.4 obligation index and SLA sweepers, §9
// obligation counters): one instance opens obligations with 1 s ack and
// 2 s terminal SLAs (the spec's SLAs are whole seconds; the sweeper runs
// every 50 ms here), through a PostgreSQL outage, a Redis outage that
// overflows the audit queue, and a restart onto a second instance; the
// harness keeps its own ledger of sends, acks and instance lifetimes,
// reads the Marconi Cache stream and signal_obligations itself, and the
// pure checkers judge the mesh's claims against it.
var _ = Describe("marconi-obligations", func() {
	b := harness.BackendsFromEnv()[0] // one backend: the row judges the index, not the client
	harness.Emit(
		harness.Scenario{
			Name: "marconi-obligations/ledger-through-faults/" + string(b), Row: report.RowMarconiObligations, Column: report.ColumnSilentlyWrong,
			Spec: "every obligation ends durable exactly when the Marconi Cache stream holds it (else degraded_not_durable), §9 counters match; a missed SLA is raised once within the bound of its deadline, a met one never; open obligations survive a restart; signal_obligations matches the acks — through a PG outage, a Redis outage and an instance restart (002 §3.4, §4.1, §6, §9)",
			Run: func(ctx SpecContext) report.Check {
				r := obRuns.Get(ctx, b)
				harness.RecordOps(ctx, r.clock, r.ops)
				return r.silently()
			},
		},
		harness.Scenario{
			Name: "marconi-obligations/calls-through-faults/" + string(b), Row: report.RowMarconiObligations, Column: report.ColumnErrors,
			Spec: "every send with an obligation answers 200 and every ack answers 200 from the instance that opened the obligation or the one that rehydrated it after a restart, through a PG outage and a Redis outage (002 §2.1, §3.4, §6)",
			Run: func(ctx SpecContext) report.Check {
				r := obRuns.Get(ctx, b)
				harness.RecordOps(ctx, r.clock, r.ops)
				return r.loud()
			},
		},
	)
})

// Time scale of the row: the spec's SLAs are integer seconds, so the
// smallest are used; the sweeper's period and the late bound scale with
// them (the bound is 15 sweeps, 3/4 of the ack SLA: room for a loaded
// 2-core machine, far below the early mutant's half-SLA error).
const (
	obAckSLA      = 1 // seconds
	obTerminalSLA = 2 // seconds
	obSweep       = 50 * time.Millisecond
	obBound       = 750 * time.Millisecond
	// obQueueCap and obBatch make the Redis outage overflow the audit
	// queue with a few dozen sends: the writer holds one batch, the queue
	// the next obQueueCap, and older entries are overwritten (§3.6).
	obQueueCap = 16
	obBatch    = 8
)

// ackPlan is what the harness does with an obligation after opening it.
type ackPlan int

const (
	planTerminal ackPlan = iota // terminal ack at once: both SLAs met
	planAck                     // ack at once: terminal SLA missed
	planNone                    // nothing: both missed
	planLater                   // nothing now; an ack after the restart
)

// obInstance is one mesh instance with its own audit pipeline.
type obInstance struct {
	name       string
	env        *meshEnv
	reg        *prometheus.Registry
	queue      *audit.Queue
	stopWriter func()
	stopArch   func()
	start, end time.Time
	dead       bool
}

// obRun is one obligations run: its tenant, instances and ledger.
type obRun struct {
	name, tenant string
	b            client.Backend
	mutant       marconi.Mutant
	store        *marconi.CountingPool
	insts        []*obInstance
	cur          *obInstance

	mu     sync.Mutex
	ops    []*judge.ObligationOp
	plans  map[string]ackPlan
	failed []string
	// failedAt times the failed sends (failed says why), for the timeline.
	failedAt []judge.ObligationAck
	raises   []judge.ObligationRaise
	faults   []report.FaultWindow
	// cleanups undo what the run started, last first: instances start
	// from the run's own goroutine (a restart), where DeferCleanup is not
	// for use, so the run registers one cleanup for all of them.
	cleanups []func()
}

// newObRun sets a run up on the spec's goroutine: its SessionStore pool
// and instance A; drive may then run on another goroutine.
func newObRun(ctx context.Context, b client.Backend, name string, mutant marconi.Mutant) *obRun {
	GinkgoHelper()
	r := &obRun{name: name, tenant: "ob-" + name, b: b, mutant: mutant, plans: map[string]ackPlan{}}
	r.store = newPool(ctx, b, "marconi-ob-"+name)
	DeferCleanup(r.cleanup)
	r.startInstance(ctx, "A")
	return r
}

func (r *obRun) cleanup() {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

func (r *obRun) onCleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

// newCounted opens a cluster pool the run closes.
func (r *obRun) newCounted(ctx context.Context, name string) *marconi.CountingPool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: r.b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name,
		DialTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond}))
	Expect(err).NotTo(HaveOccurred(), "open %s pool", name)
	r.onCleanup(func() { _ = p.Close() })
	return marconi.Count(p)
}

// startInstance starts an instance and its pipeline (queue → writer →
// archiver) on the run's tenant; the queue and writer tell the mesh what
// they lost and appended.
func (r *obRun) startInstance(ctx context.Context, name string) {
	GinkgoHelper()
	in := &obInstance{name: name, reg: prometheus.NewRegistry()}
	var mesh atomic.Pointer[marconi.Mesh]
	metrics := audit.NewMetrics(in.reg)
	cfg := audit.DefaultQueueConfig()
	cfg.MaxEntries = obQueueCap
	q, err := audit.NewQueue(audit.QueueOptions{Default: cfg, Metrics: metrics,
		OnLost: func(e audit.Entry, why audit.DropReason) {
			if m := mesh.Load(); m != nil {
				m.AuditLost(e, why)
			}
		}})
	Expect(err).NotTo(HaveOccurred())
	in.queue = q
	wp := r.newCounted(ctx, "marconi-ob-writer-"+r.name+name)
	w, err := audit.NewWriter(audit.WriterOptions{Pool: wp, Queue: q, Metrics: metrics, Batch: obBatch, RetryMax: 100 * time.Millisecond,
		OnAppended: func(es []audit.Entry) {
			if m := mesh.Load(); m != nil {
				m.AuditAppended(es)
			}
		}})
	Expect(err).NotTo(HaveOccurred())
	var poolsMu sync.Mutex
	var pools []client.Pool
	r.onCleanup(func() {
		poolsMu.Lock()
		defer poolsMu.Unlock()
		for _, p := range pools {
			_ = p.Close()
		}
	})
	arch, err := audit.NewArchiver(audit.ArchiverOptions{
		Dial: func(ctx context.Context) (client.Pool, error) {
			p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: r.b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "marconi-ob-archiver"}))
			if err == nil {
				poolsMu.Lock()
				pools = append(pools, p)
				poolsMu.Unlock()
			}
			return p, err
		},
		PostgresDSN: pg.DSN(), Tenants: []string{r.tenant}, Consumer: r.name + "-" + name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Targets: audit.Targets{Primary: true}, Metrics: metrics, Block: 200 * time.Millisecond, Timeout: time.Second, ClaimMinIdle: 300 * time.Millisecond,
	})
	Expect(err).NotTo(HaveOccurred())
	m, err := marconi.New(marconi.Options{Pool: r.store, Sink: q, Registry: in.reg, Mutant: r.mutant, SweepEvery: obSweep, Flags: marconi.ShippedFlags(),
		Store: marconi.StoreOptions{Prefix: "ob-" + r.name}, ObligationTenants: []string{r.tenant},
		OnViolation: func(v marconi.Violation) {
			at := time.Now()
			r.mu.Lock()
			r.raises = append(r.raises, judge.ObligationRaise{SignalID: v.SignalID, SLA: v.SLA, Instance: name, At: at})
			r.mu.Unlock()
		}})
	Expect(err).NotTo(HaveOccurred())
	mesh.Store(m)
	warm, err := m.Start(ctx)
	Expect(err).NotTo(HaveOccurred(), "start instance %s", name)
	in.env = &meshEnv{mesh: m, warm: warm, srv: httptest.NewServer(m.Handler())}
	in.env.url = in.env.srv.URL
	in.env.api = &marconi.Client{BaseURL: in.env.url, HTTP: &http.Client{Timeout: 2 * time.Second}}
	in.start = time.Now()
	in.stopWriter, in.stopArch = run(w.Run), run(arch.Run)
	r.onCleanup(func() { in.stopWriter(); in.stopArch(); in.env.stop() })
	r.insts = append(r.insts, in)
	r.cur = in
}

// open sends n signals with an obligation to the current instance and
// acks each at once as plan(i) says.
func (r *obRun) open(ctx context.Context, n int, plan func(i int) ackPlan, ackNow bool) []string {
	GinkgoHelper()
	in := r.cur
	var ids []string
	for i := range n {
		start := time.Now()
		res, err := in.env.api.Send(ctx, marconi.SendRequest{Tenant: r.tenant, Project: "p", Sender: "s", Recipient: "r", Kind: "task",
			Obligation: &marconi.ObligationRequest{Kind: "review", AckSLASeconds: obAckSLA, TerminalSLASeconds: obTerminalSLA}})
		end := time.Now()
		if err != nil {
			r.mu.Lock()
			r.failed = append(r.failed, fmt.Sprintf("%s: %v", in.name, err))
			r.failedAt = append(r.failedAt, judge.ObligationAck{Instance: in.name, Start: start, End: end, Err: err.Error()})
			r.mu.Unlock()
			continue
		}
		op := &judge.ObligationOp{SignalID: res.SignalID, Kind: "review", Instance: in.name, Start: start, End: end,
			AckSLA: obAckSLA * time.Second, TerminalSLA: obTerminalSLA * time.Second}
		r.mu.Lock()
		r.ops = append(r.ops, op)
		r.plans[res.SignalID] = plan(i)
		r.mu.Unlock()
		ids = append(ids, res.SignalID)
		if ackNow {
			r.ackPlanned(ctx, op)
		}
	}
	return ids
}

// ackPlanned sends op's immediate acks.
func (r *obRun) ackPlanned(ctx context.Context, op *judge.ObligationOp) {
	switch r.plans[op.SignalID] {
	case planTerminal:
		r.ack(ctx, op, true)
	case planAck:
		r.ack(ctx, op, false)
	}
}

func (r *obRun) ack(ctx context.Context, op *judge.ObligationOp, terminal bool) {
	kind := marconi.AckReceived
	if terminal {
		kind = marconi.AckTerminal
	}
	a := judge.ObligationAck{Terminal: terminal, Instance: r.cur.name, Start: time.Now()}
	err := r.cur.env.api.Ack(ctx, op.SignalID, kind)
	a.End, a.OK = time.Now(), err == nil
	if err != nil {
		a.Err = err.Error()
	}
	r.mu.Lock()
	op.Acks = append(op.Acks, a)
	r.mu.Unlock()
}

// resolved waits (up to 10 s) until the current instance resolved every
// obligation it opened (durable or degraded) and the writer appended or
// lost everything the queue kept, the acks' stream handoffs included (a
// graceful stop; §6 loses what is still queued). It does not assert: an
// obligation never resolved is the checker's finding.
func (r *obRun) resolved(ctx context.Context) {
	in := r.cur
	err := wait.Within(ctx, 10*time.Second, 20*time.Millisecond, func(context.Context) error {
		st := in.queue.Stats(r.tenant)
		// The lag gauge is the age of the oldest entry not yet in the
		// stream, the held batch's included: zero when nothing is held.
		// (The appended counter would not do: a batch whose reply was lost
		// in the outage is skipped as already appended on the retry.)
		if st.Depth != 0 || in.env.mesh.PendingHandoffs() != 0 || in.env.mesh.MetricSum(audit.MetricWriterLag, nil) != 0 {
			return fmt.Errorf("queue or handoffs not drained")
		}
		for _, op := range r.ops {
			if st, _ := in.env.mesh.ObligationStatus(op.SignalID); op.Instance == in.name && st == marconi.DurabilityQueued {
				return fmt.Errorf("obligation %s still queued", op.SignalID)
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	st := in.queue.Stats(r.tenant)
	fmt.Fprintf(GinkgoWriter, "%s/%s: not resolved after 10 s: depth %d, kept %d, appended %.0f, lost %v, handoffs pending %d, writer lag %.3f s, writer errors %.0f\n", r.name, in.name,
		st.Depth, st.Kept, in.env.mesh.MetricSum(audit.MetricWriterAppended, nil), st.Dropped, in.env.mesh.PendingHandoffs(),
		in.env.mesh.MetricSum(audit.MetricWriterLag, nil), in.env.mesh.MetricSum(audit.MetricWriterErrors, nil))
}

// restart stops the current instance as a process exit would (its
// workers, then its queue, then the mesh) and starts the next.
func (r *obRun) restart(ctx context.Context, next string) time.Duration {
	GinkgoHelper()
	old := r.cur
	old.stopWriter()
	old.stopArch()
	old.queue.Close()
	old.env.stop()
	old.end, old.dead = time.Now(), true
	began := time.Now()
	r.startInstance(ctx, next)
	return time.Since(began)
}

// redisOutage cuts every Valkey node's proxy; the returned func restores.
func (r *obRun) redisOutage(ctx context.Context) func() {
	GinkgoHelper()
	held := fault.Hold(ctx, "redis-outage", "every node's proxy")
	for _, n := range cluster.Nodes() {
		n.DisableProxy()
	}
	return func() {
		GinkgoHelper()
		for _, n := range cluster.Nodes() {
			Expect(n.EnableProxy()).To(Succeed())
		}
		r.faults = append(r.faults, harness.Windows(held.End())...)
	}
}

// pgOutage cuts PostgreSQL's proxy; the returned func restores.
func (r *obRun) pgOutage(ctx context.Context) func() {
	GinkgoHelper()
	held := fault.Hold(ctx, "pg-outage", "postgres proxy")
	pg.DisableProxy()
	return func() {
		GinkgoHelper()
		Expect(pg.EnableProxy()).To(Succeed())
		r.faults = append(r.faults, harness.Windows(held.End())...)
	}
}

// waitDeadlines sleeps until every deadline of the ledger plus the bound
// (and a sweep) has passed, so every missed SLA is due.
func (r *obRun) waitDeadlines() time.Time {
	last := time.Time{}
	for _, op := range r.ops {
		if d := op.End.Add(op.TerminalSLA + obBound + 2*obSweep); d.After(last) {
			last = d
		}
	}
	time.Sleep(time.Until(last)) // a duration: the SLAs the sweepers measure must have run out (§3.4)
	return time.Now()
}

// history reads the stream and signal_obligations (after the archiver
// drained into PG what the stream holds) and each instance's claims.
func (r *obRun) history(ctx context.Context, end time.Time, minOps int) judge.ObligationHistory {
	GinkgoHelper()
	h := judge.ObligationHistory{Stream: map[string]bool{}, PG: map[string]judge.PGObligation{}, Bound: obBound, End: end, MinOps: minOps, FailedSends: r.failed}
	ids := map[string]bool{}
	for _, op := range r.ops {
		h.Ops = append(h.Ops, *op)
		ids[op.SignalID] = true
	}
	entries, err := audit.ReadStream(ctx, r.store, r.tenant)
	Expect(err).NotTo(HaveOccurred())
	latest := map[string]audit.Obligation{}
	for _, se := range entries {
		e := se.Entry
		if e.Envelope.Obligation == nil || !ids[e.Envelope.SignalID] {
			continue
		}
		if !e.ObligationUpdate {
			h.Stream[e.Envelope.SignalID] = true
		}
		latest[e.Envelope.SignalID] = *e.Envelope.Obligation
	}
	probe := probePG(ctx)
	read := func() map[string]judge.PGObligation {
		out := map[string]judge.PGObligation{}
		rows, err := probe.Query(ctx, `SELECT signal_id, ack_received_at IS NOT NULL, terminal_received_at IS NOT NULL FROM `+audit.TableObligations+` WHERE signal_id = ANY($1)`, keys(ids))
		Expect(err).NotTo(HaveOccurred())
		defer rows.Close()
		for rows.Next() {
			var id string
			var acked, term bool
			Expect(rows.Scan(&id, &acked, &term)).To(Succeed())
			p := out[id]
			p.Rows++
			p.Acked, p.Terminal = acked, term
			out[id] = p
		}
		Expect(rows.Err()).NotTo(HaveOccurred())
		return out
	}
	// Drained when PG holds every stream-held obligation in its latest
	// stream state (both read here, not from the mesh); a timeout leaves
	// the difference to the checker.
	drained := func(got map[string]judge.PGObligation) bool {
		for id, ob := range latest {
			p := got[id]
			if p.Rows == 0 || p.Acked != (ob.AckReceivedAt != nil) || p.Terminal != (ob.TerminalReceivedAt != nil) {
				return false
			}
		}
		return true
	}
	_ = wait.Within(ctx, 10*time.Second, 50*time.Millisecond, func(context.Context) error {
		if h.PG = read(); !drained(h.PG) {
			return fmt.Errorf("PG not drained")
		}
		return nil
	})
	r.mu.Lock()
	h.Raises = append(h.Raises, r.raises...)
	r.mu.Unlock()
	for _, in := range r.insts {
		ci := judge.ObligationInstance{Name: in.name, Start: in.start, Status: map[string]string{},
			Durable:    in.env.mesh.MetricSum("marconi_obligations_durable_total", nil),
			Degraded:   in.env.mesh.MetricSum("marconi_obligations_degraded_not_durable_total", nil),
			Violations: in.env.mesh.MetricSum("marconi_obligation_sla_violation_total", nil),
			Open:       in.env.mesh.MetricSum("marconi_obligations_open", nil)}
		if in.dead {
			ci.End = in.end
		}
		for id := range ids {
			if st, ok := in.env.mesh.ObligationStatus(id); ok {
				ci.Status[id] = st
			}
		}
		h.Instances = append(h.Instances, ci)
	}
	return h
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cycle is the plan of the i-th obligation of a phase.
func cycle(plans ...ackPlan) func(int) ackPlan {
	return func(i int) ackPlan { return plans[i%len(plans)] }
}

// obResult is one run's history and figures.
type obResult struct {
	h       judge.ObligationHistory
	metrics map[string]float64
	faults  []report.FaultWindow
	lost    int64 // audit-queue losses of the Redis outage
}

// obPhases selects what a run goes through.
type obPhases struct{ pgOutage, redisOutage, restart, noWait bool }

// drive runs the phases on the run's tenant: healthy obligations; a PG
// outage; a Redis outage that overflows the audit queue (acks once it
// healed); obligations opened just before a restart, some acked to the
// new instance; then every deadline passes (unless noWait) and the ledger
// is read. It may run on its own goroutine (narrate false: no By).
func (r *obRun) drive(ctx context.Context, ph obPhases, n int, narrate bool) obResult {
	GinkgoHelper()
	by := func(s string) {
		if narrate {
			By(r.name + ": " + s)
		}
	}
	res := obResult{metrics: map[string]float64{}}
	by(fmt.Sprintf("%d healthy obligations (terminal / ack / none)", n))
	r.open(ctx, n, cycle(planTerminal, planAck, planNone), true)

	if ph.pgOutage {
		by("PostgreSQL cut off; obligations keep opening and turn durable in the stream")
		heal := r.pgOutage(ctx)
		r.open(ctx, n, cycle(planTerminal, planAck, planNone), true)
		Eventually(ctx, func() float64 { return r.cur.env.mesh.MetricSum(audit.MetricArchiverErrors, nil) }).
			WithTimeout(5*time.Second).WithPolling(20*time.Millisecond).Should(BeNumerically(">", 0), "the archiver never failed: no PG outage")
		heal()
	}
	if ph.redisOutage {
		by("every Valkey node cut off; the audit queue overflows; acks once it heals")
		heal := r.redisOutage(ctx)
		ids := r.open(ctx, obQueueCap+obBatch+2*n, cycle(planTerminal, planAck, planNone), false)
		Eventually(ctx, func() float64 { return r.cur.env.mesh.MetricSum(audit.MetricWriterErrors, nil) }).
			WithTimeout(5*time.Second).WithPolling(20*time.Millisecond).Should(BeNumerically(">", 0), "the writer never failed: no Redis outage")
		heal()
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		for _, op := range r.ops {
			if want[op.SignalID] {
				r.ackPlanned(ctx, op)
			}
		}
	}
	r.resolved(ctx)
	for _, v := range r.cur.queue.Stats(r.tenant).Dropped {
		res.lost += v
	}
	if ph.restart {
		by("obligations opened just before a restart; the new instance rehydrates them from the stream")
		late := r.open(ctx, n, cycle(planTerminal, planAck, planNone, planLater), true)
		r.resolved(ctx)
		took := r.restart(ctx, "B")
		res.metrics["restart_start_ms"] = ms(took)
		res.metrics["rehydrated_obligations"] = float64(r.cur.env.warm.Obligations)
		res.metrics["rehydrate_obligations_ms"] = ms(r.cur.env.warm.ObligationsTook)
		want := map[string]bool{}
		for _, id := range late {
			want[id] = r.plans[id] == planLater
		}
		for _, op := range r.ops {
			if want[op.SignalID] {
				r.ack(ctx, op, false)
			}
		}
	}
	end := time.Now()
	if !ph.noWait {
		by("every deadline passes (terminal SLA + bound)")
		end = r.waitDeadlines()
	}
	res.h = r.history(ctx, end, n)
	res.faults = r.faults
	return res
}

// obligationsResult is the row's one workload run and its controls, for
// both columns.
type obligationsResult struct {
	ev                                report.Evidence
	main                              obResult
	never, early, forget, durableSoon obResult
	// clock began with the main run; ops are its sends and acks on it,
	// recorded into both columns' histories for their timelines.
	clock *history.Clock
	ops   []history.Op
}

var obRuns = harness.NewOnce(runObligations)

func runObligations(ctx SpecContext, b client.Backend) *obligationsResult {
	GinkgoHelper()
	n := 6
	if cfg.Profile == "full" {
		n = 30
	}
	r := &obligationsResult{ev: harness.Evidence(cfg, cluster, nil), clock: history.NewClock()}
	main := newObRun(ctx, b, "main", marconi.MutantNone)
	r.main = main.drive(ctx, obPhases{pgOutage: true, redisOutage: true, restart: true}, n, true)
	r.ops = workload.ObligationOps("main", r.clock, r.main.h.Ops)
	for _, f := range main.failedAt {
		r.ops = append(r.ops, history.Op{Start: r.clock.Offset(f.Start), End: r.clock.Offset(f.End), Backend: "main sends", Kind: "send",
			Outcome: history.Failed, ErrKind: "send", Err: f.Err})
	}
	By("negative controls, side by side on their own tenants: a sweeper that never fires; one that fires at half the SLA; an instance that forgets obligations across the restart")
	never := newObRun(ctx, b, "never", marconi.MutantSweeperNeverFires)
	early := newObRun(ctx, b, "early", marconi.MutantSweeperEarly)
	forget := newObRun(ctx, b, "forget", marconi.MutantForgetObligations)
	var wg sync.WaitGroup
	for _, c := range []struct {
		run *obRun
		ph  obPhases
		out *obResult
	}{{never, obPhases{}, &r.never}, {early, obPhases{}, &r.early}, {forget, obPhases{restart: true}, &r.forget}} {
		wg.Go(func() {
			defer GinkgoRecover()
			*c.out = c.run.drive(ctx, c.ph, n, false)
		})
	}
	wg.Wait()
	By("negative control: obligations marked durable at the audit queue, through the Redis outage")
	r.durableSoon = newObRun(ctx, b, "durable-soon", marconi.MutantDurableAtOffer).drive(ctx, obPhases{redisOutage: true, noWait: true}, n, true)
	r.ev.Client = b.Version()
	r.ev.Faults = r.main.faults
	r.ev.Metrics = r.main.metrics
	h := r.main.h
	r.ev.Metrics["obligations"] = float64(len(h.Ops))
	r.ev.Metrics["raises"] = float64(len(h.Raises))
	r.ev.Metrics["redis_outage_queue_losses"] = float64(r.main.lost)
	// Lateness of the raises by the instance that opened the obligation
	// (a successor raises at once what fell due while it was down).
	lateness := []time.Duration{}
	for _, rs := range h.Raises {
		for _, op := range h.Ops {
			if op.SignalID == rs.SignalID && rs.Instance == op.Instance {
				sla := op.AckSLA
				if rs.SLA == "terminal" {
					sla = op.TerminalSLA
				}
				lateness = append(lateness, rs.At.Sub(op.End.Add(sla)))
			}
		}
	}
	sort.Slice(lateness, func(i, j int) bool { return lateness[i] < lateness[j] })
	if len(lateness) > 0 {
		r.ev.Metrics["opener_raise_after_deadline_p50_ms"] = ms(lateness[len(lateness)/2])
		r.ev.Metrics["opener_raise_after_deadline_max_ms"] = ms(lateness[len(lateness)-1])
	}
	return r
}

func (r *obligationsResult) silently() report.Check {
	result := judge.Obligations.Judge(r.main.h)
	ev := r.ev
	ev.Observed = append([]string{},
		fmt.Sprintf("SLAs %d s / %d s, sweeper every %v, raise bound %v after the deadline; the Redis outage overflowed the audit queue (%d entries lost → degraded_not_durable)", obAckSLA, obTerminalSLA, obSweep, obBound, r.main.lost))
	durable := harness.Premise(harness.Variant(string(marconi.MutantDurableAtOffer), "obligations marked durable when the in-memory queue takes them, before the stream (the durable boundary) has them", judge.Obligations.Judge(r.durableSoon.h)),
		r.durableSoon.lost > 0, "the Redis outage lost nothing from the audit queue")
	return harness.Check(report.RowMarconiObligations, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(marconi.MutantSweeperNeverFires), "the SLA sweeper runs but raises nothing", judge.Obligations.Judge(r.never.h)),
		harness.Variant(string(marconi.MutantSweeperEarly), "the SLA sweeper raises at half the SLA", judge.Obligations.Judge(r.early.h)),
		harness.Variant(string(marconi.MutantForgetObligations), "a restarted instance does not rehydrate the obligation index from the stream", judge.Obligations.Judge(r.forget.h)),
		durable)
}

func (r *obligationsResult) loud() report.Check {
	result := judge.ObligationCalls.Judge(r.main.h)
	return harness.Check(report.RowMarconiObligations, report.ColumnErrors, "", result, r.ev,
		harness.Variant(string(marconi.MutantForgetObligations), "a restarted instance forgot the open obligations: acks to it answer 404", judge.ObligationCalls.Judge(r.forget.h)))
}
