// Package marconi is the Marconi in-memory signal mesh (spec 002, SPEC-101
// v0.4): sender shim → Marconi → receiver shim, with Redis and PostgreSQL
// only behind it, as the audit fan-out (package audit) and the
// SessionStore.
//
//   - Hot path (§2, hotpath.go): routing lookup in the in-process routing
//     table, direct push into the recipient's WebSocket queue or the
//     pending-signal index, then 200. The board that does it holds no
//     client: zero Redis, PostgreSQL or other I/O by construction.
//   - Tables (§3.1–3.5): routing, registration, WS handles, the pending
//     index with TTL, the obligation index with SLA sweepers.
//   - Cache lifecycle (§5, Stage 2): the Invalidator's seven write-through
//     hooks; on_session_expired fed by the expiry sweeper (default: no
//     subscriber, as Stage 2 demands) or keyspace notifications from every
//     primary (an option; see ExpiryMode for the contradiction).
//   - Flags (§8): every MARCONI_* flag, defaults all OFF (the Stage 1
//     SessionStore-read fallback), changed at run time by SetFlags; the
//     combinations §8 forbids are refused by name (FlagRules).
//   - Restart recovery (§6): Start rehydrates the tables from the
//     SessionStore in Redis before serving.
//   - Observability (§9): every hot-path, invalidator and obligation metric
//     on a per-instance Prometheus registry; CountingPool and PGCounter
//     count I/O at the client seams, attributed to the hot path by context.
package marconi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// Defaults of Options.
const (
	DefaultPendingTTL          = 10 * time.Minute
	DefaultPendingPerRecipient = 10_000
	DefaultQueueSize           = 4096
	DefaultSweepEvery          = time.Second
)

// Options configures a Mesh.
type Options struct {
	// Pool is the SessionStore's command pool (wrap it with Count to see
	// its I/O). Required.
	Pool client.Pool
	// Store configures the SessionStore (key prefix, session TTL).
	Store StoreOptions
	// Sink is the audit fan-out's entry (audit queue); Offer is called
	// synchronously inside send_signal after the delivery decision. Nil,
	// or Flags.AuditQueueWrite off: no audit entry.
	Sink audit.Sink
	// Flags are the MARCONI_* flags at start; the zero value is §8's
	// default (everything OFF: routing and registration read from the
	// SessionStore). SetFlags changes them at run time.
	Flags Flags
	// Mutant selects a known-bad variant (negative controls).
	Mutant Mutant
	// MetricsMutant selects a known-bad §9 instrument (negative controls
	// of the marconi-metrics row); the mesh itself behaves as the
	// reference one.
	MetricsMutant MetricsMutant
	// LegacyPG is the PostgreSQL connection of MutantSyncPGWrite.
	LegacyPG PGExecer
	// LegacySubscriber is the Redis subscription connection of
	// MutantWSSubscribe (the legacy session_stream's SUBSCRIBE).
	LegacySubscriber client.Subscriber
	// Notify configures the keyspace listener that feeds
	// on_session_expired under ExpiryKeyspace (Flags.Expiry empty and
	// Notify set means keyspace; empty and nil means the sweeper).
	Notify *NotifyOptions
	// PendingTTL bounds how long an offline signal waits (§3.5); zero means
	// DefaultPendingTTL. PendingPerRecipient caps each recipient's queue.
	PendingTTL          time.Duration
	PendingPerRecipient int
	// DisablePending answers offline recipients with no_subscriber.
	DisablePending bool
	// QueueSize is each WebSocket's push queue; zero means DefaultQueueSize.
	QueueSize int
	// SweepEvery paces the pending-TTL and obligation SLA sweepers.
	SweepEvery time.Duration
	// Registry receives the metrics; nil means a new one per instance.
	Registry *prometheus.Registry
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logf receives non-fatal problems (listener errors); nil discards.
	Logf func(format string, args ...any)
	// OnHook, if set, is told about every Stage 2 hook call, with its
	// arguments, synchronously inside the hook (it must not block or call
	// the mesh).
	OnHook func(HookCall)
	// OnViolation, if set, is told about every SLA violation the sweeper
	// raises (§3.4), after it is counted. It must not block.
	OnViolation func(Violation)
	// ObligationTenants are tenants whose Marconi Cache stream the
	// obligation rehydration reads at Start besides those with sessions
	// in the SessionStore (§6).
	ObligationTenants []string
}

