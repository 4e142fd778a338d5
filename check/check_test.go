package check_test

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func acq(client int, owner string, ok bool, gen, holder int64, call, ret int) history.FencingOp {
	return history.FencingOp{Client: client, Session: "c:s", Kind: history.OpAcquire, Owner: owner, OK: ok, Gen: gen, HolderGen: holder, Call: ms(call), Return: ms(ret)}
}

func op(kind history.FencingOpKind, owner string, gen int64, ok bool, call, ret int) history.FencingOp {
	return history.FencingOp{Session: "c:s", Kind: kind, Owner: owner, Gen: gen, OK: ok, Call: ms(call), Return: ms(ret)}
}

// held sets the holder's owner a refused acquire reports.
func held(o history.FencingOp, owner string) history.FencingOp { o.HolderOwner = owner; return o }

// goodHistory: two pods race, p0 wins gen 1, p1's foreign renew/release are
// refused, p0 releases, p1 wins gen 2.
func goodHistory() []history.FencingOp {
	return []history.FencingOp{
		acq(0, "p0", true, 1, 0, 0, 2),
		held(acq(1, "p1", false, 0, 1, 1, 3), "p0"),
		op(history.OpRenew, "p1", 1, false, 4, 5),
		op(history.OpRelease, "p1", 1, false, 4, 5),
		{Session: "c:s", Kind: history.OpValidate, Owner: "p0", Gen: 1, Verdict: 1, Call: ms(4), Return: ms(5)},
		op(history.OpRelease, "p0", 1, true, 6, 7),
		op(history.OpRelease, "p0", 1, false, 8, 9),
		acq(1, "p1", true, 2, 0, 10, 11),
		{Session: "c:s", Kind: history.OpValidate, Owner: "p0", Gen: 1, Verdict: 0, Call: ms(12), Return: ms(13)},
	}
}

func TestFencingCheckersPassGoodHistory(t *testing.T) {
	h := goodHistory()
	for _, r := range []check.Result{
		check.FencingLinearizable(h, time.Second),
		check.SingleAuthority(h),
		check.GenerationsIncrease(h, true),
		check.GuardsHold(h),
	} {
		if r.Status != check.Pass {
			t.Errorf("%s: %s %s\n%s", r.Checker, r.Status, r.Message, r.Counterexample)
		}
	}
}

func TestFencingCheckersCatchMutants(t *testing.T) {
	twoWinners := []history.FencingOp{acq(0, "p0", true, 1, 0, 0, 2), acq(1, "p1", true, 2, 0, 1, 3)}
	reused := []history.FencingOp{
		acq(0, "p0", true, 1, 0, 0, 1), op(history.OpRelease, "p0", 1, true, 2, 3),
		acq(1, "p1", true, 1, 0, 4, 5),
	}
	foreignRenew := []history.FencingOp{acq(0, "p0", true, 1, 0, 0, 1), op(history.OpRenew, "p1", 1, true, 2, 3)}
	staleRelease := []history.FencingOp{
		acq(0, "p0", true, 1, 0, 0, 1), op(history.OpRelease, "p0", 1, true, 2, 3),
		acq(1, "p1", true, 2, 0, 4, 5), op(history.OpRelease, "p0", 1, true, 6, 7),
	}
	cases := []struct {
		name string
		r    check.Result
	}{
		{"linearizable/two-winners", check.FencingLinearizable(twoWinners, time.Second)},
		{"single-authority/two-winners", check.SingleAuthority(twoWinners)},
		{"linearizable/reused", check.FencingLinearizable(reused, time.Second)},
		{"generations/reused", check.GenerationsIncrease(reused, true)},
		{"linearizable/foreign-renew", check.FencingLinearizable(foreignRenew, time.Second)},
		{"guards/foreign-renew", check.GuardsHold(foreignRenew)},
		{"guards/stale-release", check.GuardsHold(staleRelease)},
		{"linearizable/stale-release", check.FencingLinearizable(staleRelease, time.Second)},
	}
	for _, c := range cases {
		if c.r.Status != check.Fail {
			t.Errorf("%s: want fail, got %s: %s", c.name, c.r.Status, c.r.Message)
		}
	}
}

