package judge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func TestArchiverKilled(t *testing.T) {
	if r := archiverKilled("main", 3, 3); r.Status != check.Pass || r.Message != "main: archiver killed 3 times" {
		t.Fatalf("kills as planned: %+v", r)
	}
	if r := archiverKilled("main", 2, 3); r.Status != check.Unknown || r.Message != "main: archiver killed 2 times, 3 planned" {
		t.Fatalf("a kill missing: %+v", r)
	}
}

func TestMarconiDoubleWriteSeen(t *testing.T) {
	pairs := map[string]string{"signal_queue": "signal_queue_shadow"}
	equal := func() map[string]AuditTable {
		return map[string]AuditTable{"signal_queue": {"a-7": {"(a-7)"}}, "signal_queue_shadow": {"a-7": {"(a-7)"}}}
	}
	dupLedger := []AuditLedger{auditLedger("a", 50)}
	dupLedger[0].Rows["a-7"], dupLedger[0].Trace["a-7"] = 2, 2
	dupTables := equal()
	dupTables["signal_queue_shadow"]["a-7"] = []string{"(a-7)", "(a-7)"}
	d := AuditDoubleWrite{Pipeline: "plain-insert", Kills: 2, PlannedKills: 2, Ledgers: dupLedger, MinOffers: 1, Tables: dupTables, Pairs: pairs}
	r := doubleWriteSeen(d)
	if r.Status != check.Fail || !strings.HasPrefix(r.Message, "exactly-once: ") || !strings.Contains(r.Message, " | shadow equality: ") {
		t.Fatalf("both see the double write: %+v", r)
	}
	onlyOnce := d
	onlyOnce.Tables = equal()
	if r := doubleWriteSeen(onlyOnce); r.Status != check.Pass {
		t.Fatalf("shadow equality missed it: want pass (exercised, not caught), got %+v", r)
	}
	noKills := d
	noKills.Kills = 0
	if r := doubleWriteSeen(noKills); r.Status != check.Fail {
		t.Fatalf("kills missing but both checks failed (All folds fail over unknown): %+v", r)
	}
	noKills.Ledgers, noKills.Tables = []AuditLedger{auditLedger("a", 50)}, equal()
	if r := doubleWriteSeen(noKills); r.Status != check.Unknown {
		t.Fatalf("kills missing, nothing seen: want unknown (not exercised), got %+v", r)
	}
}

// judged is checktest.Judged: c on in, its stored call replayed.
func judged[In any](t *testing.T, c check.Checker[In], in In) check.Result {
	t.Helper()
	return checktest.Judged(t, c, in)
}

// The rows' checker inputs as the scenarios judge them: passing and
// failing fixtures alike.
type fixtures struct {
	ledgers     []AuditLedger
	lossy       []AuditLedger
	tables      map[string]AuditTable
	pairs       map[string]string
	caps        []AuditCapHistory
	reads       []ArchiverRead
	wire        WireReads
	offers      []history.AuditOffer
	stream      []history.StreamEntry
	restarts    []WriterRestart
	trim        TrimHistory
	lag         []LagSample
	kills       []ArchiverKill
	wakes       []WakeRead
	alertBounds map[string]AlertBound
	paces       []AuditWriterPace
	double      AuditDoubleWrite
}

func newFixtures() fixtures {
	return fixtures{
		ledgers: []AuditLedger{auditLedger("a", 20)},
		lossy:   []AuditLedger{lose(auditLedger("a", 20), 3, false)},
		tables:  map[string]AuditTable{"q": {"a-1": {"x"}}, "q_shadow": {"a-1": {"y"}}},
		pairs:   map[string]string{"q": "q_shadow"},
		caps: []AuditCapHistory{{Name: "bytes", Policy: AuditPolicyRejectNew, MaxEntries: 100, MaxBytes: 4000, EntrySize: 1000,
			Kept: []bool{true, true, true, false}, Depth: 3, Bytes: 3000, Dropped: 1}},
		reads:       []ArchiverRead{{Cmd: []string{"XREADGROUP", "COUNT", "1"}, Entries: 1}},
		wire:        WireReads{Known: true, Calls: 1, Entries: 1},
		offers:      []history.AuditOffer{{SignalID: "s0", Kept: true}, {SignalID: "s1", Kept: true}},
		stream:      streamOf(1, 0),
		restarts:    []WriterRestart{{Requeued: 1}},
		trim:        TrimHistory{Offers: []history.AuditOffer{{SignalID: "s0", Kept: true}}, Rows: map[string]int{"s0": 1}, Added: 1, Length: 1, Down: 2 * time.Second, Retention: time.Second},
		lag:         lagSamples(0, 0, 3, 3, 0, 0),
		kills:       []ArchiverKill{{At: time.Second, Pid: 7, Self: true, Point: "before-ack", Pending: 1}},
		wakes:       wakeReads(20, func(int) time.Duration { return 2 * time.Millisecond }),
		alertBounds: map[string]AlertBound{"depth": {Threshold: 50, Tol: 5, Grace: 300 * time.Millisecond}},
		paces:       []AuditWriterPace{{Name: "main/t-1", Depth: 9000, Appended: 10, Calls: 2, InCalls: time.Second, Window: 30 * time.Second}},
		double: AuditDoubleWrite{Pipeline: "p", Kills: 1, PlannedKills: 1, Ledgers: []AuditLedger{auditLedger("a", 5)}, MinOffers: 1,
			Tables: map[string]AuditTable{"q": {"a-1": {"x"}}, "q_shadow": {"a-1": {"y"}}}, Pairs: map[string]string{"q": "q_shadow"}},
	}
}

