package harness

import (
	"testing"

	"github.com/slotgate/slotgate/report"
)

// Every row the external table names is a catalogue row, and a row it does
// not name never runs against an external target.
func TestExternalNotRunReason(t *testing.T) {
	for id := range externalNotRun {
		if _, ok := report.Lookup(id); !ok {
			t.Errorf("external table names %q, which the catalogue does not have", id)
		}
	}
	if r := ExternalNotRunReason(report.RowProtocol); r != "" {
		t.Errorf("protocol needs no topology control, got reason %q", r)
	}
	if r := ExternalNotRunReason(report.RowFailureDrills); r == "" {
		t.Error("failure-drills kills primaries yet would run on an external target")
	}
	if r := ExternalNotRunReason("some-new-row"); r == "" {
		t.Error("an unclassified row would run on an external target")
	}
}
