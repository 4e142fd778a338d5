package check

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
)

func TestArchiverKilled(t *testing.T) {
	if r := ArchiverKilled("main", 3, 3); r.Status != Pass || r.Message != "main: archiver killed 3 times" {
		t.Fatalf("kills as planned: %+v", r)
	}
	if r := ArchiverKilled("main", 2, 3); r.Status != Unknown || r.Message != "main: archiver killed 2 times, 3 planned" {
		t.Fatalf("a kill missing: %+v", r)
	}
}

func TestMarconiSendsAnswered(t *testing.T) {
	h := meshHistory()
	if r := MarconiSendsAnswered(h); r.Status != Pass {
		t.Fatalf("every send 200: %+v", r)
	}
	h.Sends[3].Status, h.Sends[3].Err = 503, "store down"
	r := MarconiSendsAnswered(h)
	if r.Status != Fail || !strings.Contains(r.Message, "1×http-503") || !strings.Contains(r.Counterexample, "send to acme/p1/") {
		t.Fatalf("a 503: %+v", r)
	}
	if r := MarconiSendsAnswered(history.MeshHistory{}); r.Status != Unknown {
		t.Fatalf("no send: %+v", r)
	}
}

// The forgetful-deregister control is caught only when both the hook tour
// and the stale-route bound fail on their own.
func TestMarconiHookAndStaleRoutes(t *testing.T) {
	forgetful := hookSteps()
	forgetful[5].After = history.MeshRouteState{Route: "s1"}
	stale := meshHistory()
	stale.Sends[20].SessionID = "s1"
	both := MarconiHookAndStaleRoutes(forgetful, stale, 0)
	if both.Status != Fail || !strings.HasPrefix(both.Message, "hook transitions: 1 wrong hook transitions") || !strings.Contains(both.Message, " | stale routes: ") {
		t.Fatalf("both fail: %+v", both)
	}
	if r := MarconiHookAndStaleRoutes(forgetful, meshHistory(), 0); r.Status != Pass {
		t.Fatalf("only the tour fails: want pass (exercised, not caught), got %+v", r)
	}
	if r := MarconiHookAndStaleRoutes(hookSteps(), stale, 0); r.Status != Pass {
		t.Fatalf("only the stale bound fails: want pass, got %+v", r)
	}
	if r := MarconiHookAndStaleRoutes(hookSteps(), meshHistory(), 0); r.Status != Pass {
		t.Fatalf("neither fails: %+v", r)
	}
	if r := MarconiHookAndStaleRoutes(hookSteps(), history.MeshHistory{}, 0); r.Status != Unknown {
		t.Fatalf("no churn: want unknown (not exercised), got %+v", r)
	}
}

func TestMarconiStaleRoutesFailing(t *testing.T) {
	h := meshHistory()
	for i := range h.Sends {
		if s := &h.Sends[i]; s.Recipient == "acme/p1/alice" && s.Start > 500*meshMs && s.Start < 600*meshMs {
			s.Status, s.Err, s.SessionID, s.Outcome = 500, "internal: stale route", "", ""
		}
	}
	r := MarconiStaleRoutesFailing(h, 0)
	if want := MarconiStaleRoutes(h, 0, 1); r.Status != want.Status || r.Message != "1 of 38 sends failed | "+want.Message {
		t.Fatalf("got %+v, want %s with the failed sends first", r, want.Status)
	}
}

func TestMarconiCacheHealthFailing(t *testing.T) {
	c := MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1"}, FailedSends: []string{"x: 500"}}
	r := MarconiCacheHealthFailing(c)
	if want := MarconiCacheHealth(c); r.Status != Fail || r.Message != "1 failed sends | "+want.Message {
		t.Fatalf("got %+v", r)
	}
}

func TestMarconiDoubleWriteSeen(t *testing.T) {
	pairs := map[string]string{"signal_queue": "signal_queue_shadow"}
	equal := func() map[string]history.AuditTable {
		return map[string]history.AuditTable{"signal_queue": {"a-7": {"(a-7)"}}, "signal_queue_shadow": {"a-7": {"(a-7)"}}}
	}
	dupLedger := []AuditLedger{auditLedger("a", 50)}
	dupLedger[0].Rows["a-7"], dupLedger[0].Trace["a-7"] = 2, 2
	dupTables := equal()
	dupTables["signal_queue_shadow"]["a-7"] = []string{"(a-7)", "(a-7)"}
	d := AuditDoubleWrite{Pipeline: "plain-insert", Kills: 2, PlannedKills: 2, Ledgers: dupLedger, MinOffers: 1, Tables: dupTables, Pairs: pairs}
	r := MarconiDoubleWriteSeen(d)
	if r.Status != Fail || !strings.HasPrefix(r.Message, "exactly-once: ") || !strings.Contains(r.Message, " | shadow equality: ") {
		t.Fatalf("both see the double write: %+v", r)
	}
	onlyOnce := d
	onlyOnce.Tables = equal()
	if r := MarconiDoubleWriteSeen(onlyOnce); r.Status != Pass {
		t.Fatalf("shadow equality missed it: want pass (exercised, not caught), got %+v", r)
	}
	noKills := d
	noKills.Kills = 0
	if r := MarconiDoubleWriteSeen(noKills); r.Status != Fail {
		t.Fatalf("kills missing but both checks failed (All folds fail over unknown): %+v", r)
	}
	noKills.Ledgers, noKills.Tables = []AuditLedger{auditLedger("a", 50)}, equal()
	if r := MarconiDoubleWriteSeen(noKills); r.Status != Unknown {
		t.Fatalf("kills missing, nothing seen: want unknown (not exercised), got %+v", r)
	}
}

