package checktest

import (
	"fmt"
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

type counts struct{ Want, Got int }

var equalCounts = check.Define("checktest-self-test/equal-counts", func(in counts) check.Result {
	if in.Got != in.Want {
		return check.Result{Checker: "equal-counts", Status: check.Fail, Message: fmt.Sprintf("got %d, want %d", in.Got, in.Want)}
	}
	return check.Result{Checker: "equal-counts", Status: check.Pass, Message: fmt.Sprintf("%d as wanted", in.Got)}
}, "EqualCountsOldName")

// fakeT counts the failures a helper reports.
type fakeT struct{ errors, fatals int }

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.errors++ }
func (f *fakeT) Fatalf(string, ...any) { f.fatals++ }

// The replay helpers pass a call that reaches the verdict again, and fail
// one that does not: a different verdict, an unknown checker, or a result
// with no call at all.
func TestReplayHelpersFailOnADifferentVerdict(t *testing.T) {
	pass, fail := equalCounts.Judge(counts{3, 3}), equalCounts.Judge(counts{3, 2})
	old := history.Call{Checker: "EqualCountsOldName", Input: Inputs(t, counts{3, 2})}
	for _, c := range []struct {
		name  string
		run   func(TB)
		fails bool
	}{
		{"replays", func(f TB) { Replays(f, pass, fail) }, false},
		{"alias to its verdict", func(f TB) { ReplaysTo(f, old, fail) }, false},
		{"alias to another verdict", func(f TB) { ReplaysTo(f, old, pass) }, true},
		{"unknown checker", func(f TB) { ReplaysTo(f, history.Call{Checker: "NoSuchChecker"}, fail) }, true},
		{"no call", func(f TB) { Replays(f, check.Result{Status: check.Pass}) }, true},
	} {
		f := &fakeT{}
		c.run(f)
		if failed := f.errors+f.fatals > 0; failed != c.fails {
			t.Errorf("%s: failed=%v, want %v", c.name, failed, c.fails)
		}
	}
}
