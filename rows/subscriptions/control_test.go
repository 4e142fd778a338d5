package subscriptions_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/pubsub"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/subscriptions/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

// banSetKey is a community's durable ban list, the source the conn-control
// resync re-reads.
func banSetKey(community string) string { return "buzz:" + community + ":bans" }

// resyncControl is the application's recovery for a restored D2 pattern
// subscription (pubsub.Options.Resync): the cache-invalidate pattern's
// lost signals are covered by dropping every cached entry, the conn-control
// pattern's by re-reading every community's ban list through the command
// pool — a real round trip to each list's owner, after the restoration.
func resyncControl(pool func() client.Pool) func(ctx context.Context, pattern string) error {
	return func(ctx context.Context, pattern string) error {
		if pattern != pubsub.ConnControlPattern {
			return nil // the cache is flushed: nothing to read back
		}
		for _, c := range communities {
			if _, err := pool().Do(ctx, client.NewCmd("SMEMBERS", []string{banSetKey(c)})); err != nil {
				return fmt.Errorf("re-read bans of %s: %w", c, err)
			}
		}
		return nil
	}
}

// patternHolderFailover kill-fails-over the shard whose primary holds the
// (or kills and restarts the replica that holds the)
// subscription client's pattern connection (CLIENT LIST psub>0, named
// or unnamed), found
// when the fault is injected: the connection the classic subscription
// rides dies with its node, and the library must reconnect elsewhere.
type patternHolderFailover struct{ client string }

func (f patternHolderFailover) Name() string { return "node/failover-kill-pattern-holder" }

func (patternHolderFailover) Available(t *fixtures.Topology) error {
	return fault.Failover{Mode: fault.FailoverKill}.Available(t)
}

func (f patternHolderFailover) Inject(ctx context.Context, t *fixtures.Topology) (fault.Window, error) {
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		reply, err := n.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			return fault.Window{}, fmt.Errorf("client list on %s: %w", n.Name(), err)
		}
		text, err := client.AsString(reply)
		if err != nil {
			text = fmt.Sprint(reply)
		}
		for _, c := range check.ParseClientList(n.Name(), text) {
			// Unnamed too: a library's reconnected pub/sub connection may
			// skip SETNAME, and no other client holds a pattern here.
			if (c.Name != f.client && c.Name != "") || c.PSub == 0 {
				continue
			}
			if role, err := n.CurrentRole(ctx); err == nil && role == fixtures.RolePrimary {
				w, err := fault.Failover{Shard: n.Shard(), Mode: fault.FailoverKill}.Inject(ctx, t)
				w.Fault = f.Name()
				return w, err
			}
			// A replica (go-redis puts a classic session on a random
			// node): no failover to drive, so the node itself dies and
			// comes back.
			w := fault.Window{Fault: f.Name(), Target: n.Name(), Start: time.Now()}
			if err := n.Kill(); err != nil {
				return w, fmt.Errorf("kill %s: %w", n.Name(), err)
			}
			if err := n.Restart(ctx); err != nil {
				return w, fmt.Errorf("restart %s: %w", n.Name(), err)
			}
			w.End = time.Now()
			return w, nil
		}
	}
	return fault.Window{}, fmt.Errorf("no node holds a pattern subscription of %s", f.client)
}

// ignoringDrops is the subscription client as an application meets it
// without impl's relay: neither library re-subscribes what the server ended
// (impl/client subscriber_*.go), so a MsgDropped notice never reaches the
// relay above, which neither re-subscribes nor reports itself unhealthy.
// The subscriptions row's naive relay (spec 000 §Failure Modes, "Subscription
// client fails to resubscribe": silent, missed events).
func ignoringDrops(sub client.Subscriber) client.Subscriber {
	out := make(chan client.Message, cap(sub.Messages()))
	go func() {
		defer close(out)
		for m := range sub.Messages() {
			if m.Kind != client.MsgDropped {
				out <- m
			}
		}
	}()
	return dropIgnorer{Subscriber: sub, out: out}
}

type dropIgnorer struct {
	client.Subscriber
	out chan client.Message
}

func (d dropIgnorer) Messages() <-chan client.Message { return d.out }

// Close closes the wrapped subscriber and returns once Messages is closed,
// as the client.Subscriber contract has it; what is still buffered is
// discarded so the forwarding goroutine can end.
func (d dropIgnorer) Close() error {
	err := d.Subscriber.Close()
	for range d.out {
	}
	return err
}