// Every checker's input survives the JSON round trip (Judge keeps the
// call) and the call replays to the very result, under the checker's
// stable name.
func TestCheckersReplay(t *testing.T) {
	f := newFixtures()
	lost := LostReplyHistory{Offered: []string{"a", "b"}, FailedAppends: 2, AppliedUnacked: true,
		Stream: []history.StreamEntry{{ID: "1-0", SignalID: "a"}, {ID: "2-0", SignalID: "b"}, {ID: "3-0", SignalID: "b"}}}
	judged(t, ExactlyOnce, ExactlyOnceRun{f.ledgers, 1})
	judged(t, LossBudget, f.lossy)
	judged(t, ShadowEqual, ShadowTables{f.tables, f.pairs})
	judged(t, PipelineErrors, outageHistory())
	judged(t, CapsExact, f.caps)
	judged(t, ReadsOneAtATime, ReadsRun{f.reads, f.wire, 1})
	judged(t, StreamResume, ResumeRun{f.offers, f.stream, f.restarts, 1})
	judged(t, TrimKeepsUnconsumed, f.trim)
	judged(t, LagAlert, LagRun{f.lag, 1.0, 0.2, 0})
	judged(t, KillPremise, KillRun{f.kills, 1})
	judged(t, ArchiverWakes, WakeRun{f.wakes, 200 * time.Millisecond, 10})
	judged(t, Alerts, AlertRun{alertRun(15, 28), f.alertBounds})
	judged(t, ArchiverKilled, KillCount{"main", 2, 2})
	judged(t, WritersOutpaced, PaceRun{f.paces, 64, 0.5})
	judged(t, DoubleWriteSeen, f.double)
	judged(t, StaleWriterFenced, staleFixture())
	judged(t, LostReplyOnce, lost)
	// An unknown keeps its call only when the replay agrees.
	if r := Unrunnable.Judge(NotRun{"archiver-sigkill", "no TLS"}); r.Status != check.Unknown || r.Call == nil || r.Call.Checker != Unrunnable.Name() {
		t.Fatalf("unrunnable: %+v", r)
	}
}

// Histories written before the checkers were defined here stored the
// reflective calls under the old Go names, one input per argument: each
// replays through its alias to what the typed checker gives.
func TestStoredCallsReplayThroughAliases(t *testing.T) {
	raw := func(v ...any) []json.RawMessage { return checktest.Inputs(t, v...) }
	f := newFixtures()
	for _, c := range []struct {
		old   string
		input []json.RawMessage
		want  check.Result
	}{
		{"MarconiExactlyOnce", raw(f.ledgers, 1), ExactlyOnce.Judge(ExactlyOnceRun{f.ledgers, 1})},
		{"MarconiLossBudget", raw(f.lossy), LossBudget.Judge(f.lossy)},
		{"MarconiShadowEqual", raw(f.tables, f.pairs), ShadowEqual.Judge(ShadowTables{f.tables, f.pairs})},
		{"MarconiPipelineErrors", raw(outageHistory()), PipelineErrors.Judge(outageHistory())},
		{"AuditCapsExact", raw(f.caps), CapsExact.Judge(f.caps)},
		{"MarconiReadsOneAtATime", raw(f.reads, f.wire, 1), ReadsOneAtATime.Judge(ReadsRun{f.reads, f.wire, 1})},
		{"MarconiStreamResume", raw(f.offers, f.stream, f.restarts, 1), StreamResume.Judge(ResumeRun{f.offers, f.stream, f.restarts, 1})},
		{"MarconiTrimKeepsUnconsumed", raw(f.trim), TrimKeepsUnconsumed.Judge(f.trim)},
		{"MarconiLagAlert", raw(f.lag, 1.0, 0.2, time.Duration(0)), LagAlert.Judge(LagRun{f.lag, 1.0, 0.2, 0})},
		{"MarconiKillPremise", raw(f.kills, 2), KillPremise.Judge(KillRun{f.kills, 2})},
		{"MarconiArchiverWakes", raw(f.wakes, 200*time.Millisecond, 10), ArchiverWakes.Judge(WakeRun{f.wakes, 200 * time.Millisecond, 10})},
		{"MarconiAuditAlerts", raw(alertRun(15, 28), f.alertBounds), Alerts.Judge(AlertRun{alertRun(15, 28), f.alertBounds})},
		{"ArchiverKilled", raw("main", 1, 2), ArchiverKilled.Judge(KillCount{"main", 1, 2})},
		{"MarconiUnrunnable", raw("archiver-sigkill", "no TLS"), Unrunnable.Judge(NotRun{"archiver-sigkill", "no TLS"})},
		{"AuditWritersOutpaced", raw(f.paces, 64, 0.5), WritersOutpaced.Judge(PaceRun{f.paces, 64, 0.5})},
		{"MarconiDoubleWriteSeen", raw(f.double), DoubleWriteSeen.Judge(f.double)},
		{"MarconiStaleWriterFenced", raw(staleFixture()), StaleWriterFenced.Judge(staleFixture())},
		{"MarconiLostReplyOnce", raw(LostReplyHistory{Offered: []string{"a"}}), LostReplyOnce.Judge(LostReplyHistory{Offered: []string{"a"}})},
	} {
		checktest.ReplaysTo(t, history.Call{Checker: c.old, Input: c.input}, c.want)
	}
}
