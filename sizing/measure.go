// Package sizing measures the fan-out cost that decides the shard count
// (spec 000 §Open Decisions, D1): for each shard count it publishes the same
// seeded burst of exact event topics with classic PUBLISH, with SPUBLISH
// sent to each topic's owner, and, for comparison, keyed SET — and records
// every node's main-thread CPU and INFO commandstats over each burst.
//
// Spec 000 §Axioms A4: classic pub/sub is broadcast, so its per-node cost
// stays flat as shards are added; sharded pub/sub confines a message to its
// slot owner, so its per-node cost should fall as 1/n like keyed traffic.
// The package records numbers; it asserts nothing.
package sizing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/slot"
)

// Mode is one way of sending the burst.
type Mode string

const (
	// ModeClassic sends PUBLISH to the topic's owner; by A4 every node still
	// processes it (cluster-bus propagation).
	ModeClassic Mode = "classic"
	// ModeSharded sends SPUBLISH to the topic's owner (spec 000 §Sharded
	// Pub/Sub Conversion); it stays inside the owner's shard.
	ModeSharded Mode = "sharded"
	// ModeKeyed sends SET on a key to its owner: the shardable reference.
	ModeKeyed Mode = "keyed"
)

// Modes lists the modes Measure runs, in order.
var Modes = []Mode{ModeClassic, ModeSharded, ModeKeyed}

// command is the command a mode sends and its INFO commandstats key.
func (m Mode) command() string {
	switch m {
	case ModeClassic:
		return "PUBLISH"
	case ModeSharded:
		return "SPUBLISH"
	default:
		return "SET"
	}
}

// ErrNoShards is returned when Measure is given no shard counts.
var ErrNoShards = errors.New("no shard counts")

// Options tunes Measure. The zero value is usable.
type Options struct {
	// Seed seeds the topic generator so every run publishes the same topics.
	Seed uint64
	// Communities is how many communities the topics are spread over
	// (default 16).
	Communities int
	// Idle is the idle window measured before each burst, whose CPU rate is
	// subtracted from the burst's (default 300 ms; negative disables).
	Idle time.Duration
	// Fixtures are passed to fixtures.Run for every cluster.
	Fixtures []fixtures.Option
	// Logf, when set, narrates progress.
	Logf func(format string, args ...any)
}

// NodeSample is one node's deltas over one burst.
type NodeSample struct {
	Node  string
	Shard int
	// CPU is the main-thread CPU (user+sys) spent during the burst.
	CPU time.Duration
	// IdleCPU is the part of CPU attributed to the node's idle rate
	// (serverCron, cluster pings) and subtracted by NetCPU.
	IdleCPU time.Duration
	// Calls and CallUsec are the INFO commandstats deltas of the mode's
	// command on this node: the messages it received from a client.
	Calls, CallUsec int64
	// BusReceived is the cluster-bus publish messages (classic and shard)
	// the node received: the messages it processed without a client.
	BusReceived int64
}

// NetCPU is CPU minus the idle share, never negative.
func (s NodeSample) NetCPU() time.Duration { return max(s.CPU-s.IdleCPU, 0) }

// Point is one burst: one mode at one shard count.
type Point struct {
	Shards   int
	Mode     Mode
	Messages int
	Elapsed  time.Duration
	Nodes    []NodeSample
}

// PerNode is the mean net main-thread CPU per message per node: what one
// node pays for each message sent to the cluster.
func (p Point) PerNode() time.Duration {
	if len(p.Nodes) == 0 || p.Messages == 0 {
		return 0
	}
	var sum time.Duration
	for _, n := range p.Nodes {
		sum += n.NetCPU()
	}
	return sum / time.Duration(len(p.Nodes)*p.Messages)
}

// MaxPerNode is the hottest node's net CPU per message.
func (p Point) MaxPerNode() time.Duration {
	if p.Messages == 0 {
		return 0
	}
	var m time.Duration
	for _, n := range p.Nodes {
		m = max(m, n.NetCPU())
	}
	return m / time.Duration(p.Messages)
}

