package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

var _ = Describe("resp3-push", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "client-surface/resp3-push/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "RESP3 pushes on the subscription connection: SUBSCRIBE and SSUBSCRIBE channels of 1 to N characters, confirmations on a connection idle a while, pushes interleaved with replies — every message delivered exactly once on its own channel and every confirmation seen (000 §Sharded Pub/Sub Conversion; §Client Architecture, split subscription client)",
			Run:  func(ctx SpecContext) report.Check { return resp3Push(ctx, b) },
		})
	}
})

// pushScale sizes the workload: channels of 1..Longest characters, PerChannel
// messages to each of them per kind, Idle before the later subscriptions.
type pushScale struct {
	Longest, PerChannel int
	Idle                time.Duration
}

func pushScaleOf() pushScale {
	if cfg.Profile == harness.ProfileFull {
		return pushScale{Longest: 64, PerChannel: 20, Idle: 5 * time.Second}
	}
	return pushScale{Longest: 12, PerChannel: 10, Idle: 1500 * time.Millisecond}
}

// Subscription kinds and the message kinds they deliver.
const (
	kindSubscribe  = "subscribe"
	kindSSubscribe = "ssubscribe"
	kindMessage    = "message"
	kindSMessage   = "smessage"
)

// messageKind is the kind of message a subscription kind delivers.
func messageKind(sub string) string {
	if sub == kindSSubscribe {
		return kindSMessage
	}
	return kindMessage
}

// pushRecorder keeps one path's confirmations, deliveries and the
// observed arrivals on each connection (judge.PushEvent), timed from t0.
type pushRecorder struct {
	t0        time.Time
	mu        sync.Mutex
	confirmed []judge.Sub
	delivered []judge.Push
	events    []judge.PushEvent
}

func newPushRecorder() *pushRecorder { return &pushRecorder{t0: time.Now()} }

// eventLocked records an arrival of kind on conn now; r.mu is held.
func (r *pushRecorder) eventLocked(conn, kind string) {
	r.events = append(r.events, judge.PushEvent{Conn: conn, Kind: kind, At: time.Since(r.t0)})
}

func (r *pushRecorder) confirm(conn, kind, ch string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.confirmed = append(r.confirmed, judge.Sub{Kind: kind, Channel: ch})
	r.eventLocked(conn, judge.EventConfirm)
}

func (r *pushRecorder) deliver(conn, kind, ch, payload string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivered = append(r.delivered, judge.Push{Kind: kind, Channel: ch, Payload: payload})
	r.eventLocked(conn, judge.EventDelivery)
}

// reply records a command's reply (PONG) seen on conn.
func (r *pushRecorder) reply(conn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.eventLocked(conn, judge.EventReply)
}

// hasConfirmed reports every (kind, channel) of chans confirmed.
func (r *pushRecorder) hasConfirmed(kind string, chans []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range chans {
		if !slices.Contains(r.confirmed, judge.Sub{Kind: kind, Channel: ch}) {
			return false
		}
	}
	return true
}

func (r *pushRecorder) deliveries() []judge.Push {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.delivered)
}

// pushPath is one subscription path the workload drives: subscribe sends
// the subscribe command (confirmations reach rec), interleave sends one
// command on the subscription connection while pushes arrive, its reply
// recorded when it is seen (false when the path has no such command).
type pushPath struct {
	name       string
	rec        *pushRecorder
	subscribe  func(ctx context.Context, kind string, chans []string) error
	interleave func(ctx context.Context) bool
	close      func()
}

// pushChannels are the channels of lengths 1..n, each a prefix of the
// next (so a handler that matches by prefix misroutes), starting with
// first.
func pushChannels(rng *rand.Rand, first byte, n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte{first}
	for len(b) < n {
		b = append(b, alphabet[rng.IntN(len(alphabet))])
	}
	out := make([]string, n)
	for i := range out {
		out[i] = string(b[:i+1])
	}
	return out
}

