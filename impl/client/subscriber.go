package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// messageBuffer is the capacity of Subscriber.Messages.
const messageBuffer = 1024

// NewSubscriber builds the subscription client for o.Backend in o.Mode: its
// own connections, separate from any Pool (spec 000 §Client Architecture).
func NewSubscriber(ctx context.Context, o Options) (Subscriber, error) {
	o, err := o.normalised()
	if err != nil {
		return nil, err
	}
	if o.Mode == ModeSentinel {
		return nil, fmt.Errorf("subscriber in mode sentinel: the relay's subscriptions run on the cluster (spec 000 §Sharded pub/sub): %w", ErrBadOptions)
	}
	// Subscriptions are the primaries' (a sharded channel's owner).
	o.ReplicaReads = false
	switch o.Backend {
	case BackendGoRedis:
		return newGoRedisSubscriber(ctx, o)
	case BackendValkeyGo:
		return newValkeyGoSubscriber(ctx, o)
	}
	panic("unreachable: normalised validated Backend")
}

// Subscription kinds as the server names its confirmations.
const (
	confSubscribe    = "subscribe"
	confSSubscribe   = "ssubscribe"
	confPSubscribe   = "psubscribe"
	confUnsubscribe  = "unsubscribe"
	confSUnsubscribe = "sunsubscribe"
	confPUnsubscribe = "punsubscribe"
)

// subscribeKindOf maps an unsubscribe kind to the subscribe kind it undoes;
// any other kind maps to itself.
func subscribeKindOf(kind string) string {
	switch kind {
	case confUnsubscribe:
		return confSubscribe
	case confSUnsubscribe:
		return confSSubscribe
	case confPUnsubscribe:
		return confPSubscribe
	}
	return kind
}

// isUnsubscribeKind reports an unsubscribe confirmation kind.
func isUnsubscribeKind(kind string) bool { return subscribeKindOf(kind) != kind }

// subKey names one subscription: its subscribe kind and channel or pattern.
type subKey struct {
	kind string // confSubscribe, confSSubscribe or confPSubscribe
	name string
}

// notice builds a MsgDropped or MsgResubscribed message for k.
func (k subKey) notice(kind MessageKind, payload string) Message {
	m := Message{Kind: kind, Payload: payload}
	if k.kind == confPSubscribe {
		m.Pattern = k.name
	} else {
		m.Channel = k.name
	}
	return m
}

// isSubscribeCommand reports a command that changes pub/sub state.
func isSubscribeCommand(name string) bool {
	return strings.HasSuffix(strings.ToUpper(name), "SUBSCRIBE")
}

// hub is the part of a Subscriber both backends share: the Messages channel
// and an orderly shutdown. Every goroutine that may send on out is counted
// in wg and gives up sending once done is closed, so Close can close out.
type hub struct {
	out       chan Message
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once

	mu     sync.Mutex // guards closed, so spawn never races wg.Wait
	closed bool
}

// spawn runs f in a goroutine counted in wg, unless Close has begun.
func (h *hub) spawn(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

func newHub() *hub {
	return &hub{out: make(chan Message, messageBuffer), done: make(chan struct{})}
}

// emit delivers m, blocking while the buffer is full; it reports false when
// the subscriber closed first.
func (h *hub) emit(m Message) bool {
	select {
	case h.out <- m:
		return true
	case <-h.done:
		return false
	}
}

// closing reports whether Close has begun.
func (h *hub) closing() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// shutdown stops the senders, runs release (which must unblock every
// goroutine counted in wg), waits for them and closes out. Idempotent; the
// first call's release error is returned by the first call only.
func (h *hub) shutdown(release func() error) error {
	var err error
	h.closeOnce.Do(func() {
		close(h.done)
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		err = release()
		h.wg.Wait()
		close(h.out)
	})
	return err
}

func (h *hub) Messages() <-chan Message { return h.out }

// Both backends implement the contract.
var (
	_ Subscriber = (*goRedisSubscriber)(nil)
	_ Subscriber = (*valkeyGoSubscriber)(nil)
	_ Pool       = (*goRedisPool)(nil)
	_ Pool       = (*valkeyGoPool)(nil)
)
