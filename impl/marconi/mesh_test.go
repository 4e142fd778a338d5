package marconi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/internal/wait"
)

// One standalone server for the package's tests; each test namespaces its
// keys with its own prefix.
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func standalone(t testing.TB) *fixtures.Topology { t.Helper(); return fixturestest.Get(t, server) }

func TestMain(m *testing.M) { os.Exit(server.RunTests(m)) }

type env struct {
	mesh    *marconi.Mesh
	pool    *marconi.CountingPool
	srv     *httptest.Server
	api     *marconi.Client
	sink    *marconi.MemorySink
	deliver chan marconi.Delivery
}

func newEnv(t *testing.T, prefix string, o marconi.Options) *env {
	t.Helper()
	p := clienttest.Standalone(t, standalone(t))
	e := &env{pool: marconi.Count(p), sink: marconi.NewMemorySink(), deliver: make(chan marconi.Delivery, 1024)}
	o.Pool = e.pool
	o.Sink = e.sink
	o.Store.Prefix = prefix
	if !o.Flags.HotPathSend && !o.Flags.RoutingTableReads {
		o.Flags = marconi.ShippedFlags()
	}
	var err error
	e.mesh, err = marconi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.mesh.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.mesh.Handler())
	t.Cleanup(func() { _ = e.mesh.Close(); e.srv.Close() })
	e.api = &marconi.Client{BaseURL: e.srv.URL}
	return e
}

func (e *env) register(t *testing.T, sid, identity string) marconi.Session {
	t.Helper()
	s, err := e.api.Register(t.Context(), marconi.Session{SessionID: sid, Tenant: "acme", Project: "p1", Identity: identity})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) dial(t *testing.T, sid string) *marconi.Receiver {
	t.Helper()
	r, err := marconi.DialReceiver(t.Context(), e.srv.URL, sid, func(d marconi.Delivery) { e.deliver <- d })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func (e *env) send(t *testing.T, identity string) marconi.SendResult {
	t.Helper()
	res, err := e.api.Send(t.Context(), marconi.SendRequest{Tenant: "acme", Project: "p1", Sender: "tester", Recipient: identity, Kind: "note"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *env) await(t *testing.T, signalID string) marconi.Delivery {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case d := <-e.deliver:
			if d.Envelope.SignalID == signalID {
				return d
			}
		case <-timeout:
			t.Fatalf("signal %s not delivered", signalID)
		}
	}
}

func route(e *env, identity string) string {
	return e.mesh.Tables().Routes[marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: identity}]
}

