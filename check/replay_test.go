package check

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

func TestJudgeReplaysIdentically(t *testing.T) {
	outcomes := []history.OpOutcome{{Op: "set k"}, {Op: "get k", ErrKind: "MOVED", Err: "MOVED 42 127.0.0.1:7001"}}
	live := NoErrorsCheck.Judge(NoErrorsInput{Outcomes: outcomes, MinOps: 1})
	if live.Call == nil || live.Call.Checker != "no-errors" {
		t.Fatalf("no call recorded: %+v", live)
	}
	if want := NoErrors(outcomes, 1); live.Status != want.Status || live.Message != want.Message {
		t.Fatalf("Judge = %s %q, direct = %s %q", live.Status, live.Message, want.Status, want.Message)
	}
	again, err := Replay(*live.Call)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, live) {
		t.Fatalf("replay differs:\n%+v\n%+v", again, live)
	}
}

func TestAllOfJudgedReplays(t *testing.T) {
	a := NoErrorsCheck.Judge(NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set"}}, MinOps: 1})
	b := RefusedWithCheck.Judge(RefusedWithInput{Outcomes: []history.OpOutcome{{Op: "mget", ErrKind: "CROSSSLOT"}}, Want: "CROSSSLOT"})
	all := All("both", a, b)
	if all.Call == nil || len(all.Call.Parts) != 2 {
		t.Fatalf("All over judged parts has no call: %+v", all.Call)
	}
	again, err := Replay(*all.Call)
	if err != nil || !reflect.DeepEqual(again, all) {
		t.Fatalf("replay of All differs (%v):\n%+v\n%+v", err, again, all)
	}
	if mixed := All("mixed", a, Result{Status: Pass}); mixed.Call != nil {
		t.Fatal("All over an unjudged part claims to be replayable")
	}
}

func TestEditedResultIsNotReplayable(t *testing.T) {
	r := NoErrorsCheck.Judge(NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set"}}, MinOps: 1})
	if !r.Replayable() {
		t.Fatal("a judged result is not replayable")
	}
	r.Message = "lane: " + r.Message
	if r.Replayable() {
		t.Fatal("an edited result still claims its call")
	}
	if All("x", r).Call != nil {
		t.Fatal("All over an edited part claims a call")
	}
}

func TestReplayRefusesAnUnknownChecker(t *testing.T) {
	if _, err := Replay(history.Call{Checker: "NoSuchChecker", Input: []json.RawMessage{json.RawMessage("1")}}); err == nil {
		t.Fatal("a call of no defined checker replayed")
	}
}

// Histories written while the shared checkers were judged reflectively
// stored each call under the Go function name, one JSON input per
// argument (a one-argument checker's input bare), and an All over such
// parts. Every alias must replay such a call to exactly the result the
// checker gives on those arguments.
func TestStoredReflectiveCallsReplay(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	fops := []history.FencingOp{
		{Session: "c:s", Kind: history.OpAcquire, Owner: "a", Gen: 1, OK: true, Call: ms(0), Return: ms(1)},
		{Session: "c:s", Kind: history.OpRelease, Owner: "a", Gen: 1, OK: true, Call: ms(5), Return: ms(6)},
		{Session: "c:s", Kind: history.OpAcquire, Owner: "b", Gen: 2, OK: true, Call: ms(10), Return: ms(11)},
	}
	mops := []history.MigrationOp{{FencingOp: fops[0], Pod: "a"}, {FencingOp: fops[1], Pod: "a"}, {FencingOp: fops[2], Pod: "b"}}
	outcomes := []history.OpOutcome{{Op: "set"}, {Op: "mget", ErrKind: "CROSSSLOT", Err: "CROSSSLOT Keys in request don't hash to the same slot"}}
	refused := outcomes[1:]
	samples := []history.KeyspaceSample{{At: ms(0), OldLeases: 1}, {At: ms(10), NewLeases: 1}}
	pauses := []history.PodPause{{Pod: "a", Phase: "C", From: ms(2), To: ms(9)}}
	reads := readOps(fencing.C, model.StoredKeyspace{New: model.Stored{Owner: "q", Gen: 4}, OldCtr: 3, NewCtr: 4}, "C", ms(2))
	opts := ReadSideOptions{Name: "lane", Phases: []fencing.Phase{fencing.C}, MinPerCell: 1}
	pairs := []PairSlots{{A: "{s}:lease", B: "{s}:gen", SlotA: 7, SlotB: 7}, {A: "x", B: "y", SlotA: 1, SlotB: 2}}
	for _, c := range []struct {
		alias  string
		args   []any
		direct Result
	}{
		{"FencingLinearizable", []any{fops, time.Second}, FencingLinearizable(fops, time.Second)},
		{"SingleAuthority", []any{fops}, SingleAuthority(fops)},
		{"GenerationsIncrease", []any{fops, true}, GenerationsIncrease(fops, true)},
		{"GuardsHold", []any{fops}, GuardsHold(fops)},
		{"FencingInvariants", []any{fops}, FencingInvariants(fops)},
		{"MigrationSingleAuthority", []any{mops, ms(100), ms(5)}, MigrationSingleAuthority(mops, ms(100), ms(5))},
		{"MigrationGenerations", []any{mops}, MigrationGenerations(mops)},
		{"ObservedSingleAuthority", []any{samples, 1}, ObservedSingleAuthority(samples, 1)},
		{"MigrationErrors", []any{mops, 1}, MigrationErrors(mops, 1)},
		{"MigrationErrorsAround", []any{mops, []Span{{Start: ms(4), End: ms(6)}}, ms(1), 1}, MigrationErrorsAround(mops, []Span{{Start: ms(4), End: ms(6)}}, ms(1), 1)},
		{"NoErrors", []any{outcomes, 1}, NoErrors(outcomes, 1)},
		{"RefusedWith", []any{refused, "CROSSSLOT"}, RefusedWith(refused, "CROSSSLOT")},
		{"LoudRefusal", []any{refused, "CROSSSLOT"}, LoudRefusal(refused, "CROSSSLOT")},
		{"Happened", []any{"noscript-fallback", 0, "never"}, Happened("noscript-fallback", 0, "never")},
		{"PausedPodsFenced", []any{mops, pauses, ms(100), ms(5)}, PausedPodsFenced(mops, pauses, ms(100), ms(5))},
		{"ReadSide", []any{reads, fops, opts}, ReadSide(reads, fops, opts)},
		{"PairsShareSlot", []any{pairs}, PairsShareSlot(pairs)},
		{"PairsShareSlot", []any{[]PairSlots(nil)}, PairsShareSlot(nil)},
	} {
		call := history.Call{Checker: c.alias}
		for _, a := range c.args {
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			call.Input = append(call.Input, b)
		}
		got, err := Replay(call)
		if err != nil {
			t.Errorf("%s: %v", c.alias, err)
			continue
		}
		if !sameResult(got, c.direct) {
			t.Errorf("%s: stored call replays to %s %q, the checker gives %s %q", c.alias, got.Status, got.Message, c.direct.Status, c.direct.Message)
		}
		if got.Call == nil || got.Call.Checker != c.alias || !got.Replayable() {
			t.Errorf("%s: the replay does not carry the stored call", c.alias)
		}
	}
	// An All of reflective parts, as a suite combined them.
	name, _ := json.Marshal("both")
	in := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	all := history.Call{Checker: "All", Input: []json.RawMessage{name}, Parts: []history.Call{
		{Checker: "RefusedWith", Input: []json.RawMessage{in(refused), in("CROSSSLOT")}},
		{Checker: "NoErrors", Input: []json.RawMessage{in(outcomes), in(2)}},
	}}
	got, err := Replay(all)
	if want := All("both", RefusedWith(refused, "CROSSSLOT"), NoErrors(outcomes, 2)); err != nil || !sameResult(got, want) {
		t.Errorf("All of stored reflective parts = %+v, %v; want %+v", got, err, want)
	}
}

// SilentOnly replays as a whole, caught or not exercised, and only when
// both parts are judged.
func TestSilentOnlyReplays(t *testing.T) {
	failed := NoErrorsCheck.Judge(NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set", ErrKind: "MOVED", Err: "MOVED 1 a:1"}}, MinOps: 1})
	passed := NoErrorsCheck.Judge(NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set"}}, MinOps: 1})
	for _, tc := range []struct {
		name         string
		silent, loud Result
		want         Status
	}{{"caught", failed, passed, Fail}, {"loud too", failed, failed, Unknown}, {"not lost", passed, passed, Unknown}} {
		r := SilentOnly(tc.silent, tc.loud)
		if r.Status != tc.want || !r.Replayable() || r.Call.Checker != silentOnlyChecker {
			t.Fatalf("%s: SilentOnly = %s, replayable %v", tc.name, r.Status, r.Replayable())
		}
		again, err := Replay(*r.Call)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%s: replay differs (%v):\n%+v\n%+v", tc.name, err, again, r)
		}
	}
	if r := SilentOnly(failed, Result{Status: Pass}); r.Status != Fail || r.Call != nil {
		t.Fatalf("SilentOnly over an unjudged part: %s, call %v; want fail and no call", r.Status, r.Call)
	}
}