// A failing hook step quotes its route states: with a live time (monotonic
// reading, local zone) the message must be the one the stored input gives,
// or Judge keeps no call.
func TestMarconiHookTransitionsQuotesStoredTimes(t *testing.T) {
	steps := hookSteps()
	now := time.Now()
	steps[2].Before.LastHeartbeat, steps[2].After.LastHeartbeat = now, now // not advanced
	r := Judge(MarconiHookTransitions, steps)
	if r.Status != Fail || !r.Replayable() {
		t.Fatalf("a failing step with a live time: %s, replayable %v\n%s", r.Status, r.Replayable(), r.Counterexample)
	}
	if strings.Contains(r.Counterexample, "m=+") {
		t.Fatalf("the monotonic reading is quoted: %s", r.Counterexample)
	}
}

// Every Marconi checker's input survives the JSON round trip (Judge keeps
// the call) on passing and failing fixtures alike, and the call replays to
// the very result.
func TestMarconiCheckersReplay(t *testing.T) {
	now := time.Now() // a live time: monotonic reading
	obl := obligationHistory()
	for i := range obl.Ops {
		obl.Ops[i].Start = now.Add(obl.Ops[i].Start.Sub(obl.End))
		obl.Ops[i].End = now.Add(obl.Ops[i].End.Sub(obl.End))
	}
	forgetful := hookSteps()
	forgetful[5].After = history.MeshRouteState{Route: "s1", LastHeartbeat: now}
	stale := meshHistory()
	stale.Sends[20].SessionID = "s1"
	h, s := metricsFixture()
	points := []MetricsPoint{{Name: "final", Scrape: s, History: h}}
	cases := []struct {
		name string
		r    Result
	}{
		{"no-subscribe", Judge(MarconiNoSubscribe, SubscribeCount{Nodes: []string{"n1"}, ClusterNodes: 1, Attached: 4, MinAttached: 1, Commands: map[string]int64{"n1:subscribe": 3}})},
		{"queue-defaults", Judge(MarconiQueueDefaults, QueueDefaults{MaxBytes: 512 << 20, DepthAtOverflow: 50_000, LostFirst: 1, KeptNewest: true, AgeBelow: 599 * time.Second, AgeAbove: 601 * time.Second, SurvivedBelow: true, EjectedAbove: true})},
		{"engagement", Judge(MarconiEngagement, Engagement{Receivers: 2, Stamps: 2, HookCalls: 2, Advanced: 2, Attached: 1, Sends: 4, Pushed: 4})},
		{"flags-ledger", Judge(MarconiStageFlagsLedger, flagLedger())},
		{"flags-refusals", Judge(MarconiStageFlagsRefusals, flagLedger())},
		{"metrics-agree", Judge(MarconiMetricsAgree, points)},
		{"metrics-exposed", Judge(MarconiMetricsExposed, points)},
		{"obligations", Judge(MarconiObligations, obl)},
		{"obligation-calls", Judge(MarconiObligationCalls, obl)},
		{"caps", Judge(AuditCapsExact, []history.AuditCapHistory{{Name: "bytes", Policy: AuditPolicyRejectNew, MaxEntries: 100, MaxBytes: 4000, EntrySize: 1000, Kept: []bool{true, true, true, false}, Depth: 3, Bytes: 3000, Dropped: 1}})},
		{"reads", Judge(MarconiReadsOneAtATime, []history.ArchiverRead{{Cmd: []string{"XREADGROUP", "COUNT", "1"}, Entries: 1}}, WireReads{Known: true, Calls: 1, Entries: 1}, 1)},
		{"resume", Judge(MarconiStreamResume, []history.AuditOffer{{SignalID: "s0", Kept: true}, {SignalID: "s1", Kept: true}}, streamOf(1, 0), []WriterRestart{{Requeued: 1}}, 1)},
		{"trim", Judge(MarconiTrimKeepsUnconsumed, TrimHistory{Offers: []history.AuditOffer{{SignalID: "s0", Kept: true}}, Rows: map[string]int{"s0": 1}, Added: 1, Length: 1, Down: 2 * time.Second, Retention: time.Second})},
		{"lag", Judge(MarconiLagAlert, lagSamples(0, 0, 3, 3, 0, 0), 1.0, 0.2, time.Duration(0))},
		{"kill-premise", Judge(MarconiKillPremise, []ArchiverKill{{At: time.Second, Pid: 7, Self: true, Point: "before-ack", Pending: 1}}, 1)},
		{"archiver-killed", Judge(ArchiverKilled, "main", 1, 2)},
		{"sends-answered", Judge(MarconiSendsAnswered, meshHistory())},
		{"unrunnable", Judge(MarconiUnrunnable, "archiver-sigkill", "no TLS")},
		{"hook-and-stale", Judge(MarconiHookAndStaleRoutes, forgetful, stale, 500*time.Millisecond)},
		{"stale-failing", Judge(MarconiStaleRoutesFailing, stale, time.Duration(0))},
		{"health-failing", Judge(MarconiCacheHealthFailing, MeshCacheStats{Hits: 1, MinReads: 1, FirstReads: map[string]string{"s1": ""}, FailedSends: []string{"x"}})},
		{"double-write", Judge(MarconiDoubleWriteSeen, AuditDoubleWrite{Pipeline: "p", Kills: 1, PlannedKills: 1, Ledgers: []AuditLedger{auditLedger("a", 5)}, MinOffers: 1,
			Tables: map[string]history.AuditTable{"q": {"a-1": {"x"}}, "q_shadow": {"a-1": {"y"}}}, Pairs: map[string]string{"q": "q_shadow"}})},
	}
	for _, c := range cases {
		if !c.r.Replayable() {
			t.Errorf("%s: not replayable (%s: %s)", c.name, c.r.Status, c.r.Message)
			continue
		}
		again, err := Replay(*c.r.Call)
		if err != nil || !reflect.DeepEqual(again, c.r) {
			t.Errorf("%s: replay differs (%v):\n%+v\n%+v", c.name, err, again, c.r)
		}
	}
}

