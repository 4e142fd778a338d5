package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// Spec 002 §9 (Counters / observability): "Every metric below MUST exist
// before Stage 5 hot-path cutover." A metric that exists and is wrong is
// worse than none: the dashboards and the loss budget read it. The
// checkers here judge a scrape of the mesh's /metrics — the Prometheus
// text exposition, as a Prometheus server reads it — against counts taken
// outside the instrument: the harness's own ledger of what it sent, what
// the mesh answered, what its receivers' WebSockets got, what
// prism_signals_pending returned, and what the tenant's Redis Stream
// holds (XRANGE on the server).

// The §9 families the marconi-metrics row judges, each against its
// independent count, per label set.
const (
	MetricReceived      = "marconi_signals_received_total"                 // {tenant,signal_type}
	MetricDelivered     = "marconi_signals_delivered_total"                // {tenant,signal_type,outcome}
	MetricAcked         = "marconi_signals_acked_total"                    // {tenant,signal_type,ack_kind}
	MetricSendDuration  = "marconi_signal_send_duration_seconds"           // {tenant}: the histogram's count
	MetricTableSize     = "marconi_routing_table_size"                     // {tenant}
	MetricCacheHits     = "marconi_routing_cache_hits_total"               // {tenant}
	MetricCacheMisses   = "marconi_routing_cache_misses_total"             // {tenant}
	MetricAuditDepth    = "marconi_audit_queue_depth"                      // {tenant}
	MetricAuditOverflow = "marconi_audit_queue_overwrite_total"            // {tenant,reason}
	MetricHookCalls     = "marconi_invalidator_calls_total"                // {hook}
	MetricHookErrors    = "marconi_invalidator_errors_total"               // {hook,reason}
	MetricObligOpen     = "marconi_obligations_open"                       // {tenant,kind}
	MetricObligDurable  = "marconi_obligations_durable_total"              // {tenant,kind}
	MetricObligDegraded = "marconi_obligations_degraded_not_durable_total" // {tenant,kind}
	MetricSLAViolation  = "marconi_obligation_sla_violation_total"         // {tenant,kind,sla}
	// MetricWriterAppended is not in §9's list: it is the Redis Stream
	// writer's count of entries appended (impl's), judged because §4.1's
	// writer-lag alert and the loss budget are read beside it, and the
	// stream itself (XRANGE) is its independent count.
	MetricWriterAppended = "marconi_redis_writer_appended_total" // {tenant}
)

// MetricFamilies lists them in §9 order.
var MetricFamilies = []string{
	MetricReceived, MetricDelivered, MetricAcked, MetricSendDuration, MetricTableSize, MetricCacheHits, MetricCacheMisses,
	MetricAuditDepth, MetricAuditOverflow, MetricHookCalls, MetricHookErrors,
	MetricObligOpen, MetricObligDurable, MetricObligDegraded, MetricSLAViolation, MetricWriterAppended,
}

// HookLabels are the hook label values of §9 (the Stage 2 hook list).
var HookLabels = []string{"on_register", "on_deregister", "on_master_change", "on_heartbeat", "on_session_expired", "on_ws_connect", "on_ws_disconnect"}

// MetricsSend is one prism_signal call as the harness recorded it.
type MetricsSend struct {
	SignalID, Tenant, Kind string
	Start, Done            time.Duration
	Status                 int
	// Outcome, SessionID and AuditKept are the 200's answer.
	Outcome, SessionID string
	AuditKept          bool
	// Live: by the harness's own model, the recipient identity had a
	// registered, unexpired session when the send was made (a routing
	// hit).
	Live bool
	// Obligation is the obligation kind asked for ("" for none), with its
	// SLAs.
	Obligation          string
	AckSLA, TerminalSLA time.Duration
}

// MetricsAck is one ack as the harness recorded it: over HTTP, its
// status; over the receiver's socket (no answer), 200 when the harness saw
// it take effect on the wire (a later HTTP ack of the same signal answered
// 404), 0 otherwise. Done bounds when it took effect.
type MetricsAck struct {
	SignalID, AckKind string
	Start, Done       time.Duration
	Status            int
}

