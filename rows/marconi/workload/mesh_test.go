package workload

import (
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/impl/client/clienttest"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/traffic"
)

// meshEnv starts a real Marconi mesh (its HTTP handler on a local socket)
// over the shared standalone node, under its own key prefix.
func meshEnv(t *testing.T, prefix string) (*marconi.Client, string) {
	t.Helper()
	p := clienttest.Standalone(t, fixturestest.Get(t, server))
	o := marconi.Options{Pool: p, Sink: marconi.NewMemorySink(), Flags: marconi.ShippedFlags()}
	o.Store.Prefix = prefix
	mesh, err := marconi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mesh.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mesh.Handler())
	t.Cleanup(func() { _ = mesh.Close(); srv.Close() })
	return &marconi.Client{BaseURL: srv.URL}, srv.URL
}

// The mesh recorder against a real mesh: each send with its 200, outcome
// and resolved session; each delivery with its session; sessions' lives
// from the 200s; master flips; failed control calls; latencies.
func TestMeshRecorder(t *testing.T) {
	api, url := meshEnv(t, "tt-mesh")
	ctx := t.Context()
	rec := NewMeshRecorder(traffic.NewClock(), api)
	recv := NewMeshReceivers(rec, url)
	defer recv.Close()

	alice := marconi.Session{SessionID: "s1", Tenant: "acme", Project: "p1", Identity: "alice"}
	bob := marconi.Session{SessionID: "s2", Tenant: "acme", Project: "p1", Identity: "bob"}
	for _, s := range []marconi.Session{alice, bob, alice} { // alice twice: one life
		if _, err := rec.Register(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := recv.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}

	burst := MeshBurst{Recipients: []marconi.RouteKey{{Tenant: "acme", Project: "p1", Identity: "alice"}}, Senders: 3, PerSender: 4, Kind: "note", Rand: rand.New(rand.NewPCG(1, 1))}
	burst.Run(ctx, rec)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if missing := AwaitDeliveries(wctx, rec, string(audit.OutcomePushed)); missing != 0 {
		t.Fatalf("%d pushed sends never delivered", missing)
	}
	if _, err := rec.Send(ctx, marconi.SendRequest{Tenant: "acme", Project: "p1", Sender: "x", Recipient: "bob", Kind: "note"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Send(ctx, marconi.SendRequest{Tenant: "acme", Project: "p1", Sender: "x", Recipient: "nobody", Kind: "note"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Send(ctx, marconi.SendRequest{Project: "p1", Sender: "x", Recipient: "bob", Kind: "note"}); err == nil {
		t.Fatal("a send without a tenant was accepted")
	}
	if err := rec.Master(ctx, "acme", "p1", "", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Master(ctx, "acme", "p1", "s1", "s2"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Master(ctx, "acme", "p1", "s1", "s1"); err == nil { // s1 no longer holds it
		t.Fatal("handoff from a non-master succeeded")
	}
	if at, err := rec.Heartbeat(ctx, alice); err != nil || at <= 0 {
		t.Fatalf("heartbeat = %v, %v", at, err)
	}
	if err := rec.Deregister(ctx, bob); err != nil {
		t.Fatal(err)
	}
	rec.Expired("s1", 40*time.Second, 50*time.Second)

	h := rec.History()
	if len(h.Sends) != 15 {
		t.Fatalf("%d sends recorded, want 15", len(h.Sends))
	}
	byID := map[string]int{}
	pushed := 0
	for i, s := range h.Sends {
		if s.Done < s.Start || s.Start <= 0 {
			t.Errorf("send %d spans %v..%v", i, s.Start, s.Done)
		}
		byID[s.SignalID] = i
		switch {
		case !s.OK():
		case s.Recipient == "acme/p1/alice":
			pushed++
			if s.Outcome != string(audit.OutcomePushed) || s.SessionID != "s1" || s.Err != "" {
				t.Errorf("send to attached alice recorded as %+v", s)
			}
		case s.Recipient == "acme/p1/bob":
			if s.Outcome != string(audit.OutcomeQueuedOffline) || s.SessionID != "s2" {
				t.Errorf("send to unattached bob recorded as %+v", s)
			}
		case s.Recipient == "acme/p1/nobody":
			if s.SessionID != "" {
				t.Errorf("send to nobody resolved %q", s.SessionID)
			}
		}
	}
	if pushed != 12 {
		t.Errorf("%d OK sends to alice, want 12", pushed)
	}
	bad := h.Sends[len(h.Sends)-1]
	if bad.OK() || bad.Status < 400 || bad.Status > 499 || bad.Err == "" {
		t.Errorf("refused send recorded as %+v, want its 4xx status and error", bad)
	}
	if len(h.Deliveries) != 12 {
		t.Errorf("%d deliveries, want 12", len(h.Deliveries))
	}
	for _, d := range h.Deliveries {
		i, ok := byID[d.SignalID]
		if !ok || d.SessionID != "s1" || d.At < h.Sends[i].Start {
			t.Errorf("delivery %+v: unknown signal, wrong session or before its send", d)
		}
	}
	if len(h.Sessions) != 2 {
		t.Fatalf("sessions %+v, want s1 and s2 once each", h.Sessions)
	}
	s1, s2 := h.Sessions[0], h.Sessions[1]
	if s1.SessionID != "s1" || s1.Recipient != "acme/p1/alice" || s1.Registered <= 0 || !s1.Expired || s1.DeregisterStart != 40*time.Second || s1.Ended != 50*time.Second {
		t.Errorf("alice's life recorded as %+v", s1)
	}
	if s2.SessionID != "s2" || s2.Expired || s2.DeregisterStart < s2.Registered || s2.Ended < s2.DeregisterStart {
		t.Errorf("bob's life recorded as %+v", s2)
	}
	if len(h.MasterChanges) != 2 || h.MasterChanges[0].SessionID != "s1" || h.MasterChanges[1].SessionID != "s2" ||
		h.MasterChanges[1].Project != "acme/p1" || h.MasterChanges[1].Ack < h.MasterChanges[1].Start {
		t.Errorf("master changes %+v, want s1 then s2 on acme/p1", h.MasterChanges)
	}
	if len(h.ControlErrors) != 1 || !strings.HasPrefix(h.ControlErrors[0], "master s1 at ") {
		t.Errorf("control errors %q, want the refused handoff", h.ControlErrors)
	}
	lat := rec.Latencies()
	if len(lat) != len(h.Sends) {
		t.Fatalf("%d latencies for %d sends", len(lat), len(h.Sends))
	}
	for i, l := range lat {
		if l != h.Sends[i].Done-h.Sends[i].Start {
			t.Errorf("latency %d = %v, send spans %v", i, l, h.Sends[i].Done-h.Sends[i].Start)
		}
	}
	// The history is the caller's copy.
	h.Sends[0].Status, h.Sessions[0].Ended = 999, 0
	if again := rec.History(); again.Sends[0].Status == 999 || again.Sessions[0].Ended == 0 {
		t.Fatal("History shares the recorder's slices")
	}
	if h.End < h.Sends[len(h.Sends)-1].Done {
		t.Errorf("history ends at %v before its last send", h.End)
	}
}

// A send that got no answer is recorded with status 0 and its error; a
// control call that failed is a control error.
func TestMeshRecorderUnreachable(t *testing.T) {
	rec := NewMeshRecorder(traffic.NewClock(), &marconi.Client{BaseURL: "http://127.0.0.1:1"})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := rec.Send(ctx, marconi.SendRequest{Tenant: "a", Project: "p", Recipient: "r"}); err == nil {
		t.Fatal("send to a closed port succeeded")
	}
	if _, err := rec.Register(ctx, marconi.Session{SessionID: "x", Tenant: "a", Project: "p", Identity: "r"}); err == nil {
		t.Fatal("register to a closed port succeeded")
	}
	h := rec.History()
	if len(h.Sends) != 1 || h.Sends[0].Status != 0 || h.Sends[0].Err == "" || h.Sends[0].OK() || h.Sends[0].Recipient != "a/p/r" {
		t.Fatalf("unanswered send recorded as %+v", h.Sends)
	}
	if len(h.Sessions) != 0 || len(h.ControlErrors) != 1 || !strings.HasPrefix(h.ControlErrors[0], "register x at ") {
		t.Fatalf("failed register: sessions %+v, control errors %q", h.Sessions, h.ControlErrors)
	}
}
