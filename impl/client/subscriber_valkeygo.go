package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/valkey-io/valkey-go"
)

// valkeyGoSubscriber is the Subscriber over valkey-go.
//
// What valkey-go v1.0.79 does, as read in its source:
//
//   - Client.Receive(ctx, subscribeCmd, fn) (valkey.go CoreClient) sends the
//     subscribe command and blocks delivering messages to fn. It returns nil
//     when an unsubscribe push for ANY of the command's names arrives
//     (pubsub.go subs.Unsubscribe closes every subscriber registered on that
//     name), ErrClosing on Close, ctx.Err() when ctx ends, or the error reply
//     when the subscribe itself is refused. So this subscriber runs one
//     Receive per name, in its own goroutine, and one name's loss never
//     silently ends another's.
//   - Routing: SSUBSCRIBE's channel is its slot (internal/cmds/gen_pubsub.go
//     Ssubscribe.Channel), so clusterClient.Receive (cluster.go) picks the
//     slot owner. SUBSCRIBE and PSUBSCRIBE carry InitSlot and go to an
//     arbitrary node (cluster.go _pick takes the first entry of a map), so
//     UNSUBSCRIBE/PUNSUBSCRIBE cannot be routed to "the same node"; this
//     subscriber sends them to every node (Client.Nodes shares the cluster
//     client's connections) and waits for the Receive to end.
//   - With RESP3 the subscription shares the node's pipelined connection
//     (push frames; subscribe commands are NoReply and always use wire 0,
//     mux.go slotfn), with RESP2 each node gets one extra dedicated pub/sub
//     connection (pipe.go r2p). The broadcast UNSUBSCRIBE above therefore
//     opens that RESP2 pub/sub connection on nodes that had none.
//   - Confirmation: pipe.Receive returns from its Do after the FIRST
//     confirmation push only. valkey.WithOnSubscriptionHook(ctx, fn) (pipe.go)
//     sees every (un)subscribe push of this Receive; Subscribe returns when
//     the hook has seen each name's confirmation. The hook runs on the
//     connection's reader goroutine and must not block.
//   - Disconnect: auto-resubscribes. When the connection breaks the pipe
//     closes every subscription channel, Receive sees the pipe's error and
//     singleClient.Receive / clusterClient.Receive retry (with backoff,
//     unbounded unless ctx has a deadline; cluster.go shouldRefreshRetry also
//     retries MOVED/CLUSTERDOWN/TRYAGAIN, re-picking the slot owner after a
//     lazy slot-map refresh), which re-sends the subscribe. The hook then
//     fires again; this subscriber surfaces that as MsgResubscribed (from a
//     separate goroutine, so it is not ordered with messages). Messages
//     published meanwhile are lost.
//   - Server-initiated sunsubscribe (slot migrated or deleted): valkey-go
//     treats every unsubscribe push alike (pipe.go _backgroundRead comment,
//     rueidis#691): the Receive for that channel returns nil. It does NOT
//     resubscribe. This subscriber emits MsgDropped and forgets the channel;
//     the caller must SSubscribe again.
type valkeyGoSubscriber struct {
	*hub
	c       valkey.Client
	cluster bool
	// ctx parents every Receive; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	subs map[subKey]*vgSub
}

func newValkeyGoSubscriber(ctx context.Context, o Options) (*valkeyGoSubscriber, error) {
	c, err := newValkeyGoClient(o, nil)
	if err != nil {
		return nil, err
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, fmt.Errorf("ping %v: %w", o.Addrs, valkeyGoErr(err))
	}
	rctx, cancel := context.WithCancel(context.Background())
	return &valkeyGoSubscriber{
		hub:     newHub(),
		c:       c,
		cluster: o.Mode == ModeCluster,
		ctx:     rctx,
		cancel:  cancel,
		subs:    make(map[subKey]*vgSub),
	}, nil
}

func (s *valkeyGoSubscriber) Backend() Backend { return BackendValkeyGo }

// vgSub is one name's Receive.
type vgSub struct {
	key    subKey
	cancel context.CancelFunc

	ready     chan struct{} // closed at the first confirmation, or when Receive ends first
	readyOnce sync.Once
	err       error // why Receive ended unconfirmed; read after ready

	confirms atomic.Int64
	endKind  atomic.Value // string: the unsubscribe push that ended it
	stopping atomic.Bool  // this subscriber asked the server to unsubscribe
	ended    chan struct{}
}

