package judge

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// auditLedger is n accepted signals of tenant t, every one in the stream
// and once in PG with one trace event; every third has an obligation.
func auditLedger(t string, n int) AuditLedger {
	l := AuditLedger{Name: "main/" + t, Tenant: t, Stream: map[string]int{}, Rows: map[string]int{}, Trace: map[string]int{}, Obligations: map[string]int{}, ByReason: map[string]float64{}}
	for i := range n {
		id := fmt.Sprintf("%s-%d", t, i)
		o := history.AuditOffer{Tenant: t, SignalID: id, Kept: true, TraceEvents: 1, Obligation: i%3 == 0}
		l.Offers = append(l.Offers, o)
		l.Stream[id], l.Rows[id], l.Trace[id] = 1, 1, 1
		if o.Obligation {
			l.Obligations[id] = 1
		}
	}
	return l
}

// lose removes k signals from the stream and PG, as an overflowing queue
// would, and says whether the counter saw it.
func lose(l AuditLedger, k int, counted bool) AuditLedger {
	for i := range k {
		id := l.Offers[i].SignalID
		delete(l.Stream, id)
		delete(l.Rows, id)
		delete(l.Trace, id)
		delete(l.Obligations, id)
	}
	if counted {
		l.Overwrites = float64(k)
		l.ByReason["overwritten"] = float64(k)
	}
	l.ExpectLoss = true
	return l
}

