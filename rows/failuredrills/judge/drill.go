package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// windowEnd is where drill i's judged window ends: its Until, the next
// drill's start, or until for the last one — whichever comes first.
func windowEnd(drills []Drill, i int, until time.Duration) time.Duration {
	end := until
	if i+1 < len(drills) {
		end = drills[i+1].Start
	}
	if u := drills[i].Until; u > 0 && u < end {
		end = u
	}
	return end
}

// DrillHalt is what one drill did to dispatch: the longest stretch without
// a successful operation, from the drill's start, on the drilled shard's
// keys (for a kill: kill → first success) and on the healthy shards' keys,
// and how the healthy shards' operations fared meanwhile.
type DrillHalt struct {
	Drill         Drill
	Dead, Healthy time.Duration
	// Recovered is false when no operation on the drilled shard succeeded
	// after the drill started.
	Recovered                bool
	HealthyOps, HealthyFails int
	// HealthyClusterDown counts healthy-shard operations the server refused
	// with CLUSTERDOWN (cluster_state:fail between the FAIL flag and the
	// promotion, with cluster-require-full-coverage): every client sees
	// them, so they are reported, not scored as a client halt.
	HealthyClusterDown int
}

// DrillHalts measures every drill. until bounds the measurement (the end of
// the workload).
func DrillHalts(ops []DrillOp, drills []Drill, until time.Duration) []DrillHalt {
	out := make([]DrillHalt, 0, len(drills))
	for i, d := range drills {
		end := windowEnd(drills, i, until)
		h := DrillHalt{Drill: d}
		var dead, healthy []time.Duration
		for _, o := range ops {
			if o.Final || o.Call < d.Start || o.Return > end {
				continue
			}
			if o.Shard == d.Shard {
				if o.Acked() {
					dead = append(dead, o.Return)
				}
				continue
			}
			h.HealthyOps++
			switch {
			case o.Acked():
				healthy = append(healthy, o.Return)
			case o.ErrKind == "CLUSTERDOWN":
				// The client dispatched and the server answered: not a
				// client halt, so it ends a gap too.
				h.HealthyClusterDown++
				healthy = append(healthy, o.Return)
			default:
				h.HealthyFails++
			}
		}
		h.Recovered = len(dead) > 0
		h.Dead = longestGap(d.Start, dead, end)
		// Healthy shards are judged while the drilled shard was halted.
		hEnd := end
		if h.Recovered {
			hEnd = d.Start + h.Dead
		}
		var inHalt []time.Duration
		for _, t := range healthy {
			if t <= hEnd {
				inHalt = append(inHalt, t)
			}
		}
		h.Healthy = longestGap(d.Start, inHalt, hEnd)
		if !h.Recovered {
			h.Dead = end - d.Start
		}
		out = append(out, h)
	}
	return out
}

// longestGap is the longest stretch in [from, to] without a time in ts; the
// first stretch starts at from. With no ts it is to - from.
func longestGap(from time.Duration, ts []time.Duration, to time.Duration) time.Duration {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	gap, prev := time.Duration(0), from
	for _, t := range ts {
		gap = max(gap, t-prev)
		prev = t
	}
	return max(gap, to-prev)
}

