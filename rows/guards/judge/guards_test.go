package judge

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
)

const ms = time.Millisecond

// contended builds n keys of guard g on slot 7, each called by callers
// overlapping [0, 10ms]; admit says how many of a key's callers are
// admitted.
func contended(g Guard, n, callers int, admit func(key int) int) []Call {
	var out []Call
	for k := range n {
		for c := range callers {
			out = append(out, Call{Guard: g, Key: string(rune('a'+k)) + string(g), Slot: 7, Caller: "w", Call: 0, Return: 10 * ms, Admitted: c < admit(k)})
		}
	}
	return out
}

var move = []Move{{Slot: 7, Start: 5 * ms, End: 50 * ms}}

func in(calls []Call) Admissions {
	return Admissions{Calls: calls, Moves: move, Limit: 2, Window: time.Minute, MinContended: 3, MinDuringMove: 3}
}

func TestReplayOnce(t *testing.T) {
	once := func(int) int { return 1 }
	if r := replayOnce(in(contended(GuardReplay, 4, 3, once))); r.Status != check.Pass {
		t.Errorf("each id admitted once: %s %s", r.Status, r.Message)
	}
	twice := func(k int) int { return 1 + k%2 }
	if r := replayOnce(in(contended(GuardReplay, 4, 3, twice))); r.Status != check.Fail || !strings.Contains(r.Message, "2 event ids admitted more than once") {
		t.Errorf("double admission not caught: %s %s", r.Status, r.Message)
	}
	never := contended(GuardReplay, 4, 3, func(k int) int { return min(k, 1) })
	if r := replayOnce(in(never)); r.Status != check.Fail || !strings.Contains(r.Message, "1 never") {
		t.Errorf("an id refused by every answered caller not caught: %s %s", r.Status, r.Message)
	}
	// The one caller whose outcome is unknown may have admitted it.
	never[0].ErrKind, never[0].Err = "network", "i/o timeout"
	if r := replayOnce(in(never)); r.Status != check.Pass {
		t.Errorf("zero admissions beside an unknown outcome judged: %s %s", r.Status, r.Message)
	}
}

func TestLimitHeld(t *testing.T) {
	atLimit := func(int) int { return 2 }
	if r := limitHeld(in(contended(GuardLimit, 4, 5, atLimit))); r.Status != check.Pass {
		t.Errorf("at the limit: %s %s", r.Status, r.Message)
	}
	over := func(k int) int { return 2 + k%2 }
	if r := limitHeld(in(contended(GuardLimit, 4, 5, over))); r.Status != check.Fail || !strings.Contains(r.Message, "2 of 4 subjects admitted over the limit") {
		t.Errorf("over-admission not caught: %s %s", r.Status, r.Message)
	}
	// A subject called over longer than its window may have been reset by
	// expiry: no verdict, even on over-admission.
	long := contended(GuardLimit, 4, 5, over)
	long[0].Return = 2 * time.Minute
	if r := limitHeld(in(long)); r.Status != check.Unknown || !strings.Contains(r.Message, "window") {
		t.Errorf("a subject outliving its window judged: %s %s", r.Status, r.Message)
	}
}

// Premise-breaking histories are unknown, never pass or fail, even when
// they hold an over-admission.
func TestAdmissionPremises(t *testing.T) {
	twice := func(int) int { return 3 }
	for name, edit := range map[string]func(*Admissions){
		"no move confirmed":       func(a *Admissions) { a.Moves = nil },
		"too few contended keys":  func(a *Admissions) { a.MinContended = 5 },
		"no key met the move":     func(a *Admissions) { a.Moves = []Move{{Slot: 8, Start: 0, End: 50 * ms}} },
		"move after the calls":    func(a *Admissions) { a.Moves = []Move{{Slot: 7, Start: 20 * ms, End: 50 * ms}} },
		"return before call":      func(a *Admissions) { a.Calls[0].Call = 20 * ms },
		"one caller per key only": func(a *Admissions) { a.Calls = contended(GuardReplay, 4, 1, twice) },
	} {
		a := in(contended(GuardReplay, 4, 3, twice))
		edit(&a)
		if r := replayOnce(a); r.Status != check.Unknown || !strings.Contains(r.Message, "premise broken") {
			t.Errorf("%s: replayOnce = %s %s, want unknown", name, r.Status, r.Message)
		}
		l := a
		l.Calls = append([]Call(nil), a.Calls...)
		for i := range l.Calls {
			l.Calls[i].Guard = GuardLimit
		}
		if r := limitHeld(l); r.Status != check.Unknown {
			t.Errorf("%s: limitHeld = %s %s, want unknown", name, r.Status, r.Message)
		}
	}
	a := in(contended(GuardLimit, 4, 3, twice))
	a.Limit = 0
	if r := limitHeld(a); r.Status != check.Unknown {
		t.Errorf("no limit: limitHeld = %s %s, want unknown", r.Status, r.Message)
	}
}

func TestErrorsOutside(t *testing.T) {
	calls := []Call{
		{Guard: GuardReplay, Key: "k", Slot: 7, Call: 0, Return: ms},
		{Guard: GuardLimit, Key: "k", Slot: 7, Call: 6 * ms, Return: 7 * ms, ErrKind: "ASK", Err: "ASK 7 127.0.0.1:1"},       // during the move
		{Guard: GuardLimit, Key: "k", Slot: 7, Call: 55 * ms, Return: 56 * ms, ErrKind: "MOVED", Err: "MOVED 7 127.0.0.1:1"}, // within settle
		{Guard: GuardLimit, Key: "k", Slot: 7, Call: 90 * ms, Return: 91 * ms},
	}
	in := Outside{Calls: calls, Moves: move, Settle: 10 * ms, MinOps: 2}
	if r := errorsOutside(in); r.Status != check.Pass {
		t.Errorf("errors only during the move: %s %s", r.Status, r.Message)
	}
	// A move of another slot excuses nothing: the same errors on slot 8
	// while slot 7 moved are outside every move of their slot.
	other := slices.Clone(calls)
	for i := range other {
		other[i].Slot = 8
	}
	if r := errorsOutside(Outside{Calls: other, Moves: move, Settle: 10 * ms, MinOps: 2}); r.Status != check.Fail {
		t.Errorf("errors on a slot that did not move, excused by another slot's move: %s %s", r.Status, r.Message)
	}
	in.Settle = 0
	if r := errorsOutside(in); r.Status != check.Fail || !strings.Contains(r.Message, "1×MOVED") {
		t.Errorf("an error after the move not caught: %s %s", r.Status, r.Message)
	}
	in.MinOps = 4
	if r := errorsOutside(in); r.Status != check.Unknown {
		t.Errorf("too few calls outside the moves judged: %s %s", r.Status, r.Message)
	}
	in.MinOps, in.Moves = 1, nil
	if r := errorsOutside(in); r.Status != check.Unknown {
		t.Errorf("no move confirmed judged: %s %s", r.Status, r.Message)
	}
}

// The checkers replay by their stable names from the call Judge keeps.
func TestGuardCheckersReplay(t *testing.T) {
	a := in(contended(GuardReplay, 4, 3, func(int) int { return 2 }))
	checktest.Replays(t, ReplayOnce.Judge(a), LimitHeld.Judge(in(contended(GuardLimit, 4, 5, func(int) int { return 3 }))),
		ErrorsOutside.Judge(Outside{Calls: a.Calls, Moves: move, MinOps: 1}))
}
