package harness

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/report"
)

// Scores returns the Ginkgo labels of a spec scoring row/column, so
// `ginkgo --label-filter=<row>` and `--label-filter=silently-wrong` select it.
func Scores(row report.RowID, col report.Column) Labels {
	return Label(string(row), string(col))
}

// Control runs a checker's verdict on a known-bad variant: the control is
// caught when the checker said fail.
func Control(name, why string, r check.Result) report.Control {
	return report.Control{Name: name, Why: why, Caught: r.Status == check.Fail, Observed: r.Message}
}

// Variant is a negative control that ran a real bad variant (an
// implementation mutant, a naive client configuration, a bad server
// configuration) against real servers; caught when its result is Fail.
func Variant(name, why string, r check.Result) report.Control {
	c := Control(name, why, r)
	c.Kind = report.ControlVariant
	return c
}

// SelfTest is a negative control over an edited copy of the history: it
// proves the checker can fail, not that the row catches a real bug.
func SelfTest(name, why string, r check.Result) report.Control {
	c := Control(name, why, r)
	c.Kind = report.ControlSelfTest
	return c
}

// Check builds the report entry for one scored scenario.
func Check(row report.RowID, col report.Column, scenario string, r check.Result, ev report.Evidence, controls ...report.Control) report.Check {
	status := report.StatusPass
	switch r.Status {
	case check.Fail:
		status = report.StatusFail
	case check.Unknown:
		status = report.StatusUnknown
	case check.Inconclusive:
		status = report.StatusInconclusive
	}
	ev.Observed = append(ev.Observed, r.Observed...)
	if ev.Counterexample == "" {
		ev.Counterexample = r.Counterexample
	}
	return report.Check{Row: row, Column: col, Scenario: scenario, Status: status, Message: r.Message, Evidence: ev, Controls: controls}
}

// Record adds the check to the Ginkgo report (report.FromGinkgo reads it
// back) and asserts its verdict: a failing or blind check fails the spec.
// Only suites assert; this is the one assertion every row shares.
func Record(c report.Check) {
	GinkgoHelper()
	AddReportEntry(report.EntryName, c)
	Expect(c.Verdict()).To(Equal(report.StatusPass), describe(c))
}

func describe(c report.Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s %s: %s — %s", c.Row, c.Column, c.Scenario, c.Verdict(), c.Message)
	if c.Evidence.Counterexample != "" {
		fmt.Fprintf(&b, "\ncounterexample:\n%s", c.Evidence.Counterexample)
	}
	for _, ctl := range c.Controls {
		if !ctl.Caught {
			fmt.Fprintf(&b, "\nnegative control %q NOT caught (%s): %s", ctl.Name, ctl.Why, ctl.Observed)
		}
	}
	if len(c.Controls) == 0 {
		b.WriteString("\nno negative control: a checker that cannot fail is blind")
	}
	fmt.Fprintf(&b, "\nreplay: slotgate run --row %s --seed %d", c.Row, c.Evidence.Seed)
	return b.String()
}
