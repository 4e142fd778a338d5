package judge

import (
	"encoding/json"
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: a stored call of the
// old reflective checker holds one input per argument.
func TestSubscriptionCheckersReplay(t *testing.T) {
	h := subHistory(100)
	h.Deliveries = h.Deliveries[:len(h.Deliveries)-1] // lost after healthy
	r := SubscriptionsDelivered.Judge(DeliveryInput{History: h, MinExpected: 50})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "subscriptions/delivered" {
		t.Fatalf("Judge = %+v", r)
	}
	raw, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	old := *r.Call
	old.Checker = "SubscriptionsDelivered"
	old.Input = []json.RawMessage{raw, json.RawMessage("50")}
	again, err := check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored two-argument call = %+v, %v; want %+v", again, err, r)
	}

	// The steady scenario stored a composition of two old four- and
	// two-argument calls; it replays part by part through the aliases.
	conns := check.ParseClientList("p0", "id=1 name=sub psub=2 ssub=3 resp=2")
	push := PushDelivery.Judge(PushInput{Conns: conns, Name: "sub", Exact: 3, Patterns: 2})
	if push.Status != check.Fail || !push.Replayable() {
		t.Fatalf("PushDelivery.Judge = %+v", push)
	}
	rawConns, err := json.Marshal(conns)
	if err != nil {
		t.Fatal(err)
	}
	want := check.All("subscriptions-delivered-by-push", r, push)
	composed := history.Call{Checker: "All", Input: []json.RawMessage{json.RawMessage(`"subscriptions-delivered-by-push"`)}, Parts: []history.Call{
		old,
		{Checker: "PushDelivery", Input: []json.RawMessage{rawConns, json.RawMessage(`"sub"`), json.RawMessage("3"), json.RawMessage("2")}},
	}}
	got, err := check.Replay(composed)
	if err != nil || got.Status != want.Status || got.Message != want.Message || got.Counterexample != want.Counterexample {
		t.Fatalf("replay of a stored composition = %+v, %v; want %+v", got, err, want)
	}
}
