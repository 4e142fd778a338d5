package check

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

func readOps(phase fencing.Phase, k model.StoredKeyspace, mix string, at time.Duration) []history.ReadOp {
	rule := model.ReadRuleFor(phase, fencing.ReadCorrect)
	base := history.ReadOp{Pod: "p", Phase: string(phase), Lane: "reliable", Session: "s", Keyspace: k, Mix: mix, Call: at, Return: at + 1}
	v := rule.Lookup(k)
	lk, kg := base, base
	lk.Kind, lk.Got = history.ReadLookup, v
	kg.Kind, kg.Got = history.ReadKnownGeneration, model.View{Known: v.Known}
	out := []history.ReadOp{lk, kg}
	last := max(k.OldCtr, k.NewCtr)
	for _, g := range []int64{last - 1, last, last + 1} {
		op := base
		op.Kind, op.Frame, op.Class = history.ReadValidate, model.Frame{Owner: "q", Gen: g}, history.ClassOf(g, last)
		op.Verdict = rule.Validate(k, "q", g)
		out = append(out, op)
	}
	return out
}

func TestReadSide(t *testing.T) {
	ks := model.StoredKeyspace{Old: model.Stored{Owner: "q", Gen: 3}, OldCtr: 3, NewCtr: 2}
	newKs := model.StoredKeyspace{New: model.Stored{Owner: "q", Gen: 4}, OldCtr: 3, NewCtr: 4}
	var good []history.ReadOp
	for i, p := range fencing.Phases {
		k := ks
		if p == fencing.C {
			k = newKs
		}
		good = append(good, readOps(p, k, "AB", time.Duration(i)*time.Second)...)
	}
	issued := []history.FencingOp{{Session: "s", Kind: history.OpAcquire, OK: true, Gen: 3, Return: 0}}
	opts := ReadSideOptions{Phases: fencing.Phases, MinPerCell: 1, MinMixed: 1, Stages: []Stage{{Name: "O", From: 0}}}
	if r := ReadSide(good, issued, opts); r.Status != Pass {
		t.Fatalf("correct reads: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	// coverage: phase C missing is blind, never a pass.
	if r := ReadSide(good[:15], issued, opts); r.Status != Unknown {
		t.Fatalf("reads without phase C: %s %s", r.Status, r.Message)
	}
	// table: an A lookup that missed the old-key lease.
	bad := append([]history.ReadOp(nil), good...)
	bad[5].Got.Holder = model.Stored{}
	if r := ReadSide(bad, issued, opts); r.Status != Fail || !strings.Contains(r.Message, "1 against the phase table") {
		t.Fatalf("one-keyspace lookup: %s %s", r.Status, r.Message)
	}
	// authority: an O reader over a live new-key lease (outside E1) — its
	// rule answers "free", the truth is the new lease.
	o := readOps(fencing.O, newKs, "OA", 0)
	if r := ReadSide(o, nil, ReadSideOptions{}); r.Status != Fail || !strings.Contains(r.Message, "against the authority") {
		t.Fatalf("O over a new lease: %s %s", r.Status, r.Message)
	}
	// real time: a known_generation below an acknowledged generation (the
	// snapshot itself agreeing, as a read of a rolled-back counter would).
	low := model.StoredKeyspace{OldCtr: 2}
	late := readOps(fencing.O, low, "O", 10*time.Second)
	if r := ReadSide(late, issued, ReadSideOptions{}); r.Status != Fail || !strings.Contains(r.Message, "2 below an acknowledged") {
		t.Fatalf("known below an acknowledged generation: %s %s", r.Status, r.Message)
	}
}
