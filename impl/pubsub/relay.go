package pubsub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// Options configures a Relay. Zero values take the defaults below.
type Options struct {
	// MinBackoff and MaxBackoff bound the pause between re-subscription
	// attempts (doubling from MinBackoff); defaults 25 ms and 1 s.
	MinBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one subscribe attempt; default 3 s.
	AttemptTimeout time.Duration
	// DeliveryBuffer is Deliveries' capacity; default 4096. A consumer
	// that stops reading fills it and then stalls the receive loop, which
	// stalls the client library's reader and, through the socket, leaves
	// the backlog in the server's output buffer for this client
	// (backpressure: nothing is dropped by the relay).
	DeliveryBuffer int
	// Mutant makes the relay a known-bad variant for the subscriptions
	// row's negative controls (a real bad variant run against
	// real servers). Never set it in production.
	Mutant Mutant
	// Resync is the application's recovery for a classic pattern
	// subscription (spec 000 D2: cache-invalidate and conn-control are
	// must-not-miss control signals). Classic pub/sub keeps nothing for a
	// subscriber that was away, so every message published while the
	// connection was down is gone; the relay calls Resync(pattern) after the
	// server confirmed the restored subscription and before it hands over
	// any message received after that, and the application rebuilds from
	// its durable source what the lost signals announced (flush the cache,
	// re-read the ban list). A signal whose publisher acknowledged it before
	// Resync began is covered by it. Nil: no recovery.
	Resync func(ctx context.Context, pattern string) error
}

// Mutant names a known-bad relay. Each is a bug a relay's subscription
// layer plausibly has; each is silent (no error, the relay reports itself
// healthy).
type Mutant string

const (
	// MutantNone is the relay as designed.
	MutantNone Mutant = ""
	// MutantCommunityRoute dispatches an exact topic's message to the first
	// wanted topic (in name order) of the same community — a handler table
	// keyed by community instead of by topic: messages reach the wrong
	// subscription (spec 000 §Conformance, Subscriptions: "message routing
	// correct across shards").
	MutantCommunityRoute Mutant = "community-route"
	// MutantGreedyPattern matches pattern messages to wanted patterns by the
	// pattern's literal prefix (up to its first glob character) instead of
	// by the pattern the server named: "buzz:*:cache-invalidate" also
	// receives every conn-control message (a pattern that matches too much).
	MutantGreedyPattern Mutant = "greedy-pattern"
	// MutantDuplicateHandler registers another handler for a name each time
	// the application subscribes it again, so a duplicate subscription
	// confirmation doubles every later delivery (spec 000 §Client
	// Architecture: "duplicate SSubscribe pushes" must be tolerated).
	MutantDuplicateHandler Mutant = "duplicate-handler"
	// MutantForgetOnResubscribe unregisters a subscription when the client
	// library re-sends it after a reconnect (taking the unsolicited
	// confirmation for a stale one): after a disconnect the relay still
	// reports healthy and delivers nothing on it (spec 000 §Failure Modes,
	// "Subscription client fails to resubscribe after disconnect": silent).
	MutantForgetOnResubscribe Mutant = "forget-on-resubscribe"
	// MutantKeepAfterUnsubscribe answers the application's Unsubscribe
	// without doing it: the server subscription and the handler stay, so
	// messages keep reaching a subscription the application released.
	MutantKeepAfterUnsubscribe Mutant = "keep-after-unsubscribe"
	// MutantDropWhenFull hands messages over with a non-blocking send and
	// drops, uncounted and unreported, what a slow consumer has no room for
	// (the select/default idiom; go-redis PubSub.Channel() does the same
	// after its ChannelSendTimeout).
	MutantDropWhenFull Mutant = "drop-when-full"
)

func (o Options) withDefaults() Options {
	if o.MinBackoff <= 0 {
		o.MinBackoff = 25 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 3 * time.Second
	}
	if o.DeliveryBuffer <= 0 {
		o.DeliveryBuffer = deliveryBuffer
	}
	return o
}

// EventKind names a change in one subscription as the relay saw it.
type EventKind string

