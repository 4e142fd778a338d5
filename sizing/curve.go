package sizing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/report"
)

// NodeSample is one node's deltas over one burst.
type NodeSample struct {
	Node  string
	Shard int
	// CPU is the main-thread CPU (user+sys) spent during the burst.
	CPU time.Duration
	// IdleCPU is the part of CPU attributed to the node's idle rate (serverCron, cluster
	// pings), measured just before the burst and subtracted by NetCPU.
	IdleCPU time.Duration
	// Calls and CallUsec are the INFO commandstats deltas of the mode's command on this
	// node: the messages it received from a client.
	Calls, CallUsec int64
	// BusReceived is the cluster-bus publish messages (classic and shard) the node
	// received: the messages it processed without a client.
	BusReceived int64
}

// NetCPU is CPU minus the idle share, never negative.
func (s NodeSample) NetCPU() time.Duration { return max(s.CPU-s.IdleCPU, 0) }

// Sample is one burst: its messages, how long sending took, and every node's deltas.
type Sample struct {
	Messages int
	// Send is the send phase (first message to last reply); Elapsed also covers the wait
	// for bus propagation to finish, the window the counters cover.
	Send, Elapsed time.Duration
	Errors        int
	Nodes         []NodeSample
}

// PerNode is the mean net main-thread CPU per node per message: what one node pays for
// each message sent to the cluster.
func (s Sample) PerNode() time.Duration {
	if len(s.Nodes) == 0 || s.Messages == 0 {
		return 0
	}
	return s.Total() / time.Duration(len(s.Nodes))
}

// Total is the whole cluster's net main-thread CPU per message.
func (s Sample) Total() time.Duration {
	if s.Messages == 0 {
		return 0
	}
	var sum time.Duration
	for _, n := range s.Nodes {
		sum += n.NetCPU()
	}
	return sum / time.Duration(s.Messages)
}

// Hottest is the busiest node's net CPU per message.
func (s Sample) Hottest() time.Duration {
	if s.Messages == 0 {
		return 0
	}
	var m time.Duration
	for _, n := range s.Nodes {
		m = max(m, n.NetCPU())
	}
	return m / time.Duration(s.Messages)
}

// AchievedRate is the send rate actually reached (messages/s).
func (s Sample) AchievedRate() float64 {
	if s.Send <= 0 {
		return 0
	}
	return float64(s.Messages) / s.Send.Seconds()
}

// Calls is the cluster-wide commandstats calls delta (should equal Messages).
func (s Sample) Calls() int64 {
	var c int64
	for _, n := range s.Nodes {
		c += n.Calls
	}
	return c
}

// CallUsec is the command's commandstats time per call, over the cluster: its own
// execution cost, without I/O or cluster-bus processing.
func (s Sample) CallUsec() float64 {
	var usec int64
	for _, n := range s.Nodes {
		usec += n.CallUsec
	}
	if c := s.Calls(); c > 0 {
		return float64(usec) / float64(c)
	}
	return 0
}

// BusReceived is the cluster-wide cluster-bus publish delta: Messages×(n−1) for classic,
// 0 for sharded with no replicas.
func (s Sample) BusReceived() int64 {
	var c int64
	for _, n := range s.Nodes {
		c += n.BusReceived
	}
	return c
}

// Point is one mode at one shard count, measured Repeats times.
type Point struct {
	Shards  int
	Mode    Mode
	Samples []Sample
}

// PerNode is the median over repeats of Sample.PerNode.
func (p Point) PerNode() time.Duration { return medianDur(p.Samples, Sample.PerNode) }

// Total is the median of Sample.Total.
func (p Point) Total() time.Duration { return medianDur(p.Samples, Sample.Total) }

// Hottest is the median of Sample.Hottest.
func (p Point) Hottest() time.Duration { return medianDur(p.Samples, Sample.Hottest) }

// AchievedRate is the median of Sample.AchievedRate.
func (p Point) AchievedRate() float64 { return median(p.Samples, Sample.AchievedRate) }

// CallUsec is the median of Sample.CallUsec.
func (p Point) CallUsec() float64 { return median(p.Samples, Sample.CallUsec) }

