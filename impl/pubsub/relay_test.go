package pubsub

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/internal/wait"
)

// fakeSub is a Subscriber whose SSubscribe fails the first failN calls
// after a drop with MOVED, as a stale slot map does after a migration.
type fakeSub struct {
	mu    sync.Mutex
	calls map[string]int
	failN int
	out   chan client.Message
	once  sync.Once
}

func newFake(failN int) *fakeSub {
	return &fakeSub{calls: map[string]int{}, failN: failN, out: make(chan client.Message, 16)}
}

func (f *fakeSub) SSubscribe(_ context.Context, chs ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range chs {
		f.calls[c]++
		if f.calls[c] > 1 && f.calls[c] <= 1+f.failN {
			return &client.ServerError{Kind: client.KindMoved, Msg: "MOVED 1 127.0.0.1:1"}
		}
	}
	return nil
}
func (f *fakeSub) n(c string) int                                { f.mu.Lock(); defer f.mu.Unlock(); return f.calls[c] }
func (f *fakeSub) Subscribe(context.Context, ...string) error    { return nil }
func (f *fakeSub) PSubscribe(context.Context, ...string) error   { return nil }
func (f *fakeSub) Unsubscribe(context.Context, ...string) error  { return nil }
func (f *fakeSub) SUnsubscribe(context.Context, ...string) error { return nil }
func (f *fakeSub) PUnsubscribe(context.Context, ...string) error { return nil }
func (f *fakeSub) Messages() <-chan client.Message               { return f.out }
func (f *fakeSub) Backend() client.Backend                       { return client.BackendGoRedis }
func (f *fakeSub) Close() error                                  { f.once.Do(func() { close(f.out) }); return nil }

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.Within(t.Context(), 2*time.Second, time.Millisecond, func(context.Context) error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s: %v", what, err)
	}
}

func TestRelayRecoversDroppedTopic(t *testing.T) {
	const topic = "buzz:a:global"
	f := newFake(2)
	r := New(f, nil, Options{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	defer r.Close()
	if err := r.Subscribe(t.Context(), topic); err != nil {
		t.Fatal(err)
	}
	f.out <- client.Message{Kind: client.MsgResubscribed, Channel: topic} // duplicate confirmation: harmless
	f.out <- client.Message{Kind: client.MsgDropped, Channel: topic, Payload: "sunsubscribe"}
	waitUntil(t, "recovery", func() bool { return f.n(topic) == 4 && r.Health().Healthy })
	var kinds []EventKind
	for _, e := range r.Events() {
		kinds = append(kinds, e.Kind)
	}
	want := []EventKind{EventSubscribed, EventResubscribed, EventDropped, EventRetryFailed, EventRetryFailed, EventRecovered}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if !r.Health().Since.After(r.Events()[2].At) {
		t.Error("Health.Since not updated by the recovery")
	}
}

func TestSubscribeGivesUpOnFinalRefusal(t *testing.T) {
	if retryable(&client.ServerError{Kind: client.KindOther, Msg: "NOPERM"}) || retryable(client.ErrClosed) {
		t.Error("a final refusal is retried")
	}
	if !retryable(errors.New("connection reset")) || !retryable(&client.ServerError{Kind: client.KindMoved}) {
		t.Error("a reconfiguration error is not retried")
	}
}

// TestRelayRoutes: the relay hands each message to the subscription the
// server delivered it for; each routing mutant hands it elsewhere.
func TestRelayRoutes(t *testing.T) {
	const a, b = "buzz:alpha:channel:1", "buzz:alpha:channel:2"
	type got struct{ sub, topic string }
	run := func(m Mutant, msgs ...client.Message) []got {
		f := newFake(0)
		r := New(f, nil, Options{Mutant: m})
		defer r.Close()
		if err := r.Subscribe(t.Context(), a, b); err != nil {
			t.Fatal(err)
		}
		if err := r.SubscribePatterns(t.Context(), CacheInvalidatePattern, ConnControlPattern); err != nil {
			t.Fatal(err)
		}
		if m == MutantDuplicateHandler {
			_ = r.Subscribe(t.Context(), b)
		}
		// Then a message for nobody (stray under every mutant): the
		// receive loop takes messages one at a time, so once it is
		// counted every delivery of the others is in Deliveries.
		for _, msg := range append(msgs[:len(msgs):len(msgs)], client.Message{Kind: client.MsgSMessage, Channel: "buzz:nobody:channel:0", Payload: "end"}) {
			f.out <- msg
		}
		var out []got
		waitUntil(t, "deliveries and the end marker counted", func() bool {
			return r.Stats().Delivered+r.Stats().Stray == int64(len(msgs)+1)
		})
		for len(r.Deliveries()) > 0 {
			d := <-r.Deliveries()
			out = append(out, got{d.Sub, d.Topic})
		}
		return out
	}
	msgs := []client.Message{
		{Kind: client.MsgSMessage, Channel: b, Payload: "1"},
		{Kind: client.MsgPMessage, Channel: ConnControlChannel("alpha"), Pattern: ConnControlPattern, Payload: "2"},
	}
	if d := run(MutantNone, msgs...); len(d) != 2 || d[0] != (got{b, b}) || d[1] != (got{ConnControlPattern, ConnControlChannel("alpha")}) {
		t.Errorf("relay as designed: %v", d)
	}
	if d := run(MutantCommunityRoute, msgs...); len(d) != 2 || d[0] != (got{a, b}) {
		t.Errorf("community-route: %v, want %s's message handed to %s", d, b, a)
	}
	if d := run(MutantGreedyPattern, msgs...); len(d) != 3 {
		t.Errorf("greedy-pattern: %v, want the conn-control message also handed to the cache-invalidate pattern", d)
	}
	if d := run(MutantDuplicateHandler, msgs...); len(d) != 3 {
		t.Errorf("duplicate-handler: %v, want %s's message twice", d, b)
	}
}
