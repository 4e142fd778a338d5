// Package judge holds the preflight row's checkers: the pre-G3 checklist's
// verdicts (check.CrossSlotRefused, KeyslotEquality, KeySizesUnder,
// CPUHeadroom — the ones `slotgate preflight` prints) over what the real
// gatherer (traffic/preflight) read from topologies the row starts, each
// behind the premises that make a run of it evidence: a node reached,
// enough pairs computed by the server, every seeded key visited, every node
// measured over a long enough interval (spec 000 §Deployment Gate rule 5;
// §Migration path G3–G5).
package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// ProbeRun is one A3 probe run by the gatherer against the endpoint the
// checklist is pointed at as the compatible-mode (G3) endpoint.
type ProbeRun struct {
	// Endpoint is the address the gatherer was given.
	Endpoint string
	Topology history.PreflightTopology
	// Probe is nil when the gatherer did not send it.
	Probe *history.CrossSlotProbe
}

// crossSlotProbe is the A3 item (spec 000 §Axioms A3; pre-G3 checklist) on
// the endpoint G3 is judged on. check.CrossSlotRefused cannot decide a
// probe that ran on a cluster-disabled node, since the CLI does not know
// which endpoint the operator meant; here the endpoint is named as the G3
// one, so a script that ran there is a failure: slot rules are unenforced
// exactly where the checklist's green is read as evidence for enabled.
func crossSlotProbe(in ProbeRun) check.Result {
	const name = "preflight-crossslot-probe"
	if !reached(in.Topology) {
		return check.Unknownf(name, "no node of %s reached (%s)", in.Endpoint, in.Topology.Err)
	}
	if in.Probe == nil {
		return check.Unknownf(name, "the probe was not sent to %s", in.Endpoint)
	}
	r := check.CrossSlotRefused(*in.Probe)
	r.Checker = name
	if r.Status == check.Unknown && in.Probe.Ran && !in.Probe.Cluster && in.Probe.Slots[0] != in.Probe.Slots[1] {
		return check.Failf(name, fmt.Sprintf("EVAL on %s (slot %d) + %s (slot %d) at %s → ran", in.Probe.Keys[0], in.Probe.Slots[0], in.Probe.Keys[1], in.Probe.Slots[1], in.Probe.Node),
			"the G3 endpoint %s has cluster support disabled and ran a cross-slot script: slot rules unenforced where A3 is assumed, so mis-tagged keys stay hidden until enabled", in.Endpoint)
	}
	return r
}

// reached says whether the gatherer read the topology and at least one
// node answered it.
func reached(t history.PreflightTopology) bool {
	if t.Err != "" {
		return false
	}
	for _, n := range t.Nodes {
		if n.Err == "" {
			return true
		}
	}
	return false
}

// PairsRun is the keyslot-equality item's pairs and the fewest of the key
// rule's pairs the server must have placed for a verdict.
type PairsRun struct {
	Pairs        []history.SlotPair
	MinRulePairs int
}

// ruleSource is the prefix of the Source of a key-rule pair
// (traffic/preflight slotPairs).
const ruleSource = "key rule ("

// byServer is the By of a slot the server computed.
const byServer = "CLUSTER KEYSLOT"

// keyslotEquality is the pre-G3 checklist's first item (spec 000
// §Deployment Gate rule 5) on the implementation's real pairs: the verdict
// is check.KeyslotEquality's; its premise is that at least MinRulePairs of
// the key rule's pairs were placed by the server (CLUSTER KEYSLOT), not by
// local CRC16 — a disabled-mode endpoint computes them locally, which is
// A1's question, not this one.
func keyslotEquality(in PairsRun) check.Result {
	const name = "preflight-keyslot-equality"
	rule := 0
	for _, p := range in.Pairs {
		if strings.HasPrefix(p.Source, ruleSource) && p.By == byServer && p.Err == "" {
			rule++
		}
	}
	r := check.KeyslotEquality(in.Pairs)
	r.Checker = name
	if r.Status == check.Fail {
		return r
	}
	if in.MinRulePairs <= 0 || rule < in.MinRulePairs {
		return check.Unknownf(name, "%d key-rule pairs placed by %s, need %d", rule, byServer, max(in.MinRulePairs, 1))
	}
	return r
}

