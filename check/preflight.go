package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// The pre-G3 checklist (spec 000 §Deployment Gate rule 5; §Migration path
// G3, G4, G5) as pure checkers over what `slotgate preflight` observed on a
// running endpoint. The gatherer (traffic/preflight) only reads; every
// judgement is here, so each checker can be shown failing on a bad input.

// TotalSlots is the number of hash slots of a cluster (cluster spec, "Key
// distribution model"); a keyspace pass covers a cluster only when the
// primaries it scanned own all of them.
const TotalSlots = 16384

// PreflightTopology is the record history keeps (traffic/preflight gathers it).
type PreflightTopology = history.PreflightTopology

// PreflightNode is the record history keeps (traffic/preflight gathers it).
type PreflightNode = history.PreflightNode

// PreflightTopologyHealthy passes when a cluster reports cluster_state:ok
// with every slot assigned and ok, and every node answered; a standalone
// endpoint passes when its node answered. An unreadable topology or an
// unreachable node is Unknown: every later item relies on visiting each
// node.
func PreflightTopologyHealthy(t PreflightTopology) Result {
	const name = "preflight-topology"
	if t.Err != "" {
		return unknown(name, "topology not read: %s", t.Err)
	}
	if len(t.Nodes) == 0 {
		return unknown(name, "no node discovered")
	}
	var down []string
	primaries, replicas := 0, 0
	for _, n := range t.Nodes {
		if n.Primary {
			primaries++
		} else {
			replicas++
		}
		if n.Err != "" {
			down = append(down, n.Addr+": "+n.Err)
		}
	}
	if !t.Cluster {
		if len(down) > 0 {
			return unknown(name, "standalone node did not answer: %s", strings.Join(down, "; "))
		}
		return pass(name, "standalone (cluster support disabled): %d node(s) answered", len(t.Nodes))
	}
	if t.State != "ok" || t.SlotsAssigned != TotalSlots || t.SlotsOK != TotalSlots {
		return fail(name, nodeList(t.Nodes), "cluster_state:%s, slots assigned %d / ok %d of %d", t.State, t.SlotsAssigned, t.SlotsOK, TotalSlots)
	}
	// CLUSTER SHARDS says "fail" for a node the cluster marked failed, and
	// "loading" for a replica whose replication offset its peers still see
	// as 0 (a fresh replica of an idle shard): that one is not a fault.
	var loading []string
	for _, n := range t.Nodes {
		switch n.Health {
		case "fail", "failed":
			return fail(name, nodeList(t.Nodes), "node %s reports health %q", n.Addr, n.Health)
		case "loading":
			loading = append(loading, n.Addr)
		}
	}
	if len(down) > 0 {
		return unknown(name, "%d of %d nodes unreachable from here (%s): items that visit every node cannot decide", len(down), len(t.Nodes), strings.Join(down, "; "))
	}
	r := pass(name, "cluster_state:ok, %d/%d slots on %d primaries, %d replicas, all answered", t.SlotsOK, TotalSlots, primaries, replicas)
	r.Observed = []string{nodeList(t.Nodes)}
	if len(loading) > 0 {
		r.Observed = append(r.Observed, "health loading (replica offset 0 as seen by its peers): "+strings.Join(loading, ", "))
	}
	return r
}

func nodeList(nodes []PreflightNode) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		role := "replica"
		if n.Primary {
			role = fmt.Sprintf("primary (%d slots)", n.Slots)
		}
		parts[i] = n.Addr + " " + role
	}
	return strings.Join(parts, ", ")
}

// SlotPair is the record history keeps (traffic/preflight gathers it).
type SlotPair = history.SlotPair

// KeyslotEquality is the pre-G3 checklist's first item (spec 000
// §Deployment Gate rule 5): both members of every real hash-tagged pair are
// in one slot. A mis-tagged pair is invisible in disabled mode and a
// CROSSSLOT outage at G3 — this is the only point it is caught cheaply.
// No pair, or a pair whose slots could not be read, is Unknown.
func KeyslotEquality(pairs []SlotPair) Result {
	const name = "keyslot-equality"
	var judged []PairSlots
	var errs []string
	sources := map[string]int{}
	by := map[string]bool{}
	for _, p := range pairs {
		if p.Err != "" {
			errs = append(errs, fmt.Sprintf("%s / %s: %s", p.A, p.B, p.Err))
			continue
		}
		judged = append(judged, PairSlots{A: p.A, B: p.B, SlotA: p.SlotA, SlotB: p.SlotB})
		sources[p.Source]++
		by[p.By] = true
	}
	// The equality rule itself is the fencing row's (PairsShareSlot); a
	// split pair fails even when other pairs could not be computed.
	r := PairsShareSlot(judged)
	r.Checker = name
	switch {
	case r.Status == Fail:
		r.Message += ": CROSSSLOT at G3"
		return r
	case len(errs) > 0:
		return unknown(name, "%d of %d pairs not computed: %s", len(errs), len(pairs), errs[0])
	case r.Status != Pass:
		return r
	}
	r.Message = fmt.Sprintf("%d tagged pairs, both members in one slot (%s)", len(judged), strings.Join(sortedKeys(by), ", "))
	for _, s := range sortedKeys(sources) {
		r.Observed = append(r.Observed, fmt.Sprintf("%d pairs from %s", sources[s], s))
	}
	return r
}