// TestHookTransitions covers every Stage 2 hook's cache state transition
// (spec 002 §8 Stage 2 test gate: "Every hook above has a unit test").
func TestHookTransitions(t *testing.T) {
	e := newEnv(t, "t-hooks", marconi.Options{})

	// on_register: route and registration put.
	s := e.register(t, "s1", "alice")
	if got := route(e, "alice"); got != "s1" {
		t.Fatalf("on_register: route alice → %q, want s1", got)
	}
	if _, ok := e.mesh.Tables().Registrations["s1"]; !ok {
		t.Fatal("on_register: no registration")
	}

	// Offline: queued in the pending index with the route resolved.
	queued := e.send(t, "alice")
	if queued.Outcome != audit.OutcomeQueuedOffline || queued.SessionID != "s1" {
		t.Fatalf("send with no socket: %+v, want queued_offline routed to s1", queued)
	}

	// on_ws_connect: attached, and the pending signal drained into it.
	e.dial(t, "s1")
	e.await(t, queued.SignalID)
	if !e.mesh.Tables().Registrations["s1"].Attached {
		t.Fatal("on_ws_connect: not attached")
	}
	pushed := e.send(t, "alice")
	if pushed.Outcome != audit.OutcomePushed {
		t.Fatalf("send to attached session: %+v", pushed)
	}
	e.await(t, pushed.SignalID)

	// on_heartbeat: freshness only; the route and the socket stay.
	before := e.mesh.Tables().Registrations["s1"].LastHeartbeat
	time.Sleep(5 * time.Millisecond) // a duration: the heartbeat's timestamp must be able to move on
	hb, err := e.api.Heartbeat(t.Context(), "acme", "p1", "s1")
	if err != nil || !hb.Routed {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	after := e.mesh.Tables().Registrations["s1"]
	if !after.LastHeartbeat.After(before) || !after.Attached || route(e, "alice") != "s1" {
		t.Fatalf("on_heartbeat: %+v (before %v)", after, before)
	}
	if !after.RegisteredAt.Equal(s.RegisteredAt) {
		t.Fatal("on_heartbeat replaced the entry")
	}

	// on_master_change: the master alias follows the flag.
	e.register(t, "s2", "bob")
	if err := e.api.ClaimMaster(t.Context(), "acme", "p1", "s1"); err != nil {
		t.Fatal(err)
	}
	if got := route(e, marconi.MasterIdentity); got != "s1" {
		t.Fatalf("claim: @master → %q", got)
	}
	if err := e.api.HandoffMaster(t.Context(), "acme", "p1", "s1", "s2"); err != nil {
		t.Fatal(err)
	}
	if got := route(e, marconi.MasterIdentity); got != "s2" {
		t.Fatalf("handoff: @master → %q", got)
	}
	if err := e.api.HandoffMaster(t.Context(), "acme", "p1", "s1", "s1"); !isCode(err, marconi.CodeNotMaster) {
		t.Fatalf("handoff from a non-master: %v", err)
	}

	// on_ws_disconnect: detached; the next signal is queued with the route.
	e.mesh.Tables() // no-op read, keeps the sequence readable
	r2 := e.dial(t, "s2")
	_ = r2.Close()
	waitFor(t, "s2 detached after its socket closed", func() bool { return !e.mesh.Tables().Registrations["s2"].Attached })
	if res := e.send(t, "bob"); res.Outcome != audit.OutcomeQueuedOffline || res.SessionID != "s2" {
		t.Fatalf("after disconnect: %+v", res)
	}

	// on_deregister: registration and route gone; a send misses.
	if err := e.api.Deregister(t.Context(), "acme", "p1", "s2"); err != nil {
		t.Fatal(err)
	}
	if got := route(e, "bob"); got != "" {
		t.Fatalf("on_deregister: route bob → %q", got)
	}
	if got := route(e, marconi.MasterIdentity); got != "" {
		t.Fatalf("on_deregister: @master still → %q", got)
	}
	if res := e.send(t, "bob"); res.SessionID != "" || res.Outcome != audit.OutcomeQueuedOffline {
		t.Fatalf("send after deregister: %+v", res)
	}
	for _, h := range marconi.Hooks {
		if h == marconi.HookSessionExpired {
			continue
		}
		if n := e.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(h)}); n == 0 {
			t.Errorf("hook %s never counted", h)
		}
	}
	if n := e.mesh.MetricSum("marconi_invalidator_errors_total", nil); n != 0 {
		t.Errorf("invalidator errors: %v", n)
	}
}

// TestNewestRegistrationWins: an identity re-registered under a new
// session routes to it, and deregistering the old one keeps the new route.
func TestNewestRegistrationWins(t *testing.T) {
	e := newEnv(t, "t-newest", marconi.Options{})
	e.register(t, "old", "carol")
	time.Sleep(2 * time.Millisecond) // a duration: the newer registration's timestamp is later
	e.register(t, "new", "carol")
	if got := route(e, "carol"); got != "new" {
		t.Fatalf("route → %q, want new", got)
	}
	if err := e.api.Deregister(t.Context(), "acme", "p1", "old"); err != nil {
		t.Fatal(err)
	}
	if got := route(e, "carol"); got != "new" {
		t.Fatalf("after deregistering old: route → %q, want new", got)
	}
}

// TestForgetfulDeregisterMutant: the mutant leaves the route behind.
func TestForgetfulDeregisterMutant(t *testing.T) {
	e := newEnv(t, "t-forget", marconi.Options{Mutant: marconi.MutantForgetfulDeregister})
	e.register(t, "s1", "dave")
	if err := e.api.Deregister(t.Context(), "acme", "p1", "s1"); err != nil {
		t.Fatal(err)
	}
	if res := e.send(t, "dave"); res.SessionID != "s1" {
		t.Fatalf("mutant should still route to the dead session: %+v", res)
	}
}