// droppingFailover is the naive failover control's fault: a graceful
// failover of shard, with the control's premise confirmed on both sides.
// Before it, the shard's primary must hold sharded subscriptions of client
// (CLIENT LIST ssub>0); after it, the demoted node must hold none: the
// server ended them (its sunsubscribe), the loss the naive relay exists to
// show. A failover that ended nothing is not confirmed (the cell is
// inconclusive), never a blind control.
type droppingFailover struct {
	client string
	shard  int
}

func (f droppingFailover) Name() string { return "node/failover-graceful-subscribed" }

func (f droppingFailover) Available(t *fixtures.Topology) error {
	return fault.Failover{Shard: f.shard, Mode: fault.FailoverGraceful}.Available(t)
}

func (f droppingFailover) Inject(ctx context.Context, t *fixtures.Topology) (fault.Window, error) {
	var primary *fixtures.Node
	for _, n := range t.Nodes() {
		if n.Shard() != f.shard || n.State() != fixtures.NodeRunning {
			continue
		}
		if role, err := n.CurrentRole(ctx); err == nil && role == fixtures.RolePrimary {
			primary = n
		}
	}
	if primary == nil {
		return fault.Window{}, fmt.Errorf("shard %d has no running primary", f.shard)
	}
	// Measured after the vote quarantine (the failover would wait it out
	// after the measurement otherwise), right before the failover.
	if err := fault.WaitVoteQuarantine(ctx, t, f.shard); err != nil {
		return fault.Window{}, err
	}
	before, err := shardedSubscriptions(ctx, primary, f.client)
	if err != nil {
		return fault.Window{}, err
	}
	if before == 0 {
		return fault.Window{}, fmt.Errorf("premise: %s, shard %d's primary, holds no sharded subscription of %s, so its failover can end none", primary.Name(), f.shard, f.client)
	}
	w, err := fault.Failover{Shard: f.shard, Mode: fault.FailoverGraceful}.Inject(ctx, t)
	w.Fault = f.Name()
	if err != nil {
		return w, err
	}
	if !strings.HasPrefix(w.Target, primary.Name()+"→") {
		return w, fmt.Errorf("premise: the failover demoted %s, not %s where the subscriptions were counted", w.Target, primary.Name())
	}
	// The demoted primary ends them when it learns of the new owner: at
	// once in a manual failover, so a few seconds is generous.
	var after int
	err = wait.Within(ctx, 5*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
		var err error
		if after, err = shardedSubscriptions(ctx, primary, f.client); err != nil {
			return err
		}
		if after > 0 {
			return fmt.Errorf("%s still holds %d", primary.Name(), after)
		}
		return nil
	})
	fmt.Fprintf(GinkgoWriter, "%s: %s held %d sharded subscriptions of %s before, %d after\n", f.Name(), primary.Name(), before, f.client, after)
	if err != nil {
		return w, fmt.Errorf("premise: the demoted primary kept the sharded subscriptions of %s: %w", f.client, err)
	}
	return w, nil
}

// shardedSubscriptions counts the sharded channels n holds for the client
// named name. Named only: both libraries name every connection they open
// (HELLO SETNAME / CLIENT SETNAME), and another relay of the same spec may
// hold subscriptions on the node too.
func shardedSubscriptions(ctx context.Context, n *fixtures.Node, name string) (int, error) {
	reply, err := n.Do(ctx, "CLIENT", "LIST")
	if err != nil {
		return 0, fmt.Errorf("client list on %s: %w", n.Name(), err)
	}
	text, err := client.AsString(reply)
	if err != nil {
		text = fmt.Sprint(reply)
	}
	held := 0
	for _, c := range check.ParseClientList(n.Name(), text) {
		if c.Name == name {
			held += c.SSub
		}
	}
	return held, nil
}

// spreadCommunities and spreadTopics size the topic-spread scenario: nine
// channel topics per community leave a chance of 3^-8 that all land on one
// of three shards by hash alone.
const (
	spreadCommunities = 2
	spreadTopics      = 9
	spreadRounds      = 3
)