const (
	// EventSubscribed: an application Subscribe was confirmed by the server.
	EventSubscribed EventKind = "subscribed"
	// EventUnsubscribed: the application unsubscribed (logged when asked).
	EventUnsubscribed EventKind = "unsubscribed"
	// EventDropped: the server ended the subscription (slot moved away); the
	// relay is recovering it and messages are being missed.
	EventDropped EventKind = "dropped"
	// EventRetryFailed: one re-subscription attempt failed; Err says why.
	EventRetryFailed EventKind = "retry-failed"
	// EventRecovered: the relay's re-subscription after EventDropped was
	// confirmed; the subscription is healthy again.
	EventRecovered EventKind = "recovered"
	// EventResubscribed: the client library re-sent the subscription after a
	// reconnect and it was confirmed; healthy again, and messages published
	// while the connection was down are lost (for a pattern, the
	// application must treat it as a gap: flush what it caches).
	EventResubscribed EventKind = "resubscribed"
	// EventResynced: Options.Resync rebuilt what a restored pattern
	// subscription may have missed; At is when the resync began (it covers
	// every signal acknowledged before then).
	EventResynced EventKind = "resynced"
	// EventResyncFailed: one Options.Resync attempt returned an error; Err
	// says why. The relay tries again.
	EventResyncFailed EventKind = "resync-failed"
)

// Heals reports an event after which the relay reports the subscription
// healthy.
func (k EventKind) Heals() bool {
	return k == EventRecovered || k == EventResubscribed || k == EventSubscribed
}

// Event is one entry of the relay's log.
type Event struct {
	At   time.Time
	Name string // topic or pattern
	Kind EventKind
	Err  string
}

// Delivery is one message handed to the application.
type Delivery struct {
	// Sub is the subscription the relay handed the message to: the exact
	// topic, or the pattern.
	Sub string
	// Topic is the channel the message was published on.
	Topic string
	// Pattern is the subscription pattern it matched ("" for exact topics).
	Pattern string
	Payload string
	// At is when the relay received it.
	At time.Time
}

// Health is the relay's own view of its subscriptions.
type Health struct {
	// Healthy is false while any subscription is being recovered.
	Healthy bool
	// Since is when Healthy last changed (the relay's start at first).
	Since time.Time
	// Recovering lists the subscriptions being recovered, sorted.
	Recovering []string
}

// Stats counts what the relay did.
type Stats struct {
	Delivered, Stray   int64 // Stray: messages for names no longer wanted
	Dropped, Recovered int64
	Resubscribed       int64
}

// subState is one wanted subscription.
type subState struct {
	pattern    bool
	gen        int // bumped on Unsubscribe, ending recovery
	recovering bool
	dirty      bool // dropped again while a recovery attempt ran
	// handlers is 1, or more under MutantDuplicateHandler.
	handlers int
}

// Relay is the relay's subscription layer: exact topics on SSUBSCRIBE,
// patterns on PSUBSCRIBE, publishing through the command pool, and recovery
// of subscriptions the client library does not restore by itself.
type Relay struct {
	sub  client.Subscriber
	pool client.Pool
	o    Options

	out  chan Delivery
	done chan struct{}
	wg   sync.WaitGroup

	mu          sync.Mutex
	subs        map[string]*subState
	gen         int
	events      []Event
	healthy     bool
	since       time.Time
	stats       Stats
	closed      bool
	closeOnce   sync.Once
	closeResult error
}

// deliveryBuffer is Deliveries' default capacity.
const deliveryBuffer = 4096

// New starts a relay over sub (which it now owns and closes) publishing
// through pool (which it does not close).
func New(sub client.Subscriber, pool client.Pool, o Options) *Relay {
	r := &Relay{
		sub: sub, pool: pool, o: o.withDefaults(),
		done: make(chan struct{}),
		subs: make(map[string]*subState), healthy: true, since: time.Now(),
	}
	r.out = make(chan Delivery, r.o.DeliveryBuffer)
	r.wg.Add(1)
	go r.loop()
	return r
}

// Deliveries carries every message for a wanted subscription; it is closed
// after Close. A consumer that stops reading stalls delivery.
func (r *Relay) Deliveries() <-chan Delivery { return r.out }