// TestSessionExpired: a record that expires in Redis reaches
// on_session_expired through the keyspace listener.
func TestSessionExpired(t *testing.T) {
	topo := standalone(t)
	e := newEnv(t, "t-expiry", marconi.Options{Store: marconi.StoreOptions{TTL: 300 * time.Millisecond},
		Notify: &marconi.NotifyOptions{Backend: client.BackendValkeyGo, Addrs: topo.Addrs(), Configure: true}})
	e.register(t, "s1", "erin")
	waitFor(t, "erin's route gone after her session expired", func() bool { return route(e, "erin") == "" })
	if n := e.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(marconi.HookSessionExpired)}); n < 1 {
		t.Fatalf("on_session_expired calls: %v", n)
	}
	if _, err := e.api.Heartbeat(t.Context(), "acme", "p1", "s1"); !marconi.IsSessionExpired(err) {
		t.Fatalf("heartbeat after expiry: %v", err)
	}
}

// TestWarmup: a new instance on the same store routes every active session
// on its first read; the skip-warmup mutant routes none.
func TestWarmup(t *testing.T) {
	a := newEnv(t, "t-warm", marconi.Options{})
	for i := range 20 {
		a.register(t, fmt.Sprintf("s%d", i), fmt.Sprintf("id%d", i))
	}
	if err := a.api.ClaimMaster(t.Context(), "acme", "p1", "s3"); err != nil {
		t.Fatal(err)
	}
	if err := a.api.Deregister(t.Context(), "acme", "p1", "s7"); err != nil {
		t.Fatal(err)
	}
	b := newEnv(t, "t-warm", marconi.Options{})
	want := a.mesh.Tables().Routes
	got := b.mesh.Tables().Routes
	if len(got) != len(want) || len(got) != 20 { // 19 identities + @master
		t.Fatalf("warm-up routes %d, want %d (20)", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("route %v: %q, want %q", k, got[k], v)
		}
	}
	if res := b.send(t, "id0"); res.SessionID != "s0" {
		t.Fatalf("first read after warm-up: %+v", res)
	}
	if hits := b.mesh.MetricSum("marconi_routing_cache_hits_total", nil); hits != 1 {
		t.Fatalf("hits %v", hits)
	}
	c := newEnv(t, "t-warm", marconi.Options{Mutant: marconi.MutantSkipWarmup})
	if n := len(c.mesh.Tables().Routes); n != 0 {
		t.Fatalf("skip-warmup mutant has %d routes", n)
	}
	if res, err := c.api.Heartbeat(t.Context(), "acme", "p1", "s0"); err != nil || res.Routed {
		t.Fatalf("heartbeat on a cold mesh: %+v %v", res, err)
	}
	if n := c.mesh.MetricSum("marconi_invalidator_errors_total", map[string]string{"hook": string(marconi.HookHeartbeat)}); n != 1 {
		t.Fatalf("heartbeat hook errors %v, want 1", n)
	}
}

// TestHotPathIO: sends touch no pool command; the legacy publish mutant
// does, on the hot path.
func TestHotPathIO(t *testing.T) {
	e := newEnv(t, "t-io", marconi.Options{})
	e.register(t, "s1", "frank")
	e.dial(t, "s1")
	before := e.pool.Counts()
	for range 50 {
		e.send(t, "frank")
	}
	if d := e.pool.Counts().Sub(before); d.Total != 0 || d.HotPath != 0 {
		t.Fatalf("sends issued commands: %+v", d)
	}
	if n := e.sink.Len(); n != 50 {
		t.Fatalf("audit entries %d, want 50", n)
	}
	m := newEnv(t, "t-io-m", marconi.Options{Mutant: marconi.MutantPublishBeforeAck})
	m.register(t, "s1", "frank")
	before = m.pool.Counts()
	for range 5 {
		m.send(t, "frank")
	}
	if d := m.pool.Counts().Sub(before); d.HotPath != 5 || d.HotPathByCommand["PUBLISH"] != 5 {
		t.Fatalf("mutant hot-path commands: %+v", d)
	}
}