// MetricsHistory is everything the harness counted itself up to one
// scrape.
type MetricsHistory struct {
	Sends []MetricsSend
	Acks  []MetricsAck
	// Frames counts, per signal id, the WebSocket frames the harness's
	// receivers got; Drained, the times prism_signals_pending returned it.
	Frames, Drained map[string]int
	// Hooks counts, per §9 hook label, the harness's calls that reached the
	// mesh (register/deregister/claim/handoff/heartbeat 200s, socket dials
	// the mesh answered, sockets the harness saw end, session records it
	// saw expire); HookErrors, per "hook/reason", those the mesh refused.
	Hooks, HookErrors map[string]int
	// Routes is each tenant's routing entries by the harness's model: one
	// per identity with a live session, plus the master alias of each
	// project whose master is live.
	Routes map[string]int
	// Stream lists, per tenant, the signal id of every entry its Redis
	// Stream holds (XRANGE on the server, read after the scrape): a signal
	// is listed once per entry — its envelope, then one state handoff per
	// ack of its obligation (§3.4 "Redis Stream handoff reflects
	// durability_status").
	Stream map[string][]string
	// StreamComplete: the audit writer was running and the harness waited
	// for it, so every entry the mesh answered audit_kept for must be in
	// the stream.
	StreamComplete bool
	// Sweep is the mesh's SLA sweep period; ScrapeStart and ScrapeEnd
	// bracket the scrape judged.
	Sweep                  time.Duration
	ScrapeStart, ScrapeEnd time.Duration
}

// MetricExpect is one series' independent count; NaN when the history
// cannot decide it at this scrape.
type MetricExpect struct {
	Name   string
	Labels map[string]string
	Want   float64
	// Source says where the count came from.
	Source string
}

func (e MetricExpect) key() string { return seriesKey(e.Name, e.Labels) }

