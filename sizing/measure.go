// Package sizing measures the fan-out cost that decides the shard count (spec 000 §Open
// Decisions, D1). It brings up an n×0 cluster for each shard count and, at a fixed
// cluster-wide message rate reached with pipelined concurrent senders, sends the same
// seeded stream of exact event topics with classic PUBLISH, with SPUBLISH, and — for
// comparison — keyed GET, SET and a single-key EVALSHA, each to its key's owner. Over
// every burst it records each node's main-thread CPU (INFO cpu
// used_cpu_{user,sys}_main_thread) and the command's INFO commandstats, K times per point,
// the bursts of all points interleaved.
//
// Spec 000 §Axioms A4: classic pub/sub is broadcast, so its per-node cost stays flat as
// shards are added; sharded pub/sub confines a message to its slot owner, so its per-node
// cost should fall as 1/n like keyed traffic. The package returns numbers; it prints and
// asserts nothing.
package sizing

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/slot"
)

// Mode is one kind of traffic.
type Mode string

const (
	// ModeClassic sends PUBLISH to the topic's owner; by A4 every node still processes
	// it (cluster-bus propagation).
	ModeClassic Mode = "classic"
	// ModeSharded sends SPUBLISH to the topic's owner (spec 000 §Sharded Pub/Sub
	// Conversion); it stays inside the owner's shard.
	ModeSharded Mode = "sharded"
	// ModeSet, ModeGet and ModeEvalSHA are keyed references: the shardable families
	// (get/set/eval, spec 000 §Problem Statement).
	ModeSet     Mode = "set"
	ModeGet     Mode = "get"
	ModeEvalSHA Mode = "evalsha"
)

// Modes lists every mode in measurement order (SET before GET, so GET reads hits).
var Modes = []Mode{ModeClassic, ModeSharded, ModeSet, ModeGet, ModeEvalSHA}

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w: unknown mode %q (want classic, sharded, set, get, evalsha)", ErrBadOptions, s)
}

// Command is the command a mode sends, as INFO commandstats names it.
func (m Mode) Command() string {
	switch m {
	case ModeClassic:
		return "PUBLISH"
	case ModeSharded:
		return "SPUBLISH"
	case ModeSet:
		return "SET"
	case ModeGet:
		return "GET"
	default:
		return "EVALSHA"
	}
}

// key is the key a mode addresses for topic t: the topic itself, except the EVALSHA mode's
// counter, which must not be a string SET wrote (INCR would refuse it).
func (m Mode) key(t string) string {
	if m == ModeEvalSHA {
		return "rate:" + t
	}
	return t
}

// limiterScript is the EVALSHA mode's script: the rate limiter's shape (impl/guard), one
// declared key.
const limiterScript = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

// ErrBadOptions marks options Measure cannot run with.
var ErrBadOptions = errors.New("bad sizing options")

// Options tunes Measure. The zero value measures 1, 3 and 6 shards, every mode, 20,000
// messages/s for 2 s, 3 repeats.
type Options struct {
	Shards []int
	Modes  []Mode
	// Rate is the cluster-wide target rate (messages/s); Duration each burst's send phase.
	Rate     int
	Duration time.Duration
	// Repeats is how many bursts each point runs; the curve reports medians.
	Repeats int
	// Senders is how many pipelined senders each node gets (default 2); Tick how often a
	// sender flushes what is due (default 5 ms).
	Senders int
	Tick    time.Duration
	// Idle is the window measured before each burst whose CPU rate is subtracted from the
	// burst's (default 300 ms; negative disables).
	Idle time.Duration
	// Warmup is an unmeasured burst per mode before the first measured one (default
	// Duration/4; negative disables).
	Warmup time.Duration
	// Seed seeds the topics, so every shard count sends the same stream.
	Seed uint64
	// Communities is how many communities the topics spread over (default 16).
	Communities int
	Fixtures    []fixtures.Option
	// Logf, when set, narrates progress.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Shards) == 0 {
		o.Shards = []int{1, 3, 6}
	}
	for _, n := range o.Shards {
		if n < 1 || n > 16 {
			return o, fmt.Errorf("%w: shard count %d (want 1..16)", ErrBadOptions, n)
		}
	}
	if len(o.Modes) == 0 {
		o.Modes = Modes
	}
	if o.Rate == 0 {
		o.Rate = 20_000
	}
	if o.Duration == 0 {
		o.Duration = 2 * time.Second
	}
	if o.Repeats == 0 {
		o.Repeats = 3
	}
	if o.Senders == 0 {
		o.Senders = 2
	}
	if o.Tick == 0 {
		o.Tick = 5 * time.Millisecond
	}
	if o.Idle == 0 {
		o.Idle = 300 * time.Millisecond
	}
	if o.Warmup == 0 {
		o.Warmup = o.Duration / 4
	}
	if o.Communities <= 0 {
		o.Communities = 16
	}
	switch {
	case o.Rate < 1:
		return o, fmt.Errorf("%w: rate %d (want > 0)", ErrBadOptions, o.Rate)
	case o.Duration < 10*time.Millisecond:
		return o, fmt.Errorf("%w: duration %v (want ≥ 10ms)", ErrBadOptions, o.Duration)
	case o.Repeats < 1 || o.Senders < 1:
		return o, fmt.Errorf("%w: repeats %d, senders %d (want ≥ 1)", ErrBadOptions, o.Repeats, o.Senders)
	case o.Messages() < 1:
		return o, fmt.Errorf("%w: rate × duration sends no message", ErrBadOptions)
	}
	return o, nil
}