// TestObligations: ack and terminal close an obligation; a missed ack SLA
// is counted by the sweeper.
func TestObligations(t *testing.T) {
	e := newEnv(t, "t-ob", marconi.Options{SweepEvery: 20 * time.Millisecond})
	e.register(t, "s1", "gina")
	r := e.dial(t, "s1")
	send := func() marconi.SendResult {
		res, err := e.api.Send(t.Context(), marconi.SendRequest{Tenant: "acme", Project: "p1", Recipient: "gina", Kind: "task",
			Obligation: &marconi.ObligationRequest{Kind: "review", AckSLASeconds: 1, TerminalSLASeconds: 60}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	done := send()
	e.await(t, done.SignalID)
	if err := r.Ack(t.Context(), done.SignalID, marconi.AckReceived); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the socket's ack applied", func() bool { // read asynchronously
		ob, _ := e.mesh.Obligation(done.SignalID)
		return ob.AckReceivedAt != nil
	})
	if err := e.api.Ack(t.Context(), done.SignalID, marconi.AckTerminal); err != nil {
		t.Fatal(err)
	}
	if _, open := e.mesh.Obligation(done.SignalID); open {
		t.Fatal("terminal ack left the obligation open")
	}
	late := send()
	waitFor(t, "one ack SLA violation counted", func() bool {
		return e.mesh.MetricSum("marconi_obligation_sla_violation_total", map[string]string{"sla": "ack"}) == 1
	})
	if ob, open := e.mesh.Obligation(late.SignalID); !open || ob.DurabilityStatus != marconi.DurabilityQueued {
		t.Fatalf("late obligation: %+v %v", ob, open)
	}
	if n := e.mesh.MetricSum("marconi_signals_acked_total", nil); n != 2 {
		t.Fatalf("acked %v, want 2", n)
	}
	if n := e.mesh.MetricSum("marconi_obligations_open", nil); n != 1 {
		t.Fatalf("open %v, want 1", n)
	}
}

// TestPendingCall: prism_signals_pending drains in order.
func TestPendingCall(t *testing.T) {
	e := newEnv(t, "t-pending", marconi.Options{})
	var ids []string
	for range 3 {
		ids = append(ids, e.send(t, "nobody").SignalID)
	}
	got, err := e.api.Pending(t.Context(), marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: "nobody"})
	if err != nil || len(got) != 3 {
		t.Fatalf("pending: %d %v", len(got), err)
	}
	for i := range ids {
		if got[i].SignalID != ids[i] {
			t.Fatalf("pending order: %v vs %v", got, ids)
		}
	}
	if again, _ := e.api.Pending(t.Context(), marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: "nobody"}); len(again) != 0 {
		t.Fatal("pending not drained")
	}
}

func TestFlags(t *testing.T) {
	env := map[string]string{"MARCONI_ROUTING_TABLE_READS": "on", "MARCONI_REGISTRATION_TABLE_READS": "1", "MARCONI_HOT_PATH_SEND": "true", "MARCONI_VERB_SIGNAL": "yes"}
	f := marconi.FlagsFromEnv(func(k string) string { return env[k] }, []string{"MARCONI_VERB_SIGNAL=yes", "PATH=/bin"})
	if !f.RoutingTableReads || !f.HotPathSend || f.AuditQueueWrite || !f.Verbs["SIGNAL"] {
		t.Fatalf("flags %+v", f)
	}
	if err := f.Validate(); err == nil {
		t.Fatal("hot path send without the archiver primary accepted")
	}
	if err := (marconi.Flags{}).Validate(); err != nil {
		t.Fatalf("all-off flags (spec 002 §8 defaults) refused: %v", err)
	}
	if err := marconi.ShippedFlags().Validate(); err != nil {
		t.Fatalf("shipped flags refused: %v", err)
	}
	f = marconi.ShippedFlags()
	f.CrossInstanceForward = true
	if err := f.Validate(); err == nil {
		t.Fatal("cross-instance forward accepted")
	}
}

func isCode(err error, code string) bool {
	var e *marconi.APIError
	return errors.As(err, &e) && e.Code == code
}

