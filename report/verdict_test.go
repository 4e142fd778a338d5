package report_test

import (
	"testing"

	"github.com/slotgate/slotgate/report"
)

var (
	ok   = report.Control{Name: "M1", Why: "mutant", Caught: true}
	miss = report.Control{Name: "M2", Why: "mutant", Caught: false}
)

func chk(status report.Status, controls ...report.Control) report.Check {
	return report.Check{
		Row: report.RowFencingScripts, Column: report.ColumnSilentlyWrong,
		Scenario: "fencing-scripts/x", Status: status, Controls: controls,
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check report.Check
		want  report.Status
	}{
		{"pass with caught controls", chk(report.StatusPass, ok, ok), report.StatusPass},
		{"pass with an uncaught control is blind", chk(report.StatusPass, ok, miss), report.StatusBlind},
		{"pass with no control is blind", chk(report.StatusPass), report.StatusBlind},
		{"unknown is blind", chk(report.StatusUnknown, ok), report.StatusBlind},
		{"blind stays blind", chk(report.StatusBlind, ok), report.StatusBlind},
		{"fail is fail", chk(report.StatusFail, ok), report.StatusFail},
		{"fail beats an uncaught control", chk(report.StatusFail, miss), report.StatusFail},
		{"empty status is never pass", chk("", ok), report.StatusBlind},
		{"made-up status is never pass", chk("ok", ok), report.StatusBlind},
		{"not-run as a check status is blind", chk(report.StatusNotRun, ok), report.StatusBlind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.check.Verdict(); got != tc.want {
				t.Errorf("Verdict() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCellFolding(t *testing.T) {
	pass := chk(report.StatusPass, ok)
	for _, tc := range []struct {
		name   string
		checks []report.Check
		want   report.Status
	}{
		{"no checks is not-run", nil, report.StatusNotRun},
		{"all pass", []report.Check{pass, pass}, report.StatusPass},
		{"one uncaught control makes the cell blind", []report.Check{pass, chk(report.StatusPass, miss)}, report.StatusBlind},
		{"one check without controls makes the cell blind", []report.Check{pass, chk(report.StatusPass)}, report.StatusBlind},
		{"unknown makes the cell blind", []report.Check{pass, chk(report.StatusUnknown, ok)}, report.StatusBlind},
		{"fail beats blind", []report.Check{chk(report.StatusPass, miss), chk(report.StatusFail, ok), pass}, report.StatusFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := report.New(report.Meta{}, tc.checks)
			c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong)
			if c.Status != tc.want {
				t.Errorf("cell status = %s, want %s (summary %q)", c.Status, tc.want, c.Summary)
			}
			if other := s.Cell(report.RowFencingScripts, report.ColumnErrors); other.Status != report.StatusNotRun {
				t.Errorf("errors column = %s, want not-run", other.Status)
			}
		})
	}
}

func TestCellOrdersWorstFirst(t *testing.T) {
	a := chk(report.StatusPass, ok)
	a.Scenario = "a"
	b := chk(report.StatusFail, ok)
	b.Scenario = "b"
	c := chk(report.StatusPass)
	c.Scenario = "c"
	s := report.New(report.Meta{}, []report.Check{a, c, b})
	var got []string
	for _, ch := range s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong).Checks {
		got = append(got, ch.Scenario)
	}
	if want := "b c a"; join(got) != want {
		t.Errorf("order = %q, want %q", join(got), want)
	}
}

func TestScorecardCoversCatalogue(t *testing.T) {
	s := report.New(report.Meta{}, nil)
	if got, want := len(s.Cells), len(report.Catalogue)*len(report.Columns); got != want {
		t.Fatalf("%d cells, want %d", got, want)
	}
	for _, r := range report.Catalogue {
		for _, col := range report.Columns {
			if c := s.Cell(r.ID, col); c == nil || c.Row != r.ID || c.Column != col {
				t.Errorf("Cell(%s, %s) = %+v", r.ID, col, c)
			}
		}
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}