// Mesh is one Marconi instance: the tables, the hot path, the hooks, the
// SessionStore and the HTTP/WebSocket API (Handler).
type Mesh struct {
	opts        Options
	store       *SessionStore
	t           *tables
	pending     *pendingIndex
	obligations *obligationIndex
	m           *metrics
	registry    *prometheus.Registry
	inv         *Invalidator
	board       *board
	legacy      *legacyPath
	listener    *expiryListener
	flags       atomic.Pointer[Flags]
	flagMu      sync.Mutex // serialises SetFlags
	expiry      ExpiryMode

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	started   bool
}

// ErrBadOptions wraps an Options validation failure.
var ErrBadOptions = errors.New("bad marconi options")

// New builds a mesh; Start warms it up.
func New(o Options) (*Mesh, error) {
	if o.Pool == nil {
		return nil, fmt.Errorf("%w: no SessionStore pool", ErrBadOptions)
	}
	if o.Mutant != MutantAcceptForbidden {
		if err := o.Flags.Validate(); err != nil {
			return nil, fmt.Errorf("new mesh: %w", err)
		}
	}
	expiry := o.Flags.Expiry
	if expiry == "" {
		expiry = ExpirySweeper
		if o.Notify != nil {
			expiry = ExpiryKeyspace
		}
	}
	if expiry == ExpiryKeyspace && o.Notify == nil {
		return nil, fmt.Errorf("%w: MARCONI_SESSION_EXPIRY=keyspace needs Notify", ErrBadOptions)
	}
	if o.Mutant == MutantSyncPGWrite && o.LegacyPG == nil {
		return nil, fmt.Errorf("%w: %s needs LegacyPG", ErrBadOptions, o.Mutant)
	}
	if o.Mutant == MutantWSSubscribe && o.LegacySubscriber == nil {
		return nil, fmt.Errorf("%w: %s needs LegacySubscriber", ErrBadOptions, o.Mutant)
	}
	if o.PendingTTL <= 0 {
		o.PendingTTL = DefaultPendingTTL
	}
	if o.PendingPerRecipient <= 0 {
		o.PendingPerRecipient = DefaultPendingPerRecipient
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Store.Now == nil {
		o.Store.Now = o.Now
	}
	t := newTables()
	m := &Mesh{opts: o, store: NewSessionStore(o.Pool, o.Store), t: t,
		pending: newPendingIndex(o.PendingTTL, o.PendingPerRecipient), m: newMetrics(o.Registry, o.MetricsMutant, t),
		registry: o.Registry, stop: make(chan struct{}), expiry: expiry}
	// The obligation index always exists: MARCONI_OBLIGATIONS_MEMORY_PRIMARY
	// decides per send whether a new obligation opens in it, so turning
	// the flag off never loses the open ones.
	m.store.releaseKeepsIndex = o.Mutant == MutantReleaseKeepsIndex
	m.pending.neverExpires = o.Mutant == MutantPendingNeverExpires
	m.pending.uncounted = o.Mutant == MutantPendingExpiryUncounted
	m.obligations = newObligationIndex()
	m.obligations.recount = o.MetricsMutant == MetricsSLARecounted
	f := o.Flags
	m.flags.Store(&f)
	m.inv = &Invalidator{t: m.t, pending: m.pending, m: m.m, now: o.Now, mutant: o.Mutant, onHook: o.OnHook}
	m.board = &board{t: m.t, pending: m.pending, obligations: m.obligations, sink: o.Sink, m: m.m, ttl: m.store.TTL(),
		noPending: o.DisablePending, now: o.Now, ids: newIDGen(), durableAtOffer: o.Mutant == MutantDurableAtOffer}
	m.legacy = &legacyPath{prefix: m.store.prefix, pool: o.Pool}
	if o.Mutant == MutantSyncPGWrite {
		m.legacy.pg = o.LegacyPG
	}
	return m, nil
}

// Warmup reports the §6 rehydration.
type Warmup struct {
	Sessions int           `json:"sessions"`
	Masters  int           `json:"masters"`
	Took     time.Duration `json:"took"`
	Skipped  bool          `json:"skipped,omitempty"`
	// Obligations is how many open obligations the index rehydrated from
	// the Marconi Cache streams (§3.4, §6); ObligationsTook how long that
	// took (after Took).
	Obligations     int           `json:"obligations"`
	ObligationsTook time.Duration `json:"obligations_took"`
}

// Start runs the §6 cold start: the tables are empty, then rehydrated
// from the SessionStore (warm_caches_from_store), then the keyspace
// listener and the sweepers start; the caller serves Handler after Start
// returns (§6 step 3). MutantSkipWarmup skips the rehydration.
func (m *Mesh) Start(ctx context.Context) (Warmup, error) {
	if m.started {
		return Warmup{}, fmt.Errorf("start mesh: %w: already started", ErrBadOptions)
	}
	m.started = true
	if err := m.legacy.prepare(ctx); err != nil {
		return Warmup{}, fmt.Errorf("start mesh: %w", err)
	}
	w, tenants, err := m.warm(ctx)
	if err != nil {
		return w, fmt.Errorf("start mesh: %w", err)
	}
	began := time.Now()
	if w.Obligations, err = m.rehydrateObligations(ctx, append(tenants, m.opts.ObligationTenants...)); err != nil {
		return w, fmt.Errorf("start mesh: %w", err)
	}
	w.ObligationsTook = time.Since(began)
	if m.expiry == ExpiryKeyspace {
		l, err := startExpiryListener(ctx, *m.opts.Notify, m)
		if err != nil {
			return w, fmt.Errorf("start mesh: %w", err)
		}
		m.listener = l
	}
	m.every(m.opts.SweepEvery, m.sweep)
	if m.expiry == ExpirySweeper {
		// Its own loop: the expiry sweep asks Redis about sessions past
		// their TTL, and a slow or cut Redis must not delay the SLA
		// sweep, which works on the in-memory map alone (§3.4).
		m.every(m.opts.SweepEvery, m.sweepExpired)
	}
	return w, nil
}

// warm rehydrates the tables and returns the tenants it saw.
func (m *Mesh) warm(ctx context.Context) (Warmup, []string, error) {
	if m.opts.Mutant == MutantSkipWarmup {
		return Warmup{Skipped: true}, nil, nil
	}
	began := time.Now()
	snap, err := m.store.Load(ctx)
	if err != nil {
		return Warmup{}, nil, fmt.Errorf("warm-up: %w", err)
	}
	m.t.mu.Lock()
	tenants := map[string]bool{}
	projects := map[projectKey]bool{}
	for _, s := range snap.Sessions {
		m.t.put(s)
		tenants[s.Tenant] = true
		projects[projectKey{s.Tenant, s.Project}] = true
	}
	for k, sid := range snap.Masters {
		m.t.masters[projectKey{k.Tenant, k.Project}] = sid
	}
	for pk := range projects {
		m.t.rebuildProject(pk)
	}
	for t := range tenants {
		m.inv.refreshSize(t)
	}
	m.t.mu.Unlock()
	w := Warmup{Sessions: len(snap.Sessions), Masters: len(snap.Masters), Took: time.Since(began)}
	m.m.warmupSessions.Set(float64(w.Sessions))
	m.m.warmupSeconds.Set(w.Took.Seconds())
	names := make([]string, 0, len(tenants))
	for t := range tenants {
		names = append(names, t)
	}
	return w, names, nil
}

// every runs f every d, with the time of the tick, until Close.
func (m *Mesh) every(d time.Duration, f func(now time.Time)) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
			f(m.opts.Now())
		}
	}()
}

