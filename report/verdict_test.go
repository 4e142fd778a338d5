package report_test

import (
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

var (
	ok   = report.Control{Name: "M1", Kind: report.ControlVariant, Why: "mutant", Caught: true, Exercised: true}
	miss = report.Control{Name: "M2", Kind: report.ControlVariant, Why: "mutant", Caught: false, Exercised: true}
	// self is a caught self-test (the checker on an edited history).
	self = report.Control{Name: "planted", Kind: report.ControlSelfTest, Why: "planted loss", Caught: true, Exercised: true}
	// idle is a variant whose bad variant never produced traffic.
	idle = report.Control{Name: "idle", Kind: report.ControlVariant, Why: "mutant", Caught: false, Exercised: false}
	// legacy is an unclassified control (no kind), as results files
	// written before controls had kinds carry.
	legacy = report.Control{Name: "legacy", Why: "mutant", Caught: true, Exercised: true}
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
		{"inconclusive stays inconclusive", chk(report.StatusInconclusive, ok), report.StatusInconclusive},
		{"self-tests alone are blind", chk(report.StatusPass, self, self), report.StatusBlind},
		{"a variant and a self-test pass", chk(report.StatusPass, ok, self), report.StatusPass},
		{"an uncaught self-test is blind even beside a variant", chk(report.StatusPass, ok, report.Control{Name: "s", Kind: report.ControlSelfTest, Exercised: true}), report.StatusBlind},
		{"an unexercised variant does not count", chk(report.StatusPass, idle, self), report.StatusBlind},
		{"an unexercised variant is not uncaught", chk(report.StatusPass, ok, idle), report.StatusPass},
		{"an unexercised caught variant does not count", chk(report.StatusPass, report.Control{Name: "v", Kind: report.ControlVariant, Caught: true}), report.StatusBlind},
		{"an unclassified control is no variant", chk(report.StatusPass, legacy), report.StatusBlind},
		{"a made-up kind is no variant", chk(report.StatusPass, report.Control{Name: "v", Kind: "real", Caught: true, Exercised: true}), report.StatusBlind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.check.Verdict(); got != tc.want {
				t.Errorf("Verdict() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestReasonNamesKinds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check report.Check
		want  string
	}{
		{"one variant", chk(report.StatusPass, ok), "its variant was caught"},
		{"two variants", chk(report.StatusPass, ok, ok), "all 2 variants caught"},
		{"mixed", chk(report.StatusPass, ok, self), "2 controls caught: 1 variant, 1 self-test"},
		{"idle named", chk(report.StatusPass, ok, idle), "its variant was caught (1 control not exercised)"},
		{"self-tests only", chk(report.StatusPass, self), "no real bad variant caught (1 self-test)"},
		{"idle only", chk(report.StatusPass, self, idle), "no real bad variant caught (1 self-test, 1 control not exercised)"},
		{"unclassified", chk(report.StatusPass, legacy), "no real bad variant caught (1 unclassified control)"},
		{"uncaught", chk(report.StatusPass, ok, miss), "control M2 not caught"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.check.Reason(); got != tc.want {
				t.Errorf("Reason() = %q, want %q", got, tc.want)
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
		{"a check resting on self-tests makes the cell blind", []report.Check{pass, chk(report.StatusPass, self)}, report.StatusBlind},
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

func TestPartialCell(t *testing.T) {
	pass := chk(report.StatusPass, ok)
	skipped := []report.Skipped{{Row: report.RowFencingScripts, Column: report.ColumnSilentlyWrong, Scenario: "x/partition", Reason: "no bus control"}}
	s := report.New(report.Meta{Skipped: skipped}, []report.Check{pass, {Row: report.RowFencingScripts, Column: report.ColumnErrors, Scenario: "e", Status: report.StatusPass, Controls: []report.Control{ok}}})
	c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong)
	if c.Status != report.StatusPartial || !strings.Contains(c.Summary, "no bus control") {
		t.Fatalf("cell = %s %q, want partial naming the reason", c.Status, c.Summary)
	}
	if pass, reasons := s.Gate(); !pass {
		t.Errorf("the plain gate judges what ran: Gate() = %v %q", pass, reasons)
	}
	if h := s.Headline(); !strings.Contains(h, "1 partial") {
		t.Errorf("Headline() = %q, want the partial cell named", h)
	}
	if complete, reasons := s.Complete(); complete || !strings.Contains(strings.Join(reasons, "\n"), "fencing-scripts/silently-wrong: partial") {
		t.Errorf("--require-all must refuse a partial cell: Complete() = %v %q", complete, reasons)
	}
	// A partial cell never hides a failure or blindness.
	s = report.New(report.Meta{Skipped: skipped}, []report.Check{chk(report.StatusPass, self)})
	if c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong); c.Status != report.StatusBlind {
		t.Errorf("blind cell with a skipped scenario = %s, want blind", c.Status)
	}
	// An unrecognised check status is blind, in the cell too.
	s = report.New(report.Meta{}, []report.Check{chk("ok", ok)})
	if c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong); c.Status != report.StatusBlind {
		t.Errorf("cell of an unrecognised status = %s, want blind", c.Status)
	}
}
