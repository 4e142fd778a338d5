package failuredrills_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/pubsub"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/traffic"
)

// Spec 000 §Conformance, Failure drills: "both clients (command pool +
// subscription client) have independent recovery behavior — drill both".
// The drills run the relay's subscription client next to the command-pool
// workload: one sharded topic per shard, each with its own publisher (so a
// halted shard does not slow the others' publishes), and the subscription
// client's halt per drill is the time until the drilled shard's topic
// delivers a message published after the drill began.

// subRole is the subscription client's workload during the drills.
type subRole struct {
	rec        *traffic.Subscriptions
	topicShard map[string]int
	stop       func()
}

// publishPace and publishTimeout pace each topic's publisher; a publish
// to a dead primary gives up after publishTimeout and the next one is sent.
const (
	publishPace    = 10 * time.Millisecond
	publishTimeout = time.Second
)

// startSubRole opens a relay — a subscription client of o.Backend (o's
// topology options make the raw library or a control of it) publishing
// through pool — subscribes one topic per shard and starts the publishers.
// o.Mode, Addrs and ClientName are set here.
func startSubRole(ctx context.Context, o client.Options, pool client.Pool, clock *traffic.Clock, rng *rand.Rand, name string) *subRole {
	GinkgoHelper()
	o.Mode, o.Addrs, o.ClientName = client.ModeCluster, cluster.Addrs(), name
	sub, err := client.NewSubscriber(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	relay := pubsub.New(sub, pool, pubsub.Options{})
	DeferCleanup(relay.Close)
	r := &subRole{rec: traffic.NewSubscriptions(relay, clock), topicShard: map[string]int{}}
	for shard := range len(cluster.Primaries()) {
		for {
			topic := pubsub.ChannelTopic("drill", fmt.Sprintf("%s-%08x", name, rng.Uint32()))
			n, err := cluster.NodeForSlot(ctx, slot.Of(topic))
			Expect(err).NotTo(HaveOccurred())
			if n.Shard() == shard {
				r.topicShard[topic] = shard
				break
			}
		}
	}
	topics := make([]string, 0, len(r.topicShard))
	for t := range r.topicShard {
		topics = append(topics, t)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	Expect(r.rec.Subscribe(sctx, topics...)).To(Succeed())
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, t := range topics {
		wg.Go(func() {
			for pctx.Err() == nil {
				c, cancel := context.WithTimeout(pctx, publishTimeout)
				r.rec.Publish(c, i, traffic.TopicTarget(t))
				cancel()
				select {
				case <-pctx.Done():
				case <-time.After(publishPace):
				}
			}
		})
	}
	r.stop = sync.OnceFunc(func() { stop(); wg.Wait() })
	DeferCleanup(r.stop)
	return r
}

// topicOf is the role's topic on shard.
func (r *subRole) topicOf(shard int) string {
	for t, s := range r.topicShard {
		if s == shard {
			return t
		}
	}
	return ""
}

// delivered says the shard's topic delivered a message published at or
// after since.
func (r *subRole) delivered(shard int, since time.Duration) bool {
	return len(r.rec.WaitFresh(context.Background(), since, 0, r.topicOf(shard))) == 0
}

// halts stops the role and measures its halt in each drill.
func (r *subRole) halts(drills []judge.Drill, until time.Duration) ([]judge.RoleHalt, history.SubscriptionHistory) {
	r.stop()
	h := r.rec.History()
	return judge.SubscriptionHalts(h, drills, r.topicShard, until), h
}
