package traffic

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/pubsub"
)

// SubTarget is one place a publisher sends to: Channel, delivered through
// subscription Sub (the channel itself, or the pattern that matches it).
// Sharded targets use SPUBLISH, the others classic PUBLISH (D2).
type SubTarget struct {
	Channel, Sub string
	Sharded      bool
}

// TopicTarget is an exact topic published with SPUBLISH.
func TopicTarget(topic string) SubTarget { return SubTarget{Channel: topic, Sub: topic, Sharded: true} }

// Subscriptions records a subscriptions scenario around one pubsub.Relay:
// sequence-numbered publishes, every delivery, the application's
// subscription spans and the fault windows, as a
// history.SubscriptionHistory. It asserts nothing.
type Subscriptions struct {
	relay *pubsub.Relay
	clock *Clock

	mu         sync.Mutex
	seq        map[int]int64
	publishes  []history.SubPublish
	deliveries []history.SubDelivery
	lastFresh  map[string]time.Duration // sub → Sent of the newest delivered message
	held       map[string]*history.SubInterval
	spans      []history.SubInterval
	faults     []history.SubFault
	subErrs    []history.OpOutcome
	patterns   map[string]bool
	sent       map[[2]int64]time.Duration // (publisher, seq) → Sent

	// alias maps a subscription the relay delivers through to the one
	// the application files it under (Alias).
	alias map[string]string
	// stallUntil is when a stalled consumer reads again (Stall).
	stallUntil time.Time
	// run tags this recorder's payloads; foreign counts deliveries of
	// another recorder's messages (Foreign).
	run     string
	foreign int
	// quiet is how long History waits without a delivery while messages
	// are still missing (DrainQuiet); default 1 s.
	quiet time.Duration

	consumed chan struct{}
}

// NewSubscriptions starts consuming relay's deliveries on clock's axis.
func NewSubscriptions(relay *pubsub.Relay, clock *Clock) *Subscriptions {
	s := &Subscriptions{
		relay: relay, clock: clock,
		seq: map[int]int64{}, lastFresh: map[string]time.Duration{}, held: map[string]*history.SubInterval{},
		patterns: map[string]bool{}, sent: map[[2]int64]time.Duration{}, consumed: make(chan struct{}),
		alias: map[string]string{}, quiet: time.Second,
		run: "r" + strconv.FormatInt(runs.Add(1), 10),
	}
	go s.consume()
	return s
}

// offset places t on the scenario clock.
func (s *Subscriptions) offset(t time.Time) time.Duration { return s.clock.Offset(t) }

func (s *Subscriptions) consume() {
	defer close(s.consumed)
	for {
		s.mu.Lock()
		wait := time.Until(s.stallUntil)
		s.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait) // the application stalls reading
		}
		d, ok := <-s.relay.Deliveries()
		if !ok {
			return
		}
		sub := d.Sub
		if sub == "" { // a relay that does not say: as the server named it
			sub = d.Topic
			if d.Pattern != "" {
				sub = d.Pattern
			}
		}
		run, pub, seq, ok := parsePayload(d.Payload)
		if !ok {
			pub, seq = -1, 0
		}
		at := s.offset(d.At)
		s.mu.Lock()
		if ok && run != s.run {
			// Another recorder's message: a classic PUBLISH cut short by an
			// earlier scenario's stop can still be executed by the server
			// and reach this run's pattern subscription (same pattern
			// names in every run). Not this run's history.
			s.foreign++
			s.mu.Unlock()
			continue
		}
		if as, ok := s.alias[sub]; ok {
			sub = as
		}
		s.deliveries = append(s.deliveries, history.SubDelivery{Publisher: pub, Seq: seq, Channel: d.Topic, Sub: sub, At: at})
		if sent, ok := s.sent[[2]int64{int64(pub), seq}]; ok && sent > s.lastFresh[sub] {
			s.lastFresh[sub] = sent
		}
		s.mu.Unlock()
	}
}

// Alias files deliveries through subscription sub under as: an application
// that handles several subscriptions as one (the enumerated-channels design
// D2 rejected, whose channels stand for a pattern).
func (s *Subscriptions) Alias(sub, as string) {
	s.mu.Lock()
	s.alias[sub] = as
	s.mu.Unlock()
}

// Stall makes the application stop reading deliveries for d from now (a
// slow consumer); the relay and the client buffer meanwhile.
func (s *Subscriptions) Stall(d time.Duration) {
	s.mu.Lock()
	s.stallUntil = time.Now().Add(d)
	s.mu.Unlock()
}

// runs numbers the recorders of this process, so each tags its payloads.
var runs atomic.Int64

