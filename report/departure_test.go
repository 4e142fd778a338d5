package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// TestDeparturesListed: a run with a Marconi row lists the spec departures
// (the expiry decision among them) in results.json and report.html; a run
// without one lists none.
func TestDeparturesListed(t *testing.T) {
	s := report.New(report.Meta{Rows: []report.RowID{report.RowMarconiStageFlags}}, nil)
	if len(s.Departures) == 0 {
		t.Fatal("no departures for a Marconi run")
	}
	for _, d := range s.Departures {
		if d.Spec == "" || d.Departure == "" || d.Reason == "" || len(d.Rows) == 0 {
			t.Errorf("incomplete departure %+v", d)
		}
	}
	out := renderHTML(t, s)
	for _, want := range []string{"Departures from the spec", "No pubsub subscriber anywhere", "sweeper"} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, `"`, "&#34;")) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Departures) != len(s.Departures) {
		t.Errorf("results.json round trip: %d departures, want %d", len(back.Departures), len(s.Departures))
	}
	other := report.New(report.Meta{Rows: []report.RowID{report.RowRouting}}, nil)
	for _, d := range other.Departures {
		if strings.HasPrefix(d.Spec, "002") {
			t.Errorf("a routing-only run lists a Marconi departure: %s", d.Spec)
		}
	}
	// Spec 000's stand-in is named in every run of a relay row.
	if len(other.Departures) == 0 || !strings.Contains(other.Departures[0].Departure, "Go stand-in") {
		t.Errorf("a routing-only run does not say the relay is a Go stand-in: %+v", other.Departures)
	}
}
