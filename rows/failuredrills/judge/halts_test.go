package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestHaltsWithin(t *testing.T) {
	ok := RoleHalt{Role: "command pool", What: "kill failover of shard 0", Halt: 4 * time.Second, Recovered: true}
	long := RoleHalt{Role: "subscription client", What: "kill failover of shard 1", Halt: 36 * time.Second, Recovered: true}
	open := RoleHalt{Role: "command pool", What: "kill failover of shard 2", Halt: 3 * time.Second}
	if r := HaltsWithin.Judge(HaltBudgetInput{Halts: []RoleHalt{ok}, Budget: 10 * time.Second}); r.Status != check.Pass {
		t.Errorf("within budget: %s %s", r.Status, r.Message)
	}
	if r := HaltsWithin.Judge(HaltBudgetInput{Halts: []RoleHalt{ok, long}, Budget: 10 * time.Second}); r.Status != check.Fail || !strings.Contains(r.Message, "subscription client: halted 36s") {
		t.Errorf("over budget: %s %s", r.Status, r.Message)
	}
	if r := HaltsWithin.Judge(HaltBudgetInput{Halts: []RoleHalt{ok}, Budget: time.Millisecond}); r.Status != check.Fail {
		t.Errorf("1ms budget: %s %s", r.Status, r.Message)
	}
	if r := HaltsWithin.Judge(HaltBudgetInput{Halts: []RoleHalt{ok, open}, Budget: 10 * time.Second}); r.Status != check.Unknown {
		t.Errorf("unrecovered below the budget is undecided: %s %s", r.Status, r.Message)
	}
	if r := HaltsWithin.Judge(HaltBudgetInput{Halts: []RoleHalt{open}, Budget: 2 * time.Second}); r.Status != check.Fail {
		t.Errorf("unrecovered beyond the budget fails: %s %s", r.Status, r.Message)
	}
	if r := HaltsWithin.Judge(HaltBudgetInput{Budget: 10 * time.Second}); r.Status != check.Unknown {
		t.Errorf("no halt measured: %s %s", r.Status, r.Message)
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
	drills := []Drill{{Shard: 0, Mode: "kill", Start: 2 * s}, {Shard: 2, Mode: "kill", Start: 7 * s}}
	got := SubscriptionHalts(h, drills, map[string]int{"a": 0, "b": 1}, 9*s)
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
	got := SubscriptionHalts(h, []Drill{{Shard: 0, Mode: "graceful", Start: 1000 * ms}}, map[string]int{"a": 0}, 31100*ms)
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
	drills := []Drill{{Shard: 0, Mode: "kill", Start: 1 * s, Until: 3500 * time.Millisecond}, {Shard: 1, Mode: "kill", Start: 8 * s}}
	got := SubscriptionHalts(h, drills, map[string]int{"a": 0}, 9*s)
	if !got[0].Recovered || got[0].Halt != 1*s {
		t.Errorf("halt %v (recovered %v), want 1s: the reset's silence after Until is not the drill's", got[0].Halt, got[0].Recovered)
	}
}
