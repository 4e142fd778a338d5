package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// AuditLedger is one tenant's three-way ledger, read once the pipeline has
// drained: what was accepted in memory, what the stream holds, what
// PostgreSQL holds, and what the queue's overwrite counter says it lost.
type AuditLedger struct {
	// Name labels the ledger in messages ("main/lb-oldest").
	Name   string
	Tenant string
	Offers []history.AuditOffer
	// Stream counts stream entries per signal id (marconi:signals:{t}).
	Stream map[string]int
	// Rows counts signal_queue (or _shadow) rows per signal id; Trace and
	// Obligations the companion tables' rows.
	Rows, Trace, Obligations map[string]int
	// Overwrites is marconi_audit_queue_overwrite_total{tenant} summed over
	// reasons, read from the Prometheus registry; ByReason splits it.
	Overwrites float64
	ByReason   map[string]float64
	// ExpectLoss: the scenario overflowed this queue on purpose, so a ledger
	// without any loss means the scenario did not do what it claims.
	ExpectLoss bool
	// End is the pipeline's state when the ledger was read.
	End AuditEnd
	// LossSet, when set, also judges WHICH signals the queue lost, from
	// its policy and the offers' arrival order; nil judges only how many.
	LossSet *AuditLossSet
}

// Queue policies the loss-set check knows (impl/marconi/audit.Policy).
const (
	AuditPolicyOldest       = "oldest"
	AuditPolicyRejectNew    = "reject_new"
	AuditPolicyBackPressure = "bounded_back_pressure"
)

// AuditLossSet is what a tenant's queue policy says about which offers it
// may lose (spec 002 §3.6 overwrite_policy). What the recorded offers —
// Kept answers, arrival order per tenant, scenario-clock times — can decide:
//
//   - reject_new and bounded_back_pressure never evict a queued entry: the
//     signals missing from PostgreSQL are exactly the offers answered
//     Kept=false (a refusal is the only loss).
//   - oldest never refuses, and evicts from the head of a FIFO: every
//     missing offer was answered Kept=true; and in each overflow (from one
//     OverflowStarts to the next) the first offer made since the overflow
//     began that is lost is at most WriterBatch offers after the
//     overflow's first offer — at the start the stalled writer holds at
//     most one batch out of the queue's reach, and every later offer sits
//     in the queue, oldest first, until the queue evicts it. A policy
//     evicting the newest keeps the queue's first Capacity−1 offers and
//     loses the ones after them, which this bound catches whenever
//     Capacity−1 > WriterBatch (Unknown otherwise: not decidable).
//
// What the offers cannot decide: which entries max_age ejects (it depends
// on when the writer resumes, not on arrival order alone) — leave LossSet
// nil for an age-bound queue and judge only the count; for oldest, which
// offers made before an overflow began were still queued at its start (the
// writer's backlog at the cut is not recorded: they may be lost, first),
// and exactly where inside the writer's held batch the loss begins.
type AuditLossSet struct {
	Policy string
	// OverflowStarts are the scenario-clock instants the queue's writer was
	// cut off (each Redis outage's start), ascending.
	OverflowStarts []time.Duration
	// WriterBatch is the most entries the writer takes at once
	// (audit.DefaultWriterBatch); Capacity the queue's max_entries, or the
	// entries max_bytes holds at the seeded size.
	WriterBatch, Capacity int
}

