package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func TestMarconiSendsAnswered(t *testing.T) {
	h := meshHistory()
	if r := marconiSendsAnswered(h); r.Status != check.Pass {
		t.Fatalf("every send 200: %+v", r)
	}
	h.Sends[3].Status, h.Sends[3].Err = 503, "store down"
	r := marconiSendsAnswered(h)
	if r.Status != check.Fail || !strings.Contains(r.Message, "1×http-503") || !strings.Contains(r.Counterexample, "send to acme/p1/") {
		t.Fatalf("a 503: %+v", r)
	}
	if r := marconiSendsAnswered(MeshHistory{}); r.Status != check.Unknown {
		t.Fatalf("no send: %+v", r)
	}
}

// The forgetful-deregister control is caught only when both the hook tour
// and the stale-route bound fail on their own.
func TestMarconiHookAndStaleRoutes(t *testing.T) {
	forgetful := hookSteps()
	forgetful[5].After = MeshRouteState{Route: "s1"}
	stale := meshHistory()
	stale.Sends[20].SessionID = "s1"
	both := marconiHookAndStaleRoutes(forgetful, stale, 0)
	if both.Status != check.Fail || !strings.HasPrefix(both.Message, "hook transitions: 1 wrong hook transitions") || !strings.Contains(both.Message, " | stale routes: ") {
		t.Fatalf("both fail: %+v", both)
	}
	if r := marconiHookAndStaleRoutes(forgetful, meshHistory(), 0); r.Status != check.Pass {
		t.Fatalf("only the tour fails: want pass (exercised, not caught), got %+v", r)
	}
	if r := marconiHookAndStaleRoutes(hookSteps(), stale, 0); r.Status != check.Pass {
		t.Fatalf("only the stale bound fails: want pass, got %+v", r)
	}
	if r := marconiHookAndStaleRoutes(hookSteps(), meshHistory(), 0); r.Status != check.Pass {
		t.Fatalf("neither fails: %+v", r)
	}
	if r := marconiHookAndStaleRoutes(hookSteps(), MeshHistory{}, 0); r.Status != check.Unknown {
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
	r := marconiStaleRoutesFailing(h, 0)
	if want := marconiStaleRoutes(h, 0, 1); r.Status != want.Status || r.Message != "1 of 38 sends failed | "+want.Message {
		t.Fatalf("got %+v, want %s with the failed sends first", r, want.Status)
	}
}

func TestMarconiCacheHealthFailing(t *testing.T) {
	c := MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1"}, FailedSends: []string{"x: 500"}}
	r := marconiCacheHealthFailing(c)
	if want := marconiCacheHealth(c); r.Status != check.Fail || r.Message != "1 failed sends | "+want.Message {
		t.Fatalf("got %+v", r)
	}
}

// A failing hook step quotes its route states: with a live time (monotonic
// reading, local zone) the message must be the one the stored input gives,
// or Judge keeps no call.
func TestMarconiHookTransitionsQuotesStoredTimes(t *testing.T) {
	steps := hookSteps()
	now := time.Now()
	steps[2].Before.LastHeartbeat, steps[2].After.LastHeartbeat = now, now // not advanced
	r := HookTransitions.Judge(steps)
	if r.Status != check.Fail || !r.Replayable() {
		t.Fatalf("a failing step with a live time: %s, replayable %v\n%s", r.Status, r.Replayable(), r.Counterexample)
	}
	if strings.Contains(r.Counterexample, "m=+") {
		t.Fatalf("the monotonic reading is quoted: %s", r.Counterexample)
	}
}

// TestMarconiMasterTermFailing: the put-back-to-identity control is caught
// only by the master-term rule — a master-alias signal left in m1's socket
// reaching m2 (boss again, never master) fails; the same signal reaching
// w1, made master, passes; a stale route alone does not catch it.
func TestMarconiMasterTermFailing(t *testing.T) {
	ms := time.Millisecond
	hist := func(to string) MeshHistory {
		return MeshHistory{
			Sessions: []MeshSession{
				{SessionID: "m1", Recipient: "acme/p/boss", Registered: 1 * ms, DeregisterStart: 20 * ms, Ended: 21 * ms},
				{SessionID: "w1", Recipient: "acme/p/worker", Registered: 2 * ms},
				{SessionID: "m2", Recipient: "acme/p/boss", Registered: 22 * ms},
			},
			MasterChanges: []MeshMasterChange{{Project: "acme/p", SessionID: "m1", Start: 3 * ms, Ack: 4 * ms}, {Project: "acme/p", SessionID: "w1", Start: 25 * ms, Ack: 26 * ms}},
			Sends: []MeshSend{
				{SignalID: "a", Recipient: "acme/p/@master", Start: 5 * ms, Done: 6 * ms, Status: 200, Outcome: "pushed", SessionID: "m1"},
				{SignalID: "b", Recipient: "acme/p/boss", Start: 30 * ms, Done: 31 * ms, Status: 200, Outcome: "pushed", SessionID: "m2"},
			},
			Deliveries: []MeshDelivery{{SignalID: "a", SessionID: to, At: 27 * ms}, {SignalID: "b", SessionID: "m2", At: 32 * ms}},
			End:        40 * ms,
		}
	}
	if r := marconiMasterTermFailing(hist("w1"), 0); r.Status != check.Pass {
		t.Fatalf("put back to the next master: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	r := marconiMasterTermFailing(hist("m2"), 0)
	if r.Status != check.Fail || !strings.Contains(r.Message, "not master of acme/p") {
		t.Fatalf("put back to the old master's identity: %s %s", r.Status, r.Message)
	}
	stale := hist("w1") // a stale route, no master-alias misdelivery
	stale.Sends[1].SessionID, stale.Deliveries[1].SessionID = "m1", "m1"
	if r := marconiMasterTermFailing(stale, 0); r.Status != check.Pass {
		t.Fatalf("a stale route alone: %s %s (want an exercised miss, pass)", r.Status, r.Message)
	}
}