// sweep runs the pending-TTL and obligation SLA sweepers (§3.4, §3.5).
func (m *Mesh) sweep(now time.Time) {
	for tenant, n := range m.pending.sweep(now) {
		m.m.pendingExpired.WithLabelValues(tenant).Add(float64(n))
	}
	violations, forgotten := m.obligations.sweep(now, m.opts.Mutant == MutantSweeperEarly)
	if m.opts.Mutant == MutantSweeperNeverFires {
		violations = nil
	}
	for _, v := range violations {
		m.m.slaViolations.WithLabelValues(v.Tenant, v.Kind, v.SLA).Inc()
		if m.opts.OnViolation != nil {
			m.opts.OnViolation(v)
		}
	}
	for _, o := range forgotten {
		m.m.obligationsOpen.WithLabelValues(o.tenant, o.ob.Kind).Dec()
	}
	// Lost state handoffs go again while the audit queue is written
	// (MARCONI_AUDIT_QUEUE_WRITE); one the queue refuses stays dirty.
	if m.board.sink != nil && m.flags.Load().AuditQueueWrite {
		for _, e := range m.obligations.handoffs() {
			if !m.board.sink.Offer(e) {
				m.obligations.lostHandoff(e.Envelope.SignalID)
			}
		}
	}
}

// Close stops the instance as a process exit would: sweepers and the
// keyspace listener stop, every WebSocket is detached (its connection
// closes). In-memory state — tables, pending signals — is gone with it;
// the audit queue is the audit package's to close.
func (m *Mesh) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.stop)
		if m.listener != nil {
			err = m.listener.close()
		}
		m.t.mu.Lock()
		for _, reg := range m.t.regs {
			if reg.handle != nil {
				reg.handle.close()
				reg.handle = nil
			}
		}
		for _, routes := range m.t.routes { // mutant leftovers: stale routes may hold handles
			for _, reg := range routes {
				if reg.handle != nil {
					reg.handle.close()
				}
			}
		}
		m.t.mu.Unlock()
		m.wg.Wait()
	})
	return err
}

