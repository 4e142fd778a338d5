package check_test

import (
	"strings"
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
	good := make([]history.SlotSample, 10)
	for i := range good {
		good[i] = history.SlotSample{Key: "k", Local: i, Server: i}
	}
	if r := check.SlotMathAgrees(good, 10); r.Status != check.Pass {
		t.Errorf("agreeing samples: %s", r.Message)
	}
	if r := check.SlotMathAgrees(good, 11); r.Status != check.Unknown {
		t.Errorf("too few samples must be unknown: %s", r.Status)
	}
	bad := append(good, history.SlotSample{Key: "{a}b", Local: 1, Server: 2})
	if r := check.SlotMathAgrees(bad, 1); r.Status != check.Fail {
		t.Errorf("disagreeing sample not caught")
	}
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

func TestPublishCheckers(t *testing.T) {
	classic := []history.NodeDelta{
		{Node: "p0", Shard: 0, Sender: true}, {Node: "r0", Shard: 0, PublishReceived: 100},
		{Node: "p1", Shard: 1, PublishReceived: 100}, {Node: "r1", Shard: 1, PublishReceived: 100},
	}
	sharded := []history.NodeDelta{
		{Node: "p0", Shard: 0, Sender: true}, {Node: "r0", Shard: 0, ShardPublishReceived: 100},
		{Node: "p1", Shard: 1}, {Node: "r1", Shard: 1},
	}
	if r := check.BroadcastReachesAll(classic, 100); r.Status != check.Pass {
		t.Errorf("broadcast: %s", r.Message)
	}
	if r := check.BroadcastReachesAll(sharded, 100); r.Status != check.Fail {
		t.Errorf("confined traffic passed as broadcast")
	}
	if r := check.ShardConfined(sharded, 0, 100); r.Status != check.Pass {
		t.Errorf("confined: %s", r.Message)
	}
	if r := check.ShardConfined(classic, 0, 100); r.Status != check.Fail {
		t.Errorf("classic broadcast passed as confined")
	}
}

func TestUndeclaredKeyHazard(t *testing.T) {
	if r := check.UndeclaredKeyHazard(history.UndeclaredKeys{RemoteErr: "ERR non local key", EarlierWriteApplied: true}); r.Status != check.Pass {
		t.Errorf("measured refinement: %s", r.Message)
	}
	if r := check.UndeclaredKeyHazard(history.UndeclaredKeys{}); r.Status != check.Fail {
		t.Errorf("single-shard observation (no remote key) must fail")
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

func TestHaltsWithin(t *testing.T) {
	ok := check.RoleHalt{Role: "command pool", What: "kill failover of shard 0", Halt: 4 * time.Second, Recovered: true}
	long := check.RoleHalt{Role: "subscription client", What: "kill failover of shard 1", Halt: 36 * time.Second, Recovered: true}
	open := check.RoleHalt{Role: "command pool", What: "kill failover of shard 2", Halt: 3 * time.Second}
	if r := check.HaltsWithin([]check.RoleHalt{ok}, 10*time.Second); r.Status != check.Pass {
		t.Errorf("within budget: %s %s", r.Status, r.Message)
	}
	if r := check.HaltsWithin([]check.RoleHalt{ok, long}, 10*time.Second); r.Status != check.Fail || !strings.Contains(r.Message, "subscription client: halted 36s") {
		t.Errorf("over budget: %s %s", r.Status, r.Message)
	}
	if r := check.HaltsWithin([]check.RoleHalt{ok}, time.Millisecond); r.Status != check.Fail {
		t.Errorf("1ms budget: %s %s", r.Status, r.Message)
	}
	if r := check.HaltsWithin([]check.RoleHalt{ok, open}, 10*time.Second); r.Status != check.Unknown {
		t.Errorf("unrecovered below the budget is undecided: %s %s", r.Status, r.Message)
	}
	if r := check.HaltsWithin([]check.RoleHalt{open}, 2*time.Second); r.Status != check.Fail {
		t.Errorf("unrecovered beyond the budget fails: %s %s", r.Status, r.Message)
	}
}

func TestSubscriptionHalts(t *testing.T) {
	s := time.Second
	h := history.SubscriptionHistory{
		Publishes: []history.SubPublish{
			{Publisher: 0, Seq: 1, Sub: "a", Sent: 1 * s}, // before the drill
			{Publisher: 0, Seq: 2, Sub: "a", Sent: 3 * s},
			{Publisher: 1, Seq: 1, Sub: "b", Sent: 3 * s}, // another shard
		},
		Deliveries: []history.SubDelivery{
			{Publisher: 0, Seq: 1, Sub: "a", At: 2500 * time.Millisecond}, // sent before: no proof
			{Publisher: 1, Seq: 1, Sub: "b", At: 3 * s},
			{Publisher: 0, Seq: 2, Sub: "a", At: 6 * s},
		},
	}
	drills := []check.Drill{{Shard: 0, Mode: "kill", Start: 2 * s}, {Shard: 2, Mode: "kill", Start: 7 * s}}
	got := check.SubscriptionHalts(h, drills, map[string]int{"a": 0, "b": 1}, 9*s)
	if len(got) != 2 || !got[0].Recovered || got[0].Halt != 4*s || got[1].Recovered || got[1].Halt != 2*s {
		t.Errorf("SubscriptionHalts = %+v", got)
	}
}

// One message the old primary still delivered right after a graceful
// failover began does not end the halt: the longest silence does.
func TestSubscriptionHaltsLongestSilence(t *testing.T) {
	ms := time.Millisecond
	h := history.SubscriptionHistory{
		Publishes: []history.SubPublish{
			{Publisher: 0, Seq: 1, Sub: "a", Sent: 1001 * ms},
			{Publisher: 0, Seq: 2, Sub: "a", Sent: 1002 * ms},
			{Publisher: 0, Seq: 3, Sub: "a", Sent: 1010 * ms},
		},
		Deliveries: []history.SubDelivery{
			{Publisher: 0, Seq: 1, Sub: "a", At: 1002 * ms},
			{Publisher: 0, Seq: 2, Sub: "a", At: 31000 * ms},
			{Publisher: 0, Seq: 3, Sub: "a", At: 31001 * ms},
		},
	}
	got := check.SubscriptionHalts(h, []check.Drill{{Shard: 0, Mode: "graceful", Start: 1000 * ms}}, map[string]int{"a": 0}, 31100*ms)
	if len(got) != 1 || !got[0].Recovered || got[0].Halt != 29998*ms {
		t.Errorf("SubscriptionHalts = %+v, want a 29.998s halt", got)
	}
}

// The harness's reset after a drill (every connection killed) is no part
// of the drill: its window ends at Until.
func TestSubscriptionHaltsEndAtUntil(t *testing.T) {
	s := time.Second
	h := history.SubscriptionHistory{
		Publishes: []history.SubPublish{{Publisher: 0, Seq: 1, Sub: "a", Sent: 2 * s}, {Publisher: 0, Seq: 2, Sub: "a", Sent: 3 * s}},
		// Recovered 1 s after the drill began; then silence through the reset.
		Deliveries: []history.SubDelivery{{Publisher: 0, Seq: 1, Sub: "a", At: 2 * s}, {Publisher: 0, Seq: 2, Sub: "a", At: 3 * s}},
	}
	drills := []check.Drill{{Shard: 0, Mode: "kill", Start: 1 * s, Until: 3500 * time.Millisecond}, {Shard: 1, Mode: "kill", Start: 8 * s}}
	got := check.SubscriptionHalts(h, drills, map[string]int{"a": 0}, 9*s)
	if !got[0].Recovered || got[0].Halt != 1*s {
		t.Errorf("halt %v (recovered %v), want 1s: the reset's silence after Until is not the drill's", got[0].Halt, got[0].Recovered)
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