// waitFor polls cond every 5 ms for up to 5 s and fails the test naming
// what did not happen.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.Within(t.Context(), 5*time.Second, 5*time.Millisecond, func(context.Context) error {
		if !cond() {
			return fmt.Errorf("no %s", what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// spec9Metrics are the hot-path, invalidator and obligation metrics of
// spec 002 §9 (the audit ones belong to package audit).
var spec9Metrics = []string{
	"marconi_signals_received_total", "marconi_signals_delivered_total", "marconi_signals_acked_total",
	"marconi_signal_send_duration_seconds", "marconi_routing_table_size", "marconi_routing_cache_hits_total",
	"marconi_routing_cache_misses_total", "marconi_invalidator_calls_total", "marconi_invalidator_errors_total",
	"marconi_obligations_open", "marconi_obligations_durable_total", "marconi_obligations_degraded_not_durable_total",
	"marconi_obligation_sla_violation_total",
}

// TestSpec9Metrics: every §9 metric of the mesh is exported once the
// events it counts happened (a clock jump drives the SLA sweeper).
func TestSpec9Metrics(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := newEnv(t, "t-metrics", marconi.Options{Now: now, SweepEvery: 10 * time.Millisecond})
	e.register(t, "s1", "hank")
	e.send(t, "hank")   // hit, queued
	e.send(t, "nobody") // miss
	res, err := e.api.Send(t.Context(), marconi.SendRequest{Tenant: "acme", Project: "p1", Recipient: "hank", Kind: "task",
		Obligation: &marconi.ObligationRequest{Kind: "review", AckSLASeconds: 1, TerminalSLASeconds: 2}})
	if err != nil {
		t.Fatal(err)
	}
	// The Redis Stream writer's news (no writer here): the obligation is
	// durable once its entry is in the stream (§4.1).
	e.mesh.AuditAppended([]audit.Entry{{Envelope: audit.Envelope{SignalID: res.SignalID, TenantID: "acme", Obligation: &audit.Obligation{Kind: "review"}}}})
	if err := e.api.Ack(t.Context(), res.SignalID, marconi.AckReceived); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Heartbeat(t.Context(), "acme", "p1", "s1"); err != nil {
		t.Fatal(err)
	}
	_ = e.mesh.Invalidator().OnHeartbeat("acme", "p1", "ghost", time.Now()) // a hook error
	skew.Store(int64(5 * time.Second))
	waitFor(t, "an SLA violation counted", func() bool { return e.mesh.MetricSum("marconi_obligation_sla_violation_total", nil) > 0 })
	degraded := newEnv(t, "t-metrics-2", marconi.Options{Flags: marconi.Flags{RoutingTableReads: true, RegistrationTableReads: true, PGArchiverPrimary: true, ObligationsMemoryPrimary: true}})
	if _, err := degraded.api.Send(t.Context(), marconi.SendRequest{Tenant: "acme", Project: "p1", Recipient: "x", Kind: "task",
		Obligation: &marconi.ObligationRequest{Kind: "review"}}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range append(e.mesh.MetricNames(), degraded.mesh.MetricNames()...) {
		names[n] = true
	}
	for _, n := range spec9Metrics {
		if !names[n] {
			t.Errorf("§9 metric %s not exported", n)
		}
	}
	if n := degraded.mesh.MetricSum("marconi_obligations_degraded_not_durable_total", nil); n != 1 {
		t.Errorf("audit queue off: degraded obligations %v, want 1", n)
	}
}

// TestMasterSignalOutlivesItsMaster: a signal sent to the master alias and
// pushed into the master's socket queue, whose session then ends before
// the socket wrote it, goes back to the master alias's pending queue
// (§3.5, per recipient) and reaches the project's next master — never the
// next session of the old master's identity, which is not master.
// (A full-profile marconi-cache-lifecycle run saw one such signal land on
// the identity's next session: its queue was put back under the session's
// identity instead of the recipient the signal was addressed to.)
func TestMasterSignalOutlivesItsMaster(t *testing.T) {
	e := newEnv(t, "t-master-putback", marconi.Options{})
	ctx := t.Context()
	stuckMaster(t, e)
	if err := e.api.Deregister(ctx, "acme", "p1", "m1"); err != nil {
		t.Fatal(err)
	}
	master := marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: marconi.MasterIdentity}
	boss := marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: "boss"}
	left := e.mesh.PendingDepth(master) + e.mesh.PendingDepth(boss)
	if left == 0 {
		t.Fatal("premise: m1's queue held nothing when it ended (its writer kept up with the sends)")
	}

	// The old master's identity comes back (not master), then w1 claims.
	e.register(t, "m2", "boss")
	e.dial(t, "m2")
	e.dial(t, "w1")
	if err := e.api.ClaimMaster(ctx, "acme", "p1", "w1"); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	timeout := time.After(10 * time.Second)
	for got["w1"]+got["m2"] < left {
		select {
		case d := <-e.deliver:
			got[d.SessionID]++
		case <-timeout:
			t.Fatalf("%d of %d signals put back reached a socket: %v", got["w1"]+got["m2"], left, got)
		}
	}
	if got["m2"] > 0 {
		t.Fatalf("%d of %d master-alias signals left in m1's queue went to m2, the next session of m1's identity, which is not master (w1 got %d)", got["m2"], left, got["w1"])
	}
}

// TestMasterSignalReachesTheSittingMaster: the master flips from m1 to w1
// (attached) while m1's socket still holds master-alias signals; when m1
// then ends, what its socket had not written goes back to the alias and on
// to w1 at once — not left in the alias's queue until w1's next connect
// or the next flip, where it could expire.
func TestMasterSignalReachesTheSittingMaster(t *testing.T) {
	e := newEnv(t, "t-master-sitting", marconi.Options{})
	ctx := t.Context()
	stuckMaster(t, e)
	e.dial(t, "w1")
	if err := e.api.ClaimMaster(ctx, "acme", "p1", "w1"); err != nil {
		t.Fatal(err)
	}
	if err := e.api.Deregister(ctx, "acme", "p1", "m1"); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-e.deliver:
		if d.SessionID != "w1" {
			t.Fatalf("a master-alias signal put back from m1 reached %s, want the sitting master w1", d.SessionID)
		}
	case <-time.After(10 * time.Second):
		master := marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: marconi.MasterIdentity}
		t.Fatalf("no master-alias signal put back from m1 reached the sitting master w1 in 10 s (%d waiting in the alias's queue)", e.mesh.PendingDepth(master))
	}
}

