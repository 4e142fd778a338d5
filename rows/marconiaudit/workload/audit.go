// Package workload holds the Marconi audit-pipeline rows' own traffic
// (marconi-audit-completeness, marconi-loss-budget, marconi-stream): the
// seeded offers into the audit queue, the archiver supervisor that kills
// and restarts it at planned crash points, the write-through control, the
// gauge sampler, the cap probes and the recorders at the client seam
// (reads, call times). It records the judge's records on the scenario
// clock and asserts nothing; the readers the other Marconi rows share
// (stream, group and table counts, metric sums) stay in traffic.
package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/traffic"
)

// AuditEntry is the n-th seeded signal entry of tenant, the way the mesh
// hands it to the audit queue after its delivery decision: a unique
// signal id, a payload of 0–256 random bytes, meta that is absent, empty or
// holds non-ASCII text, the trace events so far, and an obligation on about
// a third of the signals.
func AuditEntry(rng *rand.Rand, tenant string, n int, now time.Time) audit.Entry {
	id := fmt.Sprintf("%s-%06d-%08x", tenant, n, rng.Uint32())
	outcomes := []audit.Outcome{audit.OutcomePushed, audit.OutcomeQueuedOffline, audit.OutcomeNoSubscriber}
	payload := make([]byte, rng.IntN(257))
	for i := range payload {
		payload[i] = byte(rng.UintN(256))
	}
	env := audit.Envelope{
		SignalID: id, TenantID: tenant, ProjectID: fmt.Sprintf("proj-%d", rng.IntN(4)),
		Sender: fmt.Sprintf("agent-%d", rng.IntN(50)), Recipient: fmt.Sprintf("identité-%d", rng.IntN(50)),
		Kind: []string{"handoff", "ping", "review", "decision"}[rng.IntN(4)], Payload: payload, CreatedAt: now,
	}
	switch rng.IntN(6) {
	case 0, 1:
	case 2:
		env.Meta = map[string]string{}
	default:
		env.Meta = map[string]string{"trace": fmt.Sprintf("%016x", rng.Uint64()), "note": "ünïcode ✓ \"quoted\""}
	}
	outcome := outcomes[rng.IntN(len(outcomes))]
	if rng.IntN(3) == 0 {
		ack := now.Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
		env.Obligation = &audit.Obligation{Kind: "ack", AckSLASeconds: 30, TerminalSLASeconds: 600, CreatedAt: now, DurabilityStatus: "in_memory"}
		if rng.IntN(2) == 0 {
			env.Obligation.AckReceivedAt = &ack
		}
	}
	return audit.Entry{
		Envelope: env, ArrivedAt: now, Outcome: outcome,
		Trace: []audit.TraceEvent{
			{SignalID: id, Event: "accepted", At: now},
			{SignalID: id, Event: string(outcome), At: now.Add(time.Microsecond), Detail: "marconi"},
		},
	}
}

// AuditLoad offers seeded signals to an audit sink at a steady rate per
// tenant — one goroutine per tenant, as concurrent send_signal calls would —
// optionally writing each through the legacy direct PG path first (Stage
// 3/4 run both), and records every offer.
type AuditLoad struct {
	Sink    audit.Sink
	Tenants []string
	// Rate is signals per second per tenant; Max, when positive, stops a
	// tenant after that many.
	Rate float64
	Max  int
	// Direct, when set, opens tenant's legacy direct writer.
	Direct func(ctx context.Context, tenant string) (*audit.DirectWriter, error)
	Rand   func(tenant string) *rand.Rand
	Clock  *traffic.Clock

	mu     sync.Mutex
	offers []history.AuditOffer
	count  atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup
	err    error
}

// Start begins offering; Stop ends it.
func (l *AuditLoad) Start(ctx context.Context) {
	ctx, l.cancel = context.WithCancel(ctx)
	for _, t := range l.Tenants {
		l.wg.Go(func() { l.run(ctx, t) })
	}
}

