package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/recheck"
	"github.com/slotgate/slotgate/report"
)

// Scores returns the Ginkgo labels of a spec scoring row/column, so
// `ginkgo --label-filter=<row>` and `--label-filter=silently-wrong` select it.
func Scores(row report.RowID, col report.Column) Labels {
	return Label(string(row), string(col))
}

// Variant is a negative control that ran a real bad variant (an
// implementation mutant, a naive client configuration, a bad server
// configuration) against real servers; caught when its result is Fail.
// Only a caught, exercised variant proves the check can fail on a real bug.
func Variant(name, why string, r check.Result) report.Control {
	return control(report.ControlVariant, name, why, r)
}

// SelfTest is a negative control over an edited copy of the history (a
// planted loss, a doctored ledger): it proves the checker can fail, not that
// the row catches a real bug, so it never makes a check non-blind alone.
func SelfTest(name, why string, r check.Result) report.Control {
	return control(report.ControlSelfTest, name, why, r)
}

// control builds a control and decides whether it was exercised
// (recheck.Control: the same code rebuilds it offline).
func control(kind report.ControlKind, name, why string, r check.Result) report.Control {
	return recheck.Control(kind, name, why, r)
}

// NotExercised marks c as not exercised: its bad variant did not run as
// designed (no traffic reached the mutant, the premise it models did not
// occur), so it proves nothing either way.
func NotExercised(c report.Control, why string) report.Control {
	return recheck.NotExercised(c, why)
}

// Premise keeps c as judged when ok holds and marks it not exercised when it
// does not: ok is the premise the bad variant models (the redirect met, the
// fault that happened, the server's own refusal), without which the
// variant's verdict says nothing about the checker either way. A control
// caught only with its premise met is never counted caught without it, and
// an unmet premise never makes the cell blind.
func Premise(c report.Control, ok bool, why string) report.Control {
	if ok || !c.Exercised {
		return c
	}
	return NotExercised(c, why)
}

// ErrorsOf counts the outcomes that failed with the error kind kind (the
// recorded client.KindOf of their error).
func ErrorsOf(outcomes []history.OpOutcome, kind client.ErrorKind) int {
	n := 0
	for _, o := range outcomes {
		if o.ErrKind == string(kind) {
			n++
		}
	}
	return n
}

// Check builds the report entry for one scored scenario (recheck.Check:
// the same code rebuilds it offline from the stored history).
func Check(row report.RowID, col report.Column, scenario string, r check.Result, ev report.Evidence, controls ...report.Control) report.Check {
	return recheck.Check(row, col, scenario, r, ev, controls...)
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
		if ctl.Exercised && !ctl.Caught {
			fmt.Fprintf(&b, "\nnegative control %q (%s) NOT caught (%s): %s", ctl.Name, kindOf(ctl), ctl.Why, ctl.Observed)
		}
	}
	if len(c.Controls) == 0 {
		b.WriteString("\nno negative control: a checker that cannot fail is blind")
	} else if c.Status == report.StatusPass && c.VariantsCaught() == 0 {
		fmt.Fprintf(&b, "\n%s: only a real bad variant run against real servers proves the row can fail", c.Reason())
	}
	fmt.Fprintf(&b, "\nreplay: slotgate run --row %s --seed %d", c.Row, c.Evidence.Seed)
	return b.String()
}

func kindOf(c report.Control) string {
	if c.Kind == "" {
		return "unclassified"
	}
	return string(c.Kind)
}

// WaitAtMost polls cond every poll until it holds, ctx ends or limit passed,
// and says whether it held: a bounded observation that lets a workload adapt
// to load (wait for the evidence it needs) without ever stalling a run.
func WaitAtMost(ctx context.Context, limit, poll time.Duration, cond func() bool) bool {
	for until := time.Now().Add(limit); ; time.Sleep(poll) {
		if cond() {
			return true
		}
		if ctx.Err() != nil || !time.Now().Before(until) {
			return false
		}
	}
}
