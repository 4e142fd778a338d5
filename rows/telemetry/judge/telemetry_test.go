package judge

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

func TestAgrees(t *testing.T) {
	good := Agreement{
		MinOps: 10,
		Nodes: []NodeCount{
			{Node: "a", Command: "incr", Sent: 12, ServerErrors: 2, Unknown: 1, Calls: 11, Failed: 2},
			{Node: "b", Command: "get", Sent: 5, Redirected: 1, Calls: 4, Rejected: 1},
		},
		Slots:    []SlotKeys{{Slot: 7, ClientSets: 4, ServerKeys: 4}},
		Channels: []Channel{{Channel: "c", ClientMessages: 9, Delivered: 9, ClientGaps: 1, ServerDrops: 1}},
	}
	if r := agrees(good); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	misattributed := good
	misattributed.Nodes = []NodeCount{{Node: "a", Command: "incr", Sent: 6, Calls: 11, Failed: 2}, good.Nodes[1]}
	if r := agrees(misattributed); r.Status != check.Fail {
		t.Fatalf("node count off: %s %s", r.Status, r.Message)
	}
	wrongSlot := good
	wrongSlot.Slots = []SlotKeys{{Slot: 7, ClientSets: 0, ServerKeys: 4}, {Slot: 9, ClientSets: 4}}
	if r := agrees(wrongSlot); r.Status != check.Fail {
		t.Fatalf("slot keys off: %s %s", r.Status, r.Message)
	}
	noGaps := good
	noGaps.Channels = []Channel{{Channel: "c", ClientMessages: 9, Delivered: 9, ServerDrops: 1}}
	if r := agrees(noGaps); r.Status != check.Fail {
		t.Fatalf("gap not counted: %s %s", r.Status, r.Message)
	}
	lostDelivery := good
	lostDelivery.Channels = []Channel{{Channel: "c", ClientMessages: 8, Delivered: 9, Unknown: 2, ClientGaps: 1, ServerDrops: 1}}
	if r := agrees(lostDelivery); r.Status != check.Fail {
		t.Fatalf("delivery not counted: %s %s", r.Status, r.Message)
	}
	idle := good
	idle.MinOps = 1000
	if r := agrees(idle); r.Status != check.Unknown {
		t.Fatalf("too little traffic: %s %s", r.Status, r.Message)
	}
}

func TestHotSlot(t *testing.T) {
	good := Hot{
		Skewed:       5,
		ClientBySlot: map[int]float64{5: 50, 1: 10, 2: 10},
		ClientNode:   map[int]string{5: "a", 1: "b", 2: "c"},
		ServerOwner:  "a",
		ServerCalls:  map[string]float64{"a": 55, "b": 10, "c": 10},
		MinShare:     0.3,
	}
	if r := hotSlot(good); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	spread := good
	spread.ClientBySlot = map[int]float64{11: 6, 12: 5, 13: 5, 1: 10, 2: 10}
	if r := hotSlot(spread); r.Status != check.Fail {
		t.Fatalf("hot tag spread over slots: %s %s", r.Status, r.Message)
	}
	wrongNode := good
	wrongNode.ClientNode = map[int]string{5: "b"}
	if r := hotSlot(wrongNode); r.Status != check.Fail {
		t.Fatalf("wrong node: %s %s", r.Status, r.Message)
	}
}

func TestRedirects(t *testing.T) {
	good := []RedirectTally{
		{Scope: "pinned slot 3", Counted: 4, Observed: 4, ServerSent: 4, ServerExact: true},
		{Scope: "cluster", Counted: 2, Observed: 2, ServerSent: 90},
	}
	if r := redirects(good, 1); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	dropped := []RedirectTally{{Scope: "pinned slot 3", Counted: 0, Observed: 4, ServerSent: 4, ServerExact: true}}
	if r := redirects(dropped, 1); r.Status != check.Fail {
		t.Fatalf("dropped: %s %s", r.Status, r.Message)
	}
	overcount := []RedirectTally{{Scope: "pinned", Counted: 5, Observed: 5, ServerSent: 4, ServerExact: true}}
	if r := redirects(overcount, 1); r.Status != check.Fail {
		t.Fatalf("more than sent: %s %s", r.Status, r.Message)
	}
	if r := redirects(nil, 1); r.Status != check.Unknown {
		t.Fatalf("none observed: %s %s", r.Status, r.Message)
	}
}

