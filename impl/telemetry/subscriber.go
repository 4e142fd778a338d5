package telemetry

import (
	"sync"

	"github.com/slotgate/slotgate/impl/client"
)

// Subscriber is a client.Subscriber whose deliveries and gaps are counted
// per channel as the consumer receives them.
type Subscriber struct {
	client.Subscriber
	m    *Metrics
	out  chan client.Message
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	err  error
}

// WrapSubscriber instruments s. Its Messages channel carries exactly what
// s's does, in order, each message counted before it is handed on.
func WrapSubscriber(s client.Subscriber, m *Metrics) *Subscriber {
	ts := &Subscriber{Subscriber: s, m: m, out: make(chan client.Message, cap(s.Messages())), done: make(chan struct{})}
	ts.wg.Add(1)
	go ts.forward()
	return ts
}

// forward is the only sender on, and so the only closer of, Messages: it
// closes it when the wrapped channel closes (as the unwrapped subscriber's
// consumer would see) or when Close stops it.
func (s *Subscriber) forward() {
	defer s.wg.Done()
	defer close(s.out)
	for msg := range s.Subscriber.Messages() {
		s.count(msg)
		select {
		case s.out <- msg:
		case <-s.done:
			return
		}
	}
}

func (s *Subscriber) count(msg client.Message) {
	name := msg.Channel
	if msg.Pattern != "" {
		name = msg.Pattern
	}
	switch msg.Kind {
	case client.MsgDropped, client.MsgResubscribed:
		s.m.gaps.WithLabelValues(name, string(msg.Kind)).Inc()
	default:
		s.m.messages.WithLabelValues(name, string(msg.Kind)).Inc()
	}
}

// Messages implements client.Subscriber.
func (s *Subscriber) Messages() <-chan client.Message { return s.out }

// Close implements client.Subscriber: it closes the wrapped subscriber and
// waits until Messages is closed.
func (s *Subscriber) Close() error {
	s.once.Do(func() {
		close(s.done)
		s.err = s.Subscriber.Close()
		s.wg.Wait()
	})
	return s.err
}
