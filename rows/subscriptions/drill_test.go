package subscriptions_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/pubsub"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/subscriptions/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Publishing pace: three publishers, each pausing between messages, so the
// three-shard cluster sees a steady few hundred messages a second without
// starving two shared cores.
const (
	publishers     = 3
	publishPause   = 3 * time.Millisecond
	publishTimeout = 3 * time.Second
	// freshTimeout bounds the wait, after each fault, for every held
	// subscription to deliver a message sent after the fault; a kill
	// failover takes ~3 s (two node timeouts plus the election).
	freshTimeout = 20 * time.Second
)

// drill is one subscriptions scenario's shape: which subscriptions, which
// faults, and how the relay is configured.
type drill struct {
	name string
	// perShard exact topics owned by each primary, plus each community's
	// global topic.
	perShard int
	// patterns subscribes and publishes the two D2 pattern channels.
	patterns bool
	// faults builds the faults once the topics are known.
	faults func(d *drillRun) []fault.Fault
	// churn runs dynamic subscribe/unsubscribe rounds instead of faults.
	churn int
	// steady is how long to publish when there are no faults or churn.
	steady time.Duration
	opts   pubsub.Options
	// fresh overrides freshTimeout (the naive control never recovers) and
	// the warm-up wait (a misrouting variant never delivers some topics).
	fresh time.Duration
	// protocol is the subscription client's RESP version (default RESP3).
	protocol client.Protocol
	// wire reads CLIENT LIST on every node once every subscription
	// delivered, for the RESP3 push check.
	wire bool
	// stall makes the application stop reading deliveries for this long
	// once every subscription delivered (a slow consumer).
	stall time.Duration
	// tag names a variant's subscription client apart from the real run's.
	tag string
	// quiet overrides how long the history waits for missing messages.
	quiet time.Duration
	// ignoreDrops runs the relay over a subscription client whose
	// server-ended subscriptions never reach it (ignoringDrops): the raw
	// library as the application meets it, the naive relay.
	ignoreDrops bool
	// noResync runs a patterns drill with no application resync: the
	// library restores the patterns, nothing recovers what the gap lost.
	noResync bool
}

// drillRun is a drill in progress.
type drillRun struct {
	backend client.Backend
	rng     *rand.Rand
	pool    client.Pool
	subName string
	rec     *traffic.Subscriptions
	topics  []string
	targets []traffic.SubTarget
	windows []fault.Window
	// faultErr is fault.Apply's error when a fault could not be injected
	// or confirmed: the drill stopped faulting there and its checks are
	// inconclusive (the harness's failure, not the client's).
	faultErr error
	// conns is every node's CLIENT LIST once the subscriptions delivered
	// (drill.wire); exact and patterns count what the application held then.
	conns           []check.ClientConn
	exact, patterns int
	// relay is the relay under test (its stats are evidence).
	relay *pubsub.Relay
}

// judged is the scenario's result, inconclusive when a fault was not
// confirmed.
func (r *drillRun) judged(res check.Result) check.Result {
	if inc, ok := harness.FaultResult(res.Checker, r.faultErr); ok {
		return check.All(res.Checker, res, inc)
	}
	return res
}

var communities = []string{"alpha", "bravo", "charlie", "delta"}

// topicsOnEveryShard returns perShard seeded channel topics owned by each
// primary, in primary order.
func topicsOnEveryShard(ctx context.Context, rng *rand.Rand, t *fixtures.Topology, perShard int) []string {
	GinkgoHelper()
	want := map[int]int{} // by shard: a failover may have moved a primary role
	for _, p := range t.Primaries() {
		want[p.Shard()] = perShard
	}
	var out []string
	for left, tries := perShard*len(want), 0; left > 0; tries++ {
		Expect(tries).To(BeNumerically("<", 10_000), "find %d topics per shard", perShard)
		topic := pubsub.ChannelTopic(communities[rng.IntN(len(communities))], fmt.Sprintf("%08x-%04x", rng.Uint32(), rng.Uint32()&0xffff))
		owner, err := t.NodeForSlot(ctx, slot.Of(topic))
		Expect(err).NotTo(HaveOccurred())
		if want[owner.Shard()] > 0 {
			want[owner.Shard()]--
			left--
			out = append(out, topic)
		}
	}
	return out
}

