package check

import (
	"fmt"
	"strings"
	"time"
)

// NodeDelta is what one node did during a publish burst: the cluster-bus
// publish messages it received (CLUSTER INFO
// cluster_stats_messages_publish[shard]_received) and the main-thread CPU it
// spent (INFO cpu), as deltas over the burst.
type NodeDelta struct {
	Node    string
	Shard   int
	Primary bool
	// Sender is true for the node the burst was sent to.
	Sender               bool
	PublishReceived      int64
	ShardPublishReceived int64
	CPU                  time.Duration
}

// BroadcastReachesAll is Axiom A4's first half (spec 000 §Axioms): classic
// PUBLISH to one node is propagated to every node, so every other node
// received at least messages bus messages.
func BroadcastReachesAll(deltas []NodeDelta, messages int64) Result {
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
func ShardConfined(deltas []NodeDelta, ownerShard int, messages int64) Result {
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
func CPUOutside(deltas []NodeDelta, shard int) time.Duration {
	var sum time.Duration
	for _, d := range deltas {
		if d.Shard != shard {
			sum += d.CPU
		}
	}
	return sum
}
