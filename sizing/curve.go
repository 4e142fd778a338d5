package sizing

import (
	"fmt"
	"strings"
	"time"
)

// Curve is every burst Measure ran: the input spec 000 §Open Decisions D1
// is blocked on (the shardable vs broadcast ratio).
type Curve struct {
	Points []Point
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
	seen := map[int]bool{}
	for _, p := range c.Points {
		if !seen[p.Shards] {
			seen[p.Shards] = true
			out = append(out, p.Shards)
		}
	}
	return out
}

// Ratio is mode's per-node cost at shards over its cost at base: ≈ base/shards
// for shardable traffic, ≈ 1 for broadcast (A4). 0 when either is missing.
func (c Curve) Ratio(mode Mode, shards, base int) float64 {
	a, ok1 := c.At(shards, mode)
	b, ok2 := c.At(base, mode)
	if !ok1 || !ok2 || b.PerNode() == 0 {
		return 0
	}
	return float64(a.PerNode()) / float64(b.PerNode())
}

// Broadcast is the per-node cost per message that shard count cannot
// reduce at shards (spec 000 §Sharded Pub/Sub Conversion, "the pub/sub
// term"): classic minus sharded per-node cost, i.e. what each node pays for
// messages that reach it only because PUBLISH is broadcast.
func (c Curve) Broadcast(shards int) time.Duration {
	cl, ok1 := c.At(shards, ModeClassic)
	sh, ok2 := c.At(shards, ModeSharded)
	if !ok1 || !ok2 {
		return 0
	}
	return cl.PerNode() - sh.PerNode()
}

// CallUsec is the commandstats time per call of the mode's command,
// summed over nodes: the command's own execution cost, without I/O or
// cluster-bus processing.
func (p Point) CallUsec() float64 {
	var usec int64
	for _, n := range p.Nodes {
		usec += n.CallUsec
	}
	if c := p.Calls(); c > 0 {
		return float64(usec) / float64(c)
	}
	return 0
}

// Table renders the curve as a small text table: per-node net CPU per
// message (mean and hottest node) for each mode, the broadcast term, and
// the cluster-wide call and bus counts that show where messages went.
func (c Curve) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-8s %8s %12s %12s %10s %10s %9s %10s\n",
		"shards", "mode", "msgs", "cpu/msg/node", "hottest/msg", "calls", "bus_recv", "elapsed", "cmd_µs/call")
	for _, n := range c.Shards() {
		for _, m := range Modes {
			p, ok := c.At(n, m)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "%-6d %-8s %8d %12s %12s %10d %10d %9s %10.2f\n", n, m, p.Messages,
				us(p.PerNode()), us(p.MaxPerNode()), p.Calls(), p.BusReceived(), p.Elapsed.Round(time.Millisecond), p.CallUsec())
		}
		fmt.Fprintf(&b, "%-6d %-8s %8s %12s\n", n, "bcast", "", us(c.Broadcast(n)))
	}
	return b.String()
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
}

// Summary renders one row per shard count — per-node net CPU per message
// for classic, sharded and keyed, and the broadcast term — short enough for
// a benchmark log, which `go test` trims to ten lines.
func (c Curve) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %10s %10s %10s %10s  (cpu/msg/node)\n", "shards", "classic", "sharded", "keyed", "bcast")
	for _, n := range c.Shards() {
		var cells [3]string
		for i, m := range Modes {
			if p, ok := c.At(n, m); ok {
				cells[i] = us(p.PerNode())
			}
		}
		fmt.Fprintf(&b, "%-6d %10s %10s %10s %10s\n", n, cells[0], cells[1], cells[2], us(c.Broadcast(n)))
	}
	return b.String()
}