// A refused acquire must name the live holder: generation and owner (the
// acquire script's {0, holder_generation, holder_owner}).
func TestRefusedAcquireNamesTheHolder(t *testing.T) {
	h := goodHistory()
	h[1].HolderOwner = ""
	if r := check.FencingLinearizable(h, time.Second); r.Status != check.Fail {
		t.Errorf("refused acquire without the holder's owner: %s %s", r.Status, r.Message)
	}
	h[1].HolderOwner = "p1"
	if r := check.FencingLinearizable(h, time.Second); r.Status != check.Fail {
		t.Errorf("refused acquire naming the wrong owner: %s %s", r.Status, r.Message)
	}
}

func TestUnknownOutcomeIsNotGuessed(t *testing.T) {
	// An acquire whose reply was lost may or may not have taken effect: both
	// continuations are linearizable.
	lost := acq(0, "p0", false, 0, 0, 0, 1)
	lost.Unknown = true
	for _, next := range []history.FencingOp{acq(1, "p1", true, 1, 0, 5, 6), held(acq(1, "p1", false, 0, 1, 5, 6), "p0")} {
		if r := check.FencingLinearizable([]history.FencingOp{lost, next}, time.Second); r.Status != check.Pass {
			t.Errorf("unknown acquire then %v: %s %s", next, r.Status, r.Message)
		}
	}
	if r := check.SingleAuthority(nil); r.Status != check.Unknown {
		t.Errorf("empty history must be unknown, got %s", r.Status)
	}
}

func TestSlotAndOutcomeCheckers(t *testing.T) {
	if r := check.PairsShareSlot([]check.PairSlots{{A: "a", B: "b", SlotA: 1, SlotB: 2}}); r.Status != check.Fail {
		t.Errorf("split pair not caught")
	}
	ok := []history.OpOutcome{{Op: "x"}, {Op: "y"}}
	crossed := []history.OpOutcome{{Op: "x", ErrKind: "CROSSSLOT", Err: "CROSSSLOT Keys..."}}
	if r := check.NoErrors(ok, 2); r.Status != check.Pass {
		t.Errorf("no errors: %s", r.Message)
	}
	if r := check.NoErrors(crossed, 1); r.Status != check.Fail {
		t.Errorf("error not caught")
	}
	if r := check.RefusedWith(crossed, "CROSSSLOT"); r.Status != check.Pass {
		t.Errorf("refusal: %s", r.Message)
	}
	if r := check.RefusedWith(ok, "CROSSSLOT"); r.Status != check.Fail {
		t.Errorf("success where a refusal was due not caught")
	}
}

func TestAll(t *testing.T) {
	p := check.Result{Status: check.Pass, Message: "a"}
	u := check.Result{Status: check.Unknown, Message: "b"}
	f := check.Result{Status: check.Fail, Message: "c"}
	if r := check.All("x", p, u); r.Status != check.Unknown {
		t.Errorf("pass+unknown = %s", r.Status)
	}
	if r := check.All("x", p, u, f); r.Status != check.Fail || r.Message != "c" {
		t.Errorf("fail wins: %s %q", r.Status, r.Message)
	}
}

// The counterexample is the one broken session's own history, not the run.
func TestFencingCounterexample(t *testing.T) {
	good := goodHistory()
	if ce := check.FencingCounterexample(good, time.Second); ce != nil {
		t.Fatalf("good history has a counterexample: %v", ce)
	}
	bad := []history.FencingOp{acq(0, "p0", true, 1, 0, 0, 2), acq(1, "p1", true, 2, 0, 1, 3)}
	for i := range bad {
		bad[i].Session = "c:broken"
	}
	ce := check.FencingCounterexample(append(good, bad...), time.Second)
	if len(ce) != 2 || ce[0].Session != "c:broken" {
		t.Errorf("counterexample %v, want the two c:broken acquires", ce)
	}
}
