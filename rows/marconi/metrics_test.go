package marconi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// marconi-metrics (spec 002 §9): every hot-path, audit-queue, invalidator
// and obligation metric of the mesh, scraped over its real /metrics
// endpoint (the Prometheus text exposition a Prometheus server reads), is
// judged per label set against counts taken outside the instrument: the
// harness's ledger of the calls it made and the answers it got, the
// frames its receivers' WebSockets got, what prism_signals_pending
// returned, the session records it saw expire on the servers (EXISTS), and
// the tenant's Redis Stream (XRANGE). One workload, two scrapes (mid-run
// with the audit writer paused, final after expiry, the SLA sweeps and the
// writer's drain), two columns; each bad instrument runs the same workload.

var _ = Describe("marconi-metrics", Serial, func() {
	for _, b := range harness.BackendsFromEnv() {
		// ContinueOnFailure: one run scores both columns; a failure in
		// one must not leave the other cell unscored.
		Context(string(b), Ordered, ContinueOnFailure, func() {
			var res metricsResult
			BeforeAll(func(ctx SpecContext) { res = runMetrics(ctx, b) })
			harness.Emit(
				harness.Scenario{
					Name: "marconi-metrics/agree/" + string(b), Row: report.RowMarconiMetrics, Column: report.ColumnSilentlyWrong,
					Spec: "every §9 series (received, delivered{outcome}, acked{ack_kind}, send-duration count, routing table size, cache hits/misses, audit queue depth and overwrites, invalidator calls/errors{hook}, obligations open/durable/degraded, SLA violations{sla}) reads exactly the harness's independent count, per tenant and label set, at a mid-run and a final scrape of /metrics (002 §9)",
					Run:  func(SpecContext) report.Check { return res.silent },
				},
				harness.Scenario{
					Name: "marconi-metrics/exposed/" + string(b), Row: report.RowMarconiMetrics, Column: report.ColumnErrors,
					Spec: "/metrics answers 200 and parses at every scrape, and exposes every judged §9 family once the workload moved it (002 §9 \"every metric below MUST exist before Stage 5\")",
					Run:  func(SpecContext) report.Check { return res.errs },
				},
			)
		})
	}
})

type metricsResult struct{ silent, errs report.Check }

// Workload constants. NOTE: the session TTL is long (no timing pressure
// on a loaded machine); at the end the harness shortens every live
// record's TTL on the server (PEXPIRE 1 ms), so each lapses there and is
// announced by the server's keyspace notification exactly as a natural
// lapse is — on_session_expired and the table-size gauge's way down are
// judged without waiting a TTL out. The SLAs (1 s) and the sweep (100 ms)
// leave the final scrape ≥ 5 sweeps past the last deadline.
const (
	metricsTTL        = 30 * time.Second
	metricsSLA        = time.Second
	metricsSweep      = 100 * time.Millisecond
	metricsPendingCap = 3 // per recipient: the 4th and 5th offline signal to one identity are dropped
	metricsRejectCap  = 6 // tenant B's audit queue (reject_new): refuses from the 7th entry on
	metricsWait       = 8 * time.Second
	metricsParallel   = 8 // runs side by side: mostly waiting on the SLA sweeps, little CPU
)

// metricsVariant is one run: the reference instrument, or a bad one.
type metricsVariant struct {
	name    string
	why     string
	mutant  marconi.MetricsMutant
	queue   audit.Mutant
	writer  audit.Mutant
	noPend  bool // DisablePending: offline recipients answer no_subscriber
	errsCol bool // a loud variant: judged by the errors column
}

