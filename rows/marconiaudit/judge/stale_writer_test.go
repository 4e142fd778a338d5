package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func staleFixture() StaleWriterHistory {
	return StaleWriterHistory{
		OldGen: "01", NewGen: "02",
		Current:  []string{"a1", "a2", "b1"},
		Stale:    []string{"c1", "c2"},
		Refusals: 3,
		Stream: []history.StreamEntry{
			{ID: "1-0", SignalID: "a1", Offset: "01:1"},
			{ID: "2-0", SignalID: "a2", Offset: "01:2"},
			{ID: "3-0", SignalID: "b1", Offset: "02:1"},
		},
	}
}

func TestMarconiStaleWriterFenced(t *testing.T) {
	if r := staleWriterFenced(staleFixture()); r.Status != check.Pass {
		t.Fatalf("fenced: %v %s %s", r.Status, r.Message, r.Counterexample)
	}
	landed := staleFixture()
	landed.Refusals = 0 // append.lua's STALEGEN refusal off: the old writer's appends succeed
	landed.Stream = append(landed.Stream, history.StreamEntry{ID: "4-0", SignalID: "c1", Offset: "01:3"}, history.StreamEntry{ID: "5-0", SignalID: "c2", Offset: "01:4"})
	if r := staleWriterFenced(landed); r.Status != check.Fail {
		t.Errorf("stale entries landed: want fail, got %v %s", r.Status, r.Message)
	}
	gap := staleFixture()
	gap.Stream = gap.Stream[:2]
	if r := staleWriterFenced(gap); r.Status != check.Fail {
		t.Errorf("a current writer's entry missing: want fail, got %v", r.Status)
	}
	dup := staleFixture()
	dup.Stream = append(dup.Stream, history.StreamEntry{ID: "4-0", SignalID: "b1", Offset: "02:1"})
	if r := staleWriterFenced(dup); r.Status != check.Fail {
		t.Errorf("duplicate: want fail, got %v", r.Status)
	}
	idle := staleFixture()
	idle.Refusals = 0
	if r := staleWriterFenced(idle); r.Status != check.Unknown {
		t.Errorf("the old writer never tried: want unknown, got %v", r.Status)
	}
	same := staleFixture()
	same.NewGen = "01"
	if r := staleWriterFenced(same); r.Status != check.Unknown {
		t.Errorf("generations not ordered: want unknown, got %v", r.Status)
	}
}
