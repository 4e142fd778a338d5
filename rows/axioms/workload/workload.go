// Package workload holds the axioms row's probes: slot samples, two-key
// EVALs, the undeclared-key probe and publish bursts, each recorded as the
// judge package's records.
package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/axioms/judge"
	"github.com/slotgate/slotgate/traffic"
)

// SlotEdgeCases are keys where hash-tag parsing goes wrong first (Valkey
// cluster spec, "Hash tags"): empty tags, nested braces, several tags,
// unbalanced braces, non-ASCII and binary bytes.
var SlotEdgeCases = []string{
	"", "{}", "{}{a}", "a{}b", "{{a}}", "{a}}", "{{}}", "a{b}{c}", "{a", "a}", "}{a}", "{a}{b}",
	"{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
	"buzz:tunnel:{c:s}:lease", "buzz:tunnel:{c:s}:generation", "ключ{тег}", "\x00{\xff}\x01", "{\n}",
}

// RandomKeys returns n seeded random keys, a third of them carrying one or
// more hash tags in random positions, so A1 is sampled where it is subtle.
func RandomKeys(rng *rand.Rand, n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789:{}_-"
	keys := make([]string, n)
	for i := range keys {
		b := make([]byte, 1+rng.IntN(24))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		keys[i] = string(b)
	}
	return keys
}

// SampleSlots asks the server for CLUSTER KEYSLOT of every key and pairs the
// answer with local(key).
func SampleSlots(ctx context.Context, n *fixtures.Node, keys []string, local func(string) int) ([]judge.SlotSample, error) {
	out := make([]judge.SlotSample, 0, len(keys))
	for _, k := range keys {
		reply, err := n.Do(ctx, "CLUSTER", "KEYSLOT", k)
		if err != nil {
			return out, fmt.Errorf("cluster keyslot %q: %w", k, err)
		}
		s, err := client.AsInt64(reply)
		if err != nil {
			return out, fmt.Errorf("cluster keyslot %q: %w", k, err)
		}
		out = append(out, judge.SlotSample{Key: k, Local: local(k), Server: int(s)})
	}
	return out, nil
}