// Messages is how many messages one burst sends: Rate × Duration.
func (o Options) Messages() int { return int(float64(o.Rate) * o.Duration.Seconds()) }

// Measure runs the whole curve. Every cluster is up for the whole run and the bursts are
// interleaved — each repeat visits every shard count and every mode in turn — so a slow
// phase of a shared host lands on every point alike instead of skewing one: the ratios
// between points are the result, measured in one run. A failure returns the repeats
// measured so far.
func Measure(ctx context.Context, o Options) (curve Curve, err error) {
	o, err = o.withDefaults()
	curve = Curve{Rate: o.Rate, Duration: o.Duration, Repeats: o.Repeats, Senders: o.Senders, Modes: o.Modes}
	if err != nil {
		return curve, err
	}
	var rigs []*rig
	defer func() {
		for _, r := range rigs {
			if cerr := r.close(); cerr != nil && err == nil {
				err = fmt.Errorf("close %d-shard cluster: %w", r.shards, cerr)
			}
		}
	}()
	for _, n := range o.Shards {
		r, err := newRig(ctx, n, o)
		if r != nil {
			rigs = append(rigs, r)
		}
		if err != nil {
			return curve, fmt.Errorf("%d shards: %w", n, err)
		}
		curve.Server = r.topo.ServerVersion()
	}
	// The same seed at every shard count: the same topics and keys.
	topics := Topics(rand.New(rand.NewPCG(o.Seed, 0x5a_1e)), o.Communities, o.Messages())
	points := make([][]Point, len(rigs))
	for i, r := range rigs {
		for _, m := range o.Modes {
			points[i] = append(points[i], Point{Shards: r.shards, Mode: m})
		}
	}
	collect := func() {
		curve.Points = nil
		for _, ps := range points {
			for _, p := range ps {
				if len(p.Samples) > 0 {
					curve.Points = append(curve.Points, p)
				}
			}
		}
	}
	defer collect()
	for rep := range o.Repeats {
		for i, r := range rigs {
			for j, m := range o.Modes {
				if rep == 0 && o.Warmup > 0 {
					warm := topics[:min(len(topics), max(1, int(float64(o.Rate)*o.Warmup.Seconds())))]
					if _, err := r.send.burst(ctx, r.owners, m, r.sha, warm, o); err != nil {
						return curve, fmt.Errorf("%d shards %s warmup: %w", r.shards, m, err)
					}
				}
				smp, err := measureBurst(ctx, r.topo, r.send, r.owners, m, r.sha, topics, o)
				if err != nil {
					return curve, fmt.Errorf("%d shards %s repeat %d: %w", r.shards, m, rep+1, err)
				}
				points[i][j].Samples = append(points[i][j].Samples, smp)
				logf(o, "sizing: repeat %d/%d %d shards %-8s %.2fµs/msg/node, %.0f msg/s, %d calls, %d bus",
					rep+1, o.Repeats, r.shards, m, us(smp.PerNode()), smp.AchievedRate(), smp.Calls(), smp.BusReceived())
			}
		}
	}
	return curve, nil
}