// TestMarconiMasterTermFailing: the put-back-to-identity control is caught
// only by the master-term rule — a master-alias signal left in m1's socket
// reaching m2 (boss again, never master) fails; the same signal reaching
// w1, made master, passes; a stale route alone does not catch it.
func TestMarconiMasterTermFailing(t *testing.T) {
	ms := time.Millisecond
	hist := func(to string) history.MeshHistory {
		return history.MeshHistory{
			Sessions: []history.MeshSession{
				{SessionID: "m1", Recipient: "acme/p/boss", Registered: 1 * ms, DeregisterStart: 20 * ms, Ended: 21 * ms},
				{SessionID: "w1", Recipient: "acme/p/worker", Registered: 2 * ms},
				{SessionID: "m2", Recipient: "acme/p/boss", Registered: 22 * ms},
			},
			MasterChanges: []history.MeshMasterChange{{Project: "acme/p", SessionID: "m1", Start: 3 * ms, Ack: 4 * ms}, {Project: "acme/p", SessionID: "w1", Start: 25 * ms, Ack: 26 * ms}},
			Sends: []history.MeshSend{
				{SignalID: "a", Recipient: "acme/p/@master", Start: 5 * ms, Done: 6 * ms, Status: 200, Outcome: "pushed", SessionID: "m1"},
				{SignalID: "b", Recipient: "acme/p/boss", Start: 30 * ms, Done: 31 * ms, Status: 200, Outcome: "pushed", SessionID: "m2"},
			},
			Deliveries: []history.MeshDelivery{{SignalID: "a", SessionID: to, At: 27 * ms}, {SignalID: "b", SessionID: "m2", At: 32 * ms}},
			End:        40 * ms,
		}
	}
	if r := MarconiMasterTermFailing(hist("w1"), 0); r.Status != Pass {
		t.Fatalf("put back to the next master: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	r := MarconiMasterTermFailing(hist("m2"), 0)
	if r.Status != Fail || !strings.Contains(r.Message, "not master of acme/p") {
		t.Fatalf("put back to the old master's identity: %s %s", r.Status, r.Message)
	}
	stale := hist("w1") // a stale route, no master-alias misdelivery
	stale.Sends[1].SessionID, stale.Deliveries[1].SessionID = "m1", "m1"
	if r := MarconiMasterTermFailing(stale, 0); r.Status != Pass {
		t.Fatalf("a stale route alone: %s %s (want an exercised miss, pass)", r.Status, r.Message)
	}
}