// openRelay opens the relay's two clients on backend: the command pool and
// a subscription client with its own name, so faults can kill exactly it.
func openRelay(ctx context.Context, backend client.Backend, mode client.Mode, addrs []string, subName string, o pubsub.Options, proto client.Protocol, ignoreDrops bool) (client.Pool, *pubsub.Relay) {
	GinkgoHelper()
	pool, err := client.NewPool(ctx, client.Options{Backend: backend, Mode: mode, Addrs: addrs, ClientName: subName + "-pool"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pool.Close)
	sub, err := client.NewSubscriber(ctx, client.Options{Backend: backend, Mode: mode, Protocol: proto, Addrs: addrs, ClientName: subName})
	Expect(err).NotTo(HaveOccurred())
	if ignoreDrops {
		sub = ignoringDrops(sub)
	}
	relay := pubsub.New(sub, pool, o)
	DeferCleanup(relay.Close)
	return pool, relay
}

// run drives the drill on backend and returns its history.
func (d drill) run(ctx context.Context, backend client.Backend, scenario string) (history.SubscriptionHistory, *drillRun) {
	GinkgoHelper()
	r := &drillRun{backend: backend, rng: cfg.Rand(scenario), subName: "slotgate-sub-" + string(backend)}
	if d.tag != "" {
		r.subName += "-" + d.tag
	}
	if d.patterns && d.opts.Resync == nil && !d.noResync {
		d.opts.Resync = resyncControl(func() client.Pool { return r.pool })
	}
	r.pool, r.relay = openRelay(ctx, backend, client.ModeCluster, cluster.Addrs(), r.subName, d.opts, d.protocol, d.ignoreDrops)
	r.rec = traffic.NewSubscriptions(r.relay, traffic.ClockOf(ctx))
	if d.quiet > 0 {
		r.rec.DrainQuiet(d.quiet)
	}

	universe := topicsOnEveryShard(ctx, r.rng, cluster, d.perShard)
	for _, c := range communities[:2] {
		universe = append(universe, pubsub.GlobalTopic(c))
	}
	r.topics = universe
	for _, t := range universe {
		r.targets = append(r.targets, traffic.TopicTarget(t))
	}
	held := universe
	if d.churn > 0 {
		held = universe[:len(universe)/2]
	}
	By(fmt.Sprintf("SSUBSCRIBE %d exact topics across %d shards", len(held), len(cluster.Primaries())))
	Expect(r.rec.Subscribe(ctx, held...)).To(Succeed())
	if d.patterns {
		By("PSUBSCRIBE " + pubsub.CacheInvalidatePattern + ", " + pubsub.ConnControlPattern)
		Expect(r.rec.SubscribePatterns(ctx, pubsub.Patterns...)).To(Succeed())
		for _, c := range communities {
			r.targets = append(r.targets,
				traffic.SubTarget{Channel: pubsub.CacheInvalidateChannel(c), Sub: pubsub.CacheInvalidatePattern},
				traffic.SubTarget{Channel: pubsub.ConnControlChannel(c), Sub: pubsub.ConnControlPattern})
		}
	}
	stop := r.rec.Publishers(ctx, publishers, r.targets, publishPause, publishTimeout)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	warm := 5 * time.Second
	if d.fresh > 0 {
		warm = min(warm, d.fresh)
	}
	r.rec.WaitFresh(ctx, r.rec.Now(), warm) // every subscription delivers before the first fault
	if d.wire {
		By("CLIENT LIST on every node: the protocol the subscription connections negotiated")
		r.exact, r.patterns = len(held), 0
		if d.patterns {
			r.patterns = len(pubsub.Patterns)
		}
		r.conns = subscriberConns(ctx)
	}
	if d.stall > 0 {
		By(fmt.Sprintf("the application stops reading deliveries for %v", d.stall))
		r.rec.Stall(d.stall)
		time.Sleep(d.stall) // a duration: the stall's length is the fault
	}

	var faults []fault.Fault
	if d.faults != nil {
		faults = d.faults(r)
	}
	fresh := freshTimeout
	if d.fresh > 0 {
		fresh = d.fresh
	}
	for _, f := range faults {
		By("fault " + f.Name()) // a failover waits out its shard's vote quarantine itself
		w, err := fault.Apply(ctx, cluster, f)
		if _, ok := fault.NotConfirmed(err); ok {
			r.faultErr = err
			break
		}
		Expect(err).NotTo(HaveOccurred())
		r.windows = append(r.windows, w)
		r.rec.Fault(w.Fault, w.Target, w.Start, w.End)
		// Twice: the second round proves delivery after every restoration
		// the client reported during the first.
		for range 2 {
			if waiting := r.rec.WaitFresh(ctx, r.rec.Now(), fresh); len(waiting) > 0 {
				fmt.Fprintf(GinkgoWriter, "after %s, %d subscriptions delivered nothing new within %v: %v\n", f.Name(), len(waiting), fresh, waiting)
				break
			}
		}
	}
	for i := range d.churn {
		r.churnRound(ctx, i, universe)
	}
	if d.steady > 0 {
		time.Sleep(d.steady) // a duration: steady traffic the drill asks for
	}
	time.Sleep(200 * time.Millisecond) // a duration: traffic after the last fault or change
	// Publish on until twice the messages the checks assume (minExpected)
	// were acknowledged: publishers slow down under load, and a fixed
	// window once left too few ("only 94 messages expected, need 100":
	// blind). Capped, so a relay that
	// refuses every publish still ends.
	harness.WaitAtMost(ctx, enoughWait, 100*time.Millisecond, func() bool { return r.rec.Acknowledged() >= 2*minExpected })
	stop()
	stopped = true
	return r.rec.History(), r
}

// churnRound unsubscribes a few held topics, subscribes a few others, and
// subscribes one held topic again (a duplicate confirmation the relay must
// tolerate).
func (r *drillRun) churnRound(ctx context.Context, round int, universe []string) {
	GinkgoHelper()
	// The held half rotates by 3 topics a round.
	shift := (3 * (round + 1)) % len(universe)
	var next []string
	for i := range len(universe) / 2 {
		next = append(next, universe[(i+shift)%len(universe)])
	}
	prev := map[string]bool{}
	prevShift := (3 * round) % len(universe)
	for i := range len(universe) / 2 {
		prev[universe[(i+prevShift)%len(universe)]] = true
	}
	nextSet := map[string]bool{}
	for _, t := range next {
		nextSet[t] = true
	}
	var drop, add []string
	for t := range prev {
		if !nextSet[t] {
			drop = append(drop, t)
		}
	}
	for _, t := range next {
		if !prev[t] {
			add = append(add, t)
		}
	}
	Expect(r.rec.Unsubscribe(ctx, drop...)).To(Succeed())
	Expect(r.rec.Subscribe(ctx, add...)).To(Succeed())
	Expect(r.rec.Subscribe(ctx, next[r.rng.IntN(len(next))])).To(Succeed()) // duplicate confirmation
	// A duration, not a wait: traffic on this round's set paces the churn.
	time.Sleep(150 * time.Millisecond)
}

// subscriberConns reads CLIENT LIST on every running node.
func subscriberConns(ctx context.Context) []check.ClientConn {
	GinkgoHelper()
	var out []check.ClientConn
	for _, n := range cluster.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		reply, err := n.Do(ctx, "CLIENT", "LIST")
		Expect(err).NotTo(HaveOccurred())
		text, err := client.AsString(reply)
		if err != nil {
			text = fmt.Sprint(reply)
		}
		out = append(out, check.ParseClientList(n.Name(), text)...)
	}
	return out
}