func (l *AuditLoad) run(ctx context.Context, tenant string) {
	var direct *audit.DirectWriter
	if l.Direct != nil {
		d, err := l.Direct(ctx, tenant)
		if err != nil {
			l.mu.Lock()
			l.err = errors.Join(l.err, fmt.Errorf("open direct writer of %s: %w", tenant, err))
			l.mu.Unlock()
			return
		}
		direct = d
		defer direct.Close()
	}
	rng := l.Rand(tenant)
	began := time.Now()
	for n := 0; l.Max <= 0 || n < l.Max; {
		if ctx.Err() != nil {
			return
		}
		due := int(l.Rate * time.Since(began).Seconds())
		if n >= due {
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
			continue
		}
		for ; n < due && (l.Max <= 0 || n < l.Max); n++ {
			e := AuditEntry(rng, tenant, n, time.Now())
			o := history.AuditOffer{Tenant: tenant, SignalID: e.Envelope.SignalID, TraceEvents: len(e.Trace), Obligation: e.Envelope.Obligation != nil}
			if direct != nil {
				if err := direct.Write(ctx, e); err != nil {
					if ctx.Err() != nil {
						return // stopped mid-write: not an offer
					}
					o.DirectErr = err.Error()
				}
			}
			o.At = l.Clock.Now()
			o.Kept = l.Sink.Offer(e)
			o.Took = l.Clock.Now() - o.At
			l.mu.Lock()
			l.offers = append(l.offers, o)
			l.mu.Unlock()
			l.count.Add(1)
		}
	}
}

// Stop ends the load and waits for it; it returns any setup error.
func (l *AuditLoad) Stop() error {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Wait waits until every tenant reached Max (or the load was stopped).
func (l *AuditLoad) Wait() error {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Count is how many signals were offered so far.
func (l *AuditLoad) Count() int64 { return l.count.Load() }

// Offers returns the recorded offers.
func (l *AuditLoad) Offers() []history.AuditOffer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]history.AuditOffer(nil), l.offers...)
}

// AuditErrors records what the pipelines report through their OnError
// hooks, on the scenario clock.
type AuditErrors struct {
	Clock *traffic.Clock
	mu    sync.Mutex
	errs  []judge.AuditError
}

// Record is an OnError hook.
func (r *AuditErrors) Record(e audit.PipelineError) {
	at := r.Clock.Now() - time.Since(e.At)
	r.mu.Lock()
	r.errs = append(r.errs, judge.AuditError{At: at, Stage: string(e.Stage), Tenant: e.Tenant, Op: e.Op, Reason: e.Reason, Err: e.Err})
	r.mu.Unlock()
}

// Errors returns the recorded errors.
func (r *AuditErrors) Errors() []judge.AuditError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]judge.AuditError(nil), r.errs...)
}

// Count is how many errors of stage were recorded for tenant ("" = any).
func (r *AuditErrors) Count(stage audit.Stage, tenant string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.errs {
		if e.Stage == string(stage) && (tenant == "" || e.Tenant == tenant) {
			n++
		}
	}
	return n
}

// CrashPlan is one planned archiver kill: once the archivers of a run have
// begun processing After entries, the next one to reach Point dies there.
type CrashPlan struct {
	After int
	Point audit.CrashPoint
}

// AuditCrash is one archiver kill that happened.
type AuditCrash struct {
	At       time.Duration
	Consumer string
	Point    audit.CrashPoint
	Tenant   string
	SignalID string
}

// ArchiverSupervisor runs PG archiver incarnations one after another, as a
// process supervisor restarts a killed process: when one dies at a planned
// crash point (audit.ErrCrashed), the next starts at once under a new
// consumer name and must recover what its predecessor left pending.
type ArchiverSupervisor struct {
	// New builds incarnation consumer with the crash hook to install.
	New   func(consumer string, crash func(audit.CrashPoint, string, string) bool) (*audit.Archiver, error)
	Plan  []CrashPlan
	Clock *traffic.Clock
	// Name prefixes consumer names ("archiver" → archiver-1, archiver-2…).
	Name string

	mu      sync.Mutex
	seen    int
	next    int
	crashes []AuditCrash
	current string
	cancel  context.CancelFunc
	done    chan error
}

// Start runs the first incarnation and restarts after every crash until
// Stop.
func (s *ArchiverSupervisor) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan error, 1)
	go func() {
		for n := 1; ; n++ {
			consumer := fmt.Sprintf("%s-%d", s.Name, n)
			s.mu.Lock()
			s.current = consumer
			s.mu.Unlock()
			a, err := s.New(consumer, s.crash)
			if err != nil {
				s.done <- fmt.Errorf("start %s: %w", consumer, err)
				return
			}
			err = a.Run(ctx)
			if errors.Is(err, audit.ErrCrashed) && ctx.Err() == nil {
				continue
			}
			s.done <- err
			return
		}
	}()
}