// drillDispatch is the errors checker of the failure-drills row (spec 000
// §Conformance, Failure drills; §Client Architecture: "a dead primary halts
// dispatch"): while one shard's primary is failing over, operations on the
// healthy shards keep succeeding — at most maxFailPct percent of them fail
// and no stretch without a success is longer than maxGap — and the drilled
// drilled shard's own halt is measured, not bounded: spec 000 accepts it as
// the residual failure mode and puts it in the shard-count risk math (one
// that did not end within the run is reported as such). A client that halts
// all dispatch fails here. CLUSTERDOWN
// refusals are the server's (cluster_state:fail), not a client halt: they
// are counted in the message, not against the tolerance.
func drillDispatch(halts []DrillHalt, maxGap time.Duration, maxFailPct float64) check.Result {
	const name = "drill-dispatch"
	if len(halts) == 0 {
		return check.Unknownf(name, "no drill recorded")
	}
	var bad, seen []string
	for _, h := range halts {
		d := fmt.Sprintf("%s failover of shard %d", h.Drill.Mode, h.Drill.Shard)
		rec := ""
		if !h.Recovered {
			rec = " (did not recover within the run)"
		}
		seen = append(seen, fmt.Sprintf("%s: drilled shard halted %v%s, healthy shards' longest gap %v, %d/%d healthy ops failed (+%d CLUSTERDOWN)", d, h.Dead.Round(time.Millisecond), rec, h.Healthy.Round(time.Millisecond), h.HealthyFails, h.HealthyOps, h.HealthyClusterDown))
		if h.HealthyOps == 0 {
			return check.Unknownf(name, "%s: no operation on a healthy shard during the halt", d)
		}
		switch {
		case h.Healthy > maxGap:
			bad = append(bad, fmt.Sprintf("%s: healthy shards went %v without a success (allowed %v) — dispatch halted beyond the dead shard", d, h.Healthy.Round(time.Millisecond), maxGap))
		case float64(h.HealthyFails)*100 > maxFailPct*float64(h.HealthyOps):
			bad = append(bad, fmt.Sprintf("%s: %d of %d healthy-shard operations failed (allowed %.1f%%)", d, h.HealthyFails, h.HealthyOps, maxFailPct))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(seen, "\n"), "%s", strings.Join(bad, "; "))
	}
	r := check.Passf(name, "%d drills: healthy shards kept serving (longest gap ≤ %v, client-side failures ≤ %.1f%%); %s", len(halts), maxGap, maxFailPct, strings.Join(seen, "; "))
	r.Observed = seen
	return r
}

// DrillLost is one acknowledged write the read-back does not contain.
type DrillLost struct {
	Op    DrillOp
	Final int64
}

// DrillLosses lists the acknowledged writes each key's read-back lacks: a
// final value below a key's acknowledged sequence number.
func DrillLosses(ops []DrillOp) (lost []DrillLost, keys int, read bool) {
	final := map[string]int64{}
	for _, o := range ops {
		if o.Final && o.Acked() {
			final[o.Key] = o.Seq
		}
	}
	seen := map[string]bool{}
	for _, o := range ops {
		if o.Final {
			continue
		}
		seen[o.Key] = true
		if f, ok := final[o.Key]; ok && o.Acked() && o.Seq > f {
			lost = append(lost, DrillLost{Op: o, Final: f})
		}
	}
	read = len(final) == len(seen)
	return lost, len(seen), read
}

// drillAccounted is the silently-wrong checker of the failure-drills row:
// every acknowledged write survives the drills, except writes the killed
// primary acknowledged within window before its kill (asynchronous
// replication, no WAIT: the replica may not have them). Such losses are
// counted and reported, never hidden; a lost write on a healthy shard, in a
// graceful failover, or acknowledged long before the kill fails.
func drillAccounted(ops []DrillOp, drills []Drill, window time.Duration, minOps int) check.Result {
	const name = "drill-accounted"
	lost, keys, read := DrillLosses(ops)
	acked := 0
	for _, o := range ops {
		if !o.Final && o.Acked() {
			acked++
		}
	}
	if acked < minOps {
		return check.Unknownf(name, "only %d acknowledged writes, need %d", acked, minOps)
	}
	if !read {
		return check.Unknownf(name, "not every key was read back after the drills")
	}
	var bad []string
	accounted := 0
	for _, l := range lost {
		ok := false
		for _, d := range drills {
			if d.Mode == "kill" && l.Op.Shard == d.Shard && l.Op.Return <= d.End && l.Op.Return >= d.Start-window {
				ok = true
			}
		}
		if ok {
			accounted++
			continue
		}
		bad = append(bad, fmt.Sprintf("%s (shard %d): acknowledged seq %d @%v, read back %d", l.Op.Key, l.Op.Shard, l.Op.Seq, l.Op.Return.Round(time.Millisecond), l.Final))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 6), "\n"), "%d acknowledged writes lost outside a kill's replication window (%d accounted inside it)", len(bad), accounted)
	}
	return check.Passf(name, "%d acknowledged writes over %d keys: %d lost, all acknowledged by a killed primary within %v of its kill and reported", acked, keys, accounted, window)
}

// PlantLoss is a known-bad history for DrillAccounted's control: the
// read-back of the first key not on a killed shard is set one below its last
// acknowledged write, as if a failover had dropped it silently. It returns
// false when no such key exists.
func PlantLoss(ops []DrillOp, drills []Drill) ([]DrillOp, bool) {
	killed := map[int]bool{}
	for _, d := range drills {
		if d.Mode == "kill" {
			killed[d.Shard] = true
		}
	}
	out := append([]DrillOp(nil), ops...)
	for i, o := range out {
		if o.Final && o.Acked() && !killed[o.Shard] && o.Seq > 0 {
			o.Seq--
			out[i] = o
			return out, true
		}
	}
	return out, false
}