// rig is one n×0 cluster ready to measure: its slot map, the EVALSHA script loaded, and
// its senders.
type rig struct {
	shards int
	topo   *fixtures.Topology
	owners [fixtures.TotalSlots]*fixtures.Node
	sha    string
	send   *senders
}

// newRig starts an n×0 cluster; on error it returns what it started, for closing.
func newRig(ctx context.Context, n int, o Options) (*rig, error) {
	logf(o, "sizing: bring up cluster %dx0", n)
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(n, 0), o.Fixtures...)
	r := &rig{shards: n, topo: topo}
	if err != nil {
		return r, fmt.Errorf("start cluster: %w", err)
	}
	if r.owners, err = slotOwners(ctx, topo); err != nil {
		return r, err
	}
	if r.sha, err = loadScript(ctx, topo); err != nil {
		return r, err
	}
	r.send = newSenders(topo, o)
	return r, nil
}

func (r *rig) close() error {
	if r.send != nil {
		r.send.close()
	}
	return r.topo.Close()
}

// measureBurst measures one burst between counter snapshots, the node's idle rate
// measured just before it and subtracted.
func measureBurst(ctx context.Context, topo *fixtures.Topology, s *senders, owners [fixtures.TotalSlots]*fixtures.Node, m Mode, sha string, topics []string, o Options) (Sample, error) {
	smp := Sample{Messages: len(topics)}
	idle := map[*fixtures.Node]float64{} // CPU seconds per second
	if o.Idle > 0 {
		a, err := snapshot(ctx, topo, m)
		if err != nil {
			return smp, err
		}
		begin := time.Now()
		select {
		case <-ctx.Done():
			return smp, ctx.Err()
		case <-time.After(o.Idle):
		}
		b, err := snapshot(ctx, topo, m)
		if err != nil {
			return smp, err
		}
		window := time.Since(begin).Seconds()
		for n := range b {
			idle[n] = (b[n].cpu - a[n].cpu).Seconds() / window
		}
	}
	before, err := snapshot(ctx, topo, m)
	if err != nil {
		return smp, err
	}
	begin := time.Now()
	res, err := s.burst(ctx, owners, m, sha, topics, o)
	if err != nil {
		return smp, err
	}
	smp.Send, smp.Errors = res.send, res.errors
	// Bus propagation is asynchronous: wait until every copy has arrived, so its
	// processing falls inside the measured window.
	want := int64(0)
	if m == ModeClassic {
		want = int64(len(topics)) * int64(len(topo.Nodes())-1)
	}
	var after map[*fixtures.Node]counters
	for deadline := time.Now().Add(10 * time.Second); ; {
		if after, err = snapshot(ctx, topo, m); err != nil {
			return smp, err
		}
		var got int64
		for n, a := range after {
			got += a.bus - before[n].bus
		}
		if got >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	smp.Elapsed = time.Since(begin)
	for _, n := range topo.Nodes() {
		b, a := before[n], after[n]
		smp.Nodes = append(smp.Nodes, NodeSample{
			Node: n.Name(), Shard: n.Shard(),
			CPU:         a.cpu - b.cpu,
			IdleCPU:     time.Duration(idle[n] * float64(smp.Elapsed)),
			Calls:       a.calls - b.calls,
			CallUsec:    a.usec - b.usec,
			BusReceived: a.bus - b.bus,
		})
	}
	return smp, nil
}

// senders holds one go-redis client per node, on the node's direct address: the load
// generator must not pay toxiproxy's copying on a shared CPU.
type senders struct {
	byNode map[*fixtures.Node]*redis.Client
}

func newSenders(topo *fixtures.Topology, o Options) *senders {
	s := &senders{byNode: map[*fixtures.Node]*redis.Client{}}
	for _, n := range topo.Nodes() {
		s.byNode[n] = redis.NewClient(&redis.Options{Addr: n.DirectAddr(), PoolSize: o.Senders + 1, Protocol: 2,
			ClientName: "slotgate-sizing", ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	}
	return s
}

func (s *senders) close() {
	for _, c := range s.byNode {
		_ = c.Close()
	}
}

// burstResult is what the send phase saw.
type burstResult struct {
	send   time.Duration
	errors int
}

// maxBatch bounds one pipeline flush, so a sender that fell behind catches up in steps.
const maxBatch = 2000

// burst sends topics at o.Rate: message i is due at i/Rate seconds after the start. Each
// message goes to its key's owner; each node's messages are dealt round-robin to its
// o.Senders senders, and every sender flushes what is due as one pipeline each o.Tick.
func (s *senders) burst(ctx context.Context, owners [fixtures.TotalSlots]*fixtures.Node, m Mode, sha string, topics []string, o Options) (burstResult, error) {
	type job struct {
		client *redis.Client
		idx    []int
	}
	perNode := map[*fixtures.Node][]int{}
	for i, t := range topics {
		n := owners[slot.Of(m.key(t))]
		perNode[n] = append(perNode[n], i)
	}
	var jobs []job
	for n, idx := range perNode {
		for k := range o.Senders {
			var mine []int
			for j := k; j < len(idx); j += o.Senders {
				mine = append(mine, idx[j])
			}
			if len(mine) > 0 {
				jobs = append(jobs, job{s.byNode[n], mine})
			}
		}
	}
	ttl := strconv.Itoa(int(time.Minute.Milliseconds()))
	args := func(i int) []any {
		t := topics[i]
		switch m {
		case ModeClassic:
			return []any{"PUBLISH", t, "m" + strconv.Itoa(i)}
		case ModeSharded:
			return []any{"SPUBLISH", t, "m" + strconv.Itoa(i)}
		case ModeSet:
			return []any{"SET", t, "online:" + strconv.Itoa(i)}
		case ModeGet:
			return []any{"GET", t}
		default:
			return []any{"EVALSHA", sha, "1", m.key(t), ttl}
		}
	}
	var mu sync.Mutex
	var res burstResult
	start := time.Now()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sent := 0
			tick := time.NewTicker(o.Tick)
			defer tick.Stop()
			for sent < len(j.idx) {
				due := int(time.Since(start).Seconds() * float64(o.Rate))
				end := sent
				for end < len(j.idx) && j.idx[end] <= due && end-sent < maxBatch {
					end++
				}
				if end > sent {
					pipe := j.client.Pipeline()
					for _, i := range j.idx[sent:end] {
						pipe.Do(ctx, args(i)...)
					}
					// Exec's own error is the first command's; each command's is counted.
					cmds, _ := pipe.Exec(ctx)
					errs := 0
					for _, c := range cmds {
						if e := c.Err(); e != nil && !errors.Is(e, redis.Nil) {
							errs++
						}
					}
					mu.Lock()
					res.errors += errs
					mu.Unlock()
					sent = end
					continue // catch up at once if more is already due
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
	res.send = time.Since(start)
	return res, ctx.Err()
}

// loadScript loads the EVALSHA mode's script on every node and returns its SHA1.
func loadScript(ctx context.Context, topo *fixtures.Topology) (string, error) {
	sum := sha1.Sum([]byte(limiterScript))
	sha := hex.EncodeToString(sum[:])
	for _, n := range topo.Nodes() {
		if _, err := n.Do(ctx, "SCRIPT", "LOAD", limiterScript); err != nil {
			return "", fmt.Errorf("load script: %w", err)
		}
	}
	return sha, nil
}

type counters struct {
	cpu              time.Duration
	calls, usec, bus int64
}

func snapshot(ctx context.Context, topo *fixtures.Topology, m Mode) (map[*fixtures.Node]counters, error) {
	out := map[*fixtures.Node]counters{}
	key := "cmdstat_" + strings.ToLower(m.Command())
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

// Topics returns n exact event topics `buzz:<community>:channel:<uuid>` (spec 000 §Sharded
// Pub/Sub Conversion; no hash tags, so each topic hashes to its own slot and they land on
// every shard) with uuids drawn from rng. The keyed modes use the same strings as keys.
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

// slotOwners maps every slot to its primary from one CLUSTER NODES reply, matched to the
// topology's nodes by CLUSTER MYID (one round trip per node, not one per slot).
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

func logf(o Options, format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}