func runMetrics(ctx context.Context, b client.Backend) metricsResult {
	GinkgoHelper()
	began := time.Now()
	pool := harness.Pool(ctx, b, cluster)
	variants := []metricsVariant{
		{name: "reference"},
		{name: "reference-no-pending", noPend: true},
		{name: string(marconi.MetricsReceivedTenantDropped), mutant: marconi.MetricsReceivedTenantDropped, why: "received counted with the tenant label empty: every tenant in one series"},
		{name: string(marconi.MetricsDeliveredDoubleCount), mutant: marconi.MetricsDeliveredDoubleCount, why: "a pushed signal counted on two paths"},
		{name: string(marconi.MetricsOutcomeBeforeDecision), mutant: marconi.MetricsOutcomeBeforeDecision, why: "outcome counted when the route resolves, before the push: a socketless session's queued_offline counted pushed"},
		{name: string(marconi.MetricsOpenNeverDecrements), mutant: marconi.MetricsOpenNeverDecrements, why: "obligations_open never decremented by a terminal ack"},
		{name: string(marconi.MetricsAckBeforeLookup), mutant: marconi.MetricsAckBeforeLookup, why: "acks counted before the lookup: 404 acks counted under empty labels"},
		{name: string(marconi.MetricsDurationPushedOnly), mutant: marconi.MetricsDurationPushedOnly, why: "send duration observed for pushed sends only"},
		{name: string(marconi.MetricsTableSizeStale), mutant: marconi.MetricsTableSizeStale, why: "routing_table_size not refreshed on deregister/expiry: the gauge never comes down"},
		{name: string(marconi.MetricsDurableBeforeOffer), mutant: marconi.MetricsDurableBeforeOffer, why: "obligation counted durable before the audit queue answered: refused envelopes counted durable"},
		{name: string(marconi.MetricsSLARecounted), mutant: marconi.MetricsSLARecounted, why: "an SLA violation re-counted at every sweep"},
		{name: string(marconi.MetricsHookLabelSwapped), mutant: marconi.MetricsHookLabelSwapped, why: "on_heartbeat counted under hook=on_register"},
		{name: string(audit.MutantStaleDepth), queue: audit.MutantStaleDepth, why: "audit queue depth not published when the writer takes entries: never decrements"},
		{name: string(audit.MutantAppendedPerCall), writer: audit.MutantAppendedPerCall, why: "writer_appended_total counts append calls, not the entries each appended: the stream holds more than it says"},
		{name: string(marconi.MetricsDuplicateSeries), mutant: marconi.MetricsDuplicateSeries, errsCol: true, why: "table size from an unchecked collector, one sample per project under the tenant label: the gather fails, /metrics answers 500"},
		{name: string(marconi.MetricsObligationsUnregistered), mutant: marconi.MetricsObligationsUnregistered, errsCol: true, why: "obligation metrics built but never registered: missing from /metrics"},
	}
	By(fmt.Sprintf("%d runs of the same workload on %s (%s), side by side: the reference instrument, the reference with the pending index off (no_subscriber), and %d bad instruments", len(variants), cluster.Spec, b, len(variants)-2))
	runs := make([]*metricsRun, len(variants))
	errs := make([]error, len(variants))
	var wg sync.WaitGroup
	sem := make(chan struct{}, metricsParallel)
	for i, v := range variants {
		runs[i] = &metricsRun{v: v, pool: pool, backend: b, tag: fmt.Sprintf("mx%02d-%s", i, map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[b])}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = runs[i].run(ctx)
		})
	}
	wg.Wait()
	for i, err := range errs {
		Expect(err).NotTo(HaveOccurred(), "run %s", variants[i].name)
	}
	ref, nopend := runs[0], runs[1]

	ev := harness.Evidence(cfg, cluster, pool)
	points := append(append([]judge.MetricsPoint{}, ref.points...), nopend.points...)
	silent := judge.MetricsAgree.Judge(points)
	loud := judge.MetricsExposed.Judge(ref.points)
	series := 0
	for _, p := range points {
		want, _, _ := judge.MetricsLedger(p.History)
		series += len(want)
	}
	sends := 0
	for _, r := range []*metricsRun{ref, nopend} {
		sends += len(r.h.Sends)
	}
	ev.Metrics = map[string]float64{
		"runs": float64(len(runs)), "reference_sends": float64(sends), "series_judged": float64(series),
		"scrapes_judged": float64(len(points)), "families": float64(len(judge.MetricFamilies)), "wall_s": time.Since(began).Seconds(),
	}
	for _, r := range runs[:2] {
		ev.Observed = append(ev.Observed, r.summary())
	}
	ev.Observed = append(ev.Observed, "prism_signals_pending is an API verb (§3.5), not a §9 metric: what it returned is the independent count of delivered{outcome=queued_offline} (with the frames drained on attach)")

	var silentCtl, loudCtl []report.Control
	for _, r := range runs[2:] {
		if r.v.errsCol {
			ctl := harness.Variant(r.v.name, r.v.why, judge.MetricsExposed.Judge(r.points))
			loudCtl = append(loudCtl, ctl)
			continue
		}
		ctl := harness.Variant(r.v.name, r.v.why, judge.MetricsAgree.Judge(r.points))
		consistent := true
		for _, p := range r.points {
			_, inc, _ := judge.MetricsLedger(p.History)
			consistent = consistent && len(inc) == 0
		}
		// Caught for the right reason: the mesh behaved (its answers agree
		// with what the harness observed); only the instrument lied.
		ctl = harness.Premise(ctl, consistent, "the variant's answers disagree with the harness's observations: caught for something other than its instrument")
		silentCtl = append(silentCtl, ctl)
	}
	return metricsResult{
		silent: harness.Check(report.RowMarconiMetrics, report.ColumnSilentlyWrong, "", silent, ev, silentCtl...),
		errs:   harness.Check(report.RowMarconiMetrics, report.ColumnErrors, "", loud, ev, loudCtl...),
	}
}