// evidence is the check's evidence: fault windows, and the numbers the
// row reports per backend.
func (r *drillRun) evidence(h history.SubscriptionHistory) report.Evidence {
	ev := harness.Evidence(cfg, cluster, r.pool)
	ev.Faults = harness.Windows(r.windows...)
	if len(h.Faults) > 0 {
		ops, faults := harness.SubscriptionOps(string(r.backend), h)
		ev.Timeline = harness.Timeline(history.History{Seed: cfg.Seed, Ops: ops, Faults: faults})
	}
	st := judge.AnalyzeSubscriptions(h)
	for _, o := range judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: 0}).Observed {
		fmt.Fprintln(GinkgoWriter, "  ", o)
	}
	loud := judge.SubscriptionErrors.Judge(judge.LoudInput{History: h, MinPublishes: 0})
	fmt.Fprintf(GinkgoWriter, "   loud: %s %s\n%s\n", loud.Status, loud.Message, loud.Counterexample)
	for _, e := range h.Events {
		if e.Kind != "subscribed" {
			fmt.Fprintf(GinkgoWriter, "   event %v %s %s %s\n", e.At.Round(time.Millisecond), e.Sub, e.Kind, e.Err)
		}
	}
	var maxGap, maxHealthy time.Duration
	for _, f := range st.Faults {
		maxGap, maxHealthy = max(maxGap, f.Gap), max(maxHealthy, f.Healthy)
	}
	ev.Metrics = map[string]float64{
		"published":              float64(st.Published),
		"expected":               float64(st.Expected),
		"delivered":              float64(st.Delivered),
		"faults":                 float64(len(st.Faults)),
		"lost_inside_windows":    float64(st.LostInside),
		"lost_outside":           float64(st.LostOutside),
		"duplicates":             float64(st.Duplicates),
		"reordered":              float64(st.Reordered),
		"misrouted":              float64(st.Misrouted),
		"max_gap_ms":             ms(maxGap),
		"max_healthy_ms":         ms(maxHealthy),
		"max_ack_to_delivery_ms": ms(st.InFlightSlack),
		"in_flight_bound_ms":     ms(judge.SubInFlightBound),
		"recovery_bound_ms":      ms(judge.SubRecoveryBound),
		"foreign_ignored":        float64(r.rec.Foreign()),
	}
	fmt.Fprintf(GinkgoWriter, "metrics: %v\n", ev.Metrics)
	return ev
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
