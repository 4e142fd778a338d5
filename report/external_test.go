package report_test

import (
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// Every catalogue row is classified for external targets, and a row the
// catalogue does not have never runs against one.
func TestExternalNotRunReason(t *testing.T) {
	for _, r := range report.Catalogue {
		if r.Suite != "" && r.External == nil {
			t.Errorf("%s is implemented but not classified for external targets", r.ID)
		}
	}
	if r := report.ExternalNotRunReason(report.RowProtocol); r != "" {
		t.Errorf("protocol needs no topology control, got reason %q", r)
	}
	if r := report.ExternalNotRunReason(report.RowFailureDrills); r == "" {
		t.Error("failure-drills kills primaries yet would run on an external target")
	}
	if r := report.ExternalNotRunReason("some-new-row"); r == "" {
		t.Error("an unclassified row would run on an external target")
	}
}

// A runnable row still needs the endpoints its suite would have started, and
// credentials its suite passes to its clients; every row that can run has
// its needs declared.
func TestExternalReason(t *testing.T) {
	for _, r := range report.Catalogue {
		if r.External != nil && r.External.NotRun == "" && len(r.External.Needs) == 0 {
			t.Errorf("%s runs on an external target but declares no endpoints it needs", r.ID)
		}
	}
	full := report.ExternalTarget{Cluster: true, Standalone: true, Postgres: true}
	cases := []struct {
		row    report.RowID
		target report.ExternalTarget
		want   string // "" = runs; else a fragment of the reason
	}{
		{report.RowProtocol, full, ""},
		{report.RowProtocol, report.ExternalTarget{Standalone: true}, "--endpoint"},
		{report.RowLocality, full, ""},
		{report.RowLocality, report.ExternalTarget{Cluster: true}, "--standalone"},
		{report.RowLocality, report.ExternalTarget{Standalone: true, Secured: true}, ""},
		{report.RowProtocol, report.ExternalTarget{Cluster: true, Secured: true}, ""},
		{report.RowMarconiRestart, report.ExternalTarget{Cluster: true, Postgres: true, Secured: true}, ""},
		{report.RowMarconiAuditCompleteness, report.ExternalTarget{Cluster: true}, "--postgres"},
		{report.RowMarconiRestart, report.ExternalTarget{}, "--endpoint host:port) and PostgreSQL"},
		{report.RowFencingScripts, full, "restarts a primary"},
		{"some-new-row", full, "not yet classified"},
	}
	for _, c := range cases {
		got := report.ExternalReason(c.row, c.target)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("ExternalReason(%s, %+v) = %q, want %q", c.row, c.target, got, c.want)
		}
	}
}
