package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/report"
)

// An interrupted run: one cell finished and passed, one scenario was cut
// off after recording a failure caused by the teardown, and a requested row
// was never reached. Nothing is scored as a product failure, every renderer
// opens with "INTERRUPTED", and the results file keeps it.
func TestInterruptedRunIsNoVerdict(t *testing.T) {
	cutOff := spec("a2 crossslot", types.SpecStateInterrupted, []string{"axioms", "errors"},
		entry(report.Check{Row: report.RowAxioms, Column: report.ColumnErrors, Scenario: "axioms/a2/go-redis", Status: report.StatusFail, Message: "dial tcp: connection refused"}))
	cutOff.Failure = failure("interrupted by user")
	// Ginkgo's own skip after a failure in an ordered container is no
	// topology's skip.
	orderedSkip := spec("a4 ordered", types.SpecStateSkipped, []string{"axioms", "silently-wrong"})
	orderedSkip.Failure = failure("Spec skipped because an earlier spec in an ordered container failed")
	reports := []types.Report{{
		SuiteDescription:           "axioms",
		StartTime:                  t0,
		EndTime:                    t0.Add(10 * time.Second),
		SpecialSuiteFailureReasons: []string{"Interrupted by User"},
		SpecReports: types.SpecReports{
			spec("a1 slot math", types.SpecStatePassed, []string{"axioms", "silently-wrong"},
				entry(report.Check{Row: report.RowAxioms, Column: report.ColumnSilentlyWrong, Scenario: "axioms/a1", Status: report.StatusPass, Controls: []report.Control{ok}})),
			spec("a1 errors", types.SpecStatePassed, []string{"axioms", "errors"},
				entry(report.Check{Row: report.RowAxioms, Column: report.ColumnErrors, Scenario: "axioms/a1-errors", Status: report.StatusPass, Controls: []report.Control{ok}})),
			cutOff,
			spec("a4 publish", types.SpecStateSkipped, []string{"axioms", "silently-wrong"}),
			orderedSkip,
		},
	}}
	meta := report.Meta{Rows: []report.RowID{report.RowAxioms, report.RowRegistry}, Interrupted: &report.Interruption{Cause: "SIGHUP"}}
	card, err := report.FromGinkgo(decoded(t, reports), meta)
	if err != nil {
		t.Fatal(err)
	}
	check := func(card *report.Scorecard) {
		t.Helper()
		if c := card.Cell(report.RowAxioms, report.ColumnErrors); c.Status != report.StatusNotRun || !strings.Contains(c.Summary, "interrupted (SIGHUP) during") || !strings.Contains(c.Summary, "1 check finished") {
			t.Errorf("cut-off cell: %s — %s", c.Status, c.Summary)
		}
		if c := card.Cell(report.RowAxioms, report.ColumnSilentlyWrong); c.Status != report.StatusPass {
			t.Errorf("finished cell: %s — %s", c.Status, c.Summary)
		}
		if c := card.Cell(report.RowRegistry, report.ColumnErrors); !strings.Contains(c.Summary, "interrupted (SIGHUP) before it got here") {
			t.Errorf("unreached cell: %s — %s", c.Status, c.Summary)
		}
		if len(card.Meta.Skipped) != 0 {
			t.Errorf("Ginkgo's own skips listed as the topology's: %+v", card.Meta.Skipped)
		}
		if tally := card.Tally(); tally.Fail != 0 {
			t.Errorf("tally %+v: an interrupt is no product failure", tally)
		}
		if pass, _ := card.Gate(); pass {
			t.Error("an interrupted run passed its gate")
		}
	}
	check(card)

	var term, md, html, js bytes.Buffer
	if err := report.WriteTerminal(&term, card, false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, card); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, card); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&js, card); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"terminal": term.String(), "markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, "INTERRUPTED") || !strings.Contains(out, "SIGHUP") {
			t.Errorf("%s does not say the run was interrupted:\n%s", name, out)
		}
		if strings.Contains(strings.ToLower(out), "fail") && strings.Contains(out, "1 fail,") {
			t.Errorf("%s counts a failure:\n%s", name, out)
		}
	}
	if !strings.Contains(term.String(), "INTERRUPTED") || !strings.Contains(md.String(), "– interrupted") {
		t.Errorf("the cut-off cell is not shown as interrupted:\n%s\n%s", term.String(), md.String())
	}
	if !strings.Contains(js.String(), `"interrupted": {`) || !strings.Contains(js.String(), `"cause": "SIGHUP"`) {
		t.Errorf("results.json meta lacks the interruption:\n%s", js.String())
	}
	again, err := report.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	check(again)
}