// ErrBadRequest wraps a send or control request missing required fields.
var ErrBadRequest = errors.New("bad request")

// Send is send_signal (prism_signal): the delivery decision in memory,
// then the audit Offer, then the result the API answers 200 with. Only a
// legacy path (flag off, or a mutant) does I/O here, before the decision.
func (m *Mesh) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	if req.Tenant == "" || req.Project == "" || req.Recipient == "" {
		return SendResult{}, fmt.Errorf("send: %w: tenant_id, project_id and recipient are required", ErrBadRequest)
	}
	f := m.flags.Load()
	key := RouteKey{Tenant: req.Tenant, Project: req.Project, Identity: req.Recipient}
	var fb *fallback
	if !f.RoutingTableReads || !f.RegistrationTableReads {
		var err error
		if fb, err = m.resolveFallback(ctx, f, key); err != nil {
			return SendResult{}, fmt.Errorf("send: %w", err)
		}
	} else if m.opts.Mutant == MutantMasterUncached && key.Identity == MasterIdentity {
		var err error
		if fb, err = m.masterUncached(ctx, f, key); err != nil {
			return SendResult{}, fmt.Errorf("send: %w", err)
		}
	}
	publish := !f.HotPathSend || m.opts.Mutant == MutantPublishBeforeAck
	if publish || m.legacy.pg != nil {
		sid := ""
		if fb != nil {
			sid = fb.sessionID
		} else {
			m.t.mu.RLock()
			if reg := m.t.route(key); reg != nil {
				sid = reg.s.SessionID
			}
			m.t.mu.RUnlock()
		}
		if err := m.legacy.before(ctx, req, sid, m.board.ids.next(), publish); err != nil {
			return SendResult{}, fmt.Errorf("send: %w", err)
		}
	}
	if m.opts.Mutant == MutantStaleRoute5xx {
		key := RouteKey{Tenant: req.Tenant, Project: req.Project, Identity: req.Recipient}
		m.t.mu.RLock()
		reg := m.t.route(key)
		dead := reg != nil && m.t.regs[reg.s.SessionID] != reg
		m.t.mu.RUnlock()
		if dead {
			return SendResult{}, fmt.Errorf("send to %s: %w", key, ErrStaleRoute)
		}
	}
	return m.board.send(req, f, fb), nil
}