func (v *vgSub) markReady(err error) {
	v.readyOnce.Do(func() {
		v.err = err
		close(v.ready)
	})
}

func (s *valkeyGoSubscriber) Subscribe(ctx context.Context, channels ...string) error {
	return s.subscribe(ctx, confSubscribe, channels)
}

func (s *valkeyGoSubscriber) SSubscribe(ctx context.Context, channels ...string) error {
	return s.subscribe(ctx, confSSubscribe, channels)
}

func (s *valkeyGoSubscriber) PSubscribe(ctx context.Context, patterns ...string) error {
	return s.subscribe(ctx, confPSubscribe, patterns)
}

func (s *valkeyGoSubscriber) Unsubscribe(ctx context.Context, channels ...string) error {
	return s.unsubscribe(ctx, confSubscribe, channels)
}

func (s *valkeyGoSubscriber) SUnsubscribe(ctx context.Context, channels ...string) error {
	return s.unsubscribe(ctx, confSSubscribe, channels)
}

func (s *valkeyGoSubscriber) PUnsubscribe(ctx context.Context, patterns ...string) error {
	return s.unsubscribe(ctx, confPSubscribe, patterns)
}

// subscribe starts a Receive for each name not yet held and waits for every
// name's confirmation.
func (s *valkeyGoSubscriber) subscribe(ctx context.Context, kind string, names []string) error {
	var wait []*vgSub
	for _, n := range names {
		sub, err := s.acquire(ctx, subKey{kind, n})
		if err != nil {
			return fmt.Errorf("%s %s: %w", kind, n, err)
		}
		wait = append(wait, sub)
	}
	var errs []error
	for i, sub := range wait {
		select {
		case <-sub.ready:
			if sub.err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", kind, sub.key.name, sub.err))
			}
		case <-ctx.Done():
			for _, rest := range wait[i:] {
				if rest.confirms.Load() == 0 {
					rest.cancel()
				}
			}
			return fmt.Errorf("%s %v: %w", kind, names, ctx.Err())
		case <-s.done:
			return ErrClosed
		}
	}
	return errors.Join(errs...)
}

