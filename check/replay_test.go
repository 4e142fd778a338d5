package check

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
)

func TestJudgeReplaysIdentically(t *testing.T) {
	ops := []history.RoutingOp{
		{Worker: 1, Kind: "set", Keys: []string{"k"}, Value: "v1", Call: time.Millisecond, Return: 2 * time.Millisecond},
		{Worker: 1, Kind: "get", Keys: []string{"k"}, Got: []string{"v0"}, Call: 3 * time.Millisecond, Return: 4 * time.Millisecond},
	}
	live := Judge(RoutingAcknowledged, ops, 1)
	if live.Call == nil || live.Call.Checker != "RoutingAcknowledged" {
		t.Fatalf("no call recorded: %+v", live)
	}
	if want := RoutingAcknowledged(ops, 1); live.Status != want.Status || live.Message != want.Message {
		t.Fatalf("Judge = %s %q, direct = %s %q", live.Status, live.Message, want.Status, want.Message)
	}
	again, err := Replay(*live.Call)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, live) {
		t.Fatalf("replay differs:\n%+v\n%+v", again, live)
	}
}

func TestAllOfJudgedReplays(t *testing.T) {
	a := Judge(NoErrors, []history.OpOutcome{{Op: "set"}}, 1)
	b := Judge(RefusedWith, []history.OpOutcome{{Op: "mget", ErrKind: "CROSSSLOT"}}, "CROSSSLOT")
	all := All("both", a, b)
	if all.Call == nil || len(all.Call.Parts) != 2 {
		t.Fatalf("All over judged parts has no call: %+v", all.Call)
	}
	again, err := Replay(*all.Call)
	if err != nil || !reflect.DeepEqual(again, all) {
		t.Fatalf("replay of All differs (%v):\n%+v\n%+v", err, again, all)
	}
	if mixed := All("mixed", a, Result{Status: Pass}); mixed.Call != nil {
		t.Fatal("All over an unjudged part claims to be replayable")
	}
}

func TestEditedResultIsNotReplayable(t *testing.T) {
	r := Judge(NoErrors, []history.OpOutcome{{Op: "set"}}, 1)
	if !r.Replayable() {
		t.Fatal("a judged result is not replayable")
	}
	r.Message = "lane: " + r.Message
	if r.Replayable() {
		t.Fatal("an edited result still claims its call")
	}
	if All("x", r).Call != nil {
		t.Fatal("All over an edited part claims a call")
	}
}

func TestJudgeUnregisteredRunsDirect(t *testing.T) {
	r := Judge(BeforeUnconfirmed, Result{Status: Fail, Message: "x"}, Result{Status: Inconclusive})
	if r.Status != Fail || r.Call != nil {
		t.Fatalf("unregistered checker: %+v", r)
	}
	if r := Judge(NoErrors, "not outcomes", 1); r.Status != Unknown {
		t.Fatalf("wrong argument type judged: %+v", r)
	}
}

func TestJudgeKeepsDirectVerdictWhenJSONCannotCarryInput(t *testing.T) {
	// A NaN does not encode: the verdict is the direct call's, with no call.
	r := Judge(DrillDispatch, []DrillHalt(nil), time.Second, math.NaN())
	if want := DrillDispatch(nil, time.Second, math.NaN()); r.Status != want.Status || r.Message != want.Message || r.Call != nil {
		t.Fatalf("Judge = %+v, direct %+v", r, want)
	}
}