// metricsRun is one mesh instance and the harness's own ledger of it.
type metricsRun struct {
	v       metricsVariant
	tag     string
	pool    client.Pool
	backend client.Backend
	clock   *traffic.Clock
	mesh    *marconi.Mesh
	srv     *httptest.Server
	api     *marconi.Client
	queue   *audit.Queue
	writer  *audit.Writer

	mu       sync.Mutex
	h        judge.MetricsHistory
	live     map[string]marconi.Session // session id → live session (the harness's model)
	masters  map[string]string          // "tenant/project" → master session id
	sockets  map[string]*marconi.Receiver
	offline  map[marconi.RouteKey]bool // keys answered queued_offline, to drain
	lastObl  time.Duration
	points   []judge.MetricsPoint
	duration time.Duration
}

func (r *metricsRun) tenants() []string { return []string{r.tag + "-a", r.tag + "-b"} }

// run drives the workload; it returns a harness error (never a verdict).
func (r *metricsRun) run(ctx context.Context) error {
	began := time.Now()
	r.clock = traffic.NewClock()
	r.h = judge.MetricsHistory{Frames: map[string]int{}, Drained: map[string]int{}, Hooks: map[string]int{}, HookErrors: map[string]int{}, Sweep: metricsSweep}
	r.live, r.masters, r.sockets, r.offline = map[string]marconi.Session{}, map[string]string{}, map[string]*marconi.Receiver{}, map[marconi.RouteKey]bool{}
	ta, tb := r.tenants()[0], r.tenants()[1]

	reg := prometheus.NewRegistry()
	reject := audit.DefaultQueueConfig()
	reject.MaxEntries, reject.Policy = metricsRejectCap, audit.PolicyRejectNew
	// The queue and the writer tell the mesh what they lost and appended,
	// as in the obligations row: an obligation is durable once the stream
	// has it (§4.1), degraded_not_durable if the queue refused or lost it.
	var mesh atomic.Pointer[marconi.Mesh]
	q, err := audit.NewQueue(audit.QueueOptions{Metrics: audit.NewMetrics(reg), Tenants: map[string]audit.QueueConfig{tb: reject}, Mutant: r.v.queue,
		OnLost: func(e audit.Entry, why audit.DropReason) {
			if m := mesh.Load(); m != nil {
				m.AuditLost(e, why)
			}
		}})
	if err != nil {
		return err
	}
	r.queue = q
	if r.writer, err = audit.NewWriter(audit.WriterOptions{Pool: r.pool, Queue: q, Mutant: r.v.writer,
		OnAppended: func(es []audit.Entry) {
			if m := mesh.Load(); m != nil {
				m.AuditAppended(es)
			}
		}}); err != nil {
		return err
	}
	m, err := marconi.New(marconi.Options{Pool: r.pool, Flags: marconi.ShippedFlags(), Sink: q, Registry: reg,
		Store: marconi.StoreOptions{Prefix: r.tag, TTL: metricsTTL}, PendingPerRecipient: metricsPendingCap, DisablePending: r.v.noPend,
		SweepEvery: metricsSweep, MetricsMutant: r.v.mutant,
		Notify: &marconi.NotifyOptions{Backend: r.backend, Configure: true, ClientName: r.tag + "-keyspace"}})
	if err != nil {
		return err
	}
	mesh.Store(m)
	if _, err := m.Start(ctx); err != nil {
		return err
	}
	r.mesh = m
	r.srv = httptest.NewServer(m.Handler())
	r.api = &marconi.Client{BaseURL: r.srv.URL, HTTP: &http.Client{Timeout: 5 * time.Second}}
	stopWriter := func() {}
	defer func() {
		stopWriter()
		for _, s := range r.sockets {
			_ = s.Close()
		}
		_ = m.Close()
		r.srv.CloseClientConnections()
		r.srv.Close()
		q.Close()
		r.duration = time.Since(began)
	}()

	// Sessions: per tenant, project p1 with r0–r3 attached and r4, r5
	// registered without a socket; project p2 with q0 attached and q1 not.
	// The master flag is claimed for r0, then handed off to r1. Every
	// session heartbeats once; r3 is deregistered (its socket is closed
	// by the mesh); one socket is dialled for a session nobody registered.
	for _, t := range []string{ta, tb} {
		for _, id := range []string{"r0", "r1", "r2", "r3", "r4", "r5"} {
			if err := r.register(ctx, t, "p1", id, id <= "r3"); err != nil {
				return err
			}
		}
		for _, id := range []string{"q0", "q1"} {
			if err := r.register(ctx, t, "p2", id, id == "q0"); err != nil {
				return err
			}
		}
		if err := r.master(ctx, t, "p1", "", sid(t, "r0")); err != nil {
			return err
		}
		if err := r.master(ctx, t, "p1", sid(t, "r0"), sid(t, "r1")); err != nil {
			return err
		}
		for _, s := range r.liveSessions(t) {
			if _, err := r.api.Heartbeat(ctx, s.Tenant, s.Project, s.SessionID); err != nil {
				return fmt.Errorf("heartbeat %s: %w", s.SessionID, err)
			}
			r.hook("on_heartbeat")
		}
		if err := r.deregister(ctx, r.live[sid(t, "r3")]); err != nil {
			return err
		}
		if err := r.dial(ctx, t+"-ghost"); !marconi.IsUnknownSession(err) {
			return fmt.Errorf("dial an unregistered session: want 404 unknown_session, got %v", err)
		}
	}

	// Sends, with the audit writer paused: pushes to attached sessions and
	// the master alias, offline to a socketless session and a deregistered
	// identity, five to an identity never registered (the pending cap
	// drops two), then obligations of two kinds, acked, terminal-acked or
	// left to violate their SLAs.
	for _, t := range []string{ta, tb} {
		for range 4 {
			for _, to := range [][2]string{{"p1", "r0"}, {"p1", "r1"}, {"p1", "r2"}, {"p2", "q0"}} {
				if _, err := r.send(ctx, t, to[0], to[1], "ping", nil); err != nil {
					return err
				}
			}
		}
		for _, to := range [][2]string{{"p1", marconi.MasterIdentity}, {"p1", "r4"}, {"p1", "r4"}, {"p1", "r3"}, {"p1", "r3"},
			{"p1", "nobody"}, {"p1", "nobody"}, {"p1", "nobody"}, {"p1", "nobody"}, {"p1", "nobody"}} {
			if _, err := r.send(ctx, t, to[0], to[1], "note", nil); err != nil {
				return err
			}
		}
		sla := int(metricsSLA / time.Second)
		for round := range 2 {
			o1, err := r.send(ctx, t, "p1", "r0", "task", &marconi.ObligationRequest{Kind: "reply", AckSLASeconds: sla})
			if err != nil {
				return err
			}
			if _, err := r.send(ctx, t, "p1", "r1", "task", &marconi.ObligationRequest{Kind: "reply", AckSLASeconds: sla}); err != nil {
				return err
			}
			o3, err := r.send(ctx, t, "p1", "r2", "task", &marconi.ObligationRequest{Kind: "job", TerminalSLASeconds: sla})
			if err != nil {
				return err
			}
			o4, err := r.send(ctx, t, "p2", "q0", "task", &marconi.ObligationRequest{Kind: "job", TerminalSLASeconds: sla})
			if err != nil {
				return err
			}
			r.ack(ctx, o1, marconi.AckReceived)
			if round == 0 {
				r.ack(ctx, o3, marconi.AckTerminal)
				r.ack(ctx, o3, marconi.AckTerminal) // closed: 404
			} else if err := r.wsAck(ctx, sid(t, "r2"), o3); err != nil {
				return err
			}
			r.ack(ctx, o4, marconi.AckReceived)
		}
		r.ack(ctx, t+"-no-such-signal", marconi.AckReceived) // 404
	}
	if err := r.awaitFrames(ctx); err != nil {
		return err
	}
	if err := r.drain(ctx); err != nil {
		return err
	}
	if err := r.point(ctx, "mid-run", false); err != nil {
		return err
	}

	// The writer drains the audit queue; every session left lapses on the
	// server: the harness waits until it sees each record gone, each
	// socket closed by the mesh, the stream holding every kept entry and
	// every SLA deadline five sweeps past.
	stopWriter = run(r.writer.Run)
	if err := r.awaitExpiry(ctx); err != nil {
		return err
	}
	if err := r.awaitStream(ctx); err != nil {
		return err
	}
	if wait := r.lastObl + metricsSLA + 5*metricsSweep - r.clock.Now(); wait > 0 {
		time.Sleep(wait) // a duration: the sweeps the SLA counters are judged after (§3.4 sweepers)
	}
	return r.point(ctx, "final", true)
}