func TestPhaseC(t *testing.T) {
	atC := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{{Name: "buzz_fencing_phase", Value: 3}}}
	if r := checktest.Judged(t, PhaseC, atC); r.Status != check.Pass || r.Message != "buzz_fencing_phase = 3: phase C" {
		t.Fatalf("phase C: %s %q", r.Status, r.Message)
	}
	stale := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{{Name: "buzz_fencing_phase", Value: 2}}}
	if r := phaseC(stale); r.Status != check.Fail || r.Message != "buzz_fencing_phase = 2, the pod runs phase C" {
		t.Fatalf("stale phase: %s %q", r.Status, r.Message)
	}
	if r := phaseC(history.TelemetryScrape{Status: 200}); r.Status != check.Fail {
		t.Fatalf("no gauge: %s", r.Status)
	}
}

func TestSumAndBy(t *testing.T) {
	s := []history.TelemetrySample{
		{Name: "ops", Labels: map[string]string{"node": "a", "slot": "1"}, Value: 2},
		{Name: "ops", Labels: map[string]string{"node": "b", "slot": "1"}, Value: 3},
		{Name: "ops", Labels: map[string]string{"node": "a", "slot": "2"}, Value: 5},
		{Name: "gaps", Labels: map[string]string{"node": "a"}, Value: 7},
	}
	if got := Sum(s, "ops", map[string]string{"node": "a"}); got != 7 {
		t.Errorf("Sum(ops, node=a) = %v, want 7", got)
	}
	if got := By(s, "ops", "slot", nil); !reflect.DeepEqual(got, map[string]float64{"1": 5, "2": 5}) {
		t.Errorf("By(ops, slot) = %v", got)
	}
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: a stored three-argument
// TelemetryExposed call and a two-argument TelemetryRedirects call decode
// positionally into their input structs.
func TestTelemetryCheckersReplay(t *testing.T) {
	scrape := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{{Name: "ops", Labels: map[string]string{"node": "x:1"}, Value: 1}}}
	r := Exposed.Judge(Exposure{Scrape: scrape, Required: []string{"ops"}, Nodes: map[string]bool{"a:1": true}})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "telemetry/exposed" {
		t.Fatalf("Judge = %+v", r)
	}
	raw, err := json.Marshal(scrape)
	if err != nil {
		t.Fatal(err)
	}
	old := *r.Call
	old.Checker = "TelemetryExposed"
	old.Input = []json.RawMessage{raw, json.RawMessage(`["ops"]`), json.RawMessage(`{"a:1":true}`)}
	again, err := check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored three-argument call = %+v, %v; want %+v", again, err, r)
	}

	tallies := []RedirectTally{{Scope: "pinned", Counted: 0, Observed: 4, ServerSent: 4, ServerExact: true}}
	r = Redirects.Judge(RedirectRun{Tallies: tallies, MinObserved: 1})
	if r.Status != check.Fail || r.Call.Checker != "telemetry/redirects" {
		t.Fatalf("Judge = %+v", r)
	}
	old = *r.Call
	old.Checker = "TelemetryRedirects"
	old.Input = []json.RawMessage{json.RawMessage(`[{"Scope":"pinned","Counted":0,"Observed":4,"ServerSent":4,"ServerExact":true}]`), json.RawMessage("1")}
	again, err = check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored two-argument call = %+v, %v; want %+v", again, err, r)
	}
}