// Register is controller_service.register: SessionStore.register, then
// on_register. Empty RegisteredAt / LastHeartbeat are stamped now.
func (m *Mesh) Register(ctx context.Context, s Session) (Session, error) {
	now := m.opts.Now()
	if s.RegisteredAt.IsZero() {
		s.RegisteredAt = now
	}
	if s.LastHeartbeat.IsZero() {
		s.LastHeartbeat = now
	}
	if err := s.validate(); err != nil {
		return s, fmt.Errorf("register: %w", err)
	}
	if err := m.store.Register(ctx, s); err != nil {
		return s, err
	}
	return s, m.inv.OnRegister(s)
}

// HeartbeatResult says what a heartbeat did to the tables.
type HeartbeatResult struct {
	// Routed: on_heartbeat found the session and refreshed its route. A
	// session the SessionStore has but the tables lack (a skipped
	// warm-up) is false, and counted in marconi_invalidator_errors_total.
	Routed bool `json:"routed"`
}

// Heartbeat is controller_service.stamp_heartbeat: the SessionStore
// record's TTL is extended, then on_heartbeat refreshes the route. A
// record already gone is ErrSessionExpired (register again); a hook error
// is non-fatal (§9) and reported in the result.
func (m *Mesh) Heartbeat(ctx context.Context, tenant, project, sid string) (HeartbeatResult, error) {
	at := m.opts.Now()
	if err := m.store.Heartbeat(ctx, tenant, sid, at); err != nil {
		return HeartbeatResult{}, err
	}
	return HeartbeatResult{Routed: m.inv.OnHeartbeat(tenant, project, sid, at) == nil}, nil
}

// StampEngagement is controller_service.stamp_engagement: a receiver's
// activity stamp. Like a heartbeat it extends the SessionStore record's
// TTL, then on_heartbeat updates the route's freshness — a field update
// that never invalidates the entry (§5).
func (m *Mesh) StampEngagement(ctx context.Context, tenant, project, sid string) (HeartbeatResult, error) {
	at := m.opts.Now()
	if err := m.store.Heartbeat(ctx, tenant, sid, at); err != nil {
		return HeartbeatResult{}, err
	}
	return HeartbeatResult{Routed: m.inv.onEngagement(tenant, project, sid, at) == nil}, nil
}

// Deregister is controller_service.deregister_session:
// SessionStore.release, then on_deregister. A hook error (the tables did
// not hold the session) is non-fatal and counted.
func (m *Mesh) Deregister(ctx context.Context, tenant, project, sid string) error {
	identity := ""
	m.t.mu.RLock()
	if reg := m.t.regs[sid]; reg != nil {
		identity = reg.s.Identity
	}
	m.t.mu.RUnlock()
	if _, err := m.store.Release(ctx, tenant, sid); err != nil {
		return err
	}
	if identity != "" {
		_ = m.store.Unroute(ctx, tenant, project, identity, sid) // hygiene: the fallback skips dead members
	}
	_ = m.inv.OnDeregister(tenant, project, sid)
	return nil
}

// ClaimMaster is controller_service.claim_master: the flag moves to sid
// unconditionally, then on_master_change.
func (m *Mesh) ClaimMaster(ctx context.Context, tenant, project, sid string) error {
	skip := m.opts.Mutant == MutantTakeoverSkipsHook && m.takeover(tenant, project)
	if err := m.store.SetMaster(ctx, tenant, project, "", sid); err != nil {
		return err
	}
	if skip {
		return nil
	}
	_ = m.inv.OnMasterChange(tenant, project, sid)
	return nil
}