func sid(tenant, id string) string { return tenant + "-" + id }

func (r *metricsRun) hook(name string) {
	r.mu.Lock()
	r.h.Hooks[name]++
	r.mu.Unlock()
}

func (r *metricsRun) register(ctx context.Context, tenant, project, id string, attach bool) error {
	s, err := r.api.Register(ctx, marconi.Session{SessionID: sid(tenant, id), Tenant: tenant, Project: project, Identity: id, Surface: "receiver"})
	if err != nil {
		return fmt.Errorf("register %s: %w", id, err)
	}
	r.hook("on_register")
	r.mu.Lock()
	r.live[s.SessionID] = s
	r.mu.Unlock()
	if attach {
		return r.dial(ctx, s.SessionID)
	}
	return nil
}

// dial attaches a receiver socket; a refusal the mesh answered is
// returned (and counted: the hook ran and failed).
func (r *metricsRun) dial(ctx context.Context, session string) error {
	rcv, err := marconi.DialReceiver(ctx, r.srv.URL, session, func(d marconi.Delivery) {
		r.mu.Lock()
		r.h.Frames[d.Envelope.SignalID]++
		r.mu.Unlock()
	})
	if err != nil {
		if marconi.IsUnknownSession(err) {
			r.hook("on_ws_connect")
			r.mu.Lock()
			r.h.HookErrors["on_ws_connect/unknown_session"]++
			r.mu.Unlock()
		}
		return err
	}
	r.hook("on_ws_connect")
	r.mu.Lock()
	r.sockets[session] = rcv
	r.mu.Unlock()
	return nil
}