// Subscribe adds exact topics (SSUBSCRIBE) and returns once the server
// confirmed all of them. Errors the cluster answers while it reconfigures
// (MOVED, TRYAGAIN, CLUSTERDOWN, a broken connection) are retried with
// backoff until ctx ends; topics already held are confirmed again, which
// the relay tolerates.
func (r *Relay) Subscribe(ctx context.Context, topics ...string) error {
	return r.subscribe(ctx, false, topics)
}

// SubscribePatterns adds classic pattern subscriptions (PSUBSCRIBE, D2), as
// Subscribe does for topics.
func (r *Relay) SubscribePatterns(ctx context.Context, patterns ...string) error {
	return r.subscribe(ctx, true, patterns)
}

func (r *Relay) subscribe(ctx context.Context, pattern bool, names []string) error {
	if len(names) == 0 {
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return client.ErrClosed
	}
	for _, n := range names {
		st := r.subs[n]
		if st == nil {
			r.gen++
			st = &subState{pattern: pattern, gen: r.gen, handlers: 1}
			r.subs[n] = st
		} else if r.o.Mutant == MutantDuplicateHandler {
			st.handlers++
		}
	}
	r.mu.Unlock()

	backoff := r.o.MinBackoff
	for {
		err := r.attempt(ctx, pattern, names)
		if err == nil {
			r.mu.Lock()
			for _, n := range names {
				r.logLocked(n, EventSubscribed, "")
			}
			r.mu.Unlock()
			return nil
		}
		if !retryable(err) || r.isClosed() {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-r.done:
			return client.ErrClosed
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, r.o.MaxBackoff)
	}
}

// attempt sends one (P|S)SUBSCRIBE for names, bounded by AttemptTimeout.
func (r *Relay) attempt(ctx context.Context, pattern bool, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, r.o.AttemptTimeout)
	defer cancel()
	if pattern {
		return r.sub.PSubscribe(ctx, names...)
	}
	//slotgate:disabled-mode-only client.Subscriber splits shard channels per slot on a cluster (shardKey = slot.Of); only a standalone subscriber sends them in one command, legal with cluster mode disabled
	return r.sub.SSubscribe(ctx, names...)
}

// retryable: an error a cluster answers while it reconfigures, or no reply
// at all. A refusal for any other reason (NOPERM, CROSSSLOT) is final.
func retryable(err error) bool {
	if errors.Is(err, client.ErrClosed) {
		return false
	}
	switch client.KindOf(err) {
	case "", client.KindMoved, client.KindAsk, client.KindTryAgain, client.KindClusterDown, client.KindLoading:
		return true
	}
	return false
}

// Unsubscribe removes exact topics (SUNSUBSCRIBE); a recovery in progress
// for them stops.
func (r *Relay) Unsubscribe(ctx context.Context, topics ...string) error {
	return r.unsubscribe(ctx, false, topics)
}

// UnsubscribePatterns removes pattern subscriptions (PUNSUBSCRIBE).
func (r *Relay) UnsubscribePatterns(ctx context.Context, patterns ...string) error {
	return r.unsubscribe(ctx, true, patterns)
}

func (r *Relay) unsubscribe(ctx context.Context, pattern bool, names []string) error {
	if len(names) == 0 || r.o.Mutant == MutantKeepAfterUnsubscribe {
		return nil
	}
	r.mu.Lock()
	for _, n := range names {
		if st := r.subs[n]; st != nil {
			delete(r.subs, n)
			r.logLocked(n, EventUnsubscribed, "")
		}
	}
	r.updateHealthLocked()
	r.mu.Unlock()
	var err error
	if pattern {
		err = r.sub.PUnsubscribe(ctx, names...)
	} else {
		//slotgate:disabled-mode-only client.Subscriber splits shard channels per slot on a cluster (shardKey = slot.Of); only a standalone subscriber sends them in one command, legal with cluster mode disabled
		err = r.sub.SUnsubscribe(ctx, names...)
	}
	if err != nil {
		return fmt.Errorf("unsubscribe %v: %w", names, err)
	}
	return nil
}

// Publish sends payload on an exact topic through the command pool
// (SPUBLISH, the channel declared as the key so the pool routes it to the
// slot owner) and returns the receiver count the server reported.
func (r *Relay) Publish(ctx context.Context, topic, payload string) (int64, error) {
	v, err := r.pool.Do(ctx, client.NewCmd("SPUBLISH", []string{topic}, payload))
	if err != nil {
		return 0, fmt.Errorf("spublish %s: %w", topic, err)
	}
	return client.AsInt64(v)
}

