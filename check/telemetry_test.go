package check

import (
	"testing"

	"github.com/slotgate/slotgate/history"
)

func TestTelemetryExposed(t *testing.T) {
	nodes := map[string]bool{"127.0.0.1:1": true}
	good := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{
		{Name: "ops", Labels: map[string]string{"node": "127.0.0.1:1", "slot": "42"}, Value: 3},
		{Name: "phase", Value: 3},
	}}
	if r := TelemetryExposed(good, []string{"ops", "phase"}, nodes); r.Status != Pass {
		t.Fatalf("good scrape: %s %s", r.Status, r.Message)
	}
	if r := TelemetryExposed(good, []string{"ops", "phase", "gaps"}, nodes); r.Status != Fail {
		t.Fatalf("missing family: %s %s", r.Status, r.Message)
	}
	if r := TelemetryExposed(history.TelemetryScrape{Status: 500, Err: "collect: boom"}, nil, nodes); r.Status != Fail {
		t.Fatalf("failed scrape: %s %s", r.Status, r.Message)
	}
	unknownNode := good
	unknownNode.Samples = append([]history.TelemetrySample{{Name: "ops", Labels: map[string]string{"node": "unknown", "slot": "16384"}, Value: 1}}, good.Samples...)
	if r := TelemetryExposed(unknownNode, []string{"ops"}, nodes); r.Status != Fail {
		t.Fatalf("bad labels: %s %s", r.Status, r.Message)
	}
}

func TestTelemetryAgrees(t *testing.T) {
	good := TelemetryAgreement{
		MinOps: 10,
		Nodes: []TelemetryNodeCount{
			{Node: "a", Command: "incr", Sent: 12, ServerErrors: 2, Unknown: 1, Calls: 11, Failed: 2},
			{Node: "b", Command: "get", Sent: 5, Redirected: 1, Calls: 4, Rejected: 1},
		},
		Slots:    []TelemetrySlotKeys{{Slot: 7, ClientSets: 4, ServerKeys: 4}},
		Channels: []TelemetryChannel{{Channel: "c", ClientMessages: 9, Delivered: 9, ClientGaps: 1, ServerDrops: 1}},
	}
	if r := TelemetryAgrees(good); r.Status != Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	misattributed := good
	misattributed.Nodes = []TelemetryNodeCount{{Node: "a", Command: "incr", Sent: 6, Calls: 11, Failed: 2}, good.Nodes[1]}
	if r := TelemetryAgrees(misattributed); r.Status != Fail {
		t.Fatalf("node count off: %s %s", r.Status, r.Message)
	}
	wrongSlot := good
	wrongSlot.Slots = []TelemetrySlotKeys{{Slot: 7, ClientSets: 0, ServerKeys: 4}, {Slot: 9, ClientSets: 4}}
	if r := TelemetryAgrees(wrongSlot); r.Status != Fail {
		t.Fatalf("slot keys off: %s %s", r.Status, r.Message)
	}
	noGaps := good
	noGaps.Channels = []TelemetryChannel{{Channel: "c", ClientMessages: 9, Delivered: 9, ServerDrops: 1}}
	if r := TelemetryAgrees(noGaps); r.Status != Fail {
		t.Fatalf("gap not counted: %s %s", r.Status, r.Message)
	}
	lostDelivery := good
	lostDelivery.Channels = []TelemetryChannel{{Channel: "c", ClientMessages: 8, Delivered: 9, Unknown: 2, ClientGaps: 1, ServerDrops: 1}}
	if r := TelemetryAgrees(lostDelivery); r.Status != Fail {
		t.Fatalf("delivery not counted: %s %s", r.Status, r.Message)
	}
	idle := good
	idle.MinOps = 1000
	if r := TelemetryAgrees(idle); r.Status != Unknown {
		t.Fatalf("too little traffic: %s %s", r.Status, r.Message)
	}
}

func TestTelemetryHotSlot(t *testing.T) {
	good := TelemetryHot{
		Skewed:       5,
		ClientBySlot: map[int]float64{5: 50, 1: 10, 2: 10},
		ClientNode:   map[int]string{5: "a", 1: "b", 2: "c"},
		ServerOwner:  "a",
		ServerCalls:  map[string]float64{"a": 55, "b": 10, "c": 10},
		MinShare:     0.3,
	}
	if r := TelemetryHotSlot(good); r.Status != Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	spread := good
	spread.ClientBySlot = map[int]float64{11: 6, 12: 5, 13: 5, 1: 10, 2: 10}
	if r := TelemetryHotSlot(spread); r.Status != Fail {
		t.Fatalf("hot tag spread over slots: %s %s", r.Status, r.Message)
	}
	wrongNode := good
	wrongNode.ClientNode = map[int]string{5: "b"}
	if r := TelemetryHotSlot(wrongNode); r.Status != Fail {
		t.Fatalf("wrong node: %s %s", r.Status, r.Message)
	}
}

func TestTelemetryRedirects(t *testing.T) {
	good := []TelemetryRedirectTally{
		{Scope: "pinned slot 3", Counted: 4, Observed: 4, ServerSent: 4, ServerExact: true},
		{Scope: "cluster", Counted: 2, Observed: 2, ServerSent: 90},
	}
	if r := TelemetryRedirects(good, 1); r.Status != Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	dropped := []TelemetryRedirectTally{{Scope: "pinned slot 3", Counted: 0, Observed: 4, ServerSent: 4, ServerExact: true}}
	if r := TelemetryRedirects(dropped, 1); r.Status != Fail {
		t.Fatalf("dropped: %s %s", r.Status, r.Message)
	}
	overcount := []TelemetryRedirectTally{{Scope: "pinned", Counted: 5, Observed: 5, ServerSent: 4, ServerExact: true}}
	if r := TelemetryRedirects(overcount, 1); r.Status != Fail {
		t.Fatalf("more than sent: %s %s", r.Status, r.Message)
	}
	if r := TelemetryRedirects(nil, 1); r.Status != Unknown {
		t.Fatalf("none observed: %s %s", r.Status, r.Message)
	}
}