func (r *metricsRun) master(ctx context.Context, tenant, project, from, to string) error {
	var err error
	if from == "" {
		err = r.api.ClaimMaster(ctx, tenant, project, to)
	} else {
		err = r.api.HandoffMaster(ctx, tenant, project, from, to)
	}
	if err != nil {
		return fmt.Errorf("master %s: %w", to, err)
	}
	r.hook("on_master_change")
	r.mu.Lock()
	r.masters[tenant+"/"+project] = to
	r.mu.Unlock()
	return nil
}

func (r *metricsRun) deregister(ctx context.Context, s marconi.Session) error {
	if err := r.api.Deregister(ctx, s.Tenant, s.Project, s.SessionID); err != nil {
		return fmt.Errorf("deregister %s: %w", s.SessionID, err)
	}
	r.hook("on_deregister")
	r.mu.Lock()
	delete(r.live, s.SessionID)
	rcv := r.sockets[s.SessionID]
	r.mu.Unlock()
	if rcv != nil { // the mesh detaches it: on_ws_disconnect ran before the close reached us
		select {
		case <-rcv.Done():
		case <-time.After(metricsWait):
			return fmt.Errorf("deregister %s: the mesh never closed its socket", s.SessionID)
		}
	}
	return nil
}

func (r *metricsRun) liveSessions(tenant string) []marconi.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []marconi.Session
	for _, s := range r.live {
		if s.Tenant == tenant {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	return out
}

// routable reports whether the harness's model has a live session for
// the routing key (the master alias resolves to the live master).
func (r *metricsRun) routable(tenant, project, identity string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if identity == marconi.MasterIdentity {
		_, ok := r.live[r.masters[tenant+"/"+project]]
		return ok
	}
	for _, s := range r.live {
		if s.Tenant == tenant && s.Project == project && s.Identity == identity {
			return true
		}
	}
	return false
}

// routes is the harness's model of each tenant's routing entries (§3.1):
// one per identity with a live session, one master alias per project
// whose master is live.
func (r *metricsRun) routes() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, t := range r.tenants() {
		out[t] = 0
	}
	ids := map[marconi.RouteKey]bool{}
	for _, s := range r.live {
		ids[s.Route()] = true
	}
	for k := range ids {
		out[k.Tenant]++
	}
	for _, m := range r.masters {
		if s, ok := r.live[m]; ok {
			out[s.Tenant]++
		}
	}
	return out
}

