// Package judge holds the telemetry row's pure checkers (spec 000
// §Conformance, Telemetry: "Per-shard/slot/channel metrics exist before G5:
// aggregate CPU cannot attribute a hot slot, and the phase gauge
// (buzz_fencing_phase) feeds the Deployment Gate"). They judge a scrape of
// the client's metrics (history.TelemetryScrape, shared with the Marconi
// metrics rows) against what the servers counted themselves: INFO
// commandstats and errorstats, CLUSTER COUNTKEYSINSLOT, SPUBLISH receiver
// counts, PUBSUB SHARDNUMSUB. Each checker is defined under a stable name
// (check.Define); the aliases are the names earlier histories stored it
// under.
package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing/protocol"
)

// Sum adds the samples of family name whose labels include match.
func Sum(samples []history.TelemetrySample, name string, match map[string]string) float64 {
	var sum float64
	for _, s := range samples {
		if s.Name == name && labelsMatch(s.Labels, match) {
			sum += s.Value
		}
	}
	return sum
}

// By adds the samples of family name whose labels include match,
// grouped by the value of label.
func By(samples []history.TelemetrySample, name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.Name == name && labelsMatch(s.Labels, match) {
			out[s.Labels[label]] += s.Value
		}
	}
	return out
}

func labelsMatch(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// NodeCount is one node's count of one command, from the client
// metrics and from the node's INFO commandstats delta over the same run.
type NodeCount struct {
	Node, Command string
	// Sent counts commands the client attributed to Node; Redirected the
	// MOVED/ASK/TRYAGAIN replies among them, ServerErrors the other error
	// replies, Refused those the client library never sent, Unknown those
	// that failed without a reply (they may or may not have run).
	Sent, Redirected, ServerErrors, Refused, Unknown float64
	// Calls, Rejected and Failed are commandstats' calls, rejected_calls
	// and failed_calls deltas.
	Calls, Rejected, Failed float64
}

// SlotKeys is one slot's key count: fresh keys the client SET once
// each in the slot, by its metrics, and the server's CLUSTER COUNTKEYSINSLOT.
type SlotKeys struct {
	Slot                int
	ClientSets, Unknown float64
	ServerKeys          float64
}

// Channel is one sharded channel: deliveries and gaps by the
// subscriber's metrics; what the server reported it delivered (the sum of
// SPUBLISH replies) and how often it ended the subscription (PUBSUB
// SHARDNUMSUB fell from 1 to 0). Unknown counts SPUBLISHes without a reply,
// each of which may have delivered one message more.
type Channel struct {
	Channel                            string
	ClientMessages, Delivered, Unknown float64
	ClientGaps, ServerDrops            float64
}

// Agreement is what agrees compares.
type Agreement struct {
	Nodes    []NodeCount
	Slots    []SlotKeys
	Channels []Channel
	// MinOps is the least number of attributed commands for a verdict.
	MinOps float64
}

// agrees is the silently-wrong checker of the telemetry row: the
// client's metrics agree with the servers' own counters. Tolerance: exact,
// except that each command whose outcome is unknown (no reply) may or may
// not have been counted by the server.
//   - per node and command: commands that reached the node (Sent − Refused
//     − Unknown) = calls + rejected_calls, and the refusals among them
//     (Redirected + ServerErrors) = failed_calls + rejected_calls;
//   - per slot: fresh keys SET once each = CLUSTER COUNTKEYSINSLOT;
//   - per channel: deliveries counted = receivers the server reported, and
//     gaps counted = subscriptions the server ended.
func agrees(a Agreement) check.Result {
	const name = "telemetry-agrees"
	var sent float64
	for _, n := range a.Nodes {
		sent += n.Sent
	}
	if sent < a.MinOps {
		return check.Unknownf(name, "only %.0f commands attributed, need %.0f", sent, a.MinOps)
	}
	if len(a.Slots) == 0 {
		return check.Unknownf(name, "no slot key counts to compare")
	}
	var bad, seen []string
	within := func(x, y, tol float64) bool { return math.Abs(x-y) <= tol }
	for _, n := range a.Nodes {
		reached := n.Sent - n.Refused - n.Unknown
		if !within(reached, n.Calls+n.Rejected, n.Unknown) {
			bad = append(bad, fmt.Sprintf("%s %s: client counted %.0f reaching the node, server counted %.0f calls + %.0f rejected (tolerance %.0f unknown-outcome)", n.Node, n.Command, reached, n.Calls, n.Rejected, n.Unknown))
		}
		if !within(n.Redirected+n.ServerErrors, n.Failed+n.Rejected, n.Unknown) {
			bad = append(bad, fmt.Sprintf("%s %s: client counted %.0f redirects + %.0f errors, server %.0f failed + %.0f rejected", n.Node, n.Command, n.Redirected, n.ServerErrors, n.Failed, n.Rejected))
		}
		seen = append(seen, fmt.Sprintf("%s %s: client %.0f/%.0f err, server %.0f/%.0f failed", n.Node, n.Command, reached, n.Redirected+n.ServerErrors, n.Calls+n.Rejected, n.Failed+n.Rejected))
	}
	for _, s := range a.Slots {
		if !within(s.ClientSets, s.ServerKeys, s.Unknown) {
			bad = append(bad, fmt.Sprintf("slot %d: client counted %.0f fresh SETs, CLUSTER COUNTKEYSINSLOT %.0f", s.Slot, s.ClientSets, s.ServerKeys))
		}
	}
	for _, c := range a.Channels {
		if c.ClientMessages < c.Delivered || c.ClientMessages > c.Delivered+c.Unknown {
			bad = append(bad, fmt.Sprintf("channel %s: client counted %.0f deliveries, server reported %.0f receivers", c.Channel, c.ClientMessages, c.Delivered))
		}
		if c.ClientGaps != c.ServerDrops {
			bad = append(bad, fmt.Sprintf("channel %s: client counted %.0f gaps, server ended the subscription %.0f times", c.Channel, c.ClientGaps, c.ServerDrops))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 8), "\n"), "%d disagreements between the client metrics and the servers' counters (%.0f commands, %d slots, %d channels)", len(bad), sent, len(a.Slots), len(a.Channels))
	}
	r := check.Passf(name, "%.0f commands over %d node×command pairs agree with INFO commandstats, %d slots with CLUSTER COUNTKEYSINSLOT, %d channels with SPUBLISH receivers and SHARDNUMSUB drops (exact, unknown-outcome commands excepted)", sent, len(a.Nodes), len(a.Slots), len(a.Channels))
	r.Observed = seen
	return r
}

