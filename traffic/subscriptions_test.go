package traffic

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/pubsub"
	"github.com/slotgate/slotgate/internal/wait"
)

// The subscriptions recorder around a real relay on the standalone node:
// publishes numbered per publisher, every delivery filed under its
// subscription (or its alias), spans from confirmation to unsubscribe,
// other runs' messages set aside, and each failure's kind.
func TestSubscriptionsRecorder(t *testing.T) {
	topo := standalone(t)
	ctx := t.Context()
	opts := client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()}
	pool, err := client.NewPool(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sub, err := client.NewSubscriber(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	scenario := history.NewRecorder("subs", 1, nil)
	sctx := history.With(ctx, scenario)
	rec := NewSubscriptions(pubsub.New(sub, pool, pubsub.Options{}), scenario.Clock())
	rec.DrainQuiet(200 * time.Millisecond)

	a, b, c := pubsub.ChannelTopic("tt", "a"), pubsub.ChannelTopic("tt", "b"), pubsub.ChannelTopic("tt", "c")
	rec.Alias(b, a) // b's deliveries are filed under a
	if err := rec.Subscribe(ctx, a, b, c); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rec.Publish(sctx, 0, TopicTarget(a))
		rec.Publish(sctx, 1, TopicTarget(b))
	}
	// Another recorder's message and a payload in no known format.
	for _, p := range []string{"r0:7:1", "not-a-payload"} {
		if _, err := pool.Do(ctx, client.NewCmd("SPUBLISH", []string{c}, p)); err != nil {
			t.Fatal(err)
		}
	}
	if waiting := rec.WaitFresh(ctx, 0, 5*time.Second, a); len(waiting) != 0 {
		t.Fatalf("no fresh delivery on %v", waiting)
	}
	// Every delivery the test counts has arrived before c is dropped
	// (observed, not slept: a loaded machine delivers late).
	arrived := func() bool {
		rec.mu.Lock()
		unparsed := 0
		for _, d := range rec.deliveries {
			if d.Publisher == -1 {
				unparsed++
			}
		}
		n := len(rec.deliveries)
		rec.mu.Unlock()
		return n >= 7 && unparsed >= 1 && rec.Foreign() >= 1
	}
	if err := wait.Within(ctx, 10*time.Second, 2*time.Millisecond, func(context.Context) error {
		if !arrived() {
			return errors.New("7 deliveries, one unparsed and one foreign, not all arrived")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Unsubscribe(ctx, c); err != nil {
		t.Fatal(err)
	}
	rec.Hold(errors.New("read tcp: connection reset by peer"), false, "buzz:tt:channel:z")
	done, cancel := context.WithCancel(sctx)
	cancel()
	rec.publish(done, done, 2, TopicTarget(a)) // cut short by the scenario's stop
	short, cancel2 := context.WithTimeout(sctx, time.Nanosecond)
	defer cancel2()
	<-short.Done()
	rec.publish(short, ctx, 3, TopicTarget(a)) // timed out while the run goes on
	if n := rec.Acknowledged(); n != 6 {
		t.Errorf("Acknowledged = %d, want 6", n)
	}
	h := rec.History()

	if len(h.Publishes) != 8 {
		t.Fatalf("%d publishes recorded, want 8", len(h.Publishes))
	}
	seqs := map[int][]int64{}
	for _, p := range h.Publishes {
		seqs[p.Publisher] = append(seqs[p.Publisher], p.Seq)
		if p.Done < p.Sent {
			t.Errorf("publish %+v done before sent", p)
		}
	}
	if !slices.Equal(seqs[0], []int64{1, 2, 3}) || !slices.Equal(seqs[1], []int64{1, 2, 3}) {
		t.Errorf("sequence numbers per publisher: %v", seqs)
	}
	if p := h.Publishes[6]; p.ErrKind != ErrKindStopped || p.Err == "" {
		t.Errorf("publish cut by the stop recorded as %+v, want kind %q", p, ErrKindStopped)
	}
	if p := h.Publishes[7]; p.ErrKind != "network" {
		t.Errorf("timed-out publish recorded as %+v, want kind network", p)
	}
	if p := h.Publishes[0]; p.Channel != a || p.Sub != a || p.Receivers != 1 || p.ErrKind != "" {
		t.Errorf("publish to a recorded as %+v", p)
	}

	var fromA, fromB, unknown int
	for _, d := range h.Deliveries {
		switch {
		case d.Publisher == -1:
			unknown++
			if d.Sub != c {
				t.Errorf("unparsed delivery filed under %q", d.Sub)
			}
		case d.Channel == a:
			fromA++
		case d.Channel == b:
			fromB++
			if d.Sub != a {
				t.Errorf("delivery on b filed under %q, want its alias %q", d.Sub, a)
			}
		}
	}
	if fromA != 3 || fromB != 3 || unknown != 1 || len(h.Deliveries) != 7 {
		t.Errorf("deliveries: %d on a, %d on b, %d unparsed, %d in all; want 3, 3, 1, 7", fromA, fromB, unknown, len(h.Deliveries))
	}
	if n := rec.Foreign(); n != 1 {
		t.Errorf("Foreign = %d, want 1 (r0's message)", n)
	}

	spans := map[string]int{}
	for _, iv := range h.Held {
		spans[iv.Sub]++
		if iv.From <= iv.Requested { // held from the confirmation, after the request
			t.Errorf("span %+v held from its request, not its confirmation", iv)
		}
		switch iv.Sub {
		case c:
			if iv.To <= iv.From {
				t.Errorf("unsubscribed span %+v not ended after it began", iv)
			}
		default:
			if iv.To != 0 {
				t.Errorf("span %+v ended though never unsubscribed", iv)
			}
		}
	}
	if spans[a] != 1 || spans[b] != 1 || spans[c] != 1 || len(h.Held) != 3 {
		t.Errorf("held spans %+v, want one each for a, b, c", h.Held)
	}
	if len(h.SubscribeErrors) != 1 || h.SubscribeErrors[0].ErrKind != "network" {
		t.Errorf("subscribe errors %+v, want the failed hold", h.SubscribeErrors)
	}
	ops := scenario.Snapshot().Ops
	if len(ops) != 8 || ops[0].Kind != "spublish" || ops[0].Client != "publisher-0" || ops[0].Outcome != history.OK {
		t.Fatalf("scenario history has %d ops (%+v), want the 8 publishes", len(ops), ops)
	}
	if ops[6].Outcome != history.Unknown || ops[7].Outcome != history.Unknown || ops[7].Client != "publisher-3" {
		t.Errorf("cut-short publishes in the scenario history: %+v, %+v; want unknown", ops[6], ops[7])
	}
}