func (r *metricsRun) send(ctx context.Context, tenant, project, identity, kind string, ob *marconi.ObligationRequest) (string, error) {
	live := r.routable(tenant, project, identity)
	start := r.clock.Now()
	res, err := r.api.Send(ctx, marconi.SendRequest{Tenant: tenant, Project: project, Recipient: identity, Sender: "mx", Kind: kind, Obligation: ob})
	done := r.clock.Now()
	if err != nil {
		return "", fmt.Errorf("send to %s/%s/%s: %w", tenant, project, identity, err)
	}
	s := judge.MetricsSend{SignalID: res.SignalID, Tenant: tenant, Kind: kind, Start: start, Done: done, Status: 200,
		Outcome: string(res.Outcome), SessionID: res.SessionID, AuditKept: res.AuditKept, Live: live}
	if ob != nil {
		s.Obligation = ob.Kind
		s.AckSLA = time.Duration(ob.AckSLASeconds) * time.Second
		s.TerminalSLA = time.Duration(ob.TerminalSLASeconds) * time.Second
	}
	r.mu.Lock()
	r.h.Sends = append(r.h.Sends, s)
	if res.Outcome == audit.OutcomeQueuedOffline {
		r.offline[marconi.RouteKey{Tenant: tenant, Project: project, Identity: identity}] = true
	}
	if ob != nil {
		r.lastObl = max(r.lastObl, done)
	}
	r.mu.Unlock()
	return res.SignalID, nil
}

// ack acknowledges over HTTP and records the answer (a 404 included).
func (r *metricsRun) ack(ctx context.Context, signalID string, kind marconi.AckKind) {
	start := r.clock.Now()
	err := r.api.Ack(ctx, signalID, kind)
	a := judge.MetricsAck{SignalID: signalID, AckKind: string(kind), Start: start, Done: r.clock.Now(), Status: 200}
	if err != nil {
		a.Status = 0
		var api *marconi.APIError
		if errors.As(err, &api) {
			a.Status = api.Status
		}
	}
	r.mu.Lock()
	r.h.Acks = append(r.h.Acks, a)
	r.mu.Unlock()
}

