package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestOldKeyspaceDrained(t *testing.T) {
	s := []history.KeyspaceSample{{At: ms(0), OldLeases: 5}, {At: ms(10), OldLeases: 2}, {At: ms(20), OldLeases: 0, Forks: []string{"x"}}}
	if r := judged(t, OldKeyspaceDrained, KeyspaceDrainedInput{Samples: s, Since: 0, By: ms(20)}); r.Status != check.Pass {
		t.Fatalf("drain: %v", r)
	}
	if r := oldKeyspaceDrained(s, 0, ms(10)); r.Status != check.Fail {
		t.Fatalf("timer drain: %v", r)
	}
	// Premise: nothing on the old keyspace to drain in the window.
	if r := oldKeyspaceDrained(s[2:], 0, ms(20)); r.Status != check.Unknown {
		t.Fatalf("nothing to drain: %v", r)
	}
}

func TestNewKeyspaceDrained(t *testing.T) {
	s := []history.KeyspaceSample{{At: ms(0), OldLeases: 9, NewLeases: 4}, {At: ms(10), OldLeases: 9, NewLeases: 1}, {At: ms(20), OldLeases: 9, NewLeases: 0}}
	if r := judged(t, NewKeyspaceDrained, KeyspaceDrainedInput{Samples: s, Since: 0, By: ms(20)}); r.Status != check.Pass {
		t.Fatalf("drain: %v", r)
	}
	if r := newKeyspaceDrained(s, 0, ms(10)); r.Status != check.Fail {
		t.Fatalf("not drained: %v", r)
	}
	if r := newKeyspaceDrained(s[2:], 0, ms(20)); r.Status != check.Unknown {
		t.Fatalf("nothing to drain: %v", r)
	}
}

// The first sample at or after by is the witness of the state the gate
// decided on; a later one is not.
func TestOldKeyspaceDrainedWitness(t *testing.T) {
	s := []history.KeyspaceSample{{At: ms(0), OldLeases: 9}, {At: ms(10), OldLeases: 5}, {At: ms(21), OldLeases: 0}}
	if r := oldKeyspaceDrained(s, 0, ms(20)); r.Status != check.Pass {
		t.Fatalf("witness right after the decision shows 0: %v", r)
	}
	late := []history.KeyspaceSample{{At: ms(0), OldLeases: 9}, {At: ms(10), OldLeases: 5}, {At: ms(21), OldLeases: 3}, {At: ms(30), OldLeases: 0}}
	if r := oldKeyspaceDrained(late, 0, ms(20)); r.Status != check.Fail {
		t.Fatalf("drained only after the witness: %v", r)
	}
	// The witness call failed; the next tick, long after, is no witness.
	tooLate := []history.KeyspaceSample{{At: ms(0), OldLeases: 9}, {At: ms(10), OldLeases: 5}, {At: ms(200), OldLeases: 0}}
	if r := oldKeyspaceDrained(tooLate, 0, ms(20)); r.Status != check.Fail {
		t.Fatalf("a sample 180 ms after the decision counted as its witness: %v", r)
	}
}