func seriesKey(name string, labels map[string]string) string {
	ks := make([]string, 0, len(labels))
	for k := range labels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// MetricsLedger derives, from the harness's history alone, what
// every judged §9 series must read at the scrape. It returns the
// expectations and the inconsistencies it found between the mesh's
// answers and what the harness observed (a 200 that said pushed with no
// frame received, a hit with no live session, an audit_kept entry missing
// from a complete stream, …) — the ledger stands on both agreeing — and
// the SLA timings too close to the scrape to decide (ambiguous).
func MetricsLedger(h MetricsHistory) (want []MetricExpect, inconsistent, ambiguous []string) {
	counts := map[string]*MetricExpect{}
	add := func(name string, labels map[string]string, n float64, source string) {
		k := seriesKey(name, labels)
		e := counts[k]
		if e == nil {
			e = &MetricExpect{Name: name, Labels: labels, Source: source}
			counts[k] = e
		}
		e.Want += n
	}
	bySignal := map[string]MetricsSend{}
	kept := map[string]int{}
	tenants := map[string]bool{}
	inStream := map[string]map[string]bool{}
	for t, ids := range h.Stream {
		inStream[t] = map[string]bool{}
		for _, id := range ids {
			inStream[t][id] = true
		}
	}
	for _, s := range h.Sends {
		if s.Status != 200 {
			continue
		}
		bySignal[s.SignalID] = s
		tenants[s.Tenant] = true
		t := map[string]string{"tenant": s.Tenant}
		add(MetricReceived, map[string]string{"tenant": s.Tenant, "signal_type": s.Kind}, 1, "sends answered 200")
		add(MetricSendDuration, t, 1, "sends answered 200")
		add(MetricDelivered, map[string]string{"tenant": s.Tenant, "signal_type": s.Kind, "outcome": s.Outcome}, 1,
			"200 outcomes, each confirmed by the receivers' frames / prism_signals_pending")
		seen := h.Frames[s.SignalID] + h.Drained[s.SignalID]
		switch s.Outcome {
		case "pushed":
			if h.Frames[s.SignalID] == 0 {
				inconsistent = append(inconsistent, fmt.Sprintf("%s answered pushed, no receiver frame", s.SignalID))
			}
		case "queued_offline":
			if seen == 0 {
				inconsistent = append(inconsistent, fmt.Sprintf("%s answered queued_offline, never drained (prism_signals_pending) nor pushed on attach", s.SignalID))
			}
		case "dropped", "no_subscriber":
			if seen > 0 {
				inconsistent = append(inconsistent, fmt.Sprintf("%s answered %s, yet delivered %d time(s)", s.SignalID, s.Outcome, seen))
			}
		default:
			inconsistent = append(inconsistent, fmt.Sprintf("%s answered unknown outcome %q", s.SignalID, s.Outcome))
		}
		if s.Live != (s.SessionID != "") {
			inconsistent = append(inconsistent, fmt.Sprintf("%s: harness model live=%v, mesh resolved session %q", s.SignalID, s.Live, s.SessionID))
		}
		if s.Live {
			add(MetricCacheHits, t, 1, "sends to an identity the harness had live")
		} else {
			add(MetricCacheMisses, t, 1, "sends to an identity the harness had no live session for")
		}
		if s.AuditKept {
			kept[s.Tenant]++
		} else {
			add(MetricAuditOverflow, map[string]string{"tenant": s.Tenant, "reason": "rejected"}, 1, "sends answered audit_kept=false (reject_new)")
		}
		if s.Obligation != "" {
			ob := map[string]string{"tenant": s.Tenant, "kind": s.Obligation}
			add(MetricObligOpen, ob, 1, "obligations opened (200) minus terminal acks (200)")
			// §4.1: the Redis Stream is the durable boundary — an
			// obligation is durable once its envelope is in the stream
			// (XRANGE), queued while only the in-memory queue holds it.
			// Taken with the writer paused, a scrape must count none.
			switch {
			case !s.AuditKept:
				add(MetricObligDegraded, ob, 1, "obligations whose envelope the audit queue refused")
			case inStream[s.Tenant][s.SignalID]:
				add(MetricObligDurable, ob, 1, "obligations whose envelope XRANGE finds in the tenant's stream")
			default:
				add(MetricObligDurable, ob, 0, "obligations whose envelope XRANGE finds in the tenant's stream")
			}
		}
	}
	// Acks: counted on 200 only, labelled by the acked signal's send.
	firstAck, firstTerminal := map[string]time.Duration{}, map[string]time.Duration{}
	handoffs := map[string]int{}
	for _, a := range h.Acks {
		if a.Status != 200 {
			continue
		}
		s, ok := bySignal[a.SignalID]
		if !ok {
			inconsistent = append(inconsistent, fmt.Sprintf("ack of %s answered 200 but the harness sent no such signal", a.SignalID))
			continue
		}
		add(MetricAcked, map[string]string{"tenant": s.Tenant, "signal_type": s.Kind, "ack_kind": a.AckKind}, 1, "acks answered 200")
		if t, ok := firstAck[a.SignalID]; !ok || a.Done < t {
			firstAck[a.SignalID] = a.Done
		}
		if a.AckKind == "terminal" {
			if _, ok := firstTerminal[a.SignalID]; ok {
				inconsistent = append(inconsistent, fmt.Sprintf("second terminal ack of %s answered 200 (the obligation was closed)", a.SignalID))
				continue
			}
			firstTerminal[a.SignalID] = a.Done
			if s.Obligation != "" {
				add(MetricObligOpen, map[string]string{"tenant": s.Tenant, "kind": s.Obligation}, -1, "obligations opened (200) minus terminal acks (200)")
			}
		}
		if s.Obligation != "" && s.AuditKept {
			// §3.4: an ack of a durable-bound obligation re-offers its
			// new state to the audit queue (one more entry).
			handoffs[s.Tenant]++
		}
	}
	// SLA violations (§3.4 sweepers): decided only where the timing is
	// unambiguous — the evidence came before the earliest deadline, or the
	// scrape started two sweeps after the latest one.
	for _, s := range h.Sends {
		if s.Status != 200 || s.Obligation == "" {
			continue
		}
		for _, sla := range []struct {
			name     string
			d        time.Duration
			evidence map[string]time.Duration
		}{{"ack", s.AckSLA, firstAck}, {"terminal", s.TerminalSLA, firstTerminal}} {
			if sla.d <= 0 {
				continue
			}
			labels := map[string]string{"tenant": s.Tenant, "kind": s.Obligation, "sla": sla.name}
			at, met := sla.evidence[s.SignalID]
			switch {
			case met && at < s.Start+sla.d:
				add(MetricSLAViolation, labels, 0, "obligations past their SLA with no evidence (harness clock)")
			case h.ScrapeEnd < s.Start+sla.d:
				add(MetricSLAViolation, labels, 0, "obligations past their SLA with no evidence (harness clock)")
			case (!met || at > s.Done+sla.d+2*h.Sweep) && h.ScrapeStart > s.Done+sla.d+2*h.Sweep:
				add(MetricSLAViolation, labels, 1, "obligations past their SLA with no evidence (harness clock)")
			default:
				// NaN: the series is undecidable at this scrape (a NaN
				// survives every later add), so Agree skips it.
				add(MetricSLAViolation, labels, math.NaN(), "undecidable: SLA deadline too close to the scrape")
				ambiguous = append(ambiguous, fmt.Sprintf("%s %s SLA %v: deadline too close to the evidence or the scrape", s.SignalID, sla.name, sla.d))
			}
		}
	}
	// Audit queue depth: what the mesh kept (envelopes and state
	// handoffs) minus the entries the stream holds.
	for t := range tenants {
		for _, id := range h.Stream[t] {
			if s, ok := bySignal[id]; ok && !s.AuditKept {
				inconsistent = append(inconsistent, fmt.Sprintf("%s answered audit_kept=false but is in the %s stream", id, t))
			}
		}
		if h.StreamComplete {
			for _, s := range h.Sends {
				if s.Status == 200 && s.Tenant == t && s.AuditKept && !inStream[t][s.SignalID] {
					inconsistent = append(inconsistent, fmt.Sprintf("%s answered audit_kept=true but the %s stream lacks it after the writer drained", s.SignalID, t))
				}
			}
		}
		add(MetricAuditDepth, map[string]string{"tenant": t}, float64(kept[t]+handoffs[t]-len(h.Stream[t])), "audit_kept 200s plus their obligations' acks (state handoffs) minus the entries XRANGE finds in the stream")
		// §4.1: the writer is the stream's only writer, and each tenant's
		// stream is fresh, so every entry XRANGE finds is one it appended
		// (the trim never runs here: the retention is 7 d).
		add(MetricWriterAppended, map[string]string{"tenant": t}, float64(len(h.Stream[t])), "entries XRANGE finds in the tenant's stream")
	}
	for t, n := range h.Routes {
		add(MetricTableSize, map[string]string{"tenant": t}, float64(n), "live identities + live master aliases (harness model)")
	}
	for _, hook := range HookLabels {
		add(MetricHookCalls, map[string]string{"hook": hook}, float64(h.Hooks[hook]), "control calls that reached the mesh, sockets dialled/ended, records seen expiring")
	}
	for hr, n := range h.HookErrors {
		hook, reason, _ := strings.Cut(hr, "/")
		add(MetricHookErrors, map[string]string{"hook": hook, "reason": reason}, float64(n), "calls the mesh refused")
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want = append(want, *counts[k])
	}
	sort.Strings(inconsistent)
	return want, inconsistent, ambiguous
}

// MetricsPoint is one judged scrape: what the mesh exposed and what the
// harness's ledger says it must.
type MetricsPoint struct {
	// Name says when the scrape was taken ("mid-run", "final").
	Name    string
	Scrape  history.TelemetryScrape
	History MetricsHistory
}

// marconiMetricsAgree is the silently-wrong checker of the §9 metrics:
// at every point, every judged series reads exactly its independent count
// (a missing series reads 0), and no judged family holds a non-zero series
// under a label set the ledger does not know (a dropped or wrong label).
// Each judged family must be exercised — some expectation non-zero at some
// point — or the verdict is unknown: a metric never moved is not judged.
// An SLA series whose deadline falls too close to a scrape is skipped at
// that scrape (and said so), never guessed.
// A scrape that failed is unknown here (the errors column judges it).
func marconiMetricsAgree(points []MetricsPoint) check.Result {
	const name = "marconi-metrics-agree"
	judged := map[string]bool{}
	for _, f := range MetricFamilies {
		judged[f] = true
	}
	exercised := map[string]bool{}
	var bad, amb []string
	series := 0
	for _, p := range points {
		if p.Scrape.Err != "" || p.Scrape.Status != 200 {
			return check.Unknownf(name, "%s scrape failed (HTTP %d %s): nothing to compare", p.Name, p.Scrape.Status, p.Scrape.Err)
		}
		want, inconsistent, ambiguous := MetricsLedger(p.History)
		for _, s := range inconsistent {
			bad = append(bad, p.Name+": mesh answer ≠ harness observation: "+s)
		}
		for _, s := range ambiguous {
			amb = append(amb, p.Name+": "+s)
		}
		got := map[string]float64{}
		for _, smp := range p.Scrape.Samples {
			if judged[smp.Name] {
				got[seriesKey(smp.Name, smp.Labels)] += smp.Value
			}
		}
		expected := map[string]bool{}
		for _, e := range want {
			k := e.key()
			expected[k] = true
			series++
			if math.IsNaN(e.Want) {
				continue
			}
			if e.Want != 0 {
				exercised[e.Name] = true
			}
			if g := got[k]; math.Abs(g-e.Want) > 1e-9 {
				bad = append(bad, fmt.Sprintf("%s: %s = %g, independent count %g (%s)", p.Name, k, g, e.Want, e.Source))
			}
		}
		for _, smp := range p.Scrape.Samples {
			k := seriesKey(smp.Name, smp.Labels)
			if judged[smp.Name] && !expected[k] && smp.Value != 0 {
				bad = append(bad, fmt.Sprintf("%s: %s = %g under a label set no independent count has", p.Name, k, smp.Value))
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(check.Elide(bad, 8), "\n"), "%d series disagree with the independent counts (of %d judged over %d scrapes)", len(bad), series, len(points))
	}
	var idle []string
	for _, f := range MetricFamilies {
		if !exercised[f] {
			idle = append(idle, f)
		}
	}
	if len(idle) > 0 {
		return check.Unknownf(name, "the workload never moved %s: not judged", strings.Join(idle, ", "))
	}
	r := check.Passf(name, "%d series over %d scrapes read exactly their independent counts; all %d §9 families exercised, no stray label set", series, len(points), len(MetricFamilies))
	if len(amb) > 0 {
		r.Observed = append(r.Observed, fmt.Sprintf("%d SLA series skipped where the deadline was too close to a scrape to decide (%s)", len(amb), strings.Join(check.Elide(amb, 2), "; ")))
	}
	return r
}

// marconiMetricsExposed is the errors checker of the §9 metrics: every
// scrape of /metrics answered 200 and parsed, and the last one — taken
// once the workload has moved every judged family — exposes each of them.
// A registry that cannot gather (a duplicate series) answers 500; an
// instrument never registered is missing: both are loud, and both are
// failures of the instrument, not of the count.
func marconiMetricsExposed(points []MetricsPoint) check.Result {
	const name = "marconi-metrics-exposed"
	if len(points) == 0 {
		return check.Unknownf(name, "no scrape")
	}
	for _, p := range points[:len(points)-1] {
		if p.Scrape.Err != "" || p.Scrape.Status != 200 {
			return check.Failf(name, p.Scrape.Err, "%s scrape failed: HTTP %d %s", p.Name, p.Scrape.Status, p.Scrape.Err)
		}
	}
	last := points[len(points)-1]
	r := check.TelemetryExposed(last.Scrape, MetricFamilies, nil)
	r.Checker = name
	if r.Status == check.Pass {
		r.Message = fmt.Sprintf("%d scrapes answered 200 and parsed; the %s one exposes all %d judged §9 families (%d samples)", len(points), last.Name, len(MetricFamilies), len(last.Scrape.Samples))
	} else {
		r.Message = last.Name + ": " + r.Message
	}
	return r
}
