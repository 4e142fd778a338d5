package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

const meshMs = time.Millisecond

// meshHistory: session s1 of acme/p1/alice lives 0–500 meshMs (deregistered,
// acked at 500 meshMs), s2 takes over the identity at 600 meshMs; one send every
// 50 meshMs, each routed to whoever was live and delivered 1 meshMs later.
func meshHistory() MeshHistory {
	h := MeshHistory{
		Sessions: []MeshSession{
			{SessionID: "s1", Recipient: "acme/p1/alice", Registered: 0, DeregisterStart: 490 * meshMs, Ended: 500 * meshMs},
			{SessionID: "s2", Recipient: "acme/p1/alice", Registered: 600 * meshMs},
			{SessionID: "m1", Recipient: "acme/p1/boss", Registered: 0},
			{SessionID: "m2", Recipient: "acme/p1/deputy", Registered: 0},
		},
		MasterChanges: []MeshMasterChange{{Project: "acme/p1", SessionID: "m1", Start: 0, Ack: 10 * meshMs}, {Project: "acme/p1", SessionID: "m2", Start: 400 * meshMs, Ack: 410 * meshMs}},
		End:           time.Second,
	}
	for i := 1; i < 20; i++ {
		at := time.Duration(i) * 50 * meshMs
		id := "sig" + string(rune('a'+i))
		send := MeshSend{SignalID: id, Recipient: "acme/p1/alice", Start: at, Done: at + meshMs, Status: 200, Outcome: "queued_offline"}
		switch {
		case at < 490*meshMs:
			send.SessionID, send.Outcome = "s1", "pushed"
		case at > 600*meshMs:
			send.SessionID, send.Outcome = "s2", "pushed"
		}
		h.Sends = append(h.Sends, send)
		if send.Outcome == "pushed" {
			h.Deliveries = append(h.Deliveries, MeshDelivery{SignalID: id, SessionID: send.SessionID, At: at + 2*meshMs})
		}
		master := MeshSend{SignalID: id + "-m", Recipient: "acme/p1/@master", Start: at + 5*meshMs, Done: at + 6*meshMs, Status: 200, Outcome: "pushed", SessionID: "m1"}
		if at+5*meshMs > 410*meshMs {
			master.SessionID = "m2"
		}
		h.Sends = append(h.Sends, master)
		h.Deliveries = append(h.Deliveries, MeshDelivery{SignalID: master.SignalID, SessionID: master.SessionID, At: at + 7*meshMs})
	}
	return h
}

