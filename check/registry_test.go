package check

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
)

const ms = time.Millisecond

// regHistory: rt-a heartbeats every 100 ms from 0 to 1 s; rt-b joins at 0,
// crashes at 300 ms (last heartbeat returned at 201 ms); rt-c deregisters
// at 500 ms. TTL 300 ms, interval 100 ms.
func regHistory(found func(at time.Duration) []history.RegistryEntry) history.RegistryHistory {
	h := history.RegistryHistory{Population: map[string]string{"rt-a": "a:1", "rt-b": "b:1", "rt-c": "c:1"}}
	for t := time.Duration(0); t <= time.Second; t += 100 * ms {
		h.Ops = append(h.Ops, history.RegistryOp{Kind: history.RegHeartbeat, Runtime: "rt-a", Call: t, Return: t + ms})
		if t <= 200*ms {
			h.Ops = append(h.Ops, history.RegistryOp{Kind: history.RegHeartbeat, Runtime: "rt-b", Call: t, Return: t + ms})
		}
		if t < 500*ms {
			h.Ops = append(h.Ops, history.RegistryOp{Kind: history.RegHeartbeat, Runtime: "rt-c", Call: t, Return: t + ms})
		}
	}
	h.Ops = append(h.Ops,
		history.RegistryOp{Kind: history.RegCrash, Runtime: "rt-b", Call: 300 * ms, Return: 300 * ms},
		history.RegistryOp{Kind: history.RegDeregister, Runtime: "rt-c", Call: 500 * ms, Return: 502 * ms})
	for t := 150 * ms; t < time.Second; t += 50 * ms {
		h.Ops = append(h.Ops, history.RegistryOp{Kind: history.RegDiscover, Runtime: "obs", Call: t, Return: t + 5*ms, Found: found(t)})
	}
	return h
}

var regBounds = RegistryBounds{Interval: 100 * ms, TTL: 300 * ms, Grace: 100 * ms, MinDiscoveries: 5, MinRequired: 5}

// correct is what a correct registry may answer at t.
func correct(t time.Duration) []history.RegistryEntry {
	out := []history.RegistryEntry{{ID: "rt-a", Addr: "a:1"}}
	if t < 500*ms { // crashed at 300, last record expires by 501
		out = append(out, history.RegistryEntry{ID: "rt-b", Addr: "b:1"})
	}
	if t < 500*ms {
		out = append(out, history.RegistryEntry{ID: "rt-c", Addr: "c:1"})
	}
	return out
}