// wsAck sends a terminal ack over the receiver's own socket (the shim's
// path, no answer), then the same ack over HTTP: a 404 there is the wire's
// evidence that the socket's ack closed the obligation, and the socket's
// ack is recorded as applied; a 200 means the HTTP ack closed it, and the
// socket's ack — processed after, or never — is recorded as not applied.
func (r *metricsRun) wsAck(ctx context.Context, session, signalID string) error {
	r.mu.Lock()
	rcv := r.sockets[session]
	r.mu.Unlock()
	start := r.clock.Now()
	if err := rcv.Ack(ctx, signalID, marconi.AckTerminal); err != nil {
		return fmt.Errorf("ack %s over %s's socket: %w", signalID, session, err)
	}
	// Let the socket's reader take it first: the obligation closes when
	// it does. Either order is recorded right, so a bound passing is not
	// a failure: the HTTP ack below then decides which ack applied. The
	// bound stays well under the SLA, so the terminal ack never drifts
	// into the band where the judge cannot decide the SLA series.
	_ = wait.Within(ctx, metricsSLA/5, 2*time.Millisecond, func(context.Context) error {
		if _, open := r.mesh.Obligation(signalID); open {
			return fmt.Errorf("obligation %s still open", signalID)
		}
		return nil
	})
	r.ack(ctx, signalID, marconi.AckTerminal)
	r.mu.Lock()
	defer r.mu.Unlock()
	viaHTTP := r.h.Acks[len(r.h.Acks)-1]
	ws := judge.MetricsAck{SignalID: signalID, AckKind: string(marconi.AckTerminal), Start: start, Done: viaHTTP.Start, Status: 200}
	if viaHTTP.Status == 200 {
		ws.Status, ws.Done = 0, viaHTTP.Done
	}
	r.h.Acks = append(r.h.Acks, ws)
	return nil
}

