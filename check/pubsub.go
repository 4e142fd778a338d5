package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// BroadcastReachesAll is Axiom A4's first half (spec 000 §Axioms): classic
// PUBLISH to one node is propagated to every node, so every other node
// received at least messages bus messages.
func BroadcastReachesAll(deltas []history.NodeDelta, messages int64) Result {
	const name = "broadcast-reaches-all"
	if len(deltas) < 2 || messages == 0 {
		return unknown(name, "need ≥2 nodes and a non-empty burst (got %d nodes, %d messages)", len(deltas), messages)
	}
	var missing []string
	for _, d := range deltas {
		if d.Sender {
			continue
		}
		if got := d.PublishReceived + d.ShardPublishReceived; got < messages {
			missing = append(missing, fmt.Sprintf("%s (shard %d) received %d of %d", d.Node, d.Shard, got, messages))
		}
	}
	if len(missing) > 0 {
		return fail(name, strings.Join(missing, "\n"), "%d nodes did not receive the broadcast", len(missing))
	}
	return pass(name, "all %d other nodes received all %d messages", len(deltas)-1, messages)
}

// ShardConfined is Axiom A4's second half: a sharded publish reaches only
// the channel's owner shard (its replicas), never a node of another shard.
func ShardConfined(deltas []history.NodeDelta, ownerShard int, messages int64) Result {
	const name = "shard-confined"
	if len(deltas) < 2 || messages == 0 {
		return unknown(name, "need ≥2 nodes and a non-empty burst (got %d nodes, %d messages)", len(deltas), messages)
	}
	var leaked []string
	outside := 0
	for _, d := range deltas {
		if d.Shard == ownerShard {
			continue
		}
		outside++
		if got := d.PublishReceived + d.ShardPublishReceived; got > 0 {
			leaked = append(leaked, fmt.Sprintf("%s (shard %d) received %d messages for shard %d", d.Node, d.Shard, got, ownerShard))
		}
	}
	if outside == 0 {
		return unknown(name, "every node is in the owner shard: confinement is not observable on one shard")
	}
	if len(leaked) > 0 {
		return fail(name, strings.Join(leaked, "\n"), "%d of %d nodes outside the owner shard processed the messages", len(leaked), outside)
	}
	return pass(name, "%d nodes outside shard %d received nothing", outside, ownerShard)
}

// CPUOutside sums the main-thread CPU spent by nodes outside shard.
func CPUOutside(deltas []history.NodeDelta, shard int) time.Duration {
	var sum time.Duration
	for _, d := range deltas {
		if d.Shard != shard {
			sum += d.CPU
		}
	}
	return sum
}

// PushDelivery is the subscriptions row's wire check (spec 000 §Client
// Architecture 1–2: sharded subscriptions ride RESP3 push frames;
// §Conformance, Subscriptions: "RESP3 push delivery"): every connection of
// the subscription client that holds a subscription (named name, or
// unnamed: a library's dedicated pub/sub connection may skip SETNAME)
// negotiated RESP3, and together they hold at least the exact topics and
// patterns the application holds — so the connections judged are the ones
// that delivered. A subscription held over RESP2 fails: its messages came
// as RESP2 pub/sub replies on a connection in subscribe mode, not as
// pushes, and nothing in the deliveries shows it.
func PushDelivery(conns []ClientConn, name string, exact, patterns int) Result {
	const checker = "resp3-push-delivery"
	var ssub, psub, total int
	var bad []string
	for _, c := range conns {
		if (c.Name != name && c.Name != "") || c.Sub+c.PSub+c.SSub == 0 {
			continue
		}
		total++
		ssub += c.SSub
		psub += c.PSub
		if c.Resp != 3 {
			bad = append(bad, fmt.Sprintf("%s id=%s name=%s resp=%d ssub=%d psub=%d sub=%d", c.Node, c.ID, c.Name, c.Resp, c.SSub, c.PSub, c.Sub))
		}
	}
	obs := []string{fmt.Sprintf("%d subscribed connection(s) of %s: ssub %d, psub %d (application holds %d topics, %d patterns)", total, name, ssub, psub, exact, patterns)}
	var r Result
	switch {
	case len(bad) > 0:
		r = fail(checker, strings.Join(first(bad, 5), "\n"), "%d of %d subscribed connections of %s did not negotiate RESP3: delivery is not push", len(bad), total, name)
	case ssub < exact || psub < patterns:
		r = unknown(checker, "the subscribed connections of %s hold %d shard channels and %d patterns, the application %d and %d: the delivering connections were not all observed", name, ssub, psub, exact, patterns)
	default:
		r = pass(checker, "all %d subscribed connections of %s speak RESP3 (%d shard channels, %d patterns): delivery by push", total, name, ssub, psub)
	}
	r.Observed = obs
	return r
}