// Calls is the cluster-wide commandstats calls delta (should equal Messages).
func (p Point) Calls() int64 {
	var c int64
	for _, n := range p.Nodes {
		c += n.Calls
	}
	return c
}

// BusReceived is the cluster-wide cluster-bus publish delta: Messages×(n−1)
// for classic, 0 for sharded with no replicas.
func (p Point) BusReceived() int64 {
	var c int64
	for _, n := range p.Nodes {
		c += n.BusReceived
	}
	return c
}

// Measure brings up an n×0 cluster for each n in shards, sends messages
// messages in every mode and returns the curve. Each cluster is closed
// before the next starts. A failure returns the points measured so far.
func Measure(ctx context.Context, shards []int, messages int, opts Options) (Curve, error) {
	var curve Curve
	if len(shards) == 0 {
		return curve, ErrNoShards
	}
	if opts.Communities <= 0 {
		opts.Communities = 16
	}
	if opts.Idle == 0 {
		opts.Idle = 300 * time.Millisecond
	}
	for _, n := range shards {
		pts, err := measureShards(ctx, n, messages, opts)
		curve.Points = append(curve.Points, pts...)
		if err != nil {
			return curve, fmt.Errorf("measure %d shards: %w", n, err)
		}
	}
	return curve, nil
}

func measureShards(ctx context.Context, n, messages int, opts Options) (pts []Point, err error) {
	logf(opts, "sizing: bring up cluster %dx0", n)
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(n, 0), opts.Fixtures...)
	defer func() {
		if cerr := topo.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close cluster: %w", cerr)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	owners, err := slotOwners(ctx, topo)
	if err != nil {
		return nil, err
	}
	// The same seed at every shard count: the same topics and keys.
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5a_1e))
	topics := Topics(rng, opts.Communities, messages)
	for _, m := range Modes {
		p, err := burst(ctx, topo, owners, m, topics, opts)
		if err != nil {
			return pts, fmt.Errorf("%s burst: %w", m, err)
		}
		p.Shards = n
		logf(opts, "sizing: %d shards %-7s %v/msg/node (%d calls, %d bus)", n, m, p.PerNode(), p.Calls(), p.BusReceived())
		pts = append(pts, p)
	}
	return pts, nil
}