func resp3Push(ctx SpecContext, b client.Backend) report.Check {
	name := "client-surface/resp3-push/" + string(b)
	sc := pushScaleOf()
	rng := cfg.Rand(name)
	tag := fmt.Sprintf("%x", rng.Uint32())
	addrs := cluster.Addrs()
	pub := harness.Pool(ctx, b, cluster)

	By("opening impl's Subscriber, the raw library pub/sub and a prefix-matching handler over impl, all on RESP3")
	paths := []*pushPath{implPushPath(ctx, b, addrs, "slotgate-push-impl-"+tag, false),
		rawPushPath(ctx, b, addrs, "slotgate-push-raw-"+tag),
		implPushPath(ctx, b, addrs, "slotgate-push-prefix-"+tag, true)}
	runs := make([]judge.PushRun, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		DeferCleanup(p.close)
		chans := pushChannels(rng, byte('a'+i), sc.Longest)
		wg.Go(func() {
			defer GinkgoRecover()
			runs[i] = pushWorkload(ctx, p, pub, chans, sc)
		})
	}
	wg.Wait()

	impl, raw, bad := judge.RESP3Push.Judge(runs[0]), judge.RESP3Push.Judge(runs[1]), judge.RESP3Push.Judge(runs[2])
	ev := harness.Evidence(cfg, cluster, pub)
	ev.Metrics = map[string]float64{"channels": float64(2 * sc.Longest), "longest_channel": float64(sc.Longest), "idle_ms": float64(sc.Idle.Milliseconds())}
	for i, p := range paths {
		ev.Metrics[p.name+"_published"] = float64(len(runs[i].Published))
		ev.Metrics[p.name+"_delivered"] = float64(len(runs[i].Delivered))
		ev.Metrics[p.name+"_interleaved"] = float64(runs[i].Interleaved())
		ev.Metrics[p.name+"_idle_ms"] = float64(runs[i].Idle().Milliseconds())
	}
	rawAPI := map[client.Backend]string{
		client.BackendGoRedis:  "go-redis ClusterClient.Subscribe/SSubscribe → PubSub.Receive, PubSub.Ping (Protocol 3)",
		client.BackendValkeyGo: "valkey-go Client.Nodes()[node].Receive (SUBSCRIBE), Client.Receive (SSUBSCRIBE) with WithOnSubscriptionHook, Client.Nodes()[node].Do PING (RESP3)",
	}[b]
	ev.Observed = append(ev.Observed, "impl: "+observed(impl), "raw "+rawAPI+": "+observed(raw), "prefix-matching handler: "+observed(bad))
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementRESP3Push, Client: pub.Version(), Path: rawAPI,
		Raw: raw, Wrapped: impl, Wrapper: "impl/client Subscriber (per-slot sessions, confirmations awaited)",
		Evidence: fmt.Sprintf("SUBSCRIBE and SSUBSCRIBE to %d channels of 1 to %d characters, each a prefix of the next; a quarter subscribed after %v idle, a quarter while the first half's pushes arrive; %d PUBLISH and %d SPUBLISH per channel.",
			sc.Longest, sc.Longest, sc.Idle, sc.PerChannel, sc.PerChannel)})
	ctl := harness.Variant("prefix-handler", "a relay handler that hands a push to the first subscribed name its channel starts with (shortest first)", bad)
	return harness.Check(row, report.ColumnSilentlyWrong, "", impl, ev, ctl)
}