// auditLossSetViolations lists what l's lost set does that its policy
// forbids; undecidable is set when the configuration cannot tell.
func auditLossSetViolations(l AuditLedger) (why []string, undecidable string) {
	ls := l.LossSet
	missing := map[string]bool{}
	for _, o := range l.Offers {
		if l.Rows[o.SignalID] == 0 {
			missing[o.SignalID] = true
		}
	}
	switch ls.Policy {
	case AuditPolicyRejectNew, AuditPolicyBackPressure:
		var evicted, archivedRefused []string
		for _, o := range l.Offers {
			switch {
			case missing[o.SignalID] && o.Kept:
				evicted = append(evicted, o.SignalID)
			case !missing[o.SignalID] && !o.Kept:
				archivedRefused = append(archivedRefused, o.SignalID)
			}
		}
		if len(evicted) > 0 {
			why = append(why, fmt.Sprintf("%s lost %d signals it had kept (a queued entry evicted): %s", ls.Policy, len(evicted), auditSample(evicted, 3)))
		}
		if len(archivedRefused) > 0 {
			why = append(why, fmt.Sprintf("%s refused %d signals that reached PG anyway: %s", ls.Policy, len(archivedRefused), auditSample(archivedRefused, 3)))
		}
	case AuditPolicyOldest:
		if ls.Capacity-1 <= ls.WriterBatch {
			return nil, fmt.Sprintf("capacity %d ≤ writer batch %d + 1: which end oldest evicts is not decidable from arrival order", ls.Capacity, ls.WriterBatch)
		}
		var refused []string
		for _, o := range l.Offers {
			if missing[o.SignalID] && !o.Kept {
				refused = append(refused, o.SignalID)
			}
		}
		if len(refused) > 0 {
			why = append(why, fmt.Sprintf("oldest refused %d new signals: %s", len(refused), auditSample(refused, 3)))
		}
		for k, start := range ls.OverflowStarts {
			end := time.Duration(1<<63 - 1)
			if k+1 < len(ls.OverflowStarts) {
				end = ls.OverflowStarts[k+1]
			}
			first, firstLost := -1, -1
			for i, o := range l.Offers {
				if o.At < start || o.At >= end {
					continue
				}
				if first < 0 {
					first = i
				}
				if missing[o.SignalID] {
					firstLost = i
					break
				}
			}
			if firstLost >= 0 && firstLost-first > ls.WriterBatch {
				why = append(why, fmt.Sprintf("overflow %d: the first signal lost (%s) is the %d-th offered since the overflow began, past the writer's batch of %d: the oldest queued were kept, newer ones lost",
					k+1, l.Offers[firstLost].SignalID, firstLost-first+1, ls.WriterBatch))
			}
		}
	default:
		return nil, fmt.Sprintf("policy %q has no loss-set rule", ls.Policy)
	}
	return why, ""
}

// AuditEnd is a tenant pipeline's end state: a ledger is only decidable
// once nothing is in flight.
type AuditEnd struct {
	// QueueDepth is the audit queue's depth; Pending the consumer group's
	// pending (read, unacknowledged) entries; Undelivered the stream
	// entries never read by the group (XINFO GROUPS lag).
	QueueDepth, Pending, Undelivered int64
	// WriterLag and ArchiverLag are the lag gauges (seconds).
	WriterLag, ArchiverLag float64
}

func (e AuditEnd) drained() bool { return e.QueueDepth == 0 && e.Pending == 0 && e.Undelivered == 0 }

// auditLedgerFacts is what one ledger's columns say.
type auditLedgerFacts struct {
	accepted           int
	missingPG, dupPG   []string
	phantomPG          []string
	notInStream        []string // archived but absent from the stream (impossible on a sound path)
	badTrace, badOblig []string
	streamDup          int
	streamNotArchived  int
	kept, refused      int
	directErrs         int
	firstDirectErr     string
	missingFromStream  []string // accepted, never reached the stream
	missingButInStream []string // in the stream, not in PG (the archiver did not finish)
}

