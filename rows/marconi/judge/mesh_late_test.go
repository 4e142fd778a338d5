package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// lateRun is a churn history in which the session a-1 lapsed (its heartbeat
// refused, a send to its identity missed) and, when bOnFault, the session
// b-1 was also routed to after its deregister's 200 (a stale route) and a
// heartbeat of it was refused.
func lateRun(bOnFault bool) MeshHistory {
	s := time.Second
	h := MeshHistory{End: 10 * s,
		Sessions: []MeshSession{
			{SessionID: "a-1", Recipient: "t/p/a", Registered: s},
			{SessionID: "b-1", Recipient: "t/p/b", Registered: s, DeregisterStart: 4 * s, Ended: 5 * s},
		},
		Sends: []MeshSend{
			{SignalID: "1", Recipient: "t/p/a", Start: 3 * s, Done: 3 * s, Status: 200, Outcome: "queued"},
			{SignalID: "2", Recipient: "t/p/b", Start: 2 * s, Done: 2 * s, Status: 200, SessionID: "b-1"},
			{SignalID: "3", Recipient: "t/p/b", Start: 6 * s, Done: 6 * s, Status: 200, Outcome: "queued"},
		},
		ControlErrors: []string{"heartbeat a-1 at 2.5s: 410 session_expired"},
	}
	if bOnFault {
		h.Sends[2].SessionID = "b-1"
		h.ControlErrors = append(h.ControlErrors, "heartbeat b-1 at 3s: 410 session_expired")
	}
	return h
}

func judgeBoth(h MeshHistory, late []string) (health, stale check.Result) {
	stats := func(h MeshHistory) MeshCacheStats {
		return MeshCacheStats{Hits: 100, MinHitRate: 0.99, MinReads: 1, FirstReads: map[string]string{"w": "w"}, ControlErrors: h.ControlErrors}
	}
	ex := MeshExcused(h, late)
	health = LatePremise("heartbeat-cadence", CacheHealth.Judge(stats(h)), CacheHealth.Judge(stats(ex)), late)
	stale = LatePremise("heartbeat-cadence", StaleRoutes.Judge(StaleRoutesInput{h, time.Second, 1}), StaleRoutes.Judge(StaleRoutesInput{ex, time.Second, 1}), late)
	return health, stale
}

// The heartbeat-cadence premise fires only over failures on the sessions
// the runner renewed late, and judges the rest: firing on any late
// renewal would void every check, real catches included.
func TestLatePremise(t *testing.T) {
	// The late session is the one at fault: inconclusive, the failure kept.
	health, _ := judgeBoth(lateRun(false), []string{"a-1"})
	if health.Status != check.Inconclusive || len(health.Observed) == 0 {
		t.Errorf("failure only on the late session: %s %q %q, want inconclusive with the failure observed", health.Status, health.Message, health.Observed)
	}
	// A late session and a fault elsewhere: the catch stands, judged
	// without the late session.
	health, stale := judgeBoth(lateRun(true), []string{"a-1"})
	if health.Status != check.Fail || stale.Status != check.Fail {
		t.Errorf("a catch on a session renewed in time voided: health %s %q, stale %s %q", health.Status, health.Message, stale.Status, stale.Message)
	}
	if !health.Replayable() || !stale.Replayable() {
		t.Errorf("the standing failures do not replay: %v %v", health.Call, stale.Call)
	}
	// A late session the checks found nothing on: judged as usual.
	h := lateRun(false)
	h.ControlErrors = nil
	health, _ = judgeBoth(h, []string{"a-1"})
	if health.Status != check.Pass {
		t.Errorf("late but not at fault: %s %q, want pass", health.Status, health.Message)
	}
	// A slow product names no session late: its failure stands.
	health, _ = judgeBoth(lateRun(false), nil)
	if health.Status != check.Fail {
		t.Errorf("no late session: %s %q, want the failure", health.Status, health.Message)
	}
}

// MeshExcused leaves out the late session, what was routed to it, sends to
// its identity while it lived and its calls' errors; nothing else.
func TestMeshExcused(t *testing.T) {
	got := MeshExcused(lateRun(true), []string{"a-1"})
	if len(got.Sessions) != 1 || got.Sessions[0].SessionID != "b-1" || len(got.Sends) != 2 || len(got.ControlErrors) != 1 || got.ControlErrors[0] != "heartbeat b-1 at 3s: 410 session_expired" {
		t.Errorf("excused a-1: %+v", got)
	}
}