func TestMarconiExactlyOnce(t *testing.T) {
	good := []AuditLedger{auditLedger("a", 50), auditLedger("b", 50)}
	if r := exactlyOnce(good, 10); r.Status != check.Pass {
		t.Fatalf("good ledgers: %s %s", r.Status, r.Message)
	}

	dup := []AuditLedger{auditLedger("a", 50)} // the plain-INSERT archiver after a crash before its ack
	dup[0].Rows["a-7"], dup[0].Trace["a-7"] = 2, 2
	if r := exactlyOnce(dup, 10); r.Status != check.Fail || !strings.Contains(r.Counterexample, "a-7×2") {
		t.Errorf("duplicate row: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}

	lost := []AuditLedger{auditLedger("a", 50)} // ack before write, crash in between
	delete(lost[0].Rows, "a-3")
	if r := exactlyOnce(lost, 10); r.Status != check.Fail || !strings.Contains(r.Counterexample, "a-3") {
		t.Errorf("lost row: %s %s", r.Status, r.Message)
	}

	counted := []AuditLedger{lose(auditLedger("a", 50), 2, true)}
	counted[0].ExpectLoss = false
	if r := exactlyOnce(counted, 10); r.Status != check.Fail {
		t.Errorf("a counted loss in steady state passed: %s", r.Message)
	}

	phantom := []AuditLedger{auditLedger("a", 50)}
	phantom[0].Rows["zz"] = 1
	if r := exactlyOnce(phantom, 10); r.Status != check.Fail {
		t.Errorf("row of a signal never accepted: %s", r.Message)
	}

	noTrace := []AuditLedger{auditLedger("a", 50)}
	delete(noTrace[0].Trace, "a-4")
	if r := exactlyOnce(noTrace, 10); r.Status != check.Fail {
		t.Errorf("missing trace event: %s", r.Message)
	}

	pending := []AuditLedger{auditLedger("a", 50)}
	pending[0].End.Pending = 1
	if r := exactlyOnce(pending, 10); r.Status != check.Unknown {
		t.Errorf("undrained ledger judged: %s", r.Status)
	}
	if r := exactlyOnce(good, 1000); r.Status != check.Unknown {
		t.Errorf("too little traffic judged: %s", r.Status)
	}
}

func TestMarconiLossBudget(t *testing.T) {
	balanced := []AuditLedger{lose(auditLedger("a", 100), 30, true), auditLedger("healthy", 100)}
	if r := lossBudget(balanced); r.Status != check.Pass {
		t.Fatalf("balanced ledger: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}

	uncounted := []AuditLedger{lose(auditLedger("a", 100), 30, false)} // the negative control
	if r := lossBudget(uncounted); r.Status != check.Fail || !strings.Contains(r.Message, "30 accepted signals missing from PG but the overwrite counter says 0") {
		t.Errorf("uncounted loss: %s %s", r.Status, r.Message)
	}

	overCounted := []AuditLedger{lose(auditLedger("a", 100), 30, true)}
	overCounted[0].Overwrites = 31
	if r := lossBudget(overCounted); r.Status != check.Fail {
		t.Errorf("a counter one over the loss passed: %s", r.Message)
	}

	stuck := []AuditLedger{auditLedger("a", 100)} // in the stream, never archived
	delete(stuck[0].Rows, "a-9")
	if r := lossBudget(stuck); r.Status != check.Fail || !strings.Contains(r.Message, "never archived") {
		t.Errorf("unarchived stream entry: %s %s", r.Status, r.Message)
	}

	dup := []AuditLedger{lose(auditLedger("a", 100), 5, true)}
	dup[0].Rows["a-50"], dup[0].Trace["a-50"] = 2, 2
	if r := lossBudget(dup); r.Status != check.Fail {
		t.Errorf("duplicate row passed: %s", r.Message)
	}

	noOverflow := []AuditLedger{auditLedger("a", 100)}
	noOverflow[0].ExpectLoss = true
	if r := lossBudget(noOverflow); r.Status != check.Unknown {
		t.Errorf("an outage that overflowed nothing: %s", r.Status)
	}

	undrained := []AuditLedger{lose(auditLedger("a", 100), 30, true)}
	undrained[0].End.QueueDepth = 3
	if r := lossBudget(undrained); r.Status != check.Unknown {
		t.Errorf("undrained ledger: %s", r.Status)
	}
}

func TestMarconiShadowEqual(t *testing.T) {
	pairs := map[string]string{"signal_queue": "signal_queue_shadow"}
	tables := map[string]AuditTable{
		"signal_queue":        {"s1": {"(s1,t,…)"}, "s2": {"(s2,t,…)"}},
		"signal_queue_shadow": {"s1": {"(s1,t,…)"}, "s2": {"(s2,t,…)"}},
	}
	if r := shadowEqual(tables, pairs); r.Status != check.Pass {
		t.Fatalf("equal tables: %s %s", r.Status, r.Message)
	}
	tables["signal_queue_shadow"]["s2"] = []string{"(s2,t,…x)"}
	if r := shadowEqual(tables, pairs); r.Status != check.Fail || !strings.Contains(r.Counterexample, "key s2") {
		t.Errorf("differing row: %s %s", r.Status, r.Counterexample)
	}
	tables["signal_queue_shadow"]["s2"] = []string{"(s2,t,…)", "(s2,t,…)"} // double insert
	if r := shadowEqual(tables, pairs); r.Status != check.Fail {
		t.Errorf("duplicate shadow row: %s", r.Message)
	}
	tables["signal_queue_shadow"]["s2"] = []string{"(s2,t,…)"}
	tables["signal_queue_shadow"]["s3"] = []string{"(s3,t,…)"}
	if r := shadowEqual(tables, pairs); r.Status != check.Fail {
		t.Errorf("extra shadow row: %s", r.Message)
	}
	if r := shadowEqual(map[string]AuditTable{}, pairs); r.Status != check.Unknown {
		t.Errorf("empty tables: %s", r.Status)
	}
}

// outageHistory: a Redis outage 1 s–3 s on tenant a, errors from both
// stages inside it, lag growing, drained at the end.
func outageHistory() AuditPipelineHistory {
	s := time.Second
	h := AuditPipelineHistory{
		Name:       "main",
		Counted:    map[AuditStage]float64{"redis-writer": 2, "pg-archiver": 1},
		Outages:    []AuditOutage{{Name: "redis", Start: 1 * s, End: 3 * s, Tenants: []string{"a"}, Expect: []AuditStage{"redis-writer", "pg-archiver"}, Lag: []AuditStage{"redis-writer"}}},
		Settle:     500 * time.Millisecond,
		OfferBound: map[string]time.Duration{"a": time.Millisecond},
		End:        map[string]AuditEnd{"a": {}, "b": {}},
		SettledLag: 1,
		Errors: []AuditError{
			{At: 1100 * time.Millisecond, Stage: "redis-writer", Tenant: "a", Op: "append"},
			{At: 2900 * time.Millisecond, Stage: "redis-writer", Tenant: "a", Op: "append"},
			{At: 3200 * time.Millisecond, Stage: "pg-archiver", Tenant: "a", Op: "read"},
		},
	}
	for at := time.Duration(0); at < 4*s; at += 100 * time.Millisecond {
		lag := 0.0
		if at > s && at < 3*s {
			lag = (at - s).Seconds()
		}
		h.Samples = append(h.Samples, AuditSample{At: at, Tenant: "a", WriterLag: lag})
		h.Offers = append(h.Offers, history.AuditOffer{Tenant: "a", At: at, Took: 3 * time.Microsecond, Kept: true})
	}
	return h
}

func TestMarconiPipelineErrors(t *testing.T) {
	if r := pipelineErrors(outageHistory()); r.Status != check.Pass {
		t.Fatalf("good history: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}

	late := outageHistory() // an error long after the heal
	late.Errors = append(late.Errors, AuditError{At: 5 * time.Second, Stage: "redis-writer", Tenant: "a"})
	late.Counted["redis-writer"]++
	if r := pipelineErrors(late); r.Status != check.Fail || !strings.Contains(r.Message, "outside every outage") {
		t.Errorf("error after heal: %s %s", r.Status, r.Message)
	}

	uncounted := outageHistory()
	uncounted.Counted["redis-writer"] = 0
	if r := pipelineErrors(uncounted); r.Status != check.Fail {
		t.Errorf("errors the counter never saw: %s", r.Message)
	}

	silent := outageHistory() // the silent writer: no error, no lag while failing
	silent.Errors = silent.Errors[2:]
	silent.Counted["redis-writer"] = 0
	for i := range silent.Samples {
		silent.Samples[i].WriterLag = 0
	}
	if r := pipelineErrors(silent); r.Status != check.Fail || !strings.Contains(r.Counterexample, "silent") || !strings.Contains(r.Counterexample, "peaked") {
		t.Errorf("silent writer: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}

	stuck := outageHistory() // a dead consumer's entries never recovered
	stuck.End["b"] = AuditEnd{Pending: 2}
	if r := pipelineErrors(stuck); r.Status != check.Fail || !strings.Contains(r.Message, "never drained") {
		t.Errorf("pending entries at the end: %s %s", r.Status, r.Message)
	}

	blocking := outageHistory() // a write-through sink: Offer waits on Redis
	for i := range blocking.Offers {
		blocking.Offers[i].Took = 200 * time.Millisecond
	}
	if r := pipelineErrors(blocking); r.Status != check.Fail || !strings.Contains(r.Message, "p99") {
		t.Errorf("blocking Offer: %s %s", r.Status, r.Message)
	}

	laggy := outageHistory()
	laggy.End["a"] = AuditEnd{ArchiverLag: 5}
	if r := pipelineErrors(laggy); r.Status != check.Fail {
		t.Errorf("lag never settled: %s", r.Message)
	}

	direct := outageHistory()
	direct.Offers[0].DirectErr = "connection refused"
	if r := pipelineErrors(direct); r.Status != check.Fail {
		t.Errorf("failed direct write: %s", r.Message)
	}

	idle := outageHistory() // premise: a pipeline offered nothing judges nothing
	idle.Offers = nil
	if r := pipelineErrors(idle); r.Status != check.Unknown || !strings.Contains(r.Message, "no signal was offered") {
		t.Errorf("no offers: %s %s", r.Status, r.Message)
	}
	// ... unless what it reported fails on its own: an error outside any
	// outage is wrong with or without traffic.
	stray := outageHistory()
	stray.Offers, stray.Outages = nil, nil
	if r := pipelineErrors(stray); r.Status != check.Fail {
		t.Errorf("no offers, errors outside any outage: %s %s", r.Status, r.Message)
	}
}

// overflowLedger is 300 offers of tenant t, one per millisecond, whose queue
// (capacity 100, writer batch 8) overflowed from offer 100 on: the writer
// held offers 100–104 and the queue the rest, so a correct oldest loses
// 105–199 and keeps the newest 100 (200–299).
func overflowLedger(t string, lost func(i int) bool, refused func(i int) bool) AuditLedger {
	l := auditLedger(t, 300)
	for i := range l.Offers {
		l.Offers[i].At = time.Duration(i) * time.Millisecond
		if refused != nil && refused(i) {
			l.Offers[i].Kept = false
		}
		if lost(i) {
			id := l.Offers[i].SignalID
			delete(l.Stream, id)
			delete(l.Rows, id)
			delete(l.Trace, id)
			delete(l.Obligations, id)
			l.Overwrites++
		}
	}
	l.ExpectLoss = true
	l.LossSet = &AuditLossSet{Policy: AuditPolicyOldest, OverflowStarts: []time.Duration{100 * time.Millisecond}, WriterBatch: 8, Capacity: 100}
	return l
}

func TestMarconiLossBudgetWhichSignals(t *testing.T) {
	oldest := overflowLedger("o", func(i int) bool { return i >= 105 && i < 200 }, nil)
	if r := lossBudget([]AuditLedger{oldest}); r.Status != check.Pass {
		t.Fatalf("oldest evicting the head: %s %s", r.Status, r.Message)
	}
	// The mutant: the queue kept its first 99 entries (105–203) and lost
	// the next ones; same count, same counter.
	newest := overflowLedger("n", func(i int) bool { return i >= 204 && i < 299 }, nil)
	if r := lossBudget([]AuditLedger{newest}); r.Status != check.Fail || !strings.Contains(r.Counterexample, "oldest queued were kept") {
		t.Errorf("oldest evicting the newest: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	// The writer's backlog at the cut (offers 97–99, queued before the
	// overflow began) is the head: lost first, and allowed.
	backlog := overflowLedger("b", func(i int) bool { return i >= 97 && i < 100 || i >= 105 && i < 200 }, nil)
	if r := lossBudget([]AuditLedger{backlog}); r.Status != check.Pass {
		t.Errorf("backlog queued before the overflow lost first: %s %s", r.Status, r.Message)
	}
	refusing := overflowLedger("r", func(i int) bool { return i >= 200 && i < 295 }, func(i int) bool { return i >= 200 && i < 295 })
	if r := lossBudget([]AuditLedger{refusing}); r.Status != check.Fail || !strings.Contains(r.Counterexample, "oldest refused") {
		t.Errorf("oldest refusing the new: %s %s", r.Status, r.Message)
	}
	small := overflowLedger("s", func(i int) bool { return i >= 105 && i < 200 }, nil)
	small.LossSet.WriterBatch = 99
	if r := lossBudget([]AuditLedger{small}); r.Status != check.Unknown {
		t.Errorf("capacity ≤ batch+1 must be undecidable: %s %s", r.Status, r.Message)
	}

	// reject_new: the refused offers are the loss, nothing else.
	reject := overflowLedger("j", func(i int) bool { return i >= 200 && i < 250 }, func(i int) bool { return i >= 200 && i < 250 })
	reject.LossSet.Policy = AuditPolicyRejectNew
	if r := lossBudget([]AuditLedger{reject}); r.Status != check.Pass {
		t.Fatalf("reject_new refusing the new: %s %s", r.Status, r.Message)
	}
	evicting := overflowLedger("v", func(i int) bool { return i >= 150 && i < 200 }, func(i int) bool { return i >= 200 && i < 250 })
	evicting.LossSet.Policy = AuditPolicyRejectNew
	if r := lossBudget([]AuditLedger{evicting}); r.Status != check.Fail || !strings.Contains(r.Counterexample, "queued entry evicted") {
		t.Errorf("reject_new evicting queued entries: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
}

// TestMarconiPipelineErrorsByLabel: the error counters judged per
// stage/tenant/reason series when they are recorded, totals only (and said
// so) when not.
func TestMarconiPipelineErrorsByLabel(t *testing.T) {
	labelled := func() AuditPipelineHistory {
		h := outageHistory()
		for i := range h.Errors {
			h.Errors[i].Reason = "network"
		}
		h.CountedBy = map[string]float64{"redis-writer/a/network": 2, "pg-archiver/a/network": 1}
		return h
	}
	if r := pipelineErrors(labelled()); r.Status != check.Pass {
		t.Fatalf("series agree: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	swapped := labelled() // the total right, the label values swapped
	swapped.CountedBy = map[string]float64{"redis-writer/network/a": 2, "pg-archiver/a/network": 1}
	if r := pipelineErrors(swapped); r.Status != check.Fail || !strings.Contains(r.Message, "redis-writer/a/network: 2 reported, counter series says 0") {
		t.Errorf("swapped labels: %s %s", r.Status, r.Message)
	}
	old := labelled() // a history from before the series were recorded
	old.CountedBy = nil
	r := pipelineErrors(old)
	if r.Status != check.Pass || !slices.ContainsFunc(r.Observed, func(s string) bool { return strings.Contains(s, "totals compared only") }) {
		t.Errorf("series not recorded: %s %s %v", r.Status, r.Message, r.Observed)
	}
}
