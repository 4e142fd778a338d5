package harness

import (
	"strings"
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

// A runnable row still needs the endpoints its suite would have started, and
// credentials its suite passes to its clients; every row that can run has
// its needs declared.
func TestExternalReason(t *testing.T) {
	for id, reason := range externalNotRun {
		if _, ok := externalNeeds[id]; reason == "" && !ok {
			t.Errorf("%s runs on an external target but declares no endpoints it needs", id)
		}
	}
	for id, reason := range externalNotRun {
		if reason == "" && !externalSecured[id] {
			t.Errorf("%s runs on an external target but its suite's pools do not take the target's credentials (harness.Secure)", id)
		}
	}
	full := ExternalTarget{Cluster: true, Standalone: true, Postgres: true}
	cases := []struct {
		row    report.RowID
		target ExternalTarget
		want   string // "" = runs; else a fragment of the reason
	}{
		{report.RowProtocol, full, ""},
		{report.RowProtocol, ExternalTarget{Standalone: true}, "--endpoint"},
		{report.RowLocality, full, ""},
		{report.RowLocality, ExternalTarget{Cluster: true}, "--standalone"},
		{report.RowLocality, ExternalTarget{Standalone: true, Secured: true}, ""},
		{report.RowProtocol, ExternalTarget{Cluster: true, Secured: true}, ""},
		{report.RowMarconiRestart, ExternalTarget{Cluster: true, Postgres: true, Secured: true}, ""},
		{report.RowMarconiAuditCompleteness, ExternalTarget{Cluster: true}, "--postgres"},
		{report.RowMarconiRestart, ExternalTarget{}, "--endpoint host:port) and PostgreSQL"},
		{report.RowFencingScripts, full, "restarts a primary"},
		{"some-new-row", full, "not yet classified"},
	}
	for _, c := range cases {
		got := ExternalReason(c.row, c.target)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("ExternalReason(%s, %+v) = %q, want %q", c.row, c.target, got, c.want)
		}
	}
}