// pushWorkload runs one path: subscribe the first half of chans (both
// kinds), leave the connections idle, subscribe a quarter (their
// confirmations arrive on the idle connections, before any push), then
// publish to the first half round after round while the last quarter is
// subscribed and the path's own command runs on the subscription
// connection — at least one round after the last quarter is confirmed, so
// its confirmations sit among pushes — then publish to the second half
// and wait for every delivery. The checker reads the idleness and the
// interleaving from the recorded arrivals.
func pushWorkload(ctx context.Context, p *pushPath, pub client.Pool, chans []string, sc pushScale) judge.PushRun {
	GinkgoHelper()
	half := len(chans) / 2
	first, second := chans[:half], chans[half:]
	idleSubs, busySubs := second[:len(second)/2], second[len(second)/2:]
	var run judge.PushRun
	for _, k := range []string{kindSubscribe, kindSSubscribe} {
		for _, ch := range chans {
			run.Wanted = append(run.Wanted, judge.Sub{Kind: k, Channel: ch})
		}
	}
	// A refused subscribe leaves its names unconfirmed: the checker names
	// them.
	subscribe := func(chs []string) {
		for _, k := range []string{kindSubscribe, kindSSubscribe} {
			if err := p.subscribe(ctx, k, chs); err != nil {
				GinkgoWriter.Printf("%s %s: %v\n", p.name, k, err)
			}
		}
	}
	confirmed := func(chs []string) bool {
		return p.rec.hasConfirmed(kindSubscribe, chs) && p.rec.hasConfirmed(kindSSubscribe, chs)
	}
	subscribe(first)
	harness.WaitAtMost(ctx, 10*time.Second, 20*time.Millisecond, func() bool { return confirmed(first) })
	// The workload's idle stretch (its purpose, not a wait for a
	// condition): nothing is sent or published until it ends.
	select {
	case <-time.After(sc.Idle):
	case <-ctx.Done():
	}
	subscribe(idleSubs)
	harness.WaitAtMost(ctx, 10*time.Second, 20*time.Millisecond, func() bool { return confirmed(idleSubs) })

	var mu sync.Mutex
	publish := func(chs []string, seq int) {
		for _, k := range []string{kindSubscribe, kindSSubscribe} {
			for _, ch := range chs {
				payload := fmt.Sprintf("%s|%s|%s|%d", p.name, messageKind(k), ch, seq)
				cmd := client.Cmd{Prefix: []string{"PUBLISH"}, Args: []string{ch, payload}}
				if k == kindSSubscribe {
					cmd = client.NewCmd("SPUBLISH", []string{ch}, payload)
				}
				if _, err := pub.Do(ctx, cmd); err == nil {
					mu.Lock()
					run.Published = append(run.Published, judge.Push{Kind: messageKind(k), Channel: ch, Payload: payload})
					mu.Unlock()
				}
			}
		}
	}
	// Pushes on the first half, round after round, until PerChannel rounds
	// went out and the last quarter's subscriptions were confirmed (bounded),
	// then one more round: a confirmation then has pushes on both sides.
	var busyConfirmed atomic.Bool
	stop := make(chan struct{})
	var pubs sync.WaitGroup
	pubs.Go(func() {
		defer close(stop)
		limit := time.Now().Add(10 * time.Second)
		seq := 0
		for ; ctx.Err() == nil && (seq < sc.PerChannel || (!busyConfirmed.Load() && time.Now().Before(limit))); seq++ {
			publish(first, seq)
		}
		publish(first, seq)
	})
	pubs.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !p.interleave(ctx) {
				return
			}
		}
	})
	// The last quarter goes out once pushes are arriving.
	harness.WaitAtMost(ctx, 10*time.Second, 5*time.Millisecond, func() bool { return len(p.rec.deliveries()) > 0 })
	subscribe(busySubs)
	harness.WaitAtMost(ctx, 10*time.Second, 5*time.Millisecond, func() bool { return confirmed(busySubs) })
	busyConfirmed.Store(true)
	pubs.Wait()
	for seq := 0; seq < sc.PerChannel; seq++ {
		publish(second, seq)
	}
	// Every acknowledged publish delivered, or the bound ran out (a loss
	// the checker then names); then a short look for late duplicates.
	harness.WaitAtMost(ctx, 10*time.Second, 20*time.Millisecond, func() bool { return len(p.rec.deliveries()) >= len(run.Published) })
	n := len(p.rec.deliveries())
	harness.WaitAtMost(ctx, 300*time.Millisecond, 50*time.Millisecond, func() bool { return len(p.rec.deliveries()) != n })
	run.Delivered = p.rec.deliveries()
	p.rec.mu.Lock()
	run.Confirmed = slices.Clone(p.rec.confirmed)
	run.Events = slices.Clone(p.rec.events)
	p.rec.mu.Unlock()
	run.MinPublished, run.MinIdle = 2*len(chans)*sc.PerChannel*9/10, sc.Idle
	return run
}