// PublishClassic sends payload on a pattern-matched channel with classic
// PUBLISH (broadcast to every node, spec 000 A4 and D2). The channel is
// declared as the key, so the pool sends one channel's messages to one
// node (its slot owner) and the cluster bus keeps them in order; a keyless
// PUBLISH goes to an arbitrary node per call, and two messages entering the
// bus at different nodes can reach a subscriber out of order.
func (r *Relay) PublishClassic(ctx context.Context, channel, payload string) (int64, error) {
	v, err := r.pool.Do(ctx, client.NewCmd("PUBLISH", []string{channel}, payload))
	if err != nil {
		return 0, fmt.Errorf("publish %s: %w", channel, err)
	}
	return client.AsInt64(v)
}

// Health reports whether every wanted subscription is healthy.
func (r *Relay) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := Health{Healthy: r.healthy, Since: r.since}
	for n, st := range r.subs {
		if st.recovering {
			h.Recovering = append(h.Recovering, n)
		}
	}
	slices.Sort(h.Recovering)
	return h
}

// Events returns a copy of the relay's log, in order.
func (r *Relay) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Stats returns the relay's counters.
func (r *Relay) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close stops recovery, closes the subscriber and, once the receive loop
// ended, Deliveries.
func (r *Relay) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		close(r.done)
		r.closeResult = r.sub.Close()
		r.wg.Wait()
		close(r.out)
	})
	return r.closeResult
}

func (r *Relay) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// loop reads the subscriber until it closes: messages go to the
// application, notices change subscription state.
func (r *Relay) loop() {
	defer r.wg.Done()
	for m := range r.sub.Messages() {
		switch m.Kind {
		case client.MsgMessage, client.MsgSMessage, client.MsgPMessage:
			r.deliver(m)
		case client.MsgResubscribed:
			if r.resubscribed(nameOf(m)) {
				// In the receive loop: no message received after the
				// restoration reaches the application before the resync.
				r.resync(nameOf(m))
			}
		case client.MsgDropped:
			r.dropped(nameOf(m))
		}
	}
}

func nameOf(m client.Message) string {
	if m.Pattern != "" {
		return m.Pattern
	}
	return m.Channel
}

func (r *Relay) deliver(m client.Message) {
	r.mu.Lock()
	targets := r.routeLocked(m)
	if len(targets) > 0 {
		r.stats.Delivered++
	} else {
		r.stats.Stray++
	}
	r.mu.Unlock()
	now := time.Now()
	for _, sub := range targets {
		d := Delivery{Sub: sub, Topic: m.Channel, Pattern: m.Pattern, Payload: m.Payload, At: now}
		if r.o.Mutant == MutantDropWhenFull {
			select {
			case r.out <- d:
			default:
			}
			continue
		}
		select {
		case r.out <- d:
		case <-r.done:
			return
		}
	}
}

