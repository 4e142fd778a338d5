package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// An external run: protocol ran and passed; fencing-scripts was
// requested but needs topology control; registry was not requested and
// cannot run either. Every renderer says why each did not run; the
// requested one fails the gate, the unrequested one does not.
func notRunScorecard() *report.Scorecard {
	meta := report.Meta{
		Rows:     []report.RowID{report.RowProtocol, report.RowFencingScripts},
		Provider: "external",
		NotRun: map[report.RowID]string{
			report.RowFencingScripts: "restarts a primary",
			report.RowRegistry:       "fails primaries over",
		},
	}
	return report.New(meta, []report.Check{
		passing(report.RowProtocol, report.ColumnErrors),
		passing(report.RowProtocol, report.ColumnSilentlyWrong),
	})
}

func TestNotRunReasons(t *testing.T) {
	s := notRunScorecard()
	for _, col := range report.Columns {
		if c := s.Cell(report.RowFencingScripts, col); c.Status != report.StatusNotRun || c.Summary != "not run: restarts a primary" {
			t.Errorf("fencing-scripts/%s: %s %q", col, c.Status, c.Summary)
		}
		if c := s.Cell(report.RowProtocol, col); c.Status != report.StatusPass || strings.HasPrefix(c.Summary, "not run") {
			t.Errorf("protocol/%s: %s %q", col, c.Status, c.Summary)
		}
	}
	pass, reasons := s.Gate()
	if pass || len(reasons) != 2 || !strings.Contains(reasons[0], "fencing-scripts/errors: not-run — not run: restarts a primary") {
		t.Errorf("gate %v %q: want a failure naming the requested row's reason", pass, reasons)
	}

	var term, md, html, js bytes.Buffer
	if err := report.WriteTerminal(&term, s, false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, s); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"terminal": {"registry", "(not run: fails primaries over)", "not run: restarts a primary"},
		"markdown": {"Registry index `registry` (not run: fails primaries over)", "not run: restarts a primary"},
		"html":     {"not run: fails primaries over", "not run: restarts a primary"},
		"json":     {`"not_run": {`, `"registry": "fails primaries over"`},
	} {
		out := map[string]string{"terminal": term.String(), "markdown": md.String(), "html": html.String(), "json": js.String()}[name]
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, out)
			}
		}
	}

	// slotgate report re-renders from results.json: the reasons survive.
	back, err := report.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if c := back.Cell(report.RowRegistry, report.ColumnErrors); c.Summary != "not run: fails primaries over" {
		t.Errorf("re-read results.json: registry summary %q", c.Summary)
	}
}

// A run that requested only what the target can run passes over those
// rows, lists the rest with their reasons, and does not read as a clearance.
func TestNotRunUnrequestedDoesNotGate(t *testing.T) {
	s := notRunScorecard()
	s.Meta.Rows = []report.RowID{report.RowProtocol}
	s = report.New(s.Meta, []report.Check{
		passing(report.RowProtocol, report.ColumnErrors),
		passing(report.RowProtocol, report.ColumnSilentlyWrong),
	})
	if pass, reasons := s.Gate(); !pass {
		t.Fatalf("gate failed: %q", reasons)
	}
	if h := s.Headline(); !strings.Contains(h, "not cleared") {
		t.Errorf("headline %q reads as a clearance", h)
	}
	var term bytes.Buffer
	if err := report.WriteTerminal(&term, s, false); err != nil {
		t.Fatal(err)
	}
	if out := term.String(); !strings.Contains(out, "fencing-scripts") || !strings.Contains(out, "(not run: restarts a primary)") {
		t.Errorf("terminal hides the unrequested not-run rows:\n%s", out)
	}
}
