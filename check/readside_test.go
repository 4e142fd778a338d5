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

func TestPodValidates(t *testing.T) {
	ms := time.Millisecond
	op := func(kind history.FencingOpKind, owner string, gen int64, ok bool, verdict int, call time.Duration) history.MigrationOp {
		return history.MigrationOp{FencingOp: history.FencingOp{Session: "s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Verdict: verdict, Call: call, Return: call + ms}, Pod: owner, Phase: "A", Lane: "reliable"}
	}
	h := []history.MigrationOp{
		op(history.OpAcquire, "a", 1, true, 0, 0),
		op(history.OpValidate, "a", 1, false, 1, 10*ms),  // certainly live: valid
		op(history.OpRelease, "a", 1, true, 0, 20*ms),    // released
		op(history.OpValidate, "a", 1, false, -1, 30*ms), // not judged
		op(history.OpAcquire, "b", 2, true, 0, 40*ms),
		op(history.OpValidate, "a", 1, false, 0, 50*ms), // below an acknowledged 2: stale
		op(history.OpValidate, "b", 2, false, 1, 60*ms),
	}
	if r := PodValidates(h, 600*ms, 20*ms, 3); r.Status != Pass {
		t.Fatalf("correct: %s %s", r.Status, r.Message)
	}
	if r := PodValidates(h, 600*ms, 20*ms, 4); r.Status != Unknown {
		t.Fatalf("too few judged: %s %s", r.Status, r.Message)
	}
	bad := append([]history.MigrationOp(nil), h...)
	bad[1].Verdict = -1 // a live own frame refused (validate-one-pair under A)
	bad[5].Verdict = -1 // a stale frame not called stale (off by one)
	if r := PodValidates(bad, 600*ms, 20*ms, 1); r.Status != Fail || !strings.HasPrefix(r.Message, "2 of 3") {
		t.Fatalf("bad: %s %s", r.Status, r.Message)
	}
}
