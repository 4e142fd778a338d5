// Package recheck turns a checker's result into the report's check, once,
// for both the live run (suites/harness calls it) and the offline re-check
// (`slotgate check --from`): the same code builds the cell from a live
// result and from a result replayed on a stored history, so identical
// inputs give identical cells. It does no assertion and links no Ginkgo.
package recheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// Check builds the report entry for one scored scenario from its checker's
// result r, the suite's evidence and its negative controls.
func Check(row report.RowID, col report.Column, scenario string, r check.Result, ev report.Evidence, controls ...report.Control) report.Check {
	var status report.Status
	switch r.Status {
	case check.Pass:
		status = report.StatusPass
	case check.Fail:
		status = report.StatusFail
	case check.Unknown:
		status = report.StatusUnknown
	case check.Inconclusive:
		status = report.StatusInconclusive
	default:
		// A status no checker defines is never a pass (Verdict: blind).
		status = report.StatusUnknown
		r.Message = fmt.Sprintf("checker %s returned status %q: %s", r.Checker, r.Status, r.Message)
	}
	at := len(ev.Observed)
	// Clipped: a suite may pass one Evidence to two checks, and an append
	// into its spare capacity would overwrite the first check's lines with
	// the second's.
	ev.Observed = append(slices.Clip(ev.Observed), r.Observed...)
	fromResult := ev.Counterexample == ""
	if fromResult {
		ev.Counterexample = r.Counterexample
	}
	c := report.Check{Row: row, Column: col, Scenario: scenario, Status: status, Message: r.Message, Evidence: ev, Controls: controls,
		ObservedAt: at, ObservedLen: len(r.Observed), CexFromResult: fromResult}
	if r.Replayable() {
		c.Call = r.Call
	}
	return c
}

// Control builds a negative control from its checker's result and decides,
// once for every suite, whether the bad variant was exercised: its checker
// reached a verdict (pass or fail). A result that is unknown (too little
// traffic, the variant never ran) or inconclusive (its fault did not
// happen) says nothing about the checker, so the control is not exercised
// and does not count either way.
func Control(kind report.ControlKind, name, why string, r check.Result) report.Control {
	exercised := r.Status == check.Fail || r.Status == check.Pass
	c := report.Control{Name: name, Kind: kind, Why: why, Caught: r.Status == check.Fail, Exercised: exercised, Observed: r.Message}
	if r.Replayable() {
		c.Call = r.Call
	}
	if !exercised {
		c.Observed = fmt.Sprintf("not exercised (%s): %s", r.Status, r.Message)
	}
	c.ObservedBase = c.Observed
	return c
}

// NotExercised marks c as not exercised: its bad variant did not run as
// designed, so it proves nothing either way. The reason is kept (and
// persisted) so a replayed control is marked the same way.
func NotExercised(c report.Control, why string) report.Control {
	c.Exercised, c.Caught = false, false
	c.Observed = "not exercised: " + why + "; " + c.Observed
	c.ObservedBase = "not exercised: " + why + "; " + c.ObservedBase
	c.NotExercisedWhy = append(append([]string(nil), c.NotExercisedWhy...), why)
	return c
}

// Judgement is what the history keeps of c to rebuild it: the calls behind
// its result and its controls.
func Judgement(c report.Check) history.Judgement {
	j := history.Judgement{Row: string(c.Row), Column: string(c.Column), Scenario: c.Scenario, Call: c.Call,
		ObservedAt: c.ObservedAt, ObservedLen: c.ObservedLen, CounterexampleFromResult: c.CexFromResult}
	for _, ctl := range c.Controls {
		cj := history.ControlJudgement{Name: ctl.Name, Kind: string(ctl.Kind), Why: ctl.Why, Call: ctl.Call, NotExercised: ctl.NotExercisedWhy}
		if remark, ok := strings.CutPrefix(ctl.Observed, ctl.ObservedBase); ok {
			cj.Remark = remark
		} else {
			cj.Call = nil // the suite rewrote what the checker said
		}
		j.Controls = append(j.Controls, cj)
	}
	return j
}

// Persisted says whether a check can be rebuilt from its judgement: its
// result and every control were reached through registered checkers.
func Persisted(j history.Judgement) bool {
	if j.Call == nil {
		return false
	}
	for _, c := range j.Controls {
		if c.Call == nil {
			return false
		}
	}
	return true
}