func auditLedgerOf(l AuditLedger) auditLedgerFacts {
	var f auditLedgerFacts
	accepted := make(map[string]history.AuditOffer, len(l.Offers))
	for _, o := range l.Offers {
		accepted[o.SignalID] = o
		if o.Kept {
			f.kept++
		} else {
			f.refused++
		}
		if o.DirectErr != "" {
			f.directErrs++
			if f.firstDirectErr == "" {
				f.firstDirectErr = o.SignalID + ": " + o.DirectErr
			}
		}
	}
	f.accepted = len(accepted)
	for _, o := range l.Offers {
		n := l.Rows[o.SignalID]
		switch {
		case n == 0:
			f.missingPG = append(f.missingPG, o.SignalID)
			if l.Stream[o.SignalID] > 0 {
				f.missingButInStream = append(f.missingButInStream, o.SignalID)
			} else {
				f.missingFromStream = append(f.missingFromStream, o.SignalID)
			}
			continue
		case n > 1:
			f.dupPG = append(f.dupPG, fmt.Sprintf("%s×%d", o.SignalID, n))
		}
		if l.Stream[o.SignalID] == 0 {
			f.notInStream = append(f.notInStream, o.SignalID)
		}
		if got := l.Trace[o.SignalID]; got != o.TraceEvents*n {
			f.badTrace = append(f.badTrace, fmt.Sprintf("%s: %d trace rows for %d events", o.SignalID, got, o.TraceEvents))
		}
		want := 0
		if o.Obligation {
			want = n
		}
		if got := l.Obligations[o.SignalID]; got != want {
			f.badOblig = append(f.badOblig, fmt.Sprintf("%s: %d obligation rows, want %d", o.SignalID, got, min(want, 1)))
		}
	}
	for id := range l.Rows {
		if _, ok := accepted[id]; !ok {
			f.phantomPG = append(f.phantomPG, id)
		}
	}
	for id, n := range l.Stream {
		if n > 1 {
			f.streamDup += n - 1
		}
		if l.Rows[id] == 0 {
			f.streamNotArchived++
		}
	}
	sort.Strings(f.phantomPG)
	return f
}

func auditSample(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(", … (%d in all)", len(ids))
}

