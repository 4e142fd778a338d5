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