// Topics returns n exact event topics `buzz:<community>:channel:<uuid>`
// (spec 000 §Sharded Pub/Sub Conversion; no hash tags, so each topic hashes
// to its own slot and they land on every shard) with uuids drawn from rng.
func Topics(rng *rand.Rand, communities, n int) []string {
	out := make([]string, n)
	for i := range out {
		var b [16]byte
		for j := range b {
			b[j] = byte(rng.UintN(256))
		}
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
		out[i] = fmt.Sprintf("buzz:c%d:channel:%x-%x-%x-%x-%x",
			rng.IntN(communities), b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
	return out
}

// burst sends one mode's messages, each to its topic's owner, between two
// counter snapshots.
func burst(ctx context.Context, topo *fixtures.Topology, owners [fixtures.TotalSlots]*fixtures.Node, m Mode, topics []string, opts Options) (Point, error) {
	p := Point{Mode: m, Messages: len(topics)}
	idle := map[*fixtures.Node]time.Duration{}
	if opts.Idle > 0 {
		a, err := snapshot(ctx, topo, m)
		if err != nil {
			return p, err
		}
		begin := time.Now()
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(opts.Idle):
		}
		b, err := snapshot(ctx, topo, m)
		if err != nil {
			return p, err
		}
		window := time.Since(begin)
		for n := range b {
			idle[n] = time.Duration(float64(b[n].cpu-a[n].cpu) / float64(window) * float64(time.Second))
		}
	}
	before, err := snapshot(ctx, topo, m)
	if err != nil {
		return p, err
	}
	begin := time.Now()
	cmd := m.command()
	for i, t := range topics {
		args := []any{cmd, t, "m" + strconv.Itoa(i)}
		if _, err := owners[slot.Of(t)].Do(ctx, args...); err != nil {
			return p, fmt.Errorf("%s %s: %w", strings.ToLower(cmd), t, err)
		}
	}
	// Bus propagation is asynchronous: wait until every copy has arrived.
	want := int64(0)
	if m == ModeClassic {
		want = int64(len(topics)) * int64(len(topo.Nodes())-1)
	}
	var after map[*fixtures.Node]counters
	for deadline := time.Now().Add(5 * time.Second); ; {
		if after, err = snapshot(ctx, topo, m); err != nil {
			return p, err
		}
		var got int64
		for n, a := range after {
			got += a.bus - before[n].bus
		}
		if got >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Elapsed = time.Since(begin)
	for _, n := range topo.Nodes() {
		b, a := before[n], after[n]
		p.Nodes = append(p.Nodes, NodeSample{
			Node: n.Name(), Shard: n.Shard(),
			CPU:         a.cpu - b.cpu,
			IdleCPU:     time.Duration(float64(idle[n]) * p.Elapsed.Seconds()),
			Calls:       a.calls - b.calls,
			CallUsec:    a.usec - b.usec,
			BusReceived: a.bus - b.bus,
		})
	}
	return p, nil
}

type counters struct {
	cpu              time.Duration
	calls, usec, bus int64
}

func snapshot(ctx context.Context, topo *fixtures.Topology, m Mode) (map[*fixtures.Node]counters, error) {
	out := map[*fixtures.Node]counters{}
	key := "cmdstat_" + strings.ToLower(m.command())
	for _, n := range topo.Nodes() {
		cpu, err := n.Info(ctx, "cpu")
		if err != nil {
			return nil, err
		}
		secs := num(cpu["used_cpu_user_main_thread"]) + num(cpu["used_cpu_sys_main_thread"])
		if _, ok := cpu["used_cpu_user_main_thread"]; !ok { // redis-server has no per-thread fields
			secs = num(cpu["used_cpu_user"]) + num(cpu["used_cpu_sys"])
		}
		stats, err := n.Info(ctx, "commandstats")
		if err != nil {
			return nil, err
		}
		ci, err := n.ClusterInfo(ctx)
		if err != nil {
			return nil, err
		}
		c := counters{
			cpu: time.Duration(secs * float64(time.Second)),
			bus: int64(num(ci["cluster_stats_messages_publish_received"]) + num(ci["cluster_stats_messages_publishshard_received"])),
		}
		// cmdstat_publish:calls=10,usec=20,usec_per_call=2.00,...
		for _, f := range strings.Split(stats[key], ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				c.calls = int64(num(v))
			case "usec":
				c.usec = int64(num(v))
			}
		}
		out[n] = c
	}
	return out, nil
}

// slotOwners maps every slot to its primary from one CLUSTER NODES reply,
// matched to the topology's nodes by CLUSTER MYID (one round trip per node,
// not one per slot as NodeForSlot would be).
func slotOwners(ctx context.Context, topo *fixtures.Topology) (owners [fixtures.TotalSlots]*fixtures.Node, err error) {
	byID := map[string]*fixtures.Node{}
	for _, n := range topo.Nodes() {
		id, err := n.ID(ctx)
		if err != nil {
			return owners, err
		}
		byID[id] = n
	}
	v, err := topo.Nodes()[0].Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return owners, err
	}
	s, ok := v.(string)
	if !ok {
		return owners, fmt.Errorf("cluster nodes: reply is %T, want string", v)
	}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || byID[f[0]] == nil {
			continue
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") { // migrating/importing marker
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || b >= fixtures.TotalSlots {
				return owners, fmt.Errorf("cluster nodes: bad slot range %q", r)
			}
			for i := a; i <= b; i++ {
				owners[i] = byID[f[0]]
			}
		}
	}
	for i, o := range owners {
		if o == nil {
			return owners, fmt.Errorf("cluster nodes: slot %d has no owner", i)
		}
	}
	return owners, nil
}

func num(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func logf(opts Options, format string, args ...any) {
	if opts.Logf != nil {
		opts.Logf(format, args...)
	}
}
