package workload

import (
	"testing"

	"github.com/slotgate/slotgate/fixtures"
)

// settled: classic bursts must reach every other node, sharded ones only
// the sender's shard; the sender itself never counts.
func TestSettled(t *testing.T) {
	to, same, other := new(fixtures.Node), new(fixtures.Node), new(fixtures.Node)
	shardOf := map[*fixtures.Node]int{to: 0, same: 0, other: 1}
	before := map[*fixtures.Node]counters{to: {}, same: {publish: 5}, other: {shard: 2}}
	after := func(samePub, sameShard, otherPub, otherShard int64) map[*fixtures.Node]counters {
		return map[*fixtures.Node]counters{to: {}, same: {publish: samePub, shard: sameShard}, other: {publish: otherPub, shard: otherShard}}
	}
	// 10 messages: same saw 10 (5→15), other saw 9 (2→11 shard counter).
	a := after(15, 0, 0, 11)
	if settled(before, a, shardOf, to, 10, false) {
		t.Error("classic burst settled with a node 1 short")
	}
	if !settled(before, a, shardOf, to, 10, true) {
		t.Error("sharded burst not settled though its shard saw all 10")
	}
	if !settled(before, after(15, 0, 1, 11), shardOf, to, 10, false) {
		t.Error("classic burst not settled though every node saw 10 (publish+shard counters)")
	}
	if settled(before, after(14, 0, 20, 20), shardOf, to, 10, true) {
		t.Error("sharded burst settled with its own shard 1 short")
	}
}
