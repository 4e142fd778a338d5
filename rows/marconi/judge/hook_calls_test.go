package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func hookRun() MeshHookRun {
	ms := time.Millisecond
	lapse := func(sid string, held ...string) MeshLapse {
		return MeshLapse{Tenant: "t", Project: "p", SessionID: sid, RenewStart: 100 * ms, RenewAck: 110 * ms, HeldBy: held}
	}
	kept := MeshLapse{Tenant: "t", Project: "p", SessionID: "k", RenewStart: 3000 * ms, RenewAck: 3010 * ms, Kept: true, MaxRenewGap: 500 * ms, HeldBy: []string{"A", "B"}}
	expired := func(i, sid string, at time.Duration) MeshHookCall {
		return MeshHookCall{Instance: i, Hook: "on_session_expired", Tenant: "t", Project: "p", SessionID: sid, At: at}
	}
	return MeshHookRun{
		Instances: []string{"A", "B"}, TTL: 2 * time.Second, SweepEvery: time.Second, Slack: time.Second,
		Sessions: []MeshLapse{lapse("e1", "A", "B"), lapse("e2", "B"), kept},
		Calls: []MeshHookCall{
			expired("A", "e1", 2500*ms), expired("B", "e1", 2600*ms), expired("B", "e2", 2600*ms),
			{Instance: "A", Hook: "on_register", Tenant: "t", Project: "p", SessionID: "e1", At: 15 * ms},
			{Instance: "A", Hook: "on_master_change", Tenant: "t", Project: "p", SessionID: "e1", At: 25 * ms},
			{Instance: "A", Hook: "on_master_change", Tenant: "t", Project: "p", SessionID: "k", At: 3500 * ms},
			{Instance: "B", Hook: "on_master_change", Tenant: "t", Project: "p", SessionID: "e2", At: 3600 * ms},
		},
		Controls: []MeshControlCall{
			{Instance: "A", Op: "register", Tenant: "t", Project: "p", SessionID: "e1", Start: 10 * ms, End: 20 * ms},
			{Instance: "A", Op: "claim_master", Tenant: "t", Project: "p", SessionID: "e1", Start: 21 * ms, End: 30 * ms},
			{Instance: "A", Op: "claim_master", Tenant: "t", Project: "p", SessionID: "k", Start: 3490 * ms, End: 3510 * ms, Takeover: true},
			{Instance: "B", Op: "handoff_master", Tenant: "t", Project: "p", SessionID: "e2", Start: 3590 * ms, End: 3610 * ms},
		},
		Until: 5 * time.Second,
	}
}

func TestMarconiSweeperExpiresOnce(t *testing.T) {
	if r := SweeperExpiresOnce.Judge(hookRun()); r.Status != check.Pass {
		t.Fatalf("reference run: %s %s", r.Status, r.Message)
	}
	cases := map[string]func(*MeshHookRun){
		"missed on one instance": func(h *MeshHookRun) { h.Calls = h.Calls[1:] },
		"twice on one instance":  func(h *MeshHookRun) { h.Calls = append(h.Calls, h.Calls[0]) },
		"late": func(h *MeshHookRun) {
			h.Calls[2].At = 5 * time.Second
			h.Until = 6 * time.Second
		},
		"early": func(h *MeshHookRun) { h.Calls[0].At = time.Second },
		"kept expired": func(h *MeshHookRun) {
			h.Calls = append(h.Calls, MeshHookCall{Instance: "A", Hook: "on_session_expired", Tenant: "t", Project: "p", SessionID: "k", At: 4 * time.Second})
		},
		"wrong project": func(h *MeshHookRun) { h.Calls[1].Project = "" },
		"never had": func(h *MeshHookRun) {
			h.Calls = append(h.Calls, MeshHookCall{Instance: "B", Hook: "on_session_expired", SessionID: "ghost"})
		},
	}
	for name, edit := range cases {
		h := hookRun()
		edit(&h)
		if r := SweeperExpiresOnce.Judge(h); r.Status != check.Fail {
			t.Errorf("%s: %s %s, want fail", name, r.Status, r.Message)
		}
	}
	// A non-holder may fire once (a keyspace notification reaches every
	// subscriber), not twice.
	h := hookRun()
	h.Calls = append(h.Calls, MeshHookCall{Instance: "A", Hook: "on_session_expired", Tenant: "t", Project: "p", SessionID: "e2", At: 2700 * time.Millisecond})
	if r := SweeperExpiresOnce.Judge(h); r.Status != check.Pass {
		t.Errorf("non-holder once: %s %s", r.Status, r.Message)
	}
}

