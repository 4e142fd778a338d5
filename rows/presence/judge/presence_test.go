package judge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func TestPositional(t *testing.T) {
	want := map[string]Want{"a": {Present: true, Value: "1"}, "b": {}, "c": {Unknown: true}}
	good := Read{Keys: []string{"b", "a", "c", "a"}, Got: []Got{{}, {Present: true, Value: "1"}, {Present: true, Value: "x"}, {Present: true, Value: "1"}}}
	if r := positional(want, []Read{good}, 3); r.Status != check.Pass {
		t.Fatalf("good read: %s %s", r.Status, r.Message)
	}
	swapped := Read{Keys: []string{"b", "a"}, Got: []Got{{Present: true, Value: "1"}, {}}}
	if r := positional(want, []Read{good, swapped}, 3); r.Status != check.Fail {
		t.Fatalf("swapped positions not caught: %s", r.Status)
	}
	short := Read{Keys: []string{"b", "a"}, Got: []Got{{}}}
	if r := positional(want, []Read{good, short}, 3); r.Status != check.Fail {
		t.Fatalf("short answer not caught: %s", r.Status)
	}
	failed := Read{Keys: []string{"a"}, ErrKind: "CROSSSLOT"}
	if r := positional(want, []Read{failed}, 1); r.Status != check.Unknown {
		t.Fatalf("only failed reads: %s, want unknown", r.Status)
	}

	// A present key with a TTL: a read that returned before its earliest
	// expiry must hold the value; one that returned after may hold nil.
	ms := time.Millisecond
	expiring := map[string]Want{"a": {Present: true, Value: "1", ExpiresAt: 100 * ms}, "b": {}}
	nilA := func(ret time.Duration) Read {
		return Read{Keys: []string{"a", "b"}, Got: []Got{{}, {}}, Call: ret - 10*ms, Return: ret}
	}
	if r := positional(expiring, []Read{nilA(99 * ms)}, 1); r.Status != check.Fail {
		t.Fatalf("nil for a present key before its TTL: %s, want fail", r.Status)
	}
	if r := positional(expiring, []Read{nilA(100 * ms)}, 1); r.Status != check.Pass || !strings.Contains(r.Message, "1 positions not judged") {
		t.Fatalf("nil for a present key after its TTL: %s %q, want pass naming the unjudged position", r.Status, r.Message)
	}
	wrongAfter := Read{Keys: []string{"a", "b"}, Got: []Got{{Present: true, Value: "another key's"}, {}}, Call: 190 * ms, Return: 200 * ms}
	if r := positional(expiring, []Read{wrongAfter}, 1); r.Status != check.Fail {
		t.Fatalf("a wrong value for a present key after its TTL: %s, want fail (only nil or its value are right)", r.Status)
	}
	if r := positional(expiring, []Read{nilA(200 * ms)}, 2); r.Status != check.Unknown || !strings.Contains(r.Message, "outlasted") {
		t.Fatalf("too few positions before the TTL: %s %q, want unknown naming the TTL", r.Status, r.Message)
	}
}

func TestRetriesCounted(t *testing.T) {
	reads := []Read{{ErrKind: "TRYAGAIN"}, {ErrKind: "ASK"}, {ErrKind: "network"}, {}}
	if r := retriesCounted(reads, 1, 1); r.Status != check.Pass {
		t.Fatalf("one retry per failed read counted: %s %s", r.Status, r.Message)
	}
	if r := retriesCounted(reads, 0, 1); r.Status != check.Fail {
		t.Fatalf("a TRYAGAIN read failed after retrying and no retry counted: %s, want fail", r.Status)
	}
	if r := retriesCounted([]Read{{ErrKind: "network"}, {}}, 0, 0); r.Status != check.Unknown {
		t.Fatalf("no read failed on a retryable answer (nothing to judge the counting by): %s, want unknown", r.Status)
	}
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: an old call holds one
// JSON input per argument of the reflective checker.
func TestPresenceCheckersReplay(t *testing.T) {
	want := map[string]Want{"a": {Present: true, Value: "1"}, "b": {}}
	swapped := []Read{{Keys: []string{"b", "a"}, Got: []Got{{Present: true, Value: "1"}, {}}}}
	r := Positional.Judge(PositionalInput{Want: want, Reads: swapped, MinPositions: 1})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "presence-mget/positional" {
		t.Fatalf("Judge = %+v", r)
	}
	old := *r.Call
	old.Checker = "PresencePositional"
	old.Input = []json.RawMessage{
		json.RawMessage(`{"a":{"Present":true,"Value":"1","Unknown":false},"b":{"Present":false,"Value":"","Unknown":false}}`),
		json.RawMessage(`[{"Keys":["b","a"],"Got":[{"Present":true,"Value":"1"},{"Present":false,"Value":""}],"ErrKind":"","Err":"","Call":0,"Return":0}]`),
		json.RawMessage("1"),
	}
	again, err := check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored three-argument call = %+v, %v; want %+v", again, err, r)
	}

	c := RetriesCounted.Judge(RetriesCountedInput{Reads: []Read{{ErrKind: "TRYAGAIN"}}, Retries: 0, Redirects: 0})
	if c.Status != check.Fail || !c.Replayable() {
		t.Fatalf("Judge = %+v", c)
	}
	oldC := *c.Call
	oldC.Checker = "PresenceRetriesCounted"
	oldC.Input = []json.RawMessage{json.RawMessage(`[{"Keys":null,"Got":null,"ErrKind":"TRYAGAIN","Err":"","Call":0,"Return":0}]`), json.RawMessage("0"), json.RawMessage("0")}
	againC, err := check.Replay(oldC)
	if err != nil || againC.Status != check.Fail || againC.Message != c.Message {
		t.Fatalf("replay of a stored three-argument call = %+v, %v; want %+v", againC, err, c)
	}
}