// topicSpread builds each community's topics with impl's builder (topics),
// SSUBSCRIBEs them all, reads where the live cluster placed each (PUBSUB
// SHARDCHANNELS on every primary), then publishes community by community
// and reads each primary's SPUBLISH commandstats around it.
func topicSpread(ctx SpecContext, b client.Backend, name string, topics pubsub.Topics) judge.TopicSpreadRun {
	GinkgoHelper()
	rng := cfg.Rand(name)
	_, relay := openRelay(ctx, b, client.ModeCluster, cluster.Addrs(), "slotgate-sub-spread-"+string(b), pubsub.Options{}, 0, false)
	var delivered atomic.Int64
	go func() {
		for range relay.Deliveries() {
			delivered.Add(1)
		}
	}()
	run := judge.TopicSpreadRun{Shards: len(cluster.Primaries())}
	byCommunity := map[string][]string{}
	for _, c := range communities[:spreadCommunities] {
		for range spreadTopics {
			t := topics.Channel(c, fmt.Sprintf("%08x-%04x", rng.Uint32(), rng.Uint32()&0xffff))
			byCommunity[c] = append(byCommunity[c], t)
			run.Topics = append(run.Topics, judge.TopicPlacement{Kind: "channel", Community: c, Topic: t})
		}
		g := topics.Global(c)
		byCommunity[c] = append(byCommunity[c], g)
		run.Topics = append(run.Topics, judge.TopicPlacement{Kind: "global", Community: c, Topic: g})
	}
	for _, c := range communities[:spreadCommunities] {
		Expect(relay.Subscribe(ctx, byCommunity[c]...)).To(Succeed())
	}
	By("PUBSUB SHARDCHANNELS on every primary: where the live cluster placed each topic")
	placed := map[string]int{}
	for _, n := range cluster.Primaries() {
		reply, err := n.Do(ctx, "PUBSUB", "SHARDCHANNELS")
		Expect(err).NotTo(HaveOccurred())
		list, _ := reply.([]any)
		for _, ch := range list {
			placed[fmt.Sprint(ch)] = n.Shard()
		}
	}
	for i := range run.Topics {
		run.Topics[i].Shard = -1
		if s, ok := placed[run.Topics[i].Topic]; ok {
			run.Topics[i].Shard = s
		}
	}
	By("SPUBLISH community by community, reading each primary's commandstats around it")
	for _, c := range communities[:spreadCommunities] {
		before := spublishCalls(ctx)
		for range spreadRounds {
			for _, t := range byCommunity[c] {
				_, err := relay.Publish(ctx, t, "spread")
				Expect(err).NotTo(HaveOccurred())
				run.Published++
			}
		}
		after := spublishCalls(ctx)
		for shard, n := range after {
			run.Loads = append(run.Loads, judge.ShardLoad{Community: c, Shard: shard, Calls: n - before[shard]})
		}
	}
	harness.WaitAtMost(ctx, 2*time.Second, 20*time.Millisecond, func() bool { return delivered.Load() >= int64(run.Published) })
	run.Delivered = int(delivered.Load())
	return run
}

// spublishCalls reads cmdstat_spublish calls on every primary, by shard.
func spublishCalls(ctx context.Context) map[int]int64 {
	GinkgoHelper()
	out := map[int]int64{}
	for _, n := range cluster.Primaries() {
		info, err := n.Info(ctx, "commandstats")
		Expect(err).NotTo(HaveOccurred())
		out[n.Shard()] = 0
		for _, f := range strings.Split(info["cmdstat_spublish"], ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				calls, err := strconv.ParseInt(v, 10, 64)
				Expect(err).NotTo(HaveOccurred())
				out[n.Shard()] = calls
			}
		}
	}
	return out
}

func topicSpreadScenario(ctx SpecContext, b client.Backend, name string) report.Check {
	run := topicSpread(ctx, b, name, pubsub.Topics{})
	res := judge.TopicsSpread.Judge(judge.SpreadInput{Run: run, MinPerCommunity: spreadTopics - 1})
	for _, o := range res.Observed {
		fmt.Fprintln(GinkgoWriter, "  ", o)
	}
	By("negative control: a topic builder that wraps the community in a hash tag")
	Expect(cluster.Reset(ctx)).To(Succeed())
	bad := topicSpread(ctx, b, name+"/tagged-topics", pubsub.Topics{Mutant: pubsub.MutantTaggedTopics})
	badRes := judge.TopicsSpread.Judge(judge.SpreadInput{Run: bad, MinPerCommunity: spreadTopics - 1})
	for _, o := range badRes.Observed {
		fmt.Fprintln(GinkgoWriter, "   variant:", o)
	}
	ev := harness.Evidence(cfg, cluster, nil)
	return harness.Check(row, report.ColumnSilentlyWrong, "", res, ev,
		harness.Variant("tagged-topics",
			"impl's topic builder wrapping the community in a hash tag (buzz:{<community>}:channel:<uuid>): every topic subscribes, publishes and delivers, and each community's whole fan-out lands on one shard (impl/pubsub MutantTaggedTopics)",
			badRes))
}
