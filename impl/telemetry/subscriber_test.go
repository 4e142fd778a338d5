package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// closingSubscriber is a client.Subscriber whose Messages channel the test
// closes, as a real subscriber's closes when it stops on its own. It stands
// in for no server: only the wrapper's forwarding is under test.
type closingSubscriber struct {
	client.Subscriber
	ch chan client.Message
}

func (s closingSubscriber) Messages() <-chan client.Message { return s.ch }
func (s closingSubscriber) Close() error                    { return nil }

// The wrapped Messages channel closes when the underlying one does, so a
// consumer ranging over it ends as it would unwrapped.
func TestSubscriberClosesWhenUnderlyingCloses(t *testing.T) {
	inner := closingSubscriber{ch: make(chan client.Message, 1)}
	s := WrapSubscriber(inner, New(Options{}))
	inner.ch <- client.Message{Kind: client.MsgMessage, Channel: "c", Payload: "x"}
	close(inner.ch)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n := 0
	for {
		select {
		case _, ok := <-s.Messages():
			if !ok {
				if n != 1 {
					t.Fatalf("forwarded %d messages, want 1", n)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			n++
		case <-ctx.Done():
			t.Fatal("Messages stayed open after the wrapped subscriber's channel closed")
		}
	}
}
