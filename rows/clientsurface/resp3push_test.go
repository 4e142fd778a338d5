package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
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

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/rows/clientsurface/replay"
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

// pushRecorder keeps one path's confirmations, deliveries and
// interleaved commands.
type pushRecorder struct {
	mu          sync.Mutex
	confirmed   []judge.Sub
	delivered   []judge.Push
	interleaved atomic.Int64
}

func (r *pushRecorder) confirm(kind, ch string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.confirmed = append(r.confirmed, judge.Sub{Kind: kind, Channel: ch})
}

func (r *pushRecorder) deliver(kind, ch, payload string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivered = append(r.delivered, judge.Push{Kind: kind, Channel: ch, Payload: payload})
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
// command on the subscription connection while pushes arrive (false when
// the path has no such command).
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

	impl, raw, bad := check.Judge(replay.RESP3Push, runs[0]), check.Judge(replay.RESP3Push, runs[1]), check.Judge(replay.RESP3Push, runs[2])
	ev := harness.Evidence(cfg, cluster, pub)
	ev.Metrics = map[string]float64{"channels": float64(2 * sc.Longest), "longest_channel": float64(sc.Longest), "idle_ms": float64(sc.Idle.Milliseconds())}
	for i, p := range paths {
		ev.Metrics[p.name+"_published"] = float64(len(runs[i].Published))
		ev.Metrics[p.name+"_delivered"] = float64(len(runs[i].Delivered))
		ev.Metrics[p.name+"_interleaved"] = float64(runs[i].Interleaved)
	}
	rawAPI := map[client.Backend]string{
		client.BackendGoRedis:  "go-redis ClusterClient.Subscribe/SSubscribe → PubSub.Receive, PubSub.Ping (Protocol 3)",
		client.BackendValkeyGo: "valkey-go Client.Receive (SUBSCRIBE, SSUBSCRIBE) with WithOnSubscriptionHook, Client.Do PING (RESP3)",
	}[b]
	ev.Observed = append(ev.Observed, "impl: "+observed(impl), "raw "+rawAPI+": "+observed(raw), "prefix-matching handler: "+observed(bad))
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementRESP3Push, Client: pub.Version(), Path: rawAPI,
		Raw: raw, Wrapped: impl, Wrapper: "impl/client Subscriber (per-slot sessions, confirmations awaited)",
		Evidence: fmt.Sprintf("SUBSCRIBE and SSUBSCRIBE to %d channels of 1 to %d characters, each a prefix of the next; half confirmed after %v idle while the other half's pushes arrive; %d PUBLISH and %d SPUBLISH per channel.",
			sc.Longest, sc.Longest, sc.Idle, sc.PerChannel, sc.PerChannel)})
	ctl := harness.Variant("prefix-handler", "a relay handler that hands a push to the first subscribed name its channel starts with (shortest first)", bad)
	return harness.Check(row, report.ColumnSilentlyWrong, "", impl, ev, ctl)
}