// CrossSlotProbe is the record history keeps (traffic/preflight gathers it).
type CrossSlotProbe = history.CrossSlotProbe

// CrossSlotRefused judges the A3 probe (spec 000 §Axioms A3, pre-G3
// checklist): on a cluster-enabled endpoint (compatible or enabled mode)
// the server must refuse the un-tagged pair with CROSSSLOT; running it
// means slot rules are not enforced there, so a green result on it proves
// nothing about `enabled`. On a disabled-mode endpoint slot rules are never
// enforced: the probe cannot decide there (Unknown — run it against the
// compatible-mode endpoint).
func CrossSlotRefused(p CrossSlotProbe) Result {
	const name = "crossslot-probe"
	if p.Slots[0] == p.Slots[1] {
		return unknown(name, "probe keys %s and %s share slot %d: not a cross-slot pair", p.Keys[0], p.Keys[1], p.Slots[0])
	}
	what := fmt.Sprintf("EVAL on %s (slot %d) + %s (slot %d) at %s", p.Keys[0], p.Slots[0], p.Keys[1], p.Slots[1], p.Node)
	switch {
	case !p.Ran && p.ErrKind == "CROSSSLOT":
		r := pass(name, "refused with CROSSSLOT: slot rules enforced here, as A3 assumes")
		r.Observed = []string{what + " → " + p.Err}
		return r
	case p.Ran && p.Cluster:
		return fail(name, what+" → ran", "cluster-enabled endpoint ran a cross-slot script: slot rules NOT enforced here; A3's working assumption fails and cross-slot bugs stay hidden until enabled")
	case p.Ran:
		return unknown(name, "cluster support disabled: slot rules are not enforced in disabled mode, so the probe cannot decide (%s → ran)", what)
	}
	return unknown(name, "probe failed without a CROSSSLOT refusal: %s → %s", what, p.Err)
}

// NodeScan is the record history keeps (traffic/preflight gathers it).
type NodeScan = history.NodeScan

// scanCoverage says whether the scans visited the whole keyspace: on a
// cluster every primary's SCAN completed and together they own all 16384
// slots (a keyless SCAN through a cluster client visits ONE node — a third
// of a 3-shard keyspace, the trap spec 000 §Failure Modes names); on a
// standalone endpoint every node's SCAN completed.
func scanCoverage(cluster bool, scans []NodeScan) (ok bool, why string) {
	if len(scans) == 0 {
		return false, "no node scanned"
	}
	slots := 0
	for _, s := range scans {
		if !s.Complete {
			reason := s.Err
			if reason == "" {
				reason = "cursor did not return to 0"
			}
			return false, fmt.Sprintf("SCAN of %s incomplete: %s", s.Node, reason)
		}
		slots += s.Slots
	}
	if cluster && slots != TotalSlots {
		return false, fmt.Sprintf("scanned primaries own %d of %d slots: the rest of the keyspace was not visited", slots, TotalSlots)
	}
	return true, ""
}

func scanSummary(scans []NodeScan) string {
	parts := make([]string, len(scans))
	total := 0
	for i, s := range scans {
		parts[i] = fmt.Sprintf("%s %d", s.Node, s.Keys)
		total += s.Keys
	}
	return fmt.Sprintf("%d keys over %d node(s): %s", total, len(scans), strings.Join(parts, ", "))
}

// KeySize is the record history keeps (traffic/preflight gathers it).
type KeySize = history.KeySize

// KeySizePass is the record history keeps (traffic/preflight gathers it).
type KeySizePass = history.KeySizePass