// implPushPath is impl's Subscriber on RESP3; prefix makes it the bad
// variant: its handler finds a push's subscription by prefix.
func implPushPath(ctx context.Context, b client.Backend, addrs []string, name string, prefix bool) *pushPath {
	GinkgoHelper()
	s, err := client.NewSubscriber(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Protocol: client.RESP3, Addrs: addrs, ClientName: name})
	Expect(err).NotTo(HaveOccurred())
	rec := newPushRecorder()
	var mu sync.Mutex
	var held []string // subscribed names, for the prefix handler
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range s.Messages() {
			ch := m.Channel
			if prefix {
				mu.Lock()
				for _, h := range held {
					if strings.HasPrefix(m.Channel, h) {
						ch = h
						break
					}
				}
				mu.Unlock()
			}
			switch m.Kind {
			case client.MsgMessage:
				rec.deliver(implConn(kindSubscribe, m.Channel), kindMessage, ch, m.Payload)
			case client.MsgSMessage:
				rec.deliver(implConn(kindSSubscribe, m.Channel), kindSMessage, ch, m.Payload)
			}
		}
	}()
	p := &pushPath{name: map[bool]string{false: "impl", true: "prefix"}[prefix], rec: rec}
	p.subscribe = func(ctx context.Context, kind string, chans []string) error {
		f := s.Subscribe
		if kind == kindSSubscribe {
			f = s.SSubscribe
		}
		if err := f(ctx, chans...); err != nil {
			return err
		}
		// impl returns once the server confirmed every name: the return is
		// when the application sees the confirmation.
		for _, ch := range chans {
			rec.confirm(implConn(kind, ch), kind, ch)
		}
		mu.Lock()
		held = append(held, chans...)
		slices.SortFunc(held, func(a, b string) int { return len(a) - len(b) })
		mu.Unlock()
		return nil
	}
	// impl's Subscriber carries no command of its own: its interleaving is
	// the later subscriptions' confirmations among the pushes.
	p.interleave = func(context.Context) bool { return false }
	p.close = func() { _ = s.Close(); <-done }
	return p
}

// implConn names the session of impl's Subscriber a subscription kind and
// channel use: impl shows no connection, but keeps one session for
// SUBSCRIBE and one per slot for SSUBSCRIBE, and hands their arrivals to
// the application in order, as they are seen there.
func implConn(kind, ch string) string {
	if kind == kindSSubscribe {
		return fmt.Sprintf("ssubscribe:slot %d", slot.Of(ch))
	}
	return kindSubscribe
}

// pace spaces interleaved commands a millisecond apart (a tight loop
// would only load the runner); false once ctx ended.
func pace(ctx context.Context) bool {
	select {
	case <-time.After(time.Millisecond):
		return true
	case <-ctx.Done():
		return false
	}
}

