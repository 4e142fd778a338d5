package check

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/history"
)

type typedInput struct {
	Want, Got int
	Ratio     float64
}

func equalCounts(in typedInput) Result {
	if in.Got != in.Want {
		return fail("EqualCounts", "", "got %d, want %d", in.Got, in.Want)
	}
	return pass("EqualCounts", "%d as wanted", in.Got)
}

var equalCountsChecker = Define("self-test/equal-counts", equalCounts, "EqualCountsOldName")

func TestDefinedCheckerReplaysByNameAndAlias(t *testing.T) {
	for _, in := range []typedInput{{Want: 3, Got: 3}, {Want: 3, Got: 2}} {
		r := equalCountsChecker.Judge(in)
		if !r.Replayable() || r.Call.Checker != "self-test/equal-counts" {
			t.Fatalf("Judge(%+v) = %+v, want a replayable call under the stable name", in, r)
		}
		again, err := Replay(*r.Call)
		if err != nil || !sameResult(r, again) {
			t.Fatalf("Replay = %+v, %v; want %+v", again, err, r)
		}
		old := *r.Call
		old.Checker = "EqualCountsOldName"
		viaAlias, err := Replay(old)
		if err != nil || !sameResult(r, viaAlias) {
			t.Fatalf("Replay under the alias = %+v, %v; want %+v", viaAlias, err, r)
		}
	}
}

func TestDefinedCheckerKeepsNoCallItCannotReplay(t *testing.T) {
	r := equalCountsChecker.Judge(typedInput{Want: 1, Got: 1, Ratio: math.NaN()}) // JSON has no NaN
	if r.Status != Pass || r.Call != nil {
		t.Fatalf("Judge with a NaN input = %+v, want the direct pass with no call", r)
	}
}

func TestDefinedCheckerRefusesBadStoredInput(t *testing.T) {
	_, err := Replay(history.Call{Checker: "self-test/equal-counts", Input: []json.RawMessage{json.RawMessage(`"not an object"`)}})
	if err == nil {
		t.Fatal("a stored input of the wrong shape replayed")
	}
	_, err = Replay(history.Call{Checker: "self-test/equal-counts"})
	if err == nil {
		t.Fatal("a stored call without its input replayed")
	}
}

func TestDefineRefusesATakenName(t *testing.T) {
	for _, name := range []string{"self-test/equal-counts", "EqualCountsOldName", "NoErrors"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Define(%q) twice did not panic", name)
				}
			}()
			Define(name, equalCounts)
		}()
	}
}

// legacyCounts is the argument list of a reflective checker of two ints,
// as a Define'd checker's input struct declares it: its stored calls hold
// one input per argument.
type legacyCounts struct{ Want, Got int }

func legacyEqual(in legacyCounts) Result {
	return equalCounts(typedInput{Want: in.Want, Got: in.Got})
}

var legacyEqualChecker = Define("self-test/legacy-equal", legacyEqual, "LegacyEqualTwoArgs")

func TestDefinedCheckerReplaysAReflectiveCallPositionally(t *testing.T) {
	old := history.Call{Checker: "LegacyEqualTwoArgs", Input: []json.RawMessage{json.RawMessage("3"), json.RawMessage("2")}}
	r, err := Replay(old)
	if err != nil || r.Status != Fail || !strings.Contains(r.Message, "got 2, want 3") {
		t.Fatalf("Replay of a two-argument call = %+v, %v; want the fail of got 2, want 3", r, err)
	}
	old.Input = old.Input[:1]
	old.Input = append(old.Input, json.RawMessage("2"), json.RawMessage("1"))
	if _, err := Replay(old); err == nil {
		t.Fatal("a call with more inputs than the struct has fields replayed")
	}
	if r := legacyEqualChecker.Judge(legacyCounts{Want: 1, Got: 1}); r.Status != Pass || len(r.Call.Input) != 1 {
		t.Fatalf("Judge = %+v, want a pass stored as one input", r)
	}
}

// wrapped takes one argument that an older checker took bare: a stored
// call of the bare argument must not decode into it as a zero value.
type wrapped struct{ Counts typedInput }

func TestDefinedCheckerRefusesAStoredInputOfAnotherShape(t *testing.T) {
	wrappedChecker := Define("self-test/wrapped", func(w wrapped) Result { return equalCounts(w.Counts) }, "WrappedOldBare")
	old := history.Call{Checker: "WrappedOldBare", Input: []json.RawMessage{json.RawMessage(`{"Want":3,"Got":2,"Ratio":0}`)}}
	if r, err := Replay(old); err == nil {
		t.Fatalf("the bare old input replayed into the wrapper as %+v", r)
	}
	if r := wrappedChecker.Judge(wrapped{Counts: typedInput{Want: 1, Got: 1}}); !r.Replayable() {
		t.Fatalf("Judge = %+v, want a replayable call", r)
	}
}