// crash is the hook every incarnation gets.
func (s *ArchiverSupervisor) crash(p audit.CrashPoint, tenant, signalID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == audit.CrashBeforeWrite {
		s.seen++
	}
	if s.next >= len(s.Plan) {
		return false
	}
	plan := s.Plan[s.next]
	if s.seen < plan.After || p != plan.Point {
		return false
	}
	s.next++
	s.crashes = append(s.crashes, AuditCrash{At: s.Clock.Now(), Consumer: s.current, Point: p, Tenant: tenant, SignalID: signalID})
	return true
}

// Stop ends the current incarnation and returns its error.
func (s *ArchiverSupervisor) Stop() error {
	s.cancel()
	return <-s.done
}

// Crashes returns the kills that happened.
func (s *ArchiverSupervisor) Crashes() []AuditCrash {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AuditCrash(nil), s.crashes...)
}

// Processed is how many entries the incarnations began processing.
func (s *ArchiverSupervisor) Processed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// WriteThroughSink is the anti-pattern §3.6 forbids, as a negative
// control: Offer appends to the tenant's stream synchronously (XADD, with a
// timeout), so a Redis outage stalls the hot path for the timeout.
type WriteThroughSink struct {
	Pool    client.Pool
	Timeout time.Duration
}

// Offer implements audit.Sink.
func (w WriteThroughSink) Offer(e audit.Entry) bool {
	keys, err := audit.KeysFor(e.Envelope.TenantID)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.Timeout)
	defer cancel()
	_, err = w.Pool.Do(ctx, client.NewCmd("XADD", []string{keys.Stream}, "*", "signal_id", e.Envelope.SignalID))
	return err == nil
}

// MetricByLabels sums metric name per combination of the values of labels,
// keyed by those values joined with "/" in the order given.
func MetricByLabels(g prometheus.Gatherer, name string, labels ...string) (map[string]float64, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather %s: %w", name, err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			vals := make([]string, len(labels))
			for i, l := range labels {
				vals[i] = have[l]
			}
			out[strings.Join(vals, "/")] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out, nil
}

// AuditSampler scrapes each tenant's gauges from a registry at a fixed
// interval: the lag and depth curves the errors column judges.
type AuditSampler struct {
	Gatherer prometheus.Gatherer
	Tenants  []string
	Every    time.Duration
	Clock    *traffic.Clock

	mu      sync.Mutex
	samples []judge.AuditSample
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Start begins sampling.
func (s *AuditSampler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Go(func() {
		t := time.NewTicker(s.Every)
		defer t.Stop()
		for {
			s.scrape()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

func (s *AuditSampler) scrape() {
	at := s.Clock.Now()
	for _, tenant := range s.Tenants {
		sel := map[string]string{"tenant": tenant}
		wl, _ := traffic.MetricSum(s.Gatherer, audit.MetricWriterLag, sel)
		al, _ := traffic.MetricSum(s.Gatherer, audit.MetricArchiverLag, sel)
		depth, _ := traffic.MetricSum(s.Gatherer, audit.MetricQueueDepth, sel)
		appended, _ := traffic.MetricSum(s.Gatherer, audit.MetricWriterAppended, sel)
		archived, _ := traffic.MetricSum(s.Gatherer, audit.MetricArchiverArchived, sel)
		s.mu.Lock()
		s.samples = append(s.samples, judge.AuditSample{At: at, Tenant: tenant, WriterLag: wl, ArchiverLag: al, Depth: depth, Backlog: appended - archived})
		s.mu.Unlock()
	}
}

// Stop ends sampling after one last scrape.
func (s *AuditSampler) Stop() {
	s.cancel()
	s.wg.Wait()
	s.scrape()
}

// Samples returns what was scraped.
func (s *AuditSampler) Samples() []judge.AuditSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]judge.AuditSample(nil), s.samples...)
}

// ReadAuditTable reads every row of table as the server renders it
// (t::text), keyed by keyExpr (a SQL expression over t).
func ReadAuditTable(ctx context.Context, dsn, schema, table, keyExpr string) (judge.AuditTable, error) {
	conn, err := traffic.ConnectSchema(ctx, dsn, schema)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT %s, t::text FROM %s t", keyExpr, pgx.Identifier{table}.Sanitize()))
	if err != nil {
		return nil, fmt.Errorf("read %s.%s: %w", schema, table, err)
	}
	out := judge.AuditTable{}
	var key, text string
	_, err = pgx.ForEachRow(rows, []any{&key, &text}, func() error { out[key] = append(out[key], text); return nil })
	if err != nil {
		return nil, fmt.Errorf("read %s.%s: %w", schema, table, err)
	}
	return out, nil
}