func TestRegistryBounded(t *testing.T) {
	if r := RegistryBounded(regHistory(correct), regBounds); r.Status != Pass {
		t.Fatalf("correct history: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	partial := func(t time.Duration) []history.RegistryEntry { return correct(t)[1:] } // never returns rt-a
	if r := RegistryComplete(regHistory(partial), regBounds); r.Status != Fail {
		t.Fatalf("partial discovery not caught: %s %s", r.Status, r.Message)
	}
	stale := func(t time.Duration) []history.RegistryEntry {
		return append(correct(t), history.RegistryEntry{ID: "rt-b", Addr: "b:1"})
	}
	if r := RegistryNoStale(regHistory(stale), regBounds); r.Status != Fail {
		t.Fatalf("crashed runtime returned forever not caught: %s %s", r.Status, r.Message)
	}
	forged := func(t time.Duration) []history.RegistryEntry {
		return append(correct(t), history.RegistryEntry{ID: "evil", Addr: "6.6.6.6:1"})
	}
	if r := RegistryAttested(regHistory(forged)); r.Status != Fail {
		t.Fatalf("forged record not caught: %s %s", r.Status, r.Message)
	}
	wrongAddr := func(t time.Duration) []history.RegistryEntry {
		return []history.RegistryEntry{{ID: "rt-a", Addr: "6.6.6.6:1"}}
	}
	if r := RegistryAttested(regHistory(wrongAddr)); r.Status != Fail {
		t.Fatalf("tampered address not caught: %s %s", r.Status, r.Message)
	}
	if r := RegistryComplete(history.RegistryHistory{}, regBounds); r.Status != Unknown {
		t.Fatalf("empty history: %s, want unknown", r.Status)
	}
}

func TestRegistryErrorsOutside(t *testing.T) {
	h := history.RegistryHistory{Ops: []history.RegistryOp{
		{Kind: history.RegHeartbeat, Runtime: "a", Call: 0, Return: ms},
		{Kind: history.RegHeartbeat, Runtime: "a", Call: 100 * ms, Return: 110 * ms, ErrKind: "network", Err: "reset"},
	}}
	if r := RegistryErrorsOutside(h, []Span{{90 * ms, 95 * ms}}, 10*ms, 1); r.Status != Pass {
		t.Fatalf("error inside window+settle: %s %s", r.Status, r.Message)
	}
	if r := RegistryErrorsOutside(h, nil, 0, 1); r.Status != Fail {
		t.Fatalf("error outside windows not caught: %s", r.Status)
	}
}

func TestPresencePositional(t *testing.T) {
	want := map[string]history.PresenceWant{"a": {Present: true, Value: "1"}, "b": {}, "c": {Unknown: true}}
	good := history.PresenceRead{Keys: []string{"b", "a", "c", "a"}, Got: []history.PresenceGot{{}, {Present: true, Value: "1"}, {Present: true, Value: "x"}, {Present: true, Value: "1"}}}
	if r := PresencePositional(want, []history.PresenceRead{good}, 3); r.Status != Pass {
		t.Fatalf("good read: %s %s", r.Status, r.Message)
	}
	swapped := history.PresenceRead{Keys: []string{"b", "a"}, Got: []history.PresenceGot{{Present: true, Value: "1"}, {}}}
	if r := PresencePositional(want, []history.PresenceRead{good, swapped}, 3); r.Status != Fail {
		t.Fatalf("swapped positions not caught: %s", r.Status)
	}
	short := history.PresenceRead{Keys: []string{"b", "a"}, Got: []history.PresenceGot{{}}}
	if r := PresencePositional(want, []history.PresenceRead{good, short}, 3); r.Status != Fail {
		t.Fatalf("short answer not caught: %s", r.Status)
	}
	failed := history.PresenceRead{Keys: []string{"a"}, ErrKind: "CROSSSLOT"}
	if r := PresencePositional(want, []history.PresenceRead{failed}, 1); r.Status != Unknown {
		t.Fatalf("only failed reads: %s, want unknown", r.Status)
	}

	// A present key with a TTL: a read that returned before its earliest
	// expiry must hold the value; one that returned after may hold nil.
	ms := time.Millisecond
	expiring := map[string]history.PresenceWant{"a": {Present: true, Value: "1", ExpiresAt: 100 * ms}, "b": {}}
	nilA := func(ret time.Duration) history.PresenceRead {
		return history.PresenceRead{Keys: []string{"a", "b"}, Got: []history.PresenceGot{{}, {}}, Call: ret - 10*ms, Return: ret}
	}
	if r := PresencePositional(expiring, []history.PresenceRead{nilA(99 * ms)}, 1); r.Status != Fail {
		t.Fatalf("nil for a present key before its TTL: %s, want fail", r.Status)
	}
	if r := PresencePositional(expiring, []history.PresenceRead{nilA(100 * ms)}, 1); r.Status != Pass || !strings.Contains(r.Message, "1 positions not judged") {
		t.Fatalf("nil for a present key after its TTL: %s %q, want pass naming the unjudged position", r.Status, r.Message)
	}
	wrongAfter := history.PresenceRead{Keys: []string{"a", "b"}, Got: []history.PresenceGot{{Present: true, Value: "another key's"}, {}}, Call: 190 * ms, Return: 200 * ms}
	if r := PresencePositional(expiring, []history.PresenceRead{wrongAfter}, 1); r.Status != Fail {
		t.Fatalf("a wrong value for a present key after its TTL: %s, want fail (only nil or its value are right)", r.Status)
	}
	if r := PresencePositional(expiring, []history.PresenceRead{nilA(200 * ms)}, 2); r.Status != Unknown || !strings.Contains(r.Message, "outlasted") {
		t.Fatalf("too few positions before the TTL: %s %q, want unknown naming the TTL", r.Status, r.Message)
	}
}

func TestPresenceRetriesCounted(t *testing.T) {
	reads := []history.PresenceRead{{ErrKind: "TRYAGAIN"}, {ErrKind: "ASK"}, {ErrKind: "network"}, {}}
	if r := PresenceRetriesCounted(reads, 1, 1); r.Status != Pass {
		t.Fatalf("one retry per failed read counted: %s %s", r.Status, r.Message)
	}
	if r := PresenceRetriesCounted(reads, 0, 1); r.Status != Fail {
		t.Fatalf("a TRYAGAIN read failed after retrying and no retry counted: %s, want fail", r.Status)
	}
	if r := PresenceRetriesCounted([]history.PresenceRead{{ErrKind: "network"}, {}}, 0, 0); r.Status != Unknown {
		t.Fatalf("no read failed on a retryable answer (nothing to judge the counting by): %s, want unknown", r.Status)
	}
}

func TestGateDoors(t *testing.T) {
	ok := []DoorStep{{Action: "EnterCompatible", From: "disabled", To: "compatible", FleetC: true}, {Action: "Enable", From: "compatible", To: "enabled", FleetC: true}}
	if r := judgedReplays(t, GateDoors, ok); r.Status != Pass {
		t.Fatalf("the ladder: %s %s", r.Status, r.Message)
	}
	skipped := append(ok, DoorStep{Action: "Enable", From: "disabled", To: "enabled", FleetC: true})
	if r := GateDoors(skipped); r.Status != Fail {
		t.Fatalf("disabled → enabled: %s, want fail", r.Status)
	}
	if r := GateDoors([]DoorStep{{Action: "Enable", From: "compatible", To: "enabled"}}); r.Status != Fail {
		t.Fatalf("enabled with the fleet off C: %s, want fail", r.Status)
	}
	if r := GateDoors(ok[:1]); r.Status != Fail {
		t.Fatalf("G4 never opened: %s, want fail", r.Status)
	}
}

func TestRegistrySkipsClassified(t *testing.T) {
	if r := judgedReplays(t, RegistrySkipsClassified, 10, int64(60), int64(90), 6, 9); r.Status != Pass {
		t.Fatalf("every discovery saw every forgery: %s %s", r.Status, r.Message)
	}
	if r := RegistrySkipsClassified(10, 61, 80, 6, 9); r.Status != Fail {
		t.Fatalf("a torn record counted unattested: %s, want fail", r.Status)
	}
	if r := RegistrySkipsClassified(10, 0, 91, 6, 9); r.Status != Fail {
		t.Fatalf("too many undecodable: %s, want fail", r.Status)
	}
}