// KeySizesUnder is G4's key-size sanity pass (spec 000 §Migration path G4;
// §Failure Modes ">256MB items refuse slot migration — silent, permanent
// imbalance"): no item above the threshold anywhere in the keyspace. A key
// above it fails even when the pass is incomplete; a pass that did not
// cover every slot is otherwise Unknown ("unlikely" is not "checked").
func KeySizesUnder(p KeySizePass) Result {
	const name = "key-size"
	if p.Threshold <= 0 {
		return unknown(name, "no threshold set")
	}
	var big []KeySize
	for _, k := range p.Largest {
		if k.Bytes > p.Threshold {
			big = append(big, k)
		}
	}
	sort.Slice(big, func(i, j int) bool { return big[i].Bytes > big[j].Bytes })
	if len(big) > 0 {
		lines := make([]string, 0, len(big))
		for _, k := range big {
			lines = append(lines, fmt.Sprintf("%s slot %d on %s: %s", k.Key, k.Slot, k.Node, Bytes(k.Bytes)))
		}
		return fail(name, strings.Join(first(lines, 20), "\n"), "%d key(s) above %s: their slots will refuse to migrate", len(big), Bytes(p.Threshold))
	}
	if ok, why := scanCoverage(p.Cluster, p.Scans); !ok {
		return unknown(name, "keyspace not fully visited: %s", why)
	}
	r := pass(name, "no key above %s (%s)", Bytes(p.Threshold), scanSummary(p.Scans))
	if len(p.Largest) > 0 {
		top := p.Largest[0]
		for _, k := range p.Largest {
			if k.Bytes > top.Bytes {
				top = k
			}
		}
		r.Observed = []string{fmt.Sprintf("largest: %s on %s, %s", top.Key, top.Node, Bytes(top.Bytes))}
	}
	return r
}

// CPUSample is the record history keeps (traffic/preflight gathers it).
type CPUSample = history.CPUSample

// CPUHeadroom is G5's rule (spec 000 §Migration path G5: "keep CPU <80%
// during resharding — resharding is compute-intensive"): every node's
// engine thread busy below limit (a fraction, 0.8). A node above it fails;
// a node not measured, or a counter that went backwards (a restart between
// the reads), is Unknown.
func CPUHeadroom(samples []CPUSample, limit float64) Result {
	const name = "cpu-headroom"
	if len(samples) == 0 {
		return unknown(name, "no node measured")
	}
	var hot, bad, seen []string
	for _, s := range samples {
		switch {
		case s.Err != "":
			bad = append(bad, s.Node+": "+s.Err)
			continue
		case s.Interval <= 0 || s.CPUSeconds < 0:
			bad = append(bad, fmt.Sprintf("%s: CPU counter went from its first to its second read by %.3fs in %v (restarted?)", s.Node, s.CPUSeconds, s.Interval))
			continue
		}
		u := s.Utilisation()
		line := fmt.Sprintf("%s %.1f%% (%s over %v)", s.Node, 100*u, s.Source, s.Interval.Round(time.Millisecond))
		seen = append(seen, line)
		if u >= limit {
			hot = append(hot, line)
		}
	}
	if len(hot) > 0 {
		return fail(name, strings.Join(hot, "\n"), "%d node(s) at or above %.0f%% engine CPU: resharding now competes with the traffic", len(hot), 100*limit)
	}
	if len(bad) > 0 {
		return unknown(name, "%d node(s) not measured: %s", len(bad), strings.Join(bad, "; "))
	}
	r := pass(name, "every node's engine thread below %.0f%% (max %s)", 100*limit, maxCPU(samples))
	r.Observed = seen
	return r
}

func maxCPU(samples []CPUSample) string {
	best := samples[0]
	for _, s := range samples {
		if s.Utilisation() > best.Utilisation() {
			best = s
		}
	}
	return fmt.Sprintf("%.1f%% on %s", 100*best.Utilisation(), best.Node)
}

// LeaseCount is the record history keeps (traffic/preflight gathers it).
type LeaseCount = history.LeaseCount

// OldLeasesDrained is the C-gate's condition carried into the pre-G3
// checklist (spec 000 §Deployment Gate rule 3, "observed old-keyspace
// lease count = 0 (direct observation)"; G3 is entered only with the fleet
// fully on C): zero live old-keyspace leases over the whole keyspace. Any
// lease found fails; an incomplete count is Unknown, never zero.
func OldLeasesDrained(c LeaseCount) Result {
	const name = "old-keyspace-leases"
	n := 0
	for _, s := range c.Scans {
		n += s.Keys
	}
	if n > 0 {
		return fail(name, strings.Join(first(c.Sample, 20), "\n"), "%d live old-keyspace lease(s) (%s): the fleet is not fully on C", n, c.Pattern)
	}
	if ok, why := scanCoverage(c.Cluster, c.Scans); !ok {
		return unknown(name, "lease count not observed: %s", why)
	}
	return pass(name, "0 live leases matching %s (%d node(s) scanned to completion)", c.Pattern, len(c.Scans))
}

// Bytes renders a byte count in binary units (256 MB = 256 MiB, as the
// 256 MB item limit is meant).
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %cB", int64(v), "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %cB", v, "KMGTPE"[exp])
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