// Hot is what hotSlot judges: a workload skewed onto one
// slot, the client's per-slot counts and node attribution, and the servers'
// per-node counts of the workload's commands.
type Hot struct {
	Skewed int
	// ClientBySlot and ClientNode are the client metrics: commands per slot
	// and, per slot, the node label carrying most of them.
	ClientBySlot map[int]float64
	ClientNode   map[int]string
	// ServerOwner owns Skewed by CLUSTER SLOTS; ServerCalls is each node's
	// commandstats delta (calls + rejected) of the workload's commands.
	ServerOwner string
	ServerCalls map[string]float64
	// MinShare is the least share of the commands the skew put on Skewed.
	MinShare float64
}

// hotSlot is the silently-wrong checker of hot-slot attribution
// (spec 000 §Conformance, Telemetry: "aggregate CPU cannot attribute a hot
// slot"): the top slot by the client metric is the slot the workload
// skewed, with at least MinShare of the commands; the metric names its
// owner; and that owner's own commandstats agree — it served the most
// commands, at least as many as the client counted on the hot slot.
func hotSlot(h Hot) check.Result {
	const name = "telemetry-hot-slot"
	var total float64
	top, topN := -1, -1.0
	for s, n := range h.ClientBySlot {
		total += n
		if n > topN || (n == topN && s < top) {
			top, topN = s, n
		}
	}
	if total == 0 {
		return check.Unknownf(name, "no commands counted per slot")
	}
	busiest, busiestN := "", -1.0
	for node, n := range h.ServerCalls {
		if n > busiestN || (n == busiestN && node < busiest) {
			busiest, busiestN = node, n
		}
	}
	share := topN / total
	ranked := rankSlots(h.ClientBySlot, 3)
	var bad []string
	if top != h.Skewed {
		bad = append(bad, fmt.Sprintf("the top slot by the client metric is %d (%.1f%%), the workload skewed slot %d (%.0f commands counted there)", top, 100*share, h.Skewed, h.ClientBySlot[h.Skewed]))
	} else if share < h.MinShare {
		bad = append(bad, fmt.Sprintf("slot %d carries %.1f%% of the counted commands, the skew put at least %.0f%% there", top, 100*share, 100*h.MinShare))
	}
	if node := h.ClientNode[h.Skewed]; node != h.ServerOwner {
		bad = append(bad, fmt.Sprintf("the metric attributes slot %d to node %q, CLUSTER SLOTS names %s", h.Skewed, node, h.ServerOwner))
	}
	if busiest != h.ServerOwner {
		bad = append(bad, fmt.Sprintf("commandstats: the busiest node is %s (%.0f), not the hot slot's owner %s (%.0f)", busiest, busiestN, h.ServerOwner, h.ServerCalls[h.ServerOwner]))
	}
	if h.ServerCalls[h.ServerOwner] < h.ClientBySlot[h.Skewed] {
		bad = append(bad, fmt.Sprintf("commandstats: owner %s served %.0f commands, fewer than the %.0f the client counted on its hot slot", h.ServerOwner, h.ServerCalls[h.ServerOwner], h.ClientBySlot[h.Skewed]))
	}
	if len(bad) > 0 {
		return check.Failf(name, "top slots by the client metric: "+ranked, "%s", strings.Join(bad, "; "))
	}
	return check.Passf(name, "hot slot %d named by the client metric (%.1f%% of %.0f commands, attributed to %s); its owner's commandstats agree (%.0f commands, the busiest node); top slots: %s", top, 100*share, total, h.ServerOwner, h.ServerCalls[h.ServerOwner], ranked)
}

