package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// undeclaredKeyHazard checks the measured refinement of A2 on a multi-shard
// cluster: undeclared keys bypass the declared-keys slot check (two slots of
// one node succeed silently), and a remote undeclared key fails only after
// the script's earlier writes were applied. Pass means the hazard is exactly
// as the spec's refinement states — which is why the locality validator must
// reject undeclared access mechanically.
func undeclaredKeyHazard(o UndeclaredKeys) check.Result {
	const name = "undeclared-key-hazard"
	obs := []string{
		fmt.Sprintf("two undeclared keys in two slots of one node: %s", orOK(o.SameNodeErr)),
		fmt.Sprintf("undeclared remote key: %s", orOK(o.RemoteErr)),
		fmt.Sprintf("earlier local write applied before the remote error: %v", o.EarlierWriteApplied),
	}
	var r check.Result
	switch {
	case o.SameNodeErr != "":
		r = check.Failf(name, obs[0], "the server refused undeclared keys on one node: the refinement does not hold")
	case o.RemoteErr == "":
		r = check.Failf(name, obs[1], "a script reached an undeclared key that is not local and succeeded: no remote key was exercised")
	case !o.EarlierWriteApplied:
		r = check.Failf(name, obs[2], "the remote error rolled back the earlier write: scripts stayed atomic")
	default:
		r = check.Passf(name, "undeclared keys bypass the slot check; a remote one errors after earlier writes applied (partial script)")
	}
	r.Observed = obs
	return r
}

func orOK(err string) string {
	if err == "" {
		return "succeeded"
	}
	return "error: " + err
}

// slotMathAgrees is Axiom A1 (spec 000 §Axioms): the local slot function
// equals the server's on every sampled key. minSamples guards the checker's
// own assumption: a handful of keys proves nothing.
func slotMathAgrees(samples []SlotSample, minSamples int) check.Result {
	const name = "slot-math-agrees"
	if len(samples) < minSamples {
		return check.Unknownf(name, "only %d keys sampled, need %d", len(samples), minSamples)
	}
	var bad []string
	for _, s := range samples {
		if s.Local != s.Server {
			bad = append(bad, fmt.Sprintf("%q: local %d, server %d", s.Key, s.Local, s.Server))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 10), "\n"), "%d of %d keys disagree with CLUSTER KEYSLOT", len(bad), len(samples))
	}
	return check.Passf(name, "%d keys agree with CLUSTER KEYSLOT", len(samples))
}

// broadcastReachesAll is Axiom A4's first half (spec 000 §Axioms): classic
// PUBLISH to one node is propagated to every node, so every other node
// received at least messages bus messages.
func broadcastReachesAll(deltas []NodeDelta, messages int64) check.Result {
	const name = "broadcast-reaches-all"
	if len(deltas) < 2 || messages == 0 {
		return check.Unknownf(name, "need ≥2 nodes and a non-empty burst (got %d nodes, %d messages)", len(deltas), messages)
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
		return check.Failf(name, strings.Join(missing, "\n"), "%d nodes did not receive the broadcast", len(missing))
	}
	return check.Passf(name, "all %d other nodes received all %d messages", len(deltas)-1, messages)
}

// shardConfined is Axiom A4's second half: a sharded publish reaches only
// the channel's owner shard (its replicas), never a node of another shard.
func shardConfined(deltas []NodeDelta, ownerShard int, messages int64) check.Result {
	const name = "shard-confined"
	if len(deltas) < 2 || messages == 0 {
		return check.Unknownf(name, "need ≥2 nodes and a non-empty burst (got %d nodes, %d messages)", len(deltas), messages)
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
		return check.Unknownf(name, "every node is in the owner shard: confinement is not observable on one shard")
	}
	if len(leaked) > 0 {
		return check.Failf(name, strings.Join(leaked, "\n"), "%d of %d nodes outside the owner shard processed the messages", len(leaked), outside)
	}
	return check.Passf(name, "%d nodes outside shard %d received nothing", outside, ownerShard)
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

// SlotSamples are the keys sampled and the fewest that make a verdict
// (slotMathAgrees).
type SlotSamples struct {
	Samples    []SlotSample
	MinSamples int
}

// Burst is what every node did during a classic publish burst of Messages
// (broadcastReachesAll).
type Burst struct {
	Deltas   []NodeDelta
	Messages int64
}

// ShardBurst is what every node did during a sharded publish burst of
// Messages to a channel of OwnerShard (shardConfined).
type ShardBurst struct {
	Deltas     []NodeDelta
	OwnerShard int
	Messages   int64
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	SlotMathAgrees = check.Define("axioms/slot-math-agrees", func(s SlotSamples) check.Result {
		return slotMathAgrees(s.Samples, s.MinSamples)
	}, "SlotMathAgrees")
	UndeclaredKeyHazard = check.Define("axioms/undeclared-key-hazard", undeclaredKeyHazard, "UndeclaredKeyHazard")
	BroadcastReachesAll = check.Define("axioms/broadcast-reaches-all", func(b Burst) check.Result {
		return broadcastReachesAll(b.Deltas, b.Messages)
	}, "BroadcastReachesAll")
	ShardConfined = check.Define("axioms/shard-confined", func(b ShardBurst) check.Result {
		return shardConfined(b.Deltas, b.OwnerShard, b.Messages)
	}, "ShardConfined")
)
