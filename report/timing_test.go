package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/report"
)

// Timing comes from the suites' reports: per row the summed time of its
// specs, per scenario slowest first, and the suites' sum against the run's
// wall time; the terminal and the Markdown meta show them.
func TestTiming(t *testing.T) {
	slow := spec("slow", types.SpecStatePassed, []string{"axioms", "errors"},
		entry(report.Check{Row: report.RowAxioms, Column: report.ColumnErrors, Scenario: "axioms/slow", Status: report.StatusPass, Controls: []report.Control{ok}}))
	slow.RunTime = 3 * time.Second
	fast := spec("fast", types.SpecStatePassed, []string{"axioms", "silently-wrong"},
		entry(report.Check{Row: report.RowAxioms, Column: report.ColumnSilentlyWrong, Scenario: "axioms/fast", Status: report.StatusPass, Controls: []report.Control{ok}}))
	fast.RunTime = time.Second
	reg := spec("registry", types.SpecStatePassed, []string{"registry", "errors"})
	reg.RunTime = 2 * time.Second
	reports := []types.Report{
		{SuiteDescription: "axioms", RunTime: 5 * time.Second, SpecReports: types.SpecReports{fast, slow}},
		{SuiteDescription: "registry", RunTime: 3 * time.Second, SpecReports: types.SpecReports{reg}},
	}
	card, err := report.FromGinkgo(decoded(t, reports), report.Meta{Duration: report.Duration(10 * time.Second), Rows: []report.RowID{report.RowAxioms}})
	if err != nil {
		t.Fatal(err)
	}
	tm := card.Meta.Timing
	if tm == nil || tm.Suites != report.Duration(8*time.Second) || tm.Rows[report.RowAxioms] != report.Duration(4*time.Second) || tm.Rows[report.RowRegistry] != report.Duration(2*time.Second) {
		t.Fatalf("timing %+v", tm)
	}
	if len(tm.Scenarios) != 3 || !strings.Contains(tm.Scenarios[0].Scenario, "slow") || !strings.Contains(tm.Scenarios[2].Scenario, "fast") {
		t.Errorf("scenarios not slowest first: %+v", tm.Scenarios)
	}
	if r := card.Meta.SumWallRatio(); r != 0.8 {
		t.Errorf("sum/wall %v, want 0.8", r)
	}
	var term, md bytes.Buffer
	_ = report.WriteTerminal(&term, card, false)
	_ = report.WriteMarkdown(&md, card)
	for _, want := range []string{"time: suites 8s of 10s wall (sum/wall 0.80)", "       3s  slow", "axioms  pass 1       pass 1          4s"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	if !strings.Contains(md.String(), "**Time:** suites 8s of 10s wall (sum/wall 0.80)") {
		t.Errorf("markdown lacks the time line:\n%s", md.String())
	}
}