// acquire returns the Receive for k, starting one when none runs. A Receive
// that is being unsubscribed is waited out first.
func (s *valkeyGoSubscriber) acquire(ctx context.Context, k subKey) (*vgSub, error) {
	for {
		s.mu.Lock()
		sub := s.subs[k]
		if sub == nil {
			sub = s.start(k)
			s.mu.Unlock()
			if sub == nil {
				return nil, ErrClosed
			}
			return sub, nil
		}
		s.mu.Unlock()
		if !sub.stopping.Load() {
			return sub, nil
		}
		select {
		case <-sub.ended:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// start launches k's Receive; nil when Close has begun. s.mu must be held.
func (s *valkeyGoSubscriber) start(k subKey) *vgSub {
	ctx, cancel := context.WithCancel(s.ctx)
	sub := &vgSub{key: k, cancel: cancel, ready: make(chan struct{}), ended: make(chan struct{})}
	if !s.spawn(func() { s.receive(ctx, sub) }) {
		cancel()
		return nil
	}
	s.subs[k] = sub
	return sub
}

// receive runs one Receive to its end, then reports an end nobody asked for.
func (s *valkeyGoSubscriber) receive(ctx context.Context, sub *vgSub) {
	defer sub.cancel()
	hook := func(ps valkey.PubSubSubscription) {
		if isUnsubscribeKind(ps.Kind) {
			sub.endKind.Store(ps.Kind)
			return
		}
		if sub.confirms.Add(1) == 1 {
			sub.markReady(nil)
			return
		}
		// valkey-go re-sent the subscription after a reconnect. This runs
		// on the connection's reader goroutine, which must not block.
		s.spawn(func() { s.emit(sub.key.notice(MsgResubscribed, ps.Kind)) })
	}
	err := s.c.Receive(valkey.WithOnSubscriptionHook(ctx, hook), s.subscribeCmd(sub.key), func(m valkey.PubSubMessage) {
		s.emit(vgMessage(sub.key.kind, m))
	})

	s.mu.Lock()
	if s.subs[sub.key] == sub {
		delete(s.subs, sub.key)
	}
	s.mu.Unlock()
	if err != nil {
		err = valkeyGoErr(err)
	} else if sub.confirms.Load() == 0 {
		err = errors.New("subscription ended before it was confirmed")
	}
	sub.markReady(err)
	close(sub.ended)

	if sub.confirms.Load() == 0 || sub.stopping.Load() || s.closing() {
		return
	}
	reason, _ := sub.endKind.Load().(string)
	if err != nil {
		reason = err.Error()
	}
	s.emit(sub.key.notice(MsgDropped, reason))
}

// subscribeCmd builds the subscribe command for one name.
func (s *valkeyGoSubscriber) subscribeCmd(k subKey) valkey.Completed {
	b := s.c.B()
	switch k.kind {
	case confSSubscribe:
		return b.Ssubscribe().Channel(k.name).Build()
	case confPSubscribe:
		return b.Psubscribe().Pattern(k.name).Build()
	}
	return b.Subscribe().Channel(k.name).Build()
}

// vgMessage converts a delivery of a subscription of kind.
func vgMessage(kind string, m valkey.PubSubMessage) Message {
	out := Message{Kind: MsgMessage, Pattern: m.Pattern, Channel: m.Channel, Payload: m.Message}
	switch kind {
	case confSSubscribe:
		out.Kind = MsgSMessage
	case confPSubscribe:
		out.Kind = MsgPMessage
	}
	return out
}

// unsubscribe asks the server to end the named subscriptions (all of kind
// when names is empty) and waits for their Receives to end.
func (s *valkeyGoSubscriber) unsubscribe(ctx context.Context, kind string, names []string) error {
	if s.closing() {
		return ErrClosed
	}
	s.mu.Lock()
	if len(names) == 0 {
		for k := range s.subs {
			if k.kind == kind {
				names = append(names, k.name)
			}
		}
		slices.Sort(names)
	}
	var targets []*vgSub
	for _, n := range names {
		if sub := s.subs[subKey{kind, n}]; sub != nil {
			sub.stopping.Store(true)
			targets = append(targets, sub)
		}
	}
	s.mu.Unlock()
	if len(targets) == 0 {
		return nil
	}
	sendErr := s.sendUnsubscribe(ctx, kind, targets)
	for _, sub := range targets {
		select {
		case <-sub.ended:
		case <-ctx.Done():
			return fmt.Errorf("%s %v: %w", kind, names, errors.Join(sendErr, ctx.Err()))
		case <-s.done:
			return ErrClosed
		}
	}
	return nil
}

// sendUnsubscribe sends the unsubscribe commands for targets. A shard
// channel's goes to its slot owner, one command per channel (the cluster
// builder refuses channels of different slots). A classic channel or
// pattern lives on an arbitrary node in ModeCluster, so its command goes to
// every node; nodes that do not hold it just confirm.
func (s *valkeyGoSubscriber) sendUnsubscribe(ctx context.Context, kind string, targets []*vgSub) error {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.key.name
	}
	build := func(b valkey.Builder, names ...string) valkey.Completed {
		switch kind {
		case confSSubscribe:
			return b.Sunsubscribe().Channel(names...).Build()
		case confPSubscribe:
			return b.Punsubscribe().Pattern(names...).Build()
		}
		return b.Unsubscribe().Channel(names...).Build()
	}
	var errs []error
	switch {
	case kind == confSSubscribe && s.cluster:
		for _, n := range names {
			errs = append(errs, s.c.Do(ctx, build(s.c.B(), n)).Error())
		}
	case s.cluster:
		for _, node := range s.c.Nodes() {
			errs = append(errs, node.Do(ctx, build(node.B(), names...)).Error())
		}
	default:
		errs = append(errs, s.c.Do(ctx, build(s.c.B(), names...)).Error())
	}
	return errors.Join(errs...)
}

// Close cancels every Receive, closes the client, waits for the goroutines
// and closes Messages.
func (s *valkeyGoSubscriber) Close() error {
	return s.shutdown(func() error {
		s.cancel()
		s.c.Close()
		return nil
	})
}