// RoleHalt is one client role's dispatch halt in one drill: how long the
// role could not get its work done on the drilled shard, measured from the
// fault (a primary's death, a replica's restart). Recovered false means the
// run ended first: Halt is then a lower bound.
type RoleHalt struct {
	// Role names the client role ("command pool", "subscription client",
	// "replica reads"), What the drill ("kill failover of shard 0").
	Role, What string
	Halt       time.Duration
	Recovered  bool
}

// haltsWithin is the recovery gate of the failure-drills errors column (spec
// 000 §Conformance, Failure drills; §Client Architecture, "a dead primary
// halts dispatch pending topology refresh"): every halt of every role ends
// within budget. A halt that did not end within the run fails once its lower
// bound passed the budget; one that ended before the budget was reached
// would be undecided, so it is unknown.
func haltsWithin(halts []RoleHalt, budget time.Duration) check.Result {
	const name = "halt-budget"
	if len(halts) == 0 {
		return check.Unknownf(name, "no halt measured")
	}
	var over, undecided, seen []string
	longest := halts[0]
	for _, h := range halts {
		bound := ""
		if !h.Recovered {
			bound = " (not recovered within the run: a lower bound)"
		}
		line := fmt.Sprintf("%s, %s: halted %v%s", h.What, h.Role, h.Halt.Round(time.Millisecond), bound)
		seen = append(seen, line)
		if h.Halt > longest.Halt {
			longest = h
		}
		switch {
		case h.Halt > budget:
			over = append(over, line)
		case !h.Recovered:
			undecided = append(undecided, line)
		}
	}
	if len(over) > 0 {
		return check.Failf(name, strings.Join(seen, "\n"), "dispatch halt over the %v budget: %s", budget, strings.Join(over, "; "))
	}
	if len(undecided) > 0 {
		return check.Unknownf(name, "halt budget %v undecided: %s", budget, strings.Join(undecided, "; "))
	}
	r := check.Passf(name, "%d halts within the %v budget (longest: %s, %s, %v)", len(halts), budget, longest.What, longest.Role, longest.Halt.Round(time.Millisecond))
	r.Observed = seen
	return r
}

// SubscriptionHalts measures the subscription client's halt in each drill:
// for the drilled shard's topics (topicShard maps a topic to its shard), the
// longest stretch from the drill's start without a delivery of a message
// published after it — how long the application heard nothing from that
// shard. It is bounded like
// DrillHalts: by the next drill's start, or until for the last one.
func SubscriptionHalts(h history.SubscriptionHistory, drills []Drill, topicShard map[string]int, until time.Duration) []RoleHalt {
	sent := make(map[[2]int64]time.Duration, len(h.Publishes))
	for _, p := range h.Publishes {
		sent[[2]int64{int64(p.Publisher), p.Seq}] = p.Sent
	}
	out := make([]RoleHalt, 0, len(drills))
	for i, d := range drills {
		end := windowEnd(drills, i, until)
		rh := RoleHalt{Role: "subscription client", What: fmt.Sprintf("%s failover of shard %d", d.Mode, d.Shard), Halt: end - d.Start}
		var at []time.Duration
		for _, dl := range h.Deliveries {
			s, ok := sent[[2]int64{int64(dl.Publisher), dl.Seq}]
			shard, known := topicShard[dl.Sub]
			if !ok || !known || shard != d.Shard || s < d.Start || dl.At > end {
				continue
			}
			at = append(at, dl.At)
		}
		// The longest silence, not the first delivery: after a graceful
		// failover the old primary may still deliver a message or two
		// before the hand-over silences the shard.
		if rh.Recovered = len(at) > 0; rh.Recovered {
			rh.Halt = longestGap(d.Start, at, end)
		}
		out = append(out, rh)
	}
	return out
}

// PoolHalts is DrillHalts' drilled-shard halts as the command pool's role
// halts, for HaltsWithin.
func PoolHalts(halts []DrillHalt) []RoleHalt {
	out := make([]RoleHalt, 0, len(halts))
	for _, h := range halts {
		out = append(out, RoleHalt{Role: "command pool", What: fmt.Sprintf("%s failover of shard %d", h.Drill.Mode, h.Drill.Shard), Halt: h.Dead, Recovered: h.Recovered})
	}
	return out
}