// KeySizeRun is one key-size pass and what the scenario knows of the
// keyspace it scanned.
type KeySizeRun struct {
	Pass *history.KeySizePass
	// Seeded is how many keys the scenario wrote before the pass; Primaries
	// how many primaries own the keyspace.
	Seeded    int
	Primaries int
}

// keySizes is G4's key-size pass (spec 000 §Migration path G4; §Failure
// Modes, >256MB items refuse slot migration): check.KeySizesUnder, whose
// premise of a complete pass is completed here by the scenario's own count:
// a pass that returned fewer keys than were written, or scanned fewer
// nodes than the primaries, did not visit the keyspace. A key above the
// threshold fails whatever the coverage.
func keySizes(in KeySizeRun) check.Result {
	const name = "preflight-key-size"
	if in.Pass == nil {
		return check.Unknownf(name, "the key-size pass did not run")
	}
	r := check.KeySizesUnder(*in.Pass)
	r.Checker = name
	if r.Status == check.Fail {
		return r
	}
	seen := 0
	for _, s := range in.Pass.Scans {
		seen += s.Keys
	}
	switch {
	case in.Seeded <= 0:
		return check.Unknownf(name, "nothing seeded: an empty keyspace proves nothing")
	case len(in.Pass.Scans) < in.Primaries:
		return check.Unknownf(name, "%d of %d primaries scanned", len(in.Pass.Scans), in.Primaries)
	case seen < in.Seeded:
		return check.Unknownf(name, "the pass returned %d keys, %d were written: part of the keyspace was not visited", seen, in.Seeded)
	}
	return r
}

// CPURun is one CPU-headroom sampling.
type CPURun struct {
	Samples []history.CPUSample
	// Limit is the busy fraction at which resharding is unsafe (0.8).
	Limit float64
	// Nodes is how many nodes the topology has; MinInterval the shortest
	// interval between the two reads that measures anything.
	Nodes       int
	MinInterval time.Duration
}

// cpuHeadroom is G5's rule (spec 000 §Migration path G5: keep CPU <80%
// during resharding): check.CPUHeadroom, behind its premises — every node
// of the topology measured, each over at least MinInterval (a read pair a
// few milliseconds apart measures scheduling noise). A node above the
// limit fails whatever else was measured.
func cpuHeadroom(in CPURun) check.Result {
	const name = "preflight-cpu-headroom"
	if in.Limit <= 0 || in.Limit > 1 {
		return check.Unknownf(name, "limit %.2f is not a fraction in (0, 1]", in.Limit)
	}
	r := check.CPUHeadroom(in.Samples, in.Limit)
	r.Checker = name
	if r.Status == check.Fail {
		return r
	}
	if len(in.Samples) < in.Nodes || in.Nodes <= 0 {
		return check.Unknownf(name, "%d of %d nodes measured", len(in.Samples), in.Nodes)
	}
	for _, s := range in.Samples {
		if s.Err == "" && s.Interval < in.MinInterval {
			return check.Unknownf(name, "%s measured over %v, need %v", s.Node, s.Interval, in.MinInterval)
		}
	}
	return r
}

// The row's checkers, by stable name.
var (
	CrossSlotProbe  = check.Define("preflight/crossslot-probe", crossSlotProbe)
	KeyslotEquality = check.Define("preflight/keyslot-equality", keyslotEquality)
	KeySizes        = check.Define("preflight/key-size", keySizes)
	CPUHeadroom     = check.Define("preflight/cpu-headroom", cpuHeadroom)
)