// payload is "<run>:<publisher>:<seq>".
func (s *Subscriptions) payload(pub int, seq int64) string {
	return s.run + ":" + strconv.Itoa(pub) + ":" + strconv.FormatInt(seq, 10)
}

func parsePayload(p string) (string, int, int64, bool) {
	run, rest, ok := strings.Cut(p, ":")
	if !ok {
		return "", 0, 0, false
	}
	a, b, ok := strings.Cut(rest, ":")
	if !ok {
		return "", 0, 0, false
	}
	pub, err1 := strconv.Atoi(a)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return run, pub, seq, err1 == nil && err2 == nil
}

// Foreign counts deliveries of messages another recorder published
// (ignored: not this run's history).
func (s *Subscriptions) Foreign() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.foreign
}

// Subscribe subscribes exact topics through the relay and records the span
// from its confirmation; a failure is recorded as a loud outcome.
func (s *Subscriptions) Subscribe(ctx context.Context, topics ...string) error {
	return s.subscribe(ctx, false, topics)
}

// SubscribePatterns subscribes classic patterns (D2).
func (s *Subscriptions) SubscribePatterns(ctx context.Context, patterns ...string) error {
	return s.subscribe(ctx, true, patterns)
}

func (s *Subscriptions) subscribe(ctx context.Context, pattern bool, names []string) error {
	requested := s.clock.Now()
	var err error
	if pattern {
		err = s.relay.SubscribePatterns(ctx, names...)
	} else {
		err = s.relay.Subscribe(ctx, names...)
	}
	s.hold(requested, err, pattern, names...)
	return err
}

// Hold records the outcome of a subscribe the caller made itself: on
// success, names are held from now on.
func (s *Subscriptions) Hold(err error, pattern bool, names ...string) {
	now := s.clock.Now()
	s.hold(now, err, pattern, names...)
}

// hold records a subscribe requested at requested: a delivery may come from
// then on (the relay registers a name before its SSUBSCRIBE per slot is
// confirmed), while the name counts as held — its messages expected — only
// from the confirmation, now.
func (s *Subscriptions) hold(requested time.Duration, err error, pattern bool, names ...string) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.subErrs = append(s.subErrs, history.OpOutcome{Op: fmt.Sprintf("subscribe %v", names), ErrKind: ErrKind(err), Err: err.Error()})
		return
	}
	for _, n := range names {
		if pattern {
			s.patterns[n] = true
		}
		if s.held[n] == nil {
			s.held[n] = &history.SubInterval{Sub: n, From: now, Requested: requested}
		}
	}
}

// Unsubscribe ends the spans of topics at the request, then unsubscribes.
func (s *Subscriptions) Unsubscribe(ctx context.Context, topics ...string) error {
	now := s.clock.Now()
	s.mu.Lock()
	for _, n := range topics {
		if iv := s.held[n]; iv != nil {
			iv.To = now
			s.spans = append(s.spans, *iv)
			delete(s.held, n)
		}
	}
	s.mu.Unlock()
	err := s.relay.Unsubscribe(ctx, topics...)
	if err != nil {
		s.mu.Lock()
		s.subErrs = append(s.subErrs, history.OpOutcome{Op: fmt.Sprintf("unsubscribe %v", topics), ErrKind: ErrKind(err), Err: err.Error()})
		s.mu.Unlock()
	}
	return err
}

// ErrKindStopped marks a publish cut short because the scenario stopped its
// publishers: its outcome is unknown, and it is neither expected nor a
// loud failure.
const ErrKindStopped = "stopped"

// Publish sends one sequence-numbered message from publisher to t.
func (s *Subscriptions) Publish(ctx context.Context, publisher int, t SubTarget) {
	s.publish(ctx, ctx, publisher, t)
}

// publish is Publish; a failure after run ended is recorded as stopped.
func (s *Subscriptions) publish(ctx, run context.Context, publisher int, t SubTarget) {
	s.mu.Lock()
	s.seq[publisher]++
	seq := s.seq[publisher]
	s.mu.Unlock()
	sent := s.clock.Now()
	s.mu.Lock()
	s.sent[[2]int64{int64(publisher), seq}] = sent
	s.mu.Unlock()
	var n int64
	var err error
	if t.Sharded {
		n, err = s.relay.Publish(ctx, t.Channel, s.payload(publisher, seq))
	} else {
		n, err = s.relay.PublishClassic(ctx, t.Channel, s.payload(publisher, seq))
	}
	p := history.SubPublish{Publisher: publisher, Seq: seq, Channel: t.Channel, Sub: t.Sub, Sent: sent, Done: s.clock.Now(), Receivers: n}
	if err != nil {
		p.ErrKind, p.Err = ErrKind(err), err.Error()
		if run.Err() != nil {
			p.ErrKind = ErrKindStopped
		}
	}
	kind := "publish"
	if t.Sharded {
		kind = "spublish"
	}
	recordOp(ctx, opRecord{client: "publisher-" + strconv.Itoa(publisher), kind: kind, slot: -1, start: p.Sent, end: p.Done}, err)
	s.mu.Lock()
	s.publishes = append(s.publishes, p)
	s.mu.Unlock()
}