// pushWorkload runs one path: subscribe the first half of chans (both
// kinds), leave the connection idle, then publish to the first half while
// the second half is subscribed and interleaved commands run, then
// publish to the second half, and wait for every delivery.
func pushWorkload(ctx context.Context, p *pushPath, pub client.Pool, chans []string, sc pushScale) judge.PushRun {
	GinkgoHelper()
	half := len(chans) / 2
	first, second := chans[:half], chans[half:]
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
	// The workload's idle stretch: nothing crosses the subscription
	// connection, so the later confirmations arrive on an idle one.
	idleFrom := time.Now()
	select {
	case <-time.After(sc.Idle):
	case <-ctx.Done():
	}
	run.Idle = time.Since(idleFrom)

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
	// Pushes on the first half while the second half is subscribed and
	// the path's own command runs on the same connection.
	stop := make(chan struct{})
	var pubs sync.WaitGroup
	pubs.Go(func() {
		for seq := 0; seq < sc.PerChannel; seq++ {
			publish(first, seq)
		}
		close(stop)
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
	subscribe(second)
	pubs.Wait()
	run.Interleaved = int(p.rec.interleaved.Load())
	harness.WaitAtMost(ctx, 10*time.Second, 20*time.Millisecond, func() bool { return confirmed(second) })
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
	p.rec.mu.Unlock()
	run.Interleaved += 2 * len(second) // the second half's SUBSCRIBE and SSUBSCRIBE went out among the pushes
	run.MinPublished, run.MinIdle = 2*len(chans)*sc.PerChannel*9/10, sc.Idle
	return run
}

// implPushPath is impl's Subscriber on RESP3; prefix makes it the bad
// variant: its handler finds a push's subscription by prefix.
func implPushPath(ctx context.Context, b client.Backend, addrs []string, name string, prefix bool) *pushPath {
	GinkgoHelper()
	s, err := client.NewSubscriber(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Protocol: client.RESP3, Addrs: addrs, ClientName: name})
	Expect(err).NotTo(HaveOccurred())
	rec := &pushRecorder{}
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
				rec.deliver(kindMessage, ch, m.Payload)
			case client.MsgSMessage:
				rec.deliver(kindSMessage, ch, m.Payload)
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
		// impl returns once the server confirmed every name.
		for _, ch := range chans {
			rec.confirm(kind, ch)
		}
		mu.Lock()
		held = append(held, chans...)
		slices.SortFunc(held, func(a, b string) int { return len(a) - len(b) })
		mu.Unlock()
		return nil
	}
	// impl's Subscriber carries no command of its own: its interleaving is
	// the second half's subscribes among the pushes.
	p.interleave = func(context.Context) bool { return false }
	p.close = func() { _ = s.Close(); <-done }
	return p
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
	rec := &pushRecorder{}
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
		receive := func(ps *redis.PubSub, msgKind string) {
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
						rec.confirm(m.Kind, m.Channel)
					case *redis.Message:
						rec.deliver(msgKind, m.Channel, m.Payload)
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
					receive(classic, kindMessage)
				}
				return nil
			}
			for _, ch := range chans {
				ps := c.SSubscribe(ctx, ch)
				mu.Lock()
				all = append(all, ps)
				mu.Unlock()
				receive(ps, kindSMessage)
			}
			return nil
		}
		p.interleave = func(ctx context.Context) bool {
			if classic.Ping(ctx) == nil {
				rec.interleaved.Add(1)
			}
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
		hctx := valkey.WithOnSubscriptionHook(rctx, func(s valkey.PubSubSubscription) { rec.confirm(s.Kind, s.Channel) })
		p.subscribe = func(_ context.Context, kind string, chans []string) error {
			// Receive blocks while the subscription lasts: one per call,
			// each channel of a shard kind in its own (its slot's node).
			cmds := []valkey.Completed{c.B().Subscribe().Channel(chans...).Build()}
			msgKind := kindMessage
			if kind == kindSSubscribe {
				cmds, msgKind = nil, kindSMessage
				for _, ch := range chans {
					cmds = append(cmds, c.B().Ssubscribe().Channel(ch).Build())
				}
			}
			for _, cmd := range cmds {
				loops.Go(func() {
					_ = c.Receive(hctx, cmd, func(m valkey.PubSubMessage) { rec.deliver(msgKind, m.Channel, m.Message) })
				})
			}
			return nil
		}
		// Under RESP3 valkey-go's subscriptions share each node's pipelined
		// connection, so a PING goes out among the pushes.
		p.interleave = func(ctx context.Context) bool {
			if c.Do(ctx, c.B().Ping().Build()).Error() == nil {
				rec.interleaved.Add(1)
			}
			return pace(ctx)
		}
		p.close = func() { cancel(); c.Close(); loops.Wait() }
	default:
		Fail("unknown backend " + string(b))
	}
	return p
}