// stuckMaster registers m1 (identity boss, made master of acme/p1) and w1
// (worker), attaches a socket for m1 that never reads, and pushes 64
// master-alias signals of 512 KiB to m1: once the loopback buffers are
// full, the mesh's writer blocks and the later pushes stay in m1's queue.
func stuckMaster(t *testing.T, e *env) {
	t.Helper()
	ctx := t.Context()
	e.register(t, "m1", "boss")
	e.register(t, "w1", "worker")
	if err := e.api.ClaimMaster(ctx, "acme", "p1", "m1"); err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(e.srv.URL, "http", "ws", 1) + marconi.PathWebSocket + "?session_id=m1"
	stuck, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stuck.CloseNow() })
	payload := make([]byte, 512<<10)
	for i := range 64 {
		res, err := e.api.Send(ctx, marconi.SendRequest{Tenant: "acme", Project: "p1", Sender: "tester", Recipient: marconi.MasterIdentity, Kind: "note", Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != audit.OutcomePushed || res.SessionID != "m1" {
			t.Fatalf("send %d: %s to %q, want pushed to m1", i, res.Outcome, res.SessionID)
		}
	}
}

// TestPutBackToIdentityMutant: MutantPutBackToIdentity is the pre-fix
// put-back, and does what TestMasterSignalOutlivesItsMaster forbids: the
// old master's unwritten master-alias signals go back under its identity
// and reach m2, the identity's next session, which is not master.
func TestPutBackToIdentityMutant(t *testing.T) {
	e := newEnv(t, "t-master-putback-mutant", marconi.Options{Mutant: marconi.MutantPutBackToIdentity})
	ctx := t.Context()
	stuckMaster(t, e)
	if err := e.api.Deregister(ctx, "acme", "p1", "m1"); err != nil {
		t.Fatal(err)
	}
	boss := marconi.RouteKey{Tenant: "acme", Project: "p1", Identity: "boss"}
	if e.mesh.PendingDepth(boss) == 0 {
		t.Fatal("premise: m1's queue held nothing when it ended (its writer kept up with the sends)")
	}
	e.register(t, "m2", "boss")
	e.dial(t, "m2")
	select {
	case d := <-e.deliver:
		if d.SessionID != "m2" {
			t.Fatalf("the mutant's put-back reached %s, want m2 (the old master's identity)", d.SessionID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no put-back signal reached m2 in 10 s")
	}
}