// HandoffMaster is controller_service.handoff_master: the flag moves from
// `from` to `to` only if `from` holds it, then on_master_change.
func (m *Mesh) HandoffMaster(ctx context.Context, tenant, project, from, to string) error {
	if from == "" {
		return fmt.Errorf("handoff master: %w: from is required", ErrBadRequest)
	}
	if err := m.store.SetMaster(ctx, tenant, project, from, to); err != nil {
		return err
	}
	_ = m.inv.OnMasterChange(tenant, project, to)
	return nil
}

// Pending is prism_signals_pending: it drains and returns key's pending
// signals, in order (§3.5).
func (m *Mesh) Pending(key RouteKey) []audit.Envelope {
	live, expired := m.pending.take(key, m.opts.Now())
	if expired > 0 {
		m.m.pendingExpired.WithLabelValues(key.Tenant).Add(float64(expired))
	}
	out := make([]audit.Envelope, len(live))
	for i, e := range live {
		out[i] = *e
	}
	return out
}

// PendingDepth is the number of signals waiting for key.
func (m *Mesh) PendingDepth(key RouteKey) int { return m.pending.depth(key) }

// ErrUnknownSignal is returned by Ack for a signal with no open obligation.
var ErrUnknownSignal = errors.New("no open obligation for signal")

// Ack records a receiver's final-delivery evidence for signalID (§3.4).
func (m *Mesh) Ack(signalID string, kind AckKind) error {
	if kind != AckReceived && kind != AckTerminal {
		return fmt.Errorf("ack %s: %w: ack_kind %q", signalID, ErrBadRequest, kind)
	}
	o, found, closed, update := m.obligations.ack(signalID, kind, m.opts.Now())
	if m.m.mutant == MetricsAckBeforeLookup {
		m.m.acked.WithLabelValues(o.tenant, o.signalType, string(kind)).Inc()
	}
	if !found {
		return fmt.Errorf("ack %s: %w", signalID, ErrUnknownSignal)
	}
	// The new state goes to the stream the way the signal did (§3.4: the
	// handoff reflects the index), so a restarted instance rehydrates it.
	if update != nil && m.board.sink != nil {
		// A handoff the queue refuses (or that waits for the audit queue
		// flag) stays dirty: the sweeper offers it again, so a restarted
		// instance never reopens an obligation whose ack got its 200.
		if !m.flags.Load().AuditQueueWrite || !m.board.sink.Offer(*update) {
			m.obligations.lostHandoff(signalID)
		}
	}
	if m.m.mutant != MetricsAckBeforeLookup {
		m.m.acked.WithLabelValues(o.tenant, o.signalType, string(kind)).Inc()
	}
	if closed && m.m.mutant != MetricsOpenNeverDecrements {
		m.m.obligationsOpen.WithLabelValues(o.tenant, o.ob.Kind).Dec()
	}
	return nil
}

// Obligation returns signalID's open obligation.
func (m *Mesh) Obligation(signalID string) (audit.Obligation, bool) {
	return m.obligations.get(signalID)
}

// Tables returns a copy of the routing and registration tables.
func (m *Mesh) Tables() TableView { return m.t.view() }

// Invalidator returns the Stage 2 hooks, for the sites that mutate session
// state outside the controller methods here.
func (m *Mesh) Invalidator() *Invalidator { return m.inv }

// Store returns the SessionStore.
func (m *Mesh) Store() *SessionStore { return m.store }

// Registry is the instance's Prometheus registry (§9 metrics).
func (m *Mesh) Registry() *prometheus.Registry { return m.registry }

// Flags returns the flags the mesh runs with now.
func (m *Mesh) Flags() Flags { return *m.flags.Load() }

// Expiry is where on_session_expired comes from on this instance.
func (m *Mesh) Expiry() ExpiryMode { return m.expiry }