// exactlyOnce is spec 002 §4 / Stage 3–4's exit criterion per
// tenant: every accepted signal lands in the stream and exactly once in
// PostgreSQL (signal_queue or its shadow), with its trace events and its
// obligation, nothing archived that was not accepted, and no loss at all —
// the scenario injects no outage, so marconi_audit_queue_overwrite_total
// must stay zero ("zero in steady state"). Unknown when a ledger was read
// before its pipeline drained or holds fewer than minOffers signals.
func exactlyOnce(ledgers []AuditLedger, minOffers int) check.Result {
	const name = "marconi-exactly-once"
	var bad, observed []string
	total, rows := 0, 0
	for _, l := range ledgers {
		if !l.End.drained() {
			return check.Unknownf(name, "%s read before the pipeline drained (queue %d, pending %d, undelivered %d): the ledger is not final",
				l.Name, l.End.QueueDepth, l.End.Pending, l.End.Undelivered)
		}
		f := auditLedgerOf(l)
		total += f.accepted
		for _, n := range l.Rows {
			rows += n
		}
		observed = append(observed, fmt.Sprintf("%s: %d accepted, %d in the stream, %d PG rows (%d distinct), overwrites %.0f",
			l.Name, f.accepted, len(l.Stream), auditSumCounts(l.Rows), len(l.Rows), l.Overwrites))
		var why []string
		if len(f.missingPG) > 0 {
			why = append(why, fmt.Sprintf("%d accepted signals missing from PG (%d never reached the stream): %s", len(f.missingPG), len(f.missingFromStream), auditSample(f.missingPG, 5)))
		}
		if len(f.dupPG) > 0 {
			why = append(why, fmt.Sprintf("%d signals with duplicate rows: %s", len(f.dupPG), auditSample(f.dupPG, 5)))
		}
		if len(f.phantomPG) > 0 {
			why = append(why, fmt.Sprintf("%d rows of signals never accepted: %s", len(f.phantomPG), auditSample(f.phantomPG, 5)))
		}
		if len(f.notInStream) > 0 {
			why = append(why, fmt.Sprintf("%d archived signals absent from the stream: %s", len(f.notInStream), auditSample(f.notInStream, 5)))
		}
		if len(f.badTrace) > 0 {
			why = append(why, fmt.Sprintf("trace events wrong: %s", auditSample(f.badTrace, 3)))
		}
		if len(f.badOblig) > 0 {
			why = append(why, fmt.Sprintf("obligations wrong: %s", auditSample(f.badOblig, 3)))
		}
		if f.refused > 0 || l.Overwrites > 0 {
			why = append(why, fmt.Sprintf("the queue lost entries in steady state (%d refused, overwrite counter %.0f)", f.refused, l.Overwrites))
		}
		if len(why) > 0 {
			bad = append(bad, l.Name+": "+strings.Join(why, "; "))
		}
	}
	if total < minOffers {
		return check.Unknownf(name, "only %d accepted signals (need %d to judge)", total, minOffers)
	}
	if len(bad) > 0 {
		r := check.Failf(name, strings.Join(bad, "\n"), "%d of %d ledgers not exactly once: %s", len(bad), len(ledgers), auditFirstLine(bad[0]))
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%d accepted signals, each in the stream and exactly once in PG (%d rows) with its trace events and obligation; no loss", total, rows)
	r.Observed = observed
	return r
}

// lossBudget is spec 002 §3.6's loss budget per tenant: after the
// pipeline drained, the accepted signals missing from PostgreSQL are
// EXACTLY as many as marconi_audit_queue_overwrite_total says the queue
// lost — no more (an uncounted loss), no fewer (a counted loss that was not
// one) — and what PostgreSQL holds is a duplicate-free subset of what was
// accepted, each row in the stream too; a ledger with a LossSet must also
// have lost the signals its policy allows (AuditLossSet). A ledger marked
// ExpectLoss that lost nothing is Unknown: the overflow the scenario claims
// did not happen.
func lossBudget(ledgers []AuditLedger) check.Result {
	const name = "marconi-loss-budget"
	var bad, observed []string
	accepted, missing := 0, 0
	for _, l := range ledgers {
		if !l.End.drained() {
			return check.Unknownf(name, "%s read before the pipeline drained (queue %d, pending %d, undelivered %d): the ledger is not final",
				l.Name, l.End.QueueDepth, l.End.Pending, l.End.Undelivered)
		}
		f := auditLedgerOf(l)
		accepted += f.accepted
		missing += len(f.missingPG)
		observed = append(observed, fmt.Sprintf("%s: accepted %d (kept %d, refused %d) · stream %d · PG %d · missing %d · overwrite counter %.0f %s",
			l.Name, f.accepted, f.kept, f.refused, len(l.Stream), len(l.Rows), len(f.missingPG), l.Overwrites, auditReasons(l.ByReason)))
		var why []string
		if float64(len(f.missingPG)) != l.Overwrites {
			why = append(why, fmt.Sprintf("%d accepted signals missing from PG but the overwrite counter says %.0f (first missing: %s)",
				len(f.missingPG), l.Overwrites, auditSample(f.missingPG, 3)))
		}
		if len(f.missingButInStream) > 0 {
			why = append(why, fmt.Sprintf("%d signals in the stream never archived: %s", len(f.missingButInStream), auditSample(f.missingButInStream, 3)))
		}
		if len(f.dupPG) > 0 {
			why = append(why, fmt.Sprintf("%d duplicate rows: %s", len(f.dupPG), auditSample(f.dupPG, 3)))
		}
		if len(f.phantomPG) > 0 {
			why = append(why, fmt.Sprintf("%d rows never accepted: %s", len(f.phantomPG), auditSample(f.phantomPG, 3)))
		}
		if len(f.notInStream) > 0 {
			why = append(why, fmt.Sprintf("%d archived signals absent from the stream", len(f.notInStream)))
		}
		if len(f.badTrace)+len(f.badOblig) > 0 {
			why = append(why, fmt.Sprintf("companion rows wrong: %s", auditSample(append(f.badTrace, f.badOblig...), 3)))
		}
		if l.LossSet != nil {
			setWhy, undecidable := auditLossSetViolations(l)
			if undecidable != "" {
				return check.Unknownf(name, "%s: %s", l.Name, undecidable)
			}
			why = append(why, setWhy...)
		}
		if len(why) > 0 {
			bad = append(bad, l.Name+": "+strings.Join(why, "; "))
			continue
		}
		if l.ExpectLoss && len(f.missingPG) == 0 {
			return check.Unknownf(name, "%s was meant to overflow but lost nothing: the outage did not exercise the budget", l.Name)
		}
	}
	if len(bad) > 0 {
		r := check.Failf(name, strings.Join(bad, "\n"), "ledger unbalanced in %d of %d tenants: %s", len(bad), len(ledgers), auditFirstLine(bad[0]))
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "three-way ledger balanced in %d tenants: %d accepted, %d missing from PG = %d counted overwrites, no duplicate", len(ledgers), accepted, missing, missing)
	r.Observed = observed
	return r
}

// shadowEqual is Stage 4's shadow comparison: each *_shadow table
// the archiver wrote equals, byte for byte, the table the legacy direct
// write produced (pairs maps a direct table's name to its shadow's name).
// Unknown when the direct tables are empty.
func shadowEqual(tables map[string]AuditTable, pairs map[string]string) check.Result {
	const name = "marconi-shadow-equal"
	names := make([]string, 0, len(pairs))
	for d := range pairs {
		names = append(names, d)
	}
	sort.Strings(names)
	var bad, observed []string
	compared := 0
	for _, d := range names {
		s := pairs[d]
		direct, shadow := tables[d], tables[s]
		var diffs []string
		keys := make([]string, 0, len(direct)+len(shadow))
		for k := range direct {
			keys = append(keys, k)
		}
		for k := range shadow {
			if _, ok := direct[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			a, b := slices.Clone(direct[k]), slices.Clone(shadow[k])
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				diffs = append(diffs, fmt.Sprintf("%s key %s: direct %q, shadow %q", d, k, a, b))
			}
		}
		compared += len(direct)
		observed = append(observed, fmt.Sprintf("%s vs %s: %d vs %d keys, %d differ", d, s, len(direct), len(shadow), len(diffs)))
		if len(diffs) > 0 {
			bad = append(bad, fmt.Sprintf("%d keys differ between %s and %s:\n  %s", len(diffs), d, s, strings.Join(diffs[:min(len(diffs), 5)], "\n  ")))
		}
	}
	if len(bad) > 0 {
		r := check.Failf(name, strings.Join(bad, "\n"), "shadow tables differ from the direct write: %s", auditFirstLine(bad[0]))
		r.Observed = observed
		return r
	}
	if compared == 0 {
		return check.Unknownf(name, "the direct-write tables are empty: nothing to compare")
	}
	r := check.Passf(name, "%d direct-write rows equal their shadow rows byte for byte in %d table pairs", compared, len(pairs))
	r.Observed = observed
	return r
}

// AuditStage names a fan-out pipeline in a history: "redis-writer" or
// "pg-archiver" (impl/marconi/audit.Stage).
type AuditStage = string

// AuditOutage is one injected outage: while it lasts, the stages named in
// Expect must report errors for each of Tenants, and the stages in Lag must
// show it in their lag gauge. A Redis outage: writer and archiver of the
// tenants on the cut node report errors, the writer's lag grows (the
// archiver is not behind a stream that does not grow). A PostgreSQL
// outage: every tenant's archiver reports errors and its lag grows.
type AuditOutage struct {
	Name       string
	Start, End time.Duration
	Tenants    []string
	Expect     []AuditStage
	Lag        []AuditStage
}

// AuditPipelineHistory is what the errors column judges: the errors the
// pipelines reported, what their counters say, the outages, the gauges
// over time, the offers' latency and the end state.
type AuditPipelineHistory struct {
	Name   string
	Errors []AuditError
	// Counted is each stage's error counter total from the registry.
	Counted map[AuditStage]float64
	// CountedBy is each error counter series from the registry, keyed
	// "<stage>/<tenant>/<reason>" (nil: not recorded, the per-label
	// comparison is skipped and said so).
	CountedBy map[string]float64
	Outages   []AuditOutage
	// Settle is how long after an outage ends errors are still its own.
	Settle  time.Duration
	Samples []AuditSample
	Offers  []history.AuditOffer
	// OfferBound is the slowest an Offer may be per tenant (memory speed,
	// or the bounded back-pressure wait); a tenant missing has no bound.
	OfferBound map[string]time.Duration
	End        map[string]AuditEnd
	// SettledLag is the most either lag gauge may read at the end.
	SettledLag float64
}

// pipelineErrors scores the audit fan-out's loud side (spec 002 §4
// failure modes, §9 counters): no pipeline error outside an outage (plus
// Settle); every error counted by the registry (hook total = counter total
// per stage); every outage reported — errors from each expected stage and
// tenant, and the lag gauge growing to at least half the outage — and
// recovered: drained, lag back under SettledLag; no legacy direct write
// failed; and Offer within its bound, outage or not ("Marconi does not
// block on the Redis writer's health"). Unknown when nothing was offered,
// unless what was reported or counted already fails: a pipeline with no
// traffic has nothing to report or to drain, but an error outside an
// outage is wrong with or without it.
func pipelineErrors(h AuditPipelineHistory) check.Result {
	const name = "marconi-pipeline-errors"
	r := judgePipelineErrors(h)
	if len(h.Offers) == 0 && r.Status != check.Fail {
		return check.Unknownf(name, "%s: no signal was offered: the pipeline's errors, counters and Offer latency were not exercised", h.Name)
	}
	return r
}

func judgePipelineErrors(h AuditPipelineHistory) check.Result {
	const name = "marconi-pipeline-errors"
	var bad, observed []string
	expects := func(o AuditOutage, e AuditError) bool {
		return slices.Contains(o.Expect, e.Stage) && (len(o.Tenants) == 0 || slices.Contains(o.Tenants, e.Tenant))
	}
	hooked := map[AuditStage]float64{}
	var outside []string
	var lastAfterHeal time.Duration
	lastAfterHealErr := "none"
	for _, e := range h.Errors {
		hooked[e.Stage]++
		during, after := false, false
		for _, o := range h.Outages {
			during = during || expects(o, e) && e.At >= o.Start && e.At <= o.End
		}
		for _, o := range h.Outages {
			if during || !expects(o, e) || e.At <= o.End || e.At > o.End+h.Settle {
				continue
			}
			after = true
			if d := e.At - o.End; d > lastAfterHeal {
				lastAfterHeal = d
				lastAfterHealErr = fmt.Sprintf("%s %s %s %s after %s healed: %s", e.Stage, e.Tenant, e.Op, e.Reason, o.Name, e.Err)
			}
		}
		if !during && !after {
			outside = append(outside, fmt.Sprintf("%v %s %s %s: %s", e.At.Round(time.Millisecond), e.Stage, e.Tenant, e.Op, e.Err))
		}
	}
	if len(outside) > 0 {
		bad = append(bad, fmt.Sprintf("%d pipeline errors outside every outage (+%v): %s", len(outside), h.Settle, auditSample(outside, 3)))
	}
	for _, st := range []AuditStage{"redis-writer", "pg-archiver"} {
		if hooked[st] != h.Counted[st] {
			bad = append(bad, fmt.Sprintf("%s reported %.0f errors but its counter says %.0f", st, hooked[st], h.Counted[st]))
		}
	}
	if h.CountedBy == nil {
		observed = append(observed, "error counters per tenant and reason not recorded: totals compared only")
	} else {
		// §9 labels the error counters {tenant, reason}: what the operator
		// alerts on per tenant must be what happened to that tenant.
		hookedBy := map[string]float64{}
		for _, e := range h.Errors {
			hookedBy[e.Stage+"/"+e.Tenant+"/"+e.Reason]++
		}
		var keys []string
		for k := range hookedBy {
			keys = append(keys, k)
		}
		for k := range h.CountedBy {
			if _, ok := hookedBy[k]; !ok && h.CountedBy[k] != 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var off []string
		for _, k := range keys {
			if hookedBy[k] != h.CountedBy[k] {
				off = append(off, fmt.Sprintf("%s: %.0f reported, counter series says %.0f", k, hookedBy[k], h.CountedBy[k]))
			}
		}
		if len(off) > 0 {
			bad = append(bad, fmt.Sprintf("%d error counter series disagree with the errors reported, by stage/tenant/reason: %s", len(off), auditSample(off, 3)))
		}
	}
	observed = append(observed, fmt.Sprintf("errors reported: writer %.0f, archiver %.0f (counters %.0f, %.0f); last error %v after a heal (%s)",
		hooked["redis-writer"], hooked["pg-archiver"], h.Counted["redis-writer"], h.Counted["pg-archiver"], lastAfterHeal.Round(time.Millisecond), lastAfterHealErr))

	for _, o := range h.Outages {
		length := (o.End - o.Start).Seconds()
		for _, tenant := range o.Tenants {
			for _, st := range o.Expect {
				n := 0
				for _, e := range h.Errors {
					if e.Stage == st && e.Tenant == tenant && e.At >= o.Start && e.At <= o.End+h.Settle {
						n++
					}
				}
				if n == 0 {
					bad = append(bad, fmt.Sprintf("outage %s: %s of %s reported no error — the outage was silent", o.Name, st, tenant))
				}
				if !slices.Contains(o.Lag, st) {
					observed = append(observed, fmt.Sprintf("outage %s %.1fs: %s of %s — %d errors", o.Name, length, st, tenant, n))
					continue
				}
				peak := 0.0
				for _, s := range h.Samples {
					if s.Tenant != tenant || s.At < o.Start || s.At > o.End {
						continue
					}
					if st == "redis-writer" {
						peak = max(peak, s.WriterLag)
					} else {
						peak = max(peak, s.ArchiverLag)
					}
				}
				if peak < length/2 {
					bad = append(bad, fmt.Sprintf("outage %s (%.1fs): %s lag of %s peaked at %.2fs, under half the outage", o.Name, length, st, tenant, peak))
				}
				observed = append(observed, fmt.Sprintf("outage %s %.1fs: %s of %s — %d errors, lag peak %.2fs", o.Name, length, st, tenant, n, peak))
			}
		}
	}
	tenants := make([]string, 0, len(h.End))
	for t := range h.End {
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	for _, t := range tenants {
		e := h.End[t]
		if !e.drained() {
			bad = append(bad, fmt.Sprintf("%s never drained: queue %d, pending %d (read, never acknowledged), undelivered %d", t, e.QueueDepth, e.Pending, e.Undelivered))
		}
		if e.WriterLag > h.SettledLag || e.ArchiverLag > h.SettledLag {
			bad = append(bad, fmt.Sprintf("%s lag did not settle: writer %.2fs, archiver %.2fs (bound %.2fs)", t, e.WriterLag, e.ArchiverLag, h.SettledLag))
		}
	}
	direct := 0
	slow := map[string][]time.Duration{}
	for _, o := range h.Offers {
		if o.DirectErr != "" {
			direct++
		}
		if _, ok := h.OfferBound[o.Tenant]; ok {
			slow[o.Tenant] = append(slow[o.Tenant], o.Took)
		}
	}
	if direct > 0 {
		bad = append(bad, fmt.Sprintf("%d legacy direct writes failed", direct))
	}
	for _, t := range auditSortedKeys(slow) {
		d := slow[t]
		slices.Sort(d)
		p99, worst := d[(len(d)*99)/100], d[len(d)-1]
		observed = append(observed, fmt.Sprintf("Offer %s: %d calls, p99 %v, max %v (bound %v)", t, len(d), p99, worst, h.OfferBound[t]))
		if p99 > h.OfferBound[t] {
			bad = append(bad, fmt.Sprintf("Offer of %s p99 %v over its bound %v: the hot path waited on the audit fan-out", t, p99, h.OfferBound[t]))
		}
	}
	if len(bad) > 0 {
		r := check.Failf(name, strings.Join(bad, "\n"), "%s: %s", h.Name, bad[0])
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%s: %d pipeline errors, all inside %d outages and counted; every outage reported and its lag moved; drained and settled; Offer within bounds",
		h.Name, len(h.Errors), len(h.Outages))
	r.Observed = observed
	return r
}

func auditSumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func auditReasons(m map[string]float64) string {
	var parts []string
	for _, k := range auditSortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%.0f", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func auditSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func auditFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