func TestMarconiSweeperExpiresOncePremises(t *testing.T) {
	cases := map[string]func(*MeshHookRun){
		"one instance":          func(h *MeshHookRun) { h.Instances = h.Instances[:1] },
		"instance held none":    func(h *MeshHookRun) { h.Instances = append(h.Instances, "C") },
		"kept renewed late":     func(h *MeshHookRun) { h.Sessions[2].MaxRenewGap = 2 * time.Second },
		"observation too short": func(h *MeshHookRun) { h.Until = 3 * time.Second },
	}
	for name, edit := range cases {
		h := hookRun()
		h.Calls = nil // a broken premise is unknown even over a history that would fail
		edit(&h)
		if r := SweeperExpiresOnce.Judge(h); r.Status != check.Unknown {
			t.Errorf("%s: %s %s, want unknown", name, r.Status, r.Message)
		}
	}
}

func TestMarconiControlHooksOnce(t *testing.T) {
	if r := ControlHooksOnce.Judge(hookRun()); r.Status != check.Pass {
		t.Fatalf("reference run: %s %s", r.Status, r.Message)
	}
	cases := map[string]func(*MeshHookRun){
		"takeover skipped": func(h *MeshHookRun) { h.Calls = append(h.Calls[:5], h.Calls[6:]...) },
		"register twice":   func(h *MeshHookRun) { h.Calls = append(h.Calls, h.Calls[3]) },
		"wrong master":     func(h *MeshHookRun) { h.Calls[6].SessionID = "e1" },
		"unasked": func(h *MeshHookRun) {
			h.Calls = append(h.Calls, MeshHookCall{Instance: "B", Hook: "on_register", Tenant: "t", Project: "p", SessionID: "x", At: 4 * time.Second})
		},
		"on the other instance": func(h *MeshHookRun) { h.Calls[6].Instance = "A" },
	}
	for name, edit := range cases {
		h := hookRun()
		edit(&h)
		r := ControlHooksOnce.Judge(h)
		if r.Status != check.Fail {
			t.Errorf("%s: %s %s, want fail", name, r.Status, r.Message)
		}
	}
	premises := map[string]func(*MeshHookRun){
		"no takeover":  func(h *MeshHookRun) { h.Controls[2].Takeover = false },
		"no handoff":   func(h *MeshHookRun) { h.Controls = h.Controls[:3] },
		"failed claim": func(h *MeshHookRun) { h.Controls[2].Err = "500"; h.Controls[1].Takeover = false },
		"overlap": func(h *MeshHookRun) {
			h.Controls[1].Start = 15 * time.Millisecond
			h.Controls[0].Op = "claim_master"
		},
	}
	for name, edit := range premises {
		h := hookRun()
		h.Calls = nil
		edit(&h)
		if r := ControlHooksOnce.Judge(h); r.Status != check.Unknown {
			t.Errorf("%s: %s %s, want unknown", name, r.Status, r.Message)
		}
	}
	// Replayed from its stored call, the verdict is the same.
	h := hookRun()
	h.Calls = h.Calls[:5]
	r := ControlHooksOnce.Judge(h)
	if r.Call == nil {
		t.Fatal("no stored call")
	}
	back, err := check.Replay(*r.Call)
	if err != nil || back.Status != r.Status || !strings.Contains(back.Message, "acknowledged without on_master_change") {
		t.Fatalf("replay: %v %s %s", err, back.Status, back.Message)
	}
}