// PerNodeRange is the smallest and largest Sample.PerNode over the repeats.
func (p Point) PerNodeRange() (lo, hi time.Duration) {
	for i, s := range p.Samples {
		v := s.PerNode()
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// median returns the median of f over samples (the mean of the middle two for an even
// count); 0 for none.
func median(samples []Sample, f func(Sample) float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = f(s)
	}
	slices.Sort(v)
	mid := len(v) / 2
	if len(v)%2 == 1 {
		return v[mid]
	}
	return (v[mid-1] + v[mid]) / 2
}

func medianDur(samples []Sample, f func(Sample) time.Duration) time.Duration {
	return time.Duration(median(samples, func(s Sample) float64 { return float64(f(s)) }))
}

// Curve is every point Measure ran and how.
type Curve struct {
	Rate     int
	Duration time.Duration
	Repeats  int
	Senders  int
	Modes    []Mode
	Server   string
	Points   []Point
}

// At returns the point for mode at shards.
func (c Curve) At(shards int, mode Mode) (Point, bool) {
	for _, p := range c.Points {
		if p.Shards == shards && p.Mode == mode {
			return p, true
		}
	}
	return Point{}, false
}

// Shards lists the shard counts in the curve, in measurement order.
func (c Curve) Shards() []int {
	var out []int
	for _, p := range c.Points {
		if !slices.Contains(out, p.Shards) {
			out = append(out, p.Shards)
		}
	}
	return out
}

// Ratio is mode's per-node cost at shards over its cost at base: ≈ base/shards for
// shardable traffic, ≈ 1 for broadcast (A4). 0 when either is missing.
func (c Curve) Ratio(mode Mode, shards, base int) float64 {
	a, ok1 := c.At(shards, mode)
	b, ok2 := c.At(base, mode)
	if !ok1 || !ok2 || b.PerNode() == 0 {
		return 0
	}
	return float64(a.PerNode()) / float64(b.PerNode())
}

// Broadcast is the per-node cost per message that shard count cannot reduce at shards
// (spec 000 §Sharded Pub/Sub Conversion): classic minus sharded per-node cost, what each
// node pays for messages that reach it only because PUBLISH is broadcast.
func (c Curve) Broadcast(shards int) time.Duration {
	cl, ok1 := c.At(shards, ModeClassic)
	sh, ok2 := c.At(shards, ModeSharded)
	if !ok1 || !ok2 {
		return 0
	}
	return cl.PerNode() - sh.PerNode()
}

// BarTolerance is the sizing bar's factor: sharded per-node cost at n shards within 1.5× of 1/n
// of the single-shard cost; classic within 1.5× of flat.
const BarTolerance = 1.5

// Bars judges the sizing bar at every measured shard count above the smallest,
// against the smallest (1 when measured): SPUBLISH's per-node ratio within BarTolerance of
// base/n, and PUBLISH's within BarTolerance of 1 (flat). Informational: `slotgate size`
// reports them, it does not gate on them.
func (c Curve) Bars() []report.SizingBar {
	shards := c.Shards()
	if len(shards) < 2 {
		return nil
	}
	base := slices.Min(shards)
	var out []report.SizingBar
	for _, n := range shards {
		if n == base {
			continue
		}
		ideal := float64(base) / float64(n)
		if r := c.Ratio(ModeSharded, n, base); r > 0 {
			out = append(out, report.SizingBar{
				Name: fmt.Sprintf("sharded-%d-vs-%d", n, base), Value: r, Low: ideal / BarTolerance, High: ideal * BarTolerance,
				What: fmt.Sprintf("SPUBLISH per-node cost at %d shards over %d: within %.1f× of %d/%d", n, base, BarTolerance, base, n),
				Met:  r >= ideal/BarTolerance && r <= ideal*BarTolerance,
			})
		}
		if r := c.Ratio(ModeClassic, n, base); r > 0 {
			out = append(out, report.SizingBar{
				Name: fmt.Sprintf("classic-%d-vs-%d", n, base), Value: r, Low: 1 / BarTolerance, High: BarTolerance,
				What: fmt.Sprintf("PUBLISH per-node cost at %d shards over %d: ~flat (within %.1f× of 1), A4's broadcast", n, base, BarTolerance),
				Met:  r >= 1/BarTolerance && r <= BarTolerance,
			})
		}
	}
	return out
}

// Report returns the curve as the report's sizing model (sizing.json, sizing.html).
func (c Curve) Report() report.Sizing {
	s := report.Sizing{
		Server: c.Server, Rate: c.Rate, DurationMS: ms(c.Duration), Repeats: c.Repeats, Senders: c.Senders,
		Shards: c.Shards(), Bars: c.Bars(),
	}
	for _, m := range c.Modes {
		s.Modes = append(s.Modes, string(m))
	}
	for _, p := range c.Points {
		lo, hi := p.PerNodeRange()
		rp := report.SizingPoint{
			Shards: p.Shards, Mode: string(p.Mode), Command: p.Mode.Command(),
			PerNodeUS: us(p.PerNode()), PerNodeMinUS: us(lo), PerNodeMaxUS: us(hi),
			TotalUS: us(p.Total()), HottestUS: us(p.Hottest()), CallUS: p.CallUsec(), AchievedRate: p.AchievedRate(),
		}
		var bus float64
		for _, smp := range p.Samples {
			rp.Messages += smp.Messages
			rp.Errors += smp.Errors
			if smp.Messages > 0 {
				bus += float64(smp.BusReceived()) / float64(smp.Messages)
			}
			r := report.SizingRepeat{PerNodeUS: us(smp.PerNode()), TotalUS: us(smp.Total()), AchievedRate: smp.AchievedRate(),
				SendMS: ms(smp.Send), ElapsedMS: ms(smp.Elapsed), Errors: smp.Errors}
			for _, n := range smp.Nodes {
				r.Nodes = append(r.Nodes, report.SizingNode{Name: n.Node, Shard: n.Shard, CPUUS: us(n.CPU), IdleCPUUS: us(n.IdleCPU),
					Calls: n.Calls, CallUsec: n.CallUsec, BusReceived: n.BusReceived})
			}
			rp.Repeats = append(rp.Repeats, r)
		}
		if len(p.Samples) > 0 {
			rp.BusPerMessage = bus / float64(len(p.Samples))
		}
		s.Points = append(s.Points, rp)
	}
	for _, n := range s.Shards {
		cl, ok := c.At(n, ModeClassic)
		if _, ok2 := c.At(n, ModeSharded); !ok || !ok2 {
			continue
		}
		b := report.SizingBroadcast{Shards: n, PerNodeUS: us(c.Broadcast(n))}
		if cl.PerNode() > 0 {
			b.ShareOfCost = float64(c.Broadcast(n)) / float64(cl.PerNode())
		}
		s.Broadcast = append(s.Broadcast, b)
	}
	return s
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Table renders the curve as a text table: medians of per-node, cluster and hottest-node
// net CPU per message, the command's own time, bus copies per message and the rate
// reached, then the broadcast term per shard count.
func (c Curve) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-8s %12s %16s %12s %12s %10s %8s %10s %7s\n",
		"shards", "mode", "µs/msg/node", "repeats", "µs/msg all", "µs/msg hot", "cmd µs", "bus/msg", "msg/s", "errors")
	for _, n := range c.Shards() {
		for _, m := range c.Modes {
			p, ok := c.At(n, m)
			if !ok {
				continue
			}
			lo, hi := p.PerNodeRange()
			var bus float64
			var errs int
			for _, s := range p.Samples {
				errs += s.Errors
				if s.Messages > 0 {
					bus += float64(s.BusReceived()) / float64(s.Messages) / float64(len(p.Samples))
				}
			}
			fmt.Fprintf(&b, "%-6d %-8s %12.2f %16s %12.2f %12.2f %10.2f %8.2f %10.0f %7d\n", n, m, us(p.PerNode()),
				fmt.Sprintf("%.2f–%.2f", us(lo), us(hi)), us(p.Total()), us(p.Hottest()), p.CallUsec(), bus, p.AchievedRate(), errs)
		}
		if _, ok := c.At(n, ModeClassic); ok {
			if _, ok := c.At(n, ModeSharded); ok {
				fmt.Fprintf(&b, "%-6d %-8s %12.2f   (classic − sharded per node: the term shard count cannot remove)\n", n, "bcast", us(c.Broadcast(n)))
			}
		}
	}
	return b.String()
}