// rawPushPath is the library's own pub/sub API on RESP3.
func rawPushPath(ctx context.Context, b client.Backend, addrs []string, name string) *pushPath {
	GinkgoHelper()
	rec := newPushRecorder()
	p := &pushPath{name: "raw", rec: rec}
	rctx, cancel := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	switch b {
	case client.BackendGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClientName: name, Protocol: 3})
		// One PubSub for classic channels (any node serves them) and one per
		// shard channel: a PubSub is one connection to the node of its first
		// channel's slot.
		classic := c.Subscribe(ctx)
		var mu sync.Mutex
		all := []*redis.PubSub{classic}
		// Each PubSub is one connection; its Receive loop sees the
		// confirmations, pushes and PONGs in the order they arrived.
		receive := func(ps *redis.PubSub, conn, msgKind string) {
			loops.Go(func() {
				for {
					v, err := ps.Receive(rctx)
					if err != nil {
						if rctx.Err() != nil || errors.Is(err, redis.ErrClosed) {
							return
						}
						continue
					}
					switch m := v.(type) {
					case *redis.Subscription:
						rec.confirm(conn, m.Kind, m.Channel)
					case *redis.Message:
						rec.deliver(conn, msgKind, m.Channel, m.Payload)
					case *redis.Pong:
						rec.reply(conn)
					}
				}
			})
		}
		started := false
		p.subscribe = func(ctx context.Context, kind string, chans []string) error {
			if kind == kindSubscribe {
				if err := classic.Subscribe(ctx, chans...); err != nil {
					return err
				}
				if !started {
					started = true
					receive(classic, "classic", kindMessage)
				}
				return nil
			}
			for _, ch := range chans {
				ps := c.SSubscribe(ctx, ch)
				mu.Lock()
				all = append(all, ps)
				mu.Unlock()
				receive(ps, "shard:"+ch, kindSMessage)
			}
			return nil
		}
		// PubSub.Ping writes PING on the classic connection; its PONG comes
		// back through that connection's Receive loop.
		p.interleave = func(ctx context.Context) bool {
			_ = classic.Ping(ctx)
			return pace(ctx)
		}
		p.close = func() {
			cancel()
			mu.Lock()
			for _, ps := range all {
				_ = ps.Close()
			}
			mu.Unlock()
			loops.Wait()
			_ = c.Close()
		}
	case client.BackendValkeyGo:
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: addrs, ClientName: name, DisableCache: true})
		Expect(err).NotTo(HaveOccurred())
		// SUBSCRIBE carries no slot, so the cluster client would send it to
		// an arbitrary node; the classic subscriptions and the PINGs go to
		// one node through Client.Nodes (the cluster client's own
		// connections), so they share that node's pipelined connection
		// under RESP3 (subscribe commands and a slot-less PING both take
		// wire 0). A shard channel's subscription goes to its slot's owner.
		nodes := c.Nodes()
		addrs := slices.Sorted(maps.Keys(nodes))
		Expect(addrs).NotTo(BeEmpty())
		node, nodeConn := nodes[addrs[0]], "node "+addrs[0]
		conn := func(kind, ch string) string {
			if kind == kindSSubscribe {
				return "shard:" + ch
			}
			return nodeConn
		}
		// The hook and the message callback run on the connection's reader
		// goroutine, in arrival order.
		hctx := valkey.WithOnSubscriptionHook(rctx, func(s valkey.PubSubSubscription) { rec.confirm(conn(s.Kind, s.Channel), s.Kind, s.Channel) })
		p.subscribe = func(_ context.Context, kind string, chans []string) error {
			// Receive blocks while the subscription lasts: one per call,
			// each channel of a shard kind in its own (its slot's node).
			if kind == kindSubscribe {
				cmd := node.B().Subscribe().Channel(chans...).Build()
				loops.Go(func() {
					_ = node.Receive(hctx, cmd, func(m valkey.PubSubMessage) { rec.deliver(nodeConn, kindMessage, m.Channel, m.Message) })
				})
				return nil
			}
			for _, ch := range chans {
				cmd := c.B().Ssubscribe().Channel(ch).Build()
				loops.Go(func() {
					_ = c.Receive(hctx, cmd, func(m valkey.PubSubMessage) { rec.deliver("shard:"+ch, kindSMessage, m.Channel, m.Message) })
				})
			}
			return nil
		}
		// The PONG is read off the classic subscriptions' connection;
		// it is recorded when Do returns it.
		p.interleave = func(ctx context.Context) bool {
			if node.Do(ctx, node.B().Ping().Build()).Error() == nil {
				rec.reply(nodeConn)
			}
			return pace(ctx)
		}
		p.close = func() { cancel(); c.Close(); loops.Wait() }
	default:
		Fail("unknown backend " + string(b))
	}
	return p
}
