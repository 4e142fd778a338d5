package marconi_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// TestObligationDurability: an obligation is queued until the Stream
// writer appended it (durable), degraded when the queue loses it; a new
// instance rehydrates the durable open one from the stream, not the closed
// one nor the lost one (§3.4, §4.1, §6).
func TestObligationDurability(t *testing.T) {
	topo := standalone(t)
	ctx := t.Context()
	tenant := "ob-" + strconv.FormatInt(time.Now().UnixNano(), 36) // the server may outlive one run
	p, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	var cur atomic.Pointer[marconi.Mesh]
	q, err := audit.NewQueue(audit.QueueOptions{OnLost: func(e audit.Entry, r audit.DropReason) { cur.Load().AuditLost(e, r) }})
	if err != nil {
		t.Fatal(err)
	}
	w, err := audit.NewWriter(audit.WriterOptions{Pool: p, Queue: q, OnAppended: func(es []audit.Entry) { cur.Load().AuditAppended(es) }})
	if err != nil {
		t.Fatal(err)
	}
	start := func(sink audit.Sink) *marconi.Mesh {
		m, err := marconi.New(marconi.Options{Pool: p, Sink: sink, Flags: marconi.ShippedFlags(), Store: marconi.StoreOptions{Prefix: "t-ob"}, ObligationTenants: []string{tenant}})
		if err != nil {
			t.Fatal(err)
		}
		cur.Store(m)
		if _, err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	a := start(q)
	wctx, stopWriter := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()
	send := func(m *marconi.Mesh) string {
		res, err := m.Send(ctx, marconi.SendRequest{Tenant: tenant, Project: "p1", Recipient: "x", Kind: "task",
			Obligation: &marconi.ObligationRequest{Kind: "review", AckSLASeconds: 60, TerminalSLASeconds: 60}})
		if err != nil {
			t.Fatal(err)
		}
		return res.SignalID
	}
	status := func(m *marconi.Mesh, id string) string { s, _ := m.ObligationStatus(id); return s }
	open, closed := send(a), send(a)
	if err := a.Ack(closed, marconi.AckTerminal); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two entries and the terminal ack's handoff in the stream, both durable", func() bool {
		es, err := audit.ReadStream(ctx, p, tenant)
		return err == nil && len(es) == 3 && status(a, open) == marconi.DurabilityDurable && status(a, closed) == marconi.DurabilityDurable
	})
	stopWriter()
	<-done
	lost := send(a)
	if s := status(a, lost); s != marconi.DurabilityQueued {
		t.Fatalf("lost before the writer: %q, want queued", s)
	}
	_ = a.Close()
	q.Close() // the process exit: the queued entry is lost
	if s := status(a, lost); s != marconi.DurabilityNotDurable {
		t.Fatalf("lost at shutdown: %q, want %s", s, marconi.DurabilityNotDurable)
	}
	if d, g := a.MetricSum("marconi_obligations_durable_total", nil), a.MetricSum("marconi_obligations_degraded_not_durable_total", nil); d != 2 || g != 1 {
		t.Fatalf("durable %v degraded %v, want 2 and 1", d, g)
	}
	b := start(marconi.NewMemorySink())
	if _, ok := b.Obligation(open); !ok {
		t.Fatal("the durable open obligation was not rehydrated")
	}
	if _, ok := b.Obligation(closed); ok {
		t.Fatal("the closed obligation came back")
	}
	if err := b.Ack(lost, marconi.AckReceived); !errors.Is(err, marconi.ErrUnknownSignal) {
		t.Fatalf("ack of the lost obligation: %v, want unknown", err)
	}
	if n := b.MetricSum("marconi_obligations_open", nil); n != 1 {
		t.Fatalf("open after rehydration %v, want 1", n)
	}
}