// EvalTwoKeys sends a two-key EVAL straight to node n (raw, no cluster
// client in the way — the spec's A2 falsification was "raw RESP, no client
// library involved") and returns its outcome.
func EvalTwoKeys(ctx context.Context, n *fixtures.Node, a, b string) history.OpOutcome {
	_, err := n.Do(ctx, "EVAL", "return redis.call('EXISTS', KEYS[1], KEYS[2])", "2", a, b)
	o := history.OpOutcome{Op: fmt.Sprintf("EVAL 2 %s %s on %s", a, b, n.Name()), ErrKind: traffic.ErrKind(err)}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// undeclaredScript writes its ARGV keys in order without declaring them —
// the access spec 000 §Axioms A2 prohibits.
const undeclaredScript = "for i, k in ipairs(ARGV) do redis.call('SET', k, 'written') end return #ARGV"

// ProbeUndeclaredKeys measures A2's refinement on topology t: a script
// reaching two undeclared keys in two slots owned by the node it runs on,
// then one reaching a local key and a key of another node.
func ProbeUndeclaredKeys(ctx context.Context, t *fixtures.Topology) (judge.UndeclaredKeys, error) {
	var obs judge.UndeclaredKeys
	home := t.Primaries()[0]
	owner := func(k string) (*fixtures.Node, error) { return t.NodeForSlot(ctx, slot.Of(k)) }
	var local []string
	var remote string
	for i := 0; (len(local) < 3 || (remote == "" && len(t.Primaries()) > 1)) && i < 10_000; i++ {
		k := "a2:undeclared:" + strconv.Itoa(i)
		n, err := owner(k)
		if err != nil {
			return obs, err
		}
		switch {
		case n == home && len(local) < 3 && (len(local) == 0 || slot.Of(local[0]) != slot.Of(k)):
			local = append(local, k)
		case n != home && remote == "":
			remote = k
		}
	}
	if len(local) < 3 {
		return obs, fmt.Errorf("find three keys on %s: too few", home.Name())
	}
	if remote == "" { // one shard: every key is local
		remote = local[2]
	}
	if _, err := home.Do(ctx, "EVAL", undeclaredScript, "0", local[0], local[1]); err != nil {
		obs.SameNodeErr = err.Error()
	}
	if _, err := home.Do(ctx, "EVAL", undeclaredScript, "0", local[2], remote); err != nil {
		obs.RemoteErr = err.Error()
		v, gerr := home.Do(ctx, "GET", local[2])
		if gerr != nil {
			return obs, fmt.Errorf("read back %s: %w", local[2], gerr)
		}
		obs.EarlierWriteApplied = v != nil
	}
	return obs, nil
}

// PublishBurst sends messages PUBLISH (or SPUBLISH when sharded) on channel
// to node to, and returns every node's deltas over the burst.
func PublishBurst(ctx context.Context, t *fixtures.Topology, to *fixtures.Node, channel string, sharded bool, messages int) ([]judge.NodeDelta, error) {
	before, err := publishCounters(ctx, t)
	if err != nil {
		return nil, err
	}
	cmd := "PUBLISH"
	if sharded {
		cmd = "SPUBLISH"
	}
	for i := range messages {
		if _, err := to.Do(ctx, cmd, channel, "m"+strconv.Itoa(i)); err != nil {
			return nil, fmt.Errorf("%s %s: %w", strings.ToLower(cmd), channel, err)
		}
	}
	// Bus propagation is asynchronous: wait until every node that must see
	// the burst has seen all of it (then a leak would have shown too).
	shardOf := shardIndex(t)
	var after map[*fixtures.Node]counters
	for deadline := time.Now().Add(5 * time.Second); ; {
		if after, err = publishCounters(ctx, t); err != nil {
			return nil, err
		}
		if settled(before, after, shardOf, to, int64(messages), sharded) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out []judge.NodeDelta
	for _, n := range t.Nodes() {
		b, a := before[n], after[n]
		out = append(out, judge.NodeDelta{
			Node: n.Name(), Shard: shardOf[n], Primary: n.Role() == fixtures.RolePrimary, Sender: n == to,
			PublishReceived: a.publish - b.publish, ShardPublishReceived: a.shard - b.shard, CPU: a.cpu - b.cpu,
		})
	}
	return out, nil
}

type counters struct {
	publish, shard int64
	cpu            time.Duration
}

func publishCounters(ctx context.Context, t *fixtures.Topology) (map[*fixtures.Node]counters, error) {
	out := map[*fixtures.Node]counters{}
	for _, n := range t.Nodes() {
		ci, err := n.ClusterInfo(ctx)
		if err != nil {
			return nil, err
		}
		cpu, err := n.Info(ctx, "cpu")
		if err != nil {
			return nil, err
		}
		secs := parseFloat(cpu["used_cpu_user_main_thread"]) + parseFloat(cpu["used_cpu_sys_main_thread"])
		if _, ok := cpu["used_cpu_user_main_thread"]; !ok { // redis-server has no per-thread fields
			secs = parseFloat(cpu["used_cpu_user"]) + parseFloat(cpu["used_cpu_sys"])
		}
		out[n] = counters{
			publish: int64(parseFloat(ci["cluster_stats_messages_publish_received"])),
			shard:   int64(parseFloat(ci["cluster_stats_messages_publishshard_received"])),
			cpu:     time.Duration(secs * float64(time.Second)),
		}
	}
	return out, nil
}

// settled: every node except the sender that should see the burst (all of
// them for classic, the owner shard's for sharded) has seen it.
func settled(before, after map[*fixtures.Node]counters, shardOf map[*fixtures.Node]int, to *fixtures.Node, messages int64, sharded bool) bool {
	for n, a := range after {
		if n == to || (sharded && shardOf[n] != shardOf[to]) {
			continue
		}
		got := a.publish - before[n].publish + a.shard - before[n].shard
		if got < messages {
			return false
		}
	}
	return true
}

// shardIndex maps each node to its shard (a replica shares its primary's).
func shardIndex(t *fixtures.Topology) map[*fixtures.Node]int {
	out := map[*fixtures.Node]int{}
	for _, n := range t.Nodes() {
		out[n] = n.Shard()
	}
	return out
}

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
