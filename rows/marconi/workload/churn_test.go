package workload

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/traffic"
)

// slowChurn runs churnOf(ttl) for d against slowMeshEnv, and returns its
// stats and its recorder.
func slowChurn(t *testing.T, prefix string, ttl time.Duration, slow func(*http.Request) bool, delay, d time.Duration) (ChurnStats, *MeshRecorder) {
	t.Helper()
	api, url := slowMeshEnv(t, prefix, ttl, slow, delay)
	rec := NewMeshRecorder(traffic.NewClock(), api)
	recv := NewMeshReceivers(rec, url)
	defer recv.Close()
	st, err := churnOf(ttl).Run(t.Context(), rec, recv, d)
	if err != nil {
		t.Fatal(err)
	}
	return st, rec
}

// slowMeshEnv starts a real mesh with a short SessionStore TTL whose HTTP
// handler holds every request slow picks for delay before serving it: a
// control call the runner made slow.
func slowMeshEnv(t *testing.T, prefix string, ttl time.Duration, slow func(*http.Request) bool, delay time.Duration) (*marconi.Client, string) {
	t.Helper()
	o := marconi.Options{Pool: clienttest.Standalone(t, fixturestest.Get(t, server)), Sink: marconi.NewMemorySink(), Flags: marconi.ShippedFlags()}
	o.Store.Prefix, o.Store.TTL = prefix, ttl
	mesh, err := marconi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mesh.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := mesh.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow(r) {
			time.Sleep(delay) // a duration: the slowness is the fault under test
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { _ = mesh.Close(); srv.Close() })
	return &marconi.Client{BaseURL: srv.URL}, srv.URL
}

func churnOf(ttl time.Duration) MeshChurn {
	return MeshChurn{Tenant: "acme", Project: "churn", Identities: 4, ChurnEvery: 40 * time.Millisecond, Dark: 120 * time.Millisecond,
		HeartbeatEvery: 100 * time.Millisecond, MasterEvery: 2, TTL: ttl, Rand: rand.New(rand.NewPCG(3, 4))}
}

func heartbeatErrors(errs []string) []string {
	var out []string
	for _, e := range errs {
		if strings.Contains(e, "heartbeat") {
			out = append(out, e)
		}
	}
	return out
}

// A churn loop slowed past the TTL (every master claim and flip takes 4 s
// against a 3 s TTL) must not starve the heartbeats: each identity renews
// on its own, so no session the churn keeps live lapses and none is late.
// With the heartbeats in the churn loop's select (the old loop) every flip
// held every heartbeat for 4 s and the sessions lapsed: heartbeats were
// refused (a 1.2 s flip against a 1 s TTL: 9 refused). The margins are
// wide: with a 1 s TTL a heavily loaded runner itself stalled the
// heartbeats for 1.1 s — which the run names late, as it should.
func TestMeshChurnHeartbeatsBesideSlowChurn(t *testing.T) {
	const ttl = 3 * time.Second
	st, rec := slowChurn(t, "tt-churn-slow", ttl, func(r *http.Request) bool {
		return r.URL.Path == marconi.PathClaim || r.URL.Path == marconi.PathHandoff
	}, 4*time.Second, 5*time.Second)
	if st.MasterFlips == 0 || st.Heartbeats == 0 {
		t.Fatalf("the churn did not run: %+v", st)
	}
	if len(st.Late) > 0 || st.MaxRenewGap >= ttl {
		t.Errorf("heartbeats starved by a slow churn loop: max renewal gap %v (TTL %v), late %v", st.MaxRenewGap, ttl, st.Late)
	}
	if errs := heartbeatErrors(rec.History().ControlErrors); len(errs) > 0 {
		t.Errorf("%d heartbeats refused: %v", len(errs), errs[:min(3, len(errs))])
	}
}

// A mesh slow to answer heartbeats (each held 700 ms against a 1 s TTL,
// one renewal's start to the next one's answer 1.4 s) while the runner
// issues them on time names no session late: the product's latency is not
// the runner's: counting it would let a mesh made slow by a lock held
// across a Valkey round trip void the run and hide its own failure.
func TestMeshChurnSlowHeartbeatsNotLate(t *testing.T) {
	const ttl = time.Second
	st, rec := slowChurn(t, "tt-churn-late", ttl, func(r *http.Request) bool {
		return strings.HasSuffix(r.URL.Path, "/heartbeat")
	}, 700*time.Millisecond, 2500*time.Millisecond)
	if st.Heartbeats == 0 {
		t.Fatalf("no heartbeat answered: %+v, control errors %v", st, rec.History().ControlErrors)
	}
	if len(st.Late) > 0 {
		t.Errorf("heartbeats the mesh was slow to answer named the runner's: max runner gap %v, late %v", st.MaxRenewGap, st.Late)
	}
}

func newLives(st *ChurnStats) *churnLives {
	return &churnLives{ttl: time.Second, live: map[string]marconi.Session{}, free: map[string]time.Duration{},
		acked: map[string]time.Duration{}, refused: map[string]bool{}, st: st}
}

// The runner's gap is start to start less the wait on the product: a
// product that answers each heartbeat 900 ms after the runner issued it
// (every 1 s, TTL 1 s) leaves nothing late, though the store's gap may
// reach 1.9 s; a runner that issues one 1.2 s after the previous answer is
// late, and names that session.
func TestChurnLivesRunnerGap(t *testing.T) {
	s := marconi.Session{SessionID: "rcv00-1"}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var slow ChurnStats
	l := newLives(&slow)
	l.start("rcv00", s, ms(10), ms(20))
	for i := 1; i <= 4; i++ { // issued on time, each answered 900 ms later
		l.beat(s, ms(1000*i), ms(1000*i+900))
	}
	l.end("rcv00", ms(5000))
	if len(slow.Late) > 0 || slow.MaxRenewGap >= time.Second {
		t.Errorf("slow product: late %v, max runner gap %v, want none under the 1 s TTL", slow.Late, slow.MaxRenewGap)
	}
	var late ChurnStats
	l = newLives(&late)
	l.start("rcv00", s, ms(10), ms(20))
	l.beat(s, ms(300), ms(350))
	l.beat(s, ms(1550), ms(1600)) // 1.2 s after the runner was free
	l.end("rcv00", ms(1700))
	if got := late.LateSessions(); len(got) != 1 || got[0] != s.SessionID || late.MaxRenewGap != ms(1200) {
		t.Errorf("late runner: late %v (sessions %v), max gap %v, want %s at 1.2s", late.Late, got, late.MaxRenewGap, s.SessionID)
	}
}

// A heartbeat refused though the runner issued it within the TTL is the
// mesh's failure: no later gap of that session may make it late (which
// would excuse the refusal); one the runner issued past the TTL is late.
func TestChurnLivesRefusal(t *testing.T) {
	s := marconi.Session{SessionID: "rcv00-1"}
	for _, c := range []struct {
		name     string
		refuseAt time.Duration
		late     bool
	}{{"in time", 300 * time.Millisecond, false}, {"past the TTL", 1200 * time.Millisecond, true}} {
		var st ChurnStats
		l := newLives(&st)
		l.start("rcv00", s, 10*time.Millisecond, 10*time.Millisecond)
		l.beat(s, 100*time.Millisecond, 150*time.Millisecond)
		l.refuse(s, 150*time.Millisecond+c.refuseAt)
		l.end("rcv00", time.Minute) // the run's end, long after
		if got := len(st.Late) > 0; got != c.late {
			t.Errorf("%s: late %v, want %v (%v)", c.name, got, c.late, st.Late)
		}
	}
}