// routeLocked names the subscriptions a message goes to: the one the server
// delivered it for (the exact channel, or the pattern it matched), if the
// application still wants it. r.mu must be held.
func (r *Relay) routeLocked(m client.Message) []string {
	name := nameOf(m)
	switch {
	case r.o.Mutant == MutantCommunityRoute && m.Pattern == "":
		prefix := communityPrefix(m.Channel)
		var first string
		for n, st := range r.subs {
			if !st.pattern && strings.HasPrefix(n, prefix) && (first == "" || n < first) {
				first = n
			}
		}
		if first != "" {
			name = first
		}
	case r.o.Mutant == MutantGreedyPattern && m.Pattern != "":
		var out []string
		for n, st := range r.subs {
			if st.pattern && strings.HasPrefix(m.Channel, literalPrefix(n)) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	st, wanted := r.subs[name]
	if !wanted {
		return nil
	}
	out := make([]string, 0, 1)
	for range max(st.handlers, 1) {
		out = append(out, name)
	}
	return out
}

// communityPrefix is "buzz:<community>:" of a topic (the whole name if it
// has no such shape).
func communityPrefix(topic string) string {
	if i := strings.Index(topic, ":"); i >= 0 {
		if j := strings.Index(topic[i+1:], ":"); j >= 0 {
			return topic[:i+1+j+1]
		}
	}
	return topic
}

// literalPrefix is a glob pattern's text before its first glob character.
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, "*?["); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// resubscribed: the library restored a subscription after a reconnect.
// Duplicate confirmations are harmless: the name is simply healthy. It
// reports a wanted pattern, whose lost messages need a resync.
func (r *Relay) resubscribed(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.subs[name]
	if st == nil {
		return false
	}
	r.stats.Resubscribed++
	r.logLocked(name, EventResubscribed, "")
	if r.o.Mutant == MutantForgetOnResubscribe {
		delete(r.subs, name) // after reporting it healthy
	}
	return st.pattern
}

// resync runs the application's recovery for a restored pattern
// subscription (Options.Resync), each attempt bounded by AttemptTimeout,
// and retries with backoff until one succeeds or the relay closes: a
// resync that failed covers nothing (its source may sit on the node that
// just failed), and the lost signals stay lost until one succeeds.
func (r *Relay) resync(pattern string) {
	if r.o.Resync == nil {
		return
	}
	backoff := r.o.MinBackoff
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), r.o.AttemptTimeout)
		err := r.o.Resync(ctx, pattern)
		cancel()
		e := Event{At: start, Name: pattern, Kind: EventResynced}
		if err != nil {
			e.Kind, e.Err = EventResyncFailed, err.Error()
		}
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		if err == nil {
			return
		}
		select {
		case <-r.done:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, r.o.MaxBackoff)
	}
}

// dropped: the server ended a subscription the relay still wants.
func (r *Relay) dropped(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.subs[name]
	if st == nil {
		return
	}
	r.stats.Dropped++
	r.logLocked(name, EventDropped, "")
	if st.recovering {
		st.dirty = true
		return
	}
	st.recovering = true
	r.updateHealthLocked()
	r.wg.Add(1)
	go r.recover(name, st.pattern, st.gen)
}

// recover re-subscribes name with backoff until the server confirms, the
// application unsubscribes it, or the relay closes.
func (r *Relay) recover(name string, pattern bool, gen int) {
	defer r.wg.Done()
	backoff := r.o.MinBackoff
	for {
		if !r.current(name, gen, true) {
			return
		}
		err := r.attempt(context.Background(), pattern, []string{name})
		r.mu.Lock()
		st := r.subs[name]
		if st == nil || st.gen != gen || r.closed {
			r.mu.Unlock()
			if err == nil && !r.isClosed() {
				// Unsubscribed while the attempt ran: undo it.
				ctx, cancel := context.WithTimeout(context.Background(), r.o.AttemptTimeout)
				if pattern {
					_ = r.sub.PUnsubscribe(ctx, name)
				} else {
					_ = r.sub.SUnsubscribe(ctx, name)
				}
				cancel()
			}
			return
		}
		if err == nil && !st.dirty {
			st.recovering = false
			r.stats.Recovered++
			r.logLocked(name, EventRecovered, "")
			r.updateHealthLocked()
			r.mu.Unlock()
			return
		}
		if err != nil {
			r.logLocked(name, EventRetryFailed, err.Error())
		}
		st.dirty = false
		r.mu.Unlock()
		if err == nil {
			continue // dropped again while the attempt ran: subscribe again now
		}
		select {
		case <-r.done:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, r.o.MaxBackoff)
	}
}

// current reports that name is still wanted under gen (and, if recovering
// is set, still being recovered) and the relay is open.
func (r *Relay) current(name string, gen int, recovering bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.subs[name]
	return !r.closed && st != nil && st.gen == gen && st.recovering == recovering
}

// logLocked appends an event. r.mu must be held.
func (r *Relay) logLocked(name string, kind EventKind, err string) {
	r.events = append(r.events, Event{At: time.Now(), Name: name, Kind: kind, Err: err})
}

// updateHealthLocked recomputes Healthy. r.mu must be held.
func (r *Relay) updateHealthLocked() {
	healthy := true
	for _, st := range r.subs {
		if st.recovering {
			healthy = false
			break
		}
	}
	if healthy != r.healthy {
		r.healthy, r.since = healthy, time.Now()
	}
}