func TestMarconiStaleRoutes(t *testing.T) {
	if r := marconiStaleRoutes(meshHistory(), 0, 10); r.Status != check.Pass {
		t.Fatalf("good history: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	stale := meshHistory() // forgetful on_deregister: a send after the ack still routes to s1
	stale.Sends[20].SessionID = "s1"
	if r := marconiStaleRoutes(stale, 0, 10); r.Status != check.Fail {
		t.Fatalf("stale route: %s %s", r.Status, r.Message)
	}
	master := meshHistory() // master alias stuck on m1 after the handoff
	master.Sends[len(master.Sends)-1].SessionID = "m1"
	master.Deliveries[len(master.Deliveries)-1].SessionID = "m1"
	if r := marconiStaleRoutes(master, 0, 10); r.Status != check.Fail {
		t.Fatalf("stale master: %s %s", r.Status, r.Message)
	}
	expired := meshHistory() // an expired session may be routed to within the bound only
	expired.Sessions[0].Expired = true
	expired.Sends[20].SessionID = "s1" // 525 meshMs, 25 meshMs after the lapse
	if r := marconiStaleRoutes(expired, 50*meshMs, 10); r.Status != check.Pass {
		t.Fatalf("within the expiry bound: %s %s", r.Status, r.Message)
	}
	if r := marconiStaleRoutes(expired, 10*meshMs, 10); r.Status != check.Fail {
		t.Fatalf("past the expiry bound: %s %s", r.Status, r.Message)
	}
	wrong := meshHistory() // pushed to s1, delivered to s2
	wrong.Deliveries[0].SessionID = "s2"
	if r := marconiStaleRoutes(wrong, 0, 10); r.Status != check.Fail {
		t.Fatalf("misdelivered: %s %s", r.Status, r.Message)
	}
	requeued := meshHistory() // pushed to s1 just before its deregister, drained to s2 after: the recipient's
	requeued.Deliveries[8].SessionID, requeued.Deliveries[8].At = "s2", 650*meshMs
	if r := marconiStaleRoutes(requeued, 0, 10); r.Status != check.Pass {
		t.Fatalf("requeued to the next session: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	// The next session registered before s1's deregister: s1's undelivered
	// signal handed to it during the deregister call (490–500 ms, before the
	// 200) is the hand-over, not a misroute; before the call began it is one.
	handover := meshHistory()
	handover.Sessions[1].Registered = 480 * meshMs
	handover.Deliveries[8].SessionID, handover.Deliveries[8].At = "s2", 495*meshMs
	if r := marconiStaleRoutes(handover, 0, 10); r.Status != check.Pass {
		t.Fatalf("handed over during the deregister call: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	handover.Deliveries[8].At = 485 * meshMs
	if r := marconiStaleRoutes(handover, 0, 10); r.Status != check.Fail {
		t.Fatalf("delivered to the next session before the deregister began: %s %s", r.Status, r.Message)
	}
	// The master m1 ends (deregister 390–395 ms) with a master-alias
	// signal pushed at 355 ms still in its socket queue (or queued at
	// 396 ms, with no master live): the signal waits for the project's next
	// master, m2 (flip began at 400 ms), never the old master's identity's
	// next session m1b.
	masterGone := func(to string, at time.Duration, outcome string) MeshHistory {
		h := meshHistory()
		h.Sessions[2].DeregisterStart, h.Sessions[2].Ended = 390*meshMs, 395*meshMs
		h.Sessions = append(h.Sessions, MeshSession{SessionID: "m1b", Recipient: "acme/p1/boss", Registered: 450 * meshMs})
		h.Sends = append(h.Sends, MeshSend{SignalID: "boss-after", Recipient: "acme/p1/boss", Start: 460 * meshMs, Done: 461 * meshMs, Status: 200, Outcome: "pushed", SessionID: "m1b"})
		h.Deliveries = append(h.Deliveries, MeshDelivery{SignalID: "boss-after", SessionID: "m1b", At: 462 * meshMs})
		for i, d := range h.Deliveries {
			if d.SignalID == "sigh-m" { // the master-alias send at 355 ms, pushed to m1
				h.Deliveries[i].SessionID, h.Deliveries[i].At = to, at
			}
		}
		for i, snd := range h.Sends {
			if snd.SignalID == "sigh-m" && outcome != "pushed" { // sent while no master was live
				h.Sends[i].Outcome, h.Sends[i].SessionID = outcome, ""
				h.Sends[i].Start, h.Sends[i].Done = 396*meshMs, 397*meshMs
			}
		}
		return h
	}
	if r := marconiStaleRoutes(masterGone("m2", 420*meshMs, "pushed"), 0, 10); r.Status != check.Pass {
		t.Fatalf("a master-alias signal handed to the next master: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	if r := marconiStaleRoutes(masterGone("m1b", 470*meshMs, "pushed"), 0, 10); r.Status != check.Fail {
		t.Fatalf("a master-alias signal handed to the old master's next session (not master): %s %s", r.Status, r.Message)
	}
	if r := marconiStaleRoutes(masterGone("m2", 398*meshMs, "pushed"), 0, 10); r.Status != check.Fail {
		t.Fatalf("a master-alias signal handed to m2 before m2 was made master: %s %s", r.Status, r.Message)
	}
	if r := marconiStaleRoutes(masterGone("m2", 420*meshMs, "queued_offline"), 0, 10); r.Status != check.Pass {
		t.Fatalf("a queued master-alias signal drained into the next master: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	if r := marconiStaleRoutes(masterGone("m1b", 470*meshMs, "queued_offline"), 0, 10); r.Status != check.Fail {
		t.Fatalf("a queued master-alias signal drained into a session that was never master: %s %s", r.Status, r.Message)
	}
	// m1 stays registered and only its socket drops: the signal pushed to
	// it goes back to the alias and on to m2 once m2 is master: a correct
	// hand-over the checker must not fail.
	dropped := meshHistory()
	for i, d := range dropped.Deliveries {
		if d.SignalID == "sigh-m" {
			dropped.Deliveries[i].SessionID, dropped.Deliveries[i].At = "m2", 420*meshMs
		}
	}
	if r := marconiStaleRoutes(dropped, 0, 10); r.Status != check.Pass {
		t.Fatalf("a master-alias signal whose master's socket dropped, handed to the next master: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	// A master is master only until the next flip to another session is
	// acknowledged: a queued master-alias signal delivered to m1 after m2's
	// flip (400–410 ms) reached a former master.
	if r := marconiStaleRoutes(masterGone("m1", 420*meshMs, "queued_offline"), 0, 10); r.Status != check.Fail {
		t.Fatalf("a queued master-alias signal delivered to the demoted master: %s %s", r.Status, r.Message)
	}
	quiet := meshHistory()
	quiet.Sessions = quiet.Sessions[1:]
	if r := marconiStaleRoutes(quiet, 0, 10); r.Status != check.Unknown {
		t.Fatalf("no churn: %s %s", r.Status, r.Message)
	}
}

func TestMarconiSendsDelivered(t *testing.T) {
	if r := marconiSendsDelivered(meshHistory(), 10, false); r.Status != check.Pass {
		t.Fatalf("good: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	failed := meshHistory()
	failed.Sends[3].Status, failed.Sends[3].Err = 500, "legacy path: publish: dial tcp: connection refused"
	if r := marconiSendsDelivered(failed, 10, false); r.Status != check.Fail {
		t.Fatalf("a 500: %s %s", r.Status, r.Message)
	}
	lost := meshHistory()
	lost.Deliveries = lost.Deliveries[1:]
	if r := marconiSendsDelivered(lost, 10, false); r.Status != check.Fail {
		t.Fatalf("lost: %s %s", r.Status, r.Message)
	}
	dup := meshHistory()
	dup.Deliveries = append(dup.Deliveries, dup.Deliveries[0])
	if r := marconiSendsDelivered(dup, 10, false); r.Status != check.Fail {
		t.Fatalf("dup: %s %s", r.Status, r.Message)
	}
	queued := meshHistory() // a queued signal with a route must be drained when required
	queued.Sends[18].SessionID = "s1"
	if r := marconiSendsDelivered(queued, 10, true); r.Status != check.Fail {
		t.Fatalf("undrained: %s %s", r.Status, r.Message)
	}
	if r := marconiSendsDelivered(meshHistory(), 1000, false); r.Status != check.Unknown {
		t.Fatalf("too few: %s", r.Status)
	}
}

func TestMarconiHotPathIO(t *testing.T) {
	good := MeshIO{Sends: 100, PausedSends: 100, MinSends: 50, ClientHotPath: map[string]int64{}, ServerRedis: map[string]int64{"n0:get": 0}}
	if r := marconiHotPathIO(good); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	publish := good
	publish.ClientHotPath = map[string]int64{"redis:PUBLISH": 100}
	if r := marconiHotPathIO(publish); r.Status != check.Fail {
		t.Fatalf("client-side publish: %s", r.Status)
	}
	server := good
	server.ServerRedis = map[string]int64{"n1:publish": 3}
	if r := marconiHotPathIO(server); r.Status != check.Fail {
		t.Fatalf("server-side publish: %s", r.Status)
	}
	pg := good
	pg.ServerPG = []string{"pid 42 (app=legacy): INSERT INTO ..."}
	if r := marconiHotPathIO(pg); r.Status != check.Fail {
		t.Fatalf("postgres: %s", r.Status)
	}
	few := good
	few.PausedSends = 3
	if r := marconiHotPathIO(few); r.Status != check.Unknown {
		t.Fatalf("too few: %s", r.Status)
	}
}

func hookSteps() []MeshHookStep {
	t0 := time.Unix(1000, 0)
	return []MeshHookStep{
		{Hook: "on_register", SessionID: "s1", After: MeshRouteState{Route: "s1", Registered: true, LastHeartbeat: t0}},
		{Hook: "on_ws_connect", SessionID: "s1", Before: MeshRouteState{Route: "s1", Registered: true, Pending: 2}, After: MeshRouteState{Route: "s1", Registered: true, Attached: true}},
		{Hook: "on_heartbeat", SessionID: "s1", Before: MeshRouteState{Route: "s1", Registered: true, Attached: true, LastHeartbeat: t0}, After: MeshRouteState{Route: "s1", Registered: true, Attached: true, LastHeartbeat: t0.Add(time.Second)}},
		{Hook: "on_master_change", SessionID: "s1", After: MeshRouteState{Route: "s1", Registered: true, Master: "s1"}},
		{Hook: "on_ws_disconnect", SessionID: "s1", Before: MeshRouteState{Route: "s1", Registered: true, Attached: true}, After: MeshRouteState{Route: "s1", Registered: true}},
		{Hook: "on_deregister", SessionID: "s1", Before: MeshRouteState{Route: "s1", Registered: true}, After: MeshRouteState{}},
		{Hook: "on_session_expired", SessionID: "s2", Before: MeshRouteState{Route: "s2", Registered: true}, After: MeshRouteState{}},
	}
}

func TestMarconiHookTransitions(t *testing.T) {
	if r := marconiHookTransitions(hookSteps()); r.Status != check.Pass {
		t.Fatalf("good: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	forgetful := hookSteps()
	forgetful[5].After = MeshRouteState{Route: "s1"} // registration dropped, route left
	if r := marconiHookTransitions(forgetful); r.Status != check.Fail {
		t.Fatalf("forgetful deregister: %s", r.Status)
	}
	invalidating := hookSteps()
	invalidating[2].After.Attached = false // heartbeat replaced the entry (lost the socket)
	if r := marconiHookTransitions(invalidating); r.Status != check.Fail {
		t.Fatalf("heartbeat invalidates: %s", r.Status)
	}
	undrained := hookSteps()
	undrained[1].After.Pending = 2
	if r := marconiHookTransitions(undrained); r.Status != check.Fail {
		t.Fatalf("connect without drain: %s", r.Status)
	}
	if r := marconiHookTransitions(hookSteps()[:6]); r.Status != check.Fail {
		t.Fatalf("a hook never exercised: %s", r.Status)
	}
}

func TestMarconiCacheHealth(t *testing.T) {
	good := MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1", "s2": "s2"}, HookErrors: map[string]float64{"on_heartbeat": 0}}
	if r := marconiCacheHealth(good); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	cold := good // skipped warm-up: first reads miss, heartbeats hit unknown sessions
	cold.FirstReads = map[string]string{"s1": "", "s2": ""}
	cold.HookErrors = map[string]float64{"on_heartbeat": 2}
	if r := marconiCacheHealth(cold); r.Status != check.Fail {
		t.Fatalf("cold: %s", r.Status)
	}
	low := good
	low.Hits, low.Misses = 980, 20
	if r := marconiCacheHealth(low); r.Status != check.Fail {
		t.Fatalf("98%%: %s", r.Status)
	}
	loud := good
	loud.ControlErrors = []string{"ws attach s3: 404 unknown_session"}
	if r := marconiCacheHealth(loud); r.Status != check.Fail {
		t.Fatalf("control error: %s", r.Status)
	}
	few := good
	few.Hits, few.Misses = 10, 0
	if r := marconiCacheHealth(few); r.Status != check.Unknown {
		t.Fatalf("few: %s", r.Status)
	}
}

func TestMarconiRehydrated(t *testing.T) {
	active := map[string]string{"s1": "acme/p1/a", "s2": "acme/p1/b"}
	if r := marconiRehydrated(active, map[string]string{"acme/p1/a": "s1", "acme/p1/b": "s2", "acme/p1/@master": "s1"}); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	if r := marconiRehydrated(active, map[string]string{}); r.Status != check.Fail {
		t.Fatalf("skipped warm-up: %s", r.Status)
	}
	if r := marconiRehydrated(active, map[string]string{"acme/p1/a": "s1", "acme/p1/b": "s2", "acme/p1/c": "gone"}); r.Status != check.Fail {
		t.Fatalf("a dead session routed: %s", r.Status)
	}
}

func TestMarconiAuditLedger(t *testing.T) {
	l := MeshLedger{Accepted: []string{"a", "b", "c", "d"}, Streamed: map[string]int{"a": 1, "b": 1}, CountedLost: 2}
	if r := marconiAuditLedger(l); r.Status != check.Pass {
		t.Fatalf("balanced: %s %s", r.Status, r.Message)
	}
	hidden := l
	hidden.CountedLost = 0
	if r := marconiAuditLedger(hidden); r.Status != check.Fail {
		t.Fatalf("hidden loss: %s", r.Status)
	}
	phantom := l
	phantom.CountedLost = 3
	if r := marconiAuditLedger(phantom); r.Status != check.Fail {
		t.Fatalf("phantom: %s", r.Status)
	}
}

// A failed send is judged: a 5xx or a dropped connection on a route whose
// session had ended fails the stale-route bound; an end with no later send
// leaves it Unknown.
func TestMarconiStaleRoutesFailedAndUncovered(t *testing.T) {
	h := meshHistory()
	for i := range h.Sends {
		if s := &h.Sends[i]; s.Recipient == "acme/p1/alice" && s.Start > 500*meshMs && s.Start < 600*meshMs {
			s.Status, s.Err, s.SessionID, s.Outcome = 500, "internal: stale route", "", ""
		}
	}
	if r := marconiStaleRoutes(h, 0, 10); r.Status != check.Fail {
		t.Fatalf("5xx on a stale route: %s %s", r.Status, r.Message)
	}
	conn := meshHistory()
	for i := range conn.Sends {
		if s := &conn.Sends[i]; s.Recipient == "acme/p1/alice" && s.Start == 550*meshMs {
			s.Status, s.Err, s.SessionID, s.Outcome = 0, "connection reset", "", ""
		}
	}
	if r := marconiStaleRoutes(conn, 0, 10); r.Status != check.Fail {
		t.Fatalf("connection error after the end: %s %s", r.Status, r.Message)
	}
	late := meshHistory()
	late.Sessions = append(late.Sessions, MeshSession{SessionID: "s9", Recipient: "acme/p1/carol", Registered: 0, Ended: 200 * meshMs})
	if r := marconiStaleRoutes(late, 0, 10); r.Status != check.Unknown {
		t.Fatalf("an end with no later send: %s %s", r.Status, r.Message)
	}
	if ended, unc := MeshEndsUncovered(late, 0); ended != 2 || len(unc) != 1 {
		t.Fatalf("MeshEndsUncovered: %d ended, uncovered %v", ended, unc)
	}
	if got := MeshFailedSends(conn); len(got) != 1 {
		t.Fatalf("MeshFailedSends: %v", got)
	}
}

func TestMarconiCacheHealthSendsAndEnds(t *testing.T) {
	good := MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1"}, RequireEnds: true, Ended: 3}
	if r := marconiCacheHealth(good); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	failed := good
	failed.FailedSends = []string{"send x answered 503"}
	if r := marconiCacheHealth(failed); r.Status != check.Fail {
		t.Fatalf("failed send: %s %s", r.Status, r.Message)
	}
	noEnds := good
	noEnds.Ended = 0
	if r := marconiCacheHealth(noEnds); r.Status != check.Unknown {
		t.Fatalf("no session ended: %s %s", r.Status, r.Message)
	}
	uncovered := good
	uncovered.Uncovered = []string{"s2"}
	if r := marconiCacheHealth(uncovered); r.Status != check.Unknown {
		t.Fatalf("an end not followed by a send: %s %s", r.Status, r.Message)
	}
}