// Acknowledged is how many publishes so far got a reply without an error:
// a drill publishes on until its history is big enough to judge.
func (s *Subscriptions) Acknowledged() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.publishes {
		if p.Err == "" {
			n++
		}
	}
	return n
}

// Publishers runs n publishers until the returned stop is called (stop
// waits for them). Publisher i cycles through targets starting at offset i,
// publishing one message per target with pause between messages; each
// publish is bounded by timeout.
func (s *Subscriptions) Publishers(ctx context.Context, n int, targets []SubTarget, pause, timeout time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for j := i; ctx.Err() == nil; j++ {
				pctx, pcancel := context.WithTimeout(ctx, timeout)
				s.publish(pctx, ctx, i, targets[j%len(targets)])
				pcancel()
				select {
				case <-ctx.Done():
				case <-time.After(pause):
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// Fault records an injected fault window.
func (s *Subscriptions) Fault(name, target string, start, end time.Time) {
	s.mu.Lock()
	s.faults = append(s.faults, history.SubFault{Name: name, Target: target, Start: s.offset(start), End: s.offset(end)})
	s.mu.Unlock()
}

// WaitFresh waits until every held subscription among subs (all held ones
// when subs is empty) delivered a message sent after since, or timeout
// passes; it reports the subscriptions still waiting. Pacing only: the
// checker, not this, judges the history.
func (s *Subscriptions) WaitFresh(ctx context.Context, since time.Duration, timeout time.Duration, subs ...string) []string {
	deadline := time.Now().Add(timeout)
	for {
		var waiting []string
		s.mu.Lock()
		names := subs
		if len(names) == 0 {
			for n := range s.held {
				names = append(names, n)
			}
		}
		for _, n := range names {
			if s.held[n] != nil && s.lastFresh[n] <= since {
				waiting = append(waiting, n)
			}
		}
		s.mu.Unlock()
		if len(waiting) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			slices.Sort(waiting)
			return waiting
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// DrainQuiet sets how long History waits for a missing message after the
// last delivery: a known-bad variant that loses messages need not be
// waited on for the default second.
func (s *Subscriptions) DrainQuiet(d time.Duration) {
	s.mu.Lock()
	s.quiet = d
	s.mu.Unlock()
}

// Now is the scenario clock's reading.
func (s *Subscriptions) Now() time.Duration { return s.clock.Now() }

// drained waits until every acknowledged message on a held subscription
// was delivered, or no delivery arrived for quiet, or limit passed.
func (s *Subscriptions) drained(quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	last, lastChange := -1, time.Now()
	for time.Now().Before(deadline) {
		s.mu.Lock()
		got := map[[2]int64]bool{}
		for _, d := range s.deliveries {
			got[[2]int64{int64(d.Publisher), d.Seq}] = true
		}
		missing := 0
		for _, p := range s.publishes {
			if p.ErrKind == "" && s.held[p.Sub] != nil && !got[[2]int64{int64(p.Publisher), p.Seq}] {
				missing++
			}
		}
		n := len(s.deliveries)
		s.mu.Unlock()
		if missing == 0 {
			return
		}
		if n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) > quiet {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// History waits for deliveries still in flight, closes the relay and
// returns the recorded history; call it once, after the publishers stopped.
func (s *Subscriptions) History() history.SubscriptionHistory {
	s.mu.Lock()
	quiet := s.quiet
	s.mu.Unlock()
	s.drained(quiet, 5*time.Second)
	end := s.clock.Now()
	health := s.relay.Health()
	events := s.relay.Events()
	_ = s.relay.Close()
	<-s.consumed
	s.mu.Lock()
	defer s.mu.Unlock()
	h := history.SubscriptionHistory{
		Publishes: slices.Clone(s.publishes), Deliveries: slices.Clone(s.deliveries),
		Faults: slices.Clone(s.faults), SubscribeErrors: slices.Clone(s.subErrs),
		Recovering: health.Recovering, End: end,
	}
	h.Held = slices.Clone(s.spans)
	for _, iv := range s.held {
		h.Held = append(h.Held, *iv)
	}
	for p := range s.patterns {
		h.Patterns = append(h.Patterns, p)
	}
	slices.Sort(h.Patterns)
	for _, e := range events {
		h.Events = append(h.Events, history.SubEvent{At: s.offset(e.At), Sub: e.Name, Kind: string(e.Kind), Err: e.Err})
	}
	return h
}
