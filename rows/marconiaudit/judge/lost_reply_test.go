package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestMarconiLostReplyOnce(t *testing.T) {
	h := LostReplyHistory{Offered: []string{"a", "b"}, FailedAppends: 2, AppliedUnacked: true,
		Stream: []history.StreamEntry{{ID: "1-0", SignalID: "a"}, {ID: "2-0", SignalID: "b"}}}
	if r := lostReplyOnce(h); r.Status != check.Pass {
		t.Fatalf("once each: %v %s", r.Status, r.Message)
	}
	dup := h
	dup.Stream = append(append([]history.StreamEntry(nil), h.Stream...), history.StreamEntry{ID: "3-0", SignalID: "b"}) // the retry appended b again (dedupe off)
	if r := lostReplyOnce(dup); r.Status != check.Fail {
		t.Errorf("retry appended again: want fail, got %v", r.Status)
	}
	gap := h
	gap.Stream = h.Stream[:1]
	if r := lostReplyOnce(gap); r.Status != check.Fail {
		t.Errorf("gap: want fail, got %v", r.Status)
	}
	idle := h
	idle.AppliedUnacked = false
	if r := lostReplyOnce(idle); r.Status != check.Unknown {
		t.Errorf("no lost reply: want unknown, got %v", r.Status)
	}
}
