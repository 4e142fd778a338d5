package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func passing(row report.RowID, col report.Column) report.Check {
	return report.Check{Row: row, Column: col, Scenario: string(row) + "/ok", Status: report.StatusPass, Controls: []report.Control{ok}}
}

func TestGatePasses(t *testing.T) {
	s := report.New(report.Meta{}, []report.Check{
		passing(report.RowRouting, report.ColumnErrors),
		passing(report.RowRouting, report.ColumnSilentlyWrong),
	})
	pass, reasons := s.Gate()
	if !pass || len(reasons) != 0 {
		t.Fatalf("Gate() = %v, %q; want pass", pass, reasons)
	}
	if h := s.Headline(); !strings.HasPrefix(h, "PASS") {
		t.Errorf("Headline() = %q", h)
	}
}

func TestGateReasons(t *testing.T) {
	blind := passing(report.RowFencingScripts, report.ColumnSilentlyWrong)
	blind.Controls = []report.Control{{Name: "M1", Kind: report.ControlVariant, Why: "renew skips generation compare", Exercised: true}}
	failing := passing(report.RowRegistry, report.ColumnSilentlyWrong)
	failing.Status, failing.Message = report.StatusFail, "runtime r-7 missing\nmore detail"
	s := report.New(report.Meta{}, []report.Check{
		passing(report.RowFencingScripts, report.ColumnErrors),
		blind,
		passing(report.RowRegistry, report.ColumnErrors),
		failing,
		passing(report.RowRouting, report.ColumnErrors), // routing/silently-wrong not run
	})
	pass, reasons := s.Gate()
	want := []string{
		"fencing-scripts/silently-wrong: blind — control M1 not caught",
		"registry/silently-wrong: fail — registry/ok: runtime r-7 missing …",
		"routing/silently-wrong: not-run — no check scored this cell",
	}
	if pass || !slices.Equal(reasons, want) {
		t.Errorf("Gate() = %v,\n%q\nwant fail,\n%q", pass, reasons, want)
	}
	if got := s.Tally(); got != (report.Tally{Pass: 3, Fail: 1, Blind: 1, NotRun: 1}) {
		t.Errorf("Tally() = %+v", got)
	}
	if h := s.Headline(); h != "FAIL — 1 fail, 1 blind, 1 not run of 6 requested cells" {
		t.Errorf("Headline() = %q", h)
	}
}

func TestGateHoldsRequestedRows(t *testing.T) {
	s := report.New(report.Meta{Rows: []report.RowID{report.RowRouting, report.RowTelemetry}}, []report.Check{
		passing(report.RowRouting, report.ColumnErrors),
		passing(report.RowRouting, report.ColumnSilentlyWrong),
		// A failing check of an unrequested row shows but does not gate.
		{Row: report.RowAxioms, Column: report.ColumnErrors, Status: report.StatusFail},
	})
	pass, reasons := s.Gate()
	want := []string{
		"telemetry/errors: not-run — no check scored this cell",
		"telemetry/silently-wrong: not-run — no check scored this cell",
	}
	if pass || !slices.Equal(reasons, want) {
		t.Errorf("Gate() = %v, %q; want fail, %q", pass, reasons, want)
	}
}

func TestGateFailsEmptyRun(t *testing.T) {
	pass, reasons := report.New(report.Meta{}, nil).Gate()
	if pass || !slices.Equal(reasons, []string{"run: no row was scored"}) {
		t.Errorf("Gate() = %v, %q", pass, reasons)
	}
}

func TestGateFailsUnknownRowsAndProblems(t *testing.T) {
	s := report.New(report.Meta{Rows: []report.RowID{report.RowRouting, "no-such-row"}}, []report.Check{
		passing(report.RowRouting, report.ColumnErrors),
		passing(report.RowRouting, report.ColumnSilentlyWrong),
		passing("typo-row", report.ColumnErrors),
		passing(report.RowRouting, "loudly"),
	})
	s.Problems = append(s.Problems, "BeforeSuite failed")
	pass, reasons := s.Gate()
	if pass || len(reasons) != 4 {
		t.Fatalf("Gate() = %v, %q; want 4 reasons", pass, reasons)
	}
	for i, prefix := range []string{"run: BeforeSuite failed", "typo-row/errors: unscored — check typo-row/ok", "routing/loudly: unscored", "no-such-row: requested but not in the catalogue"} {
		if !strings.HasPrefix(reasons[i], prefix) {
			t.Errorf("reason %d = %q, want prefix %q", i, reasons[i], prefix)
		}
	}
	if len(s.Unscored) != 2 {
		t.Errorf("Unscored = %d checks, want 2", len(s.Unscored))
	}
}