// awaitFrames waits until every send answered pushed has its frame.
func (r *metricsRun) awaitFrames(ctx context.Context) error {
	err := wait.Within(ctx, metricsWait, 10*time.Millisecond, func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		missing := 0
		for _, s := range r.h.Sends {
			if s.Outcome == string(audit.OutcomePushed) && r.h.Frames[s.SignalID] == 0 {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d pushed signals never reached a receiver", missing)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("await frames: %w", err)
	}
	return nil
}

// drain calls prism_signals_pending for every key that queued offline.
func (r *metricsRun) drain(ctx context.Context) error {
	r.mu.Lock()
	keys := make([]marconi.RouteKey, 0, len(r.offline))
	for k := range r.offline {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		envs, err := r.api.Pending(ctx, k)
		if err != nil {
			return fmt.Errorf("pending %s: %w", k, err)
		}
		r.mu.Lock()
		for _, e := range envs {
			r.h.Drained[e.SignalID]++
		}
		r.mu.Unlock()
	}
	return nil
}

// awaitExpiry lets every live session's record lapse on the server
// (PEXPIRE 1 ms), waits until the server no longer holds it (EXISTS: each
// is one on_session_expired), then until the mesh has closed their
// sockets and dropped them from its tables (the hooks have run; the
// tables are read only to know that, never judged).
func (r *metricsRun) awaitExpiry(ctx context.Context) error {
	deadline := time.Now().Add(metricsWait)
	store := r.mesh.Store()
	for _, t := range r.tenants() {
		for _, s := range r.liveSessions(t) {
			key := store.RecordKey(s.Tenant, s.SessionID)
			if n, err := r.pool.Do(ctx, client.NewCmd("PEXPIRE", []string{key}, "1")); err != nil || n != int64(1) {
				return fmt.Errorf("pexpire %s: %v (reply %v)", key, err, n)
			}
		}
	}
	for _, t := range r.tenants() {
		for _, s := range r.liveSessions(t) {
			key := store.RecordKey(s.Tenant, s.SessionID)
			err := wait.Within(ctx, time.Until(deadline), 10*time.Millisecond, func(ctx context.Context) error {
				n, err := r.pool.Do(ctx, client.NewCmd("EXISTS", []string{key}))
				if err != nil && ctx.Err() == nil {
					return wait.Permanent(fmt.Errorf("exists %s: %w", key, err))
				} else if err != nil {
					return fmt.Errorf("exists %s: %w", key, err)
				}
				if n != int64(0) {
					return fmt.Errorf("session record %s never expired", key)
				}
				return nil
			})
			if err != nil {
				return err
			}
			r.hook("on_session_expired")
			r.mu.Lock()
			delete(r.live, s.SessionID)
			rcv := r.sockets[s.SessionID]
			r.mu.Unlock()
			if rcv != nil {
				select {
				case <-rcv.Done():
				case <-time.After(time.Until(deadline)):
					return fmt.Errorf("the mesh never closed expired session %s's socket", s.SessionID)
				}
			}
		}
	}
	return wait.Within(ctx, time.Until(deadline), 20*time.Millisecond, func(context.Context) error {
		if n := len(r.mesh.Tables().Registrations); n > 0 {
			return fmt.Errorf("the mesh still holds %d registrations after every record expired", n)
		}
		return nil
	})
}

// awaitStream waits until each tenant's stream holds as many entries as
// the mesh answered audit_kept for (the writer drained the queue).
func (r *metricsRun) awaitStream(ctx context.Context) error {
	kept := map[string]int{}
	r.mu.Lock()
	for _, s := range r.h.Sends {
		if s.AuditKept {
			kept[s.Tenant]++
		}
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, metricsWait)
	defer cancel()
	for _, t := range r.tenants() {
		err := wait.Until(ctx, 20*time.Millisecond, func(ctx context.Context) error {
			ids, err := traffic.ReadAuditStream(ctx, r.pool, t)
			if err != nil && ctx.Err() == nil {
				return wait.Permanent(err)
			} else if err != nil {
				return err
			}
			// Every kept envelope in the stream and the queue empty: the
			// acks' state handoffs, queued after them, were taken too.
			if len(ids) < kept[t] || r.queue.Stats(t).Depth != 0 {
				return fmt.Errorf("tenant %s: the stream holds %d of %d kept entries, queue depth %d", t, len(ids), kept[t], r.queue.Stats(t).Depth)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// point scrapes /metrics and snapshots the ledger beside it.
func (r *metricsRun) point(ctx context.Context, name string, complete bool) error {
	r.mu.Lock()
	ended := 0
	for _, s := range r.sockets {
		select {
		case <-s.Done():
			ended++
		default:
		}
	}
	r.mu.Unlock()
	start := r.clock.Now()
	sc := scrapeMesh(ctx, r.srv.URL)
	end := r.clock.Now()
	stream := map[string][]string{}
	for _, t := range r.tenants() {
		ids, err := traffic.ReadAuditStream(ctx, r.pool, t)
		if err != nil {
			return err
		}
		for id, n := range ids {
			for range n { // one per entry: the envelope and each state handoff
				stream[t] = append(stream[t], id)
			}
		}
	}
	routes := r.routes()
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.Sends = append([]judge.MetricsSend(nil), r.h.Sends...)
	h.Acks = append([]judge.MetricsAck(nil), r.h.Acks...)
	h.Frames, h.Drained, h.Hooks, h.HookErrors = clone(r.h.Frames), clone(r.h.Drained), clone(r.h.Hooks), clone(r.h.HookErrors)
	h.Hooks["on_ws_disconnect"] = ended
	h.Routes, h.Stream, h.StreamComplete = routes, stream, complete
	h.ScrapeStart, h.ScrapeEnd = start, end
	r.points = append(r.points, judge.MetricsPoint{Name: name, Scrape: sc, History: h})
	return nil
}

func clone(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (r *metricsRun) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, s := range r.h.Sends {
		out[s.Outcome]++
	}
	acks := 0
	for _, a := range r.h.Acks {
		if a.Status == 200 {
			acks++
		}
	}
	return fmt.Sprintf("%s: %d sends %v, %d acks answered 200 of %d, hooks %v, refused %v; run took %v", r.v.name, len(r.h.Sends), out, acks, len(r.h.Acks), r.h.Hooks, r.h.HookErrors, r.duration.Round(time.Millisecond))
}

// scrapeMesh reads the mesh's /metrics as a Prometheus server does: an
// HTTP GET on its real socket, parsed from the text exposition. A
// histogram's sample is its count.
func scrapeMesh(ctx context.Context, baseURL string) history.TelemetryScrape {
	return traffic.Scrape(ctx, http.DefaultClient, baseURL+marconi.PathMetrics)
}