func rankSlots(m map[int]float64, n int) string {
	slots := make([]int, 0, len(m))
	for s := range m {
		slots = append(slots, s)
	}
	sort.Slice(slots, func(i, j int) bool {
		if m[slots[i]] != m[slots[j]] {
			return m[slots[i]] > m[slots[j]]
		}
		return slots[i] < slots[j]
	})
	parts := make([]string, 0, n)
	for _, s := range slots[:min(n, len(slots))] {
		parts = append(parts, fmt.Sprintf("%d=%.0f", s, m[s]))
	}
	return strings.Join(parts, ", ")
}

// RedirectTally compares the redirects one scope (a node and slot,
// or a whole run) counted by the metric with those observed independently
// at the call path, and with the redirects the server sent (INFO
// errorstats). A client that follows redirects itself hides some from the
// seam, so the server's count bounds the metric; ServerExact says the
// client follows none (a single-node client), so the two must be equal.
type RedirectTally struct {
	Scope                         string
	Counted, Observed, ServerSent float64
	ServerExact                   bool
}

// redirects is the errors checker of the redirect counter: every
// redirect the call path saw is counted, no more, and never more than the
// server sent (exactly as many when the client follows none). minObserved
// guards against a run in which no redirect reached the seam.
func redirects(tallies []RedirectTally, minObserved float64) check.Result {
	const name = "telemetry-redirects"
	var observed, counted, sent float64
	var bad []string
	for _, t := range tallies {
		observed += t.Observed
		counted += t.Counted
		sent += t.ServerSent
		switch {
		case t.Counted != t.Observed:
			bad = append(bad, fmt.Sprintf("%s: metric counted %.0f redirects, the call path observed %.0f", t.Scope, t.Counted, t.Observed))
		case t.Counted > t.ServerSent:
			bad = append(bad, fmt.Sprintf("%s: metric counted %.0f redirects, the server sent only %.0f", t.Scope, t.Counted, t.ServerSent))
		case t.ServerExact && t.Counted != t.ServerSent:
			bad = append(bad, fmt.Sprintf("%s: a client that follows no redirect counted %.0f, the server sent %.0f", t.Scope, t.Counted, t.ServerSent))
		}
	}
	if observed < minObserved {
		return check.Unknownf(name, "only %.0f redirects reached the call path, need %.0f", observed, minObserved)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(check.Elide(bad, 8), "\n"), "%d of %d scopes miscount redirects (%.0f counted, %.0f observed, %.0f sent by the servers)", len(bad), len(tallies), counted, observed, sent)
	}
	return check.Passf(name, "%.0f redirects counted = observed at the call path over %d scopes; the servers sent %.0f", counted, len(tallies), sent)
}

// phaseC is the phase gauge's half of the scrape check (spec 000
// §Deployment Gate rule 2: the gate reads the phase a pod exports): the
// pods run the C scripts, so buzz_fencing_phase must say C. A missing gauge
// sums to 0 (phase O) and fails the same way.
func phaseC(s history.TelemetryScrape) check.Result {
	const name = "telemetry-phase"
	phase := Sum(s.Samples, protocol.PhaseGaugeName, nil)
	if p, ok := protocol.PhaseFromIndex(int(phase)); !ok || p != protocol.C {
		return check.Failf(name, "", "%s = %v, the pod runs phase C", protocol.PhaseGaugeName, phase)
	}
	return check.Passf(name, "%s = %v: phase C", protocol.PhaseGaugeName, phase)
}

// Exposure is a scrape and what it must carry (exposed): the required
// metric families and every address a node label may name.
type Exposure struct {
	Scrape   history.TelemetryScrape
	Required []string
	Nodes    map[string]bool
}

// RedirectRun is the redirect tallies of one run and the fewest redirects
// that must reach the call path for a verdict (redirects).
type RedirectRun struct {
	Tallies     []RedirectTally
	MinObserved float64
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay. Exposed is check.TelemetryExposed, which stays in
// check because the Marconi metrics check composes it too.
var (
	Exposed = check.Define("telemetry/exposed", func(e Exposure) check.Result {
		return check.TelemetryExposed(e.Scrape, e.Required, e.Nodes)
	}, "TelemetryExposed")
	Agrees    = check.Define("telemetry/agrees", agrees, "TelemetryAgrees")
	HotSlot   = check.Define("telemetry/hot-slot", hotSlot, "TelemetryHotSlot")
	Redirects = check.Define("telemetry/redirects", func(r RedirectRun) check.Result {
		return redirects(r.Tallies, r.MinObserved)
	}, "TelemetryRedirects")
	PhaseC = check.Define("telemetry/phase-c", phaseC, "TelemetryPhaseC")
)
