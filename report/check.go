package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// Status is the outcome of one check or one scorecard cell.
type Status string

const (
	// StatusPass: the check ran, its invariant held, and every negative
	// control was caught.
	StatusPass Status = "pass"
	// StatusFail: the check ran and saw the invariant break (or the loud
	// refusal that must happen did not).
	StatusFail Status = "fail"
	// StatusBlind: the check cannot be trusted to fail: a negative control
	// went uncaught, it had none, or the checker could not decide.
	StatusBlind Status = "blind"
	// StatusNotRun: nothing scored the cell.
	StatusNotRun Status = "not-run"
	// StatusUnknown is a check's own outcome when its assumptions did not
	// hold (too little traffic, an operation with unknown outcome). A cell
	// holding an unknown check is blind.
	StatusUnknown Status = "unknown"
	// StatusInconclusive: the harness could not inject or confirm the fault
	// the check judges ("inconclusive: fault X not confirmed (reason)"), so
	// the run says nothing about the implementation. It fails the gate and
	// names the harness; its controls do not matter.
	StatusInconclusive Status = "inconclusive"
	// StatusPartial is a cell whose checks all passed while some of its
	// scenarios were not run (the topology could not host them, e.g. a
	// partition on the local provider): not a pass — part of the row was
	// never tested. It passes the plain gate, which judges what ran (a run
	// on a smaller topology can still gate a change), and fails
	// --require-all, which demands the whole catalogue (Scorecard.Complete).
	StatusPartial Status = "partial"
)

// EntryName is the Ginkgo report-entry name a suite records a Check under;
// report.FromGinkgo collects entries of this name.
const EntryName = "slotgate.check"

// Check is one scored observation: a scenario run, judged by a checker, with
// the negative controls that prove the checker can fail. Suites record one
// per Ginkgo spec with AddReportEntry(EntryName, check).
type Check struct {
	Row    RowID  `json:"row"`
	Column Column `json:"column"`
	// Scenario is a slash path, e.g. "fencing-scripts/contention/go-redis".
	Scenario string `json:"scenario"`
	Status   Status `json:"status"`
	// Message says in one line what was found.
	Message  string    `json:"message"`
	Evidence Evidence  `json:"evidence"`
	Controls []Control `json:"controls,omitempty"`

	// Call is the checker call that reached Status and Message (a
	// check.Define'd checker's Judge), nil when the check was not judged
	// through one; with ObservedAt (where the result's Observed lines start in
	// Evidence.Observed), ObservedLen (how many) and CexFromResult (the
	// suite left the counterexample to the result) it is persisted in the
	// scenario's history, not in results.json, for `slotgate check --from`.
	Call          *history.Call `json:"-"`
	ObservedAt    int           `json:"-"`
	ObservedLen   int           `json:"-"`
	CexFromResult bool          `json:"-"`
}

// Control is a negative control: a known-bad variant the check must catch.
type Control struct {
	Name string `json:"name"`
	// Kind says what the control proves: a bad implementation, client or
	// server configuration run against real servers (ControlVariant), or a
	// history edited to test the checker alone (ControlSelfTest).
	Kind ControlKind `json:"kind,omitempty"`
	// Why names the bug the variant models (a spec mutant M1–M9, an
	// un-tagged key, a naive client default).
	Why string `json:"why"`
	// Caught is true when the checker flagged the bad variant.
	Caught bool `json:"caught"`
	// Exercised is true when the bad variant actually ran and produced
	// what the checker judges (its checker decided, pass or fail). A
	// control that was not exercised proves nothing either way: it neither
	// counts as caught nor makes the check blind. The harness decides it
	// (harness.Variant, harness.SelfTest), never a suite by hand.
	Exercised bool `json:"exercised"`
	// Observed is what the checker said about the bad variant.
	Observed string `json:"observed"`

	// Call is the checker call that judged the bad variant (persisted in
	// the history, see Check.Call); NotExercisedWhy is the live premise a
	// suite found unmet (harness.NotExercised), which no checker recomputes.
	Call            *history.Call `json:"-"`
	NotExercisedWhy []string      `json:"-"`
	// ObservedBase is Observed as the result made it; what a suite added
	// after it is persisted as the control's own remark.
	ObservedBase string `json:"-"`
}

// ControlKind classifies a negative control. The empty kind
// is an unclassified control: it never proves a check non-blind.
type ControlKind string

const (
	// ControlVariant: a real bad implementation, client configuration or
	// server configuration ran against real servers and was judged.
	ControlVariant ControlKind = "variant"
	// ControlSelfTest: the checker judged an edited copy of the history (a
	// planted loss, a dropped delivery): it proves the checker, not the row.
	ControlSelfTest ControlKind = "self-test"
)

// Evidence is what a reviewer needs to believe a check: what was seen, the
// counterexample when it failed, how long it took, and how to replay it.
type Evidence struct {
	Observed       []string            `json:"observed,omitempty"`
	Counterexample string              `json:"counterexample,omitempty"`
	Metrics        map[string]float64  `json:"metrics,omitempty"`
	Timings        map[string]Duration `json:"timings,omitempty"`
	Seed           int64               `json:"seed"`
	Topology       string              `json:"topology,omitempty"`
	Server         string              `json:"server,omitempty"`
	Client         string              `json:"client,omitempty"`
	Profile        string              `json:"profile,omitempty"`
	// Timing is the servers' failover timing when it was not the scaled
	// default ("production": their own failure-detection defaults).
	Timing   string   `json:"timing,omitempty"`
	Duration Duration `json:"duration,omitempty"`
	// Faults are the fault windows injected during the scenario.
	Faults []FaultWindow `json:"faults,omitempty"`
	// Timeline is the scenario's history in buckets (Bucketize): what
	// report.html draws for a scenario that injects faults.
	Timeline *Timeline `json:"timeline,omitempty"`
}

// FaultWindow records one injected fault as data, so the report can place it
// on the scenario's timeline. It is the history's window (history.FaultWindow,
// which fault.Apply records) in wall time: FaultWindowOf and On are the one
// conversion between them.
type FaultWindow struct {
	Fault  string    `json:"fault"`
	Target string    `json:"target"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Unhealthy says why the topology was not serving after the fault.
	Unhealthy string `json:"unhealthy,omitempty"`
}

// FaultWindowOf places a history window, on a scenario clock whose zero
// was began, in wall time.
func FaultWindowOf(w history.FaultWindow, began time.Time) FaultWindow {
	return FaultWindow{Fault: w.Fault, Target: w.Target, Start: began.Add(w.Start), End: began.Add(w.End), Unhealthy: w.Unhealthy}
}

// On places w on a scenario clock whose zero was began.
func (w FaultWindow) On(began time.Time) history.FaultWindow {
	return history.FaultWindow{Fault: w.Fault, Target: w.Target, Start: w.Start.Sub(began), End: w.End.Sub(began), Unhealthy: w.Unhealthy}
}

// Duration is a time.Duration that reads well in JSON ("1.25s").
type Duration time.Duration

// MarshalText renders d as time.Duration's String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses the form MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Verdict folds a check's own status and its controls into the status its
// cell shows. Only StatusPass can become pass: an unknown, blind or
// unrecognised status (a checker that wrote "ok" or nothing) is blind, never
// pass. A passing check is blind unless at least one exercised variant
// control (a real bad implementation, client or server configuration run
// against real servers) was caught, and when any exercised control — variant
// or self-test — went uncaught: a checker that cannot fail is a defect.
// Self-tests are evidence that the checker works, never proof that the row
// catches a real bug; controls that were not exercised do not
// count.
func (c Check) Verdict() Status {
	switch c.Status {
	case StatusFail:
		return StatusFail
	case StatusInconclusive:
		return StatusInconclusive
	case StatusPass:
	default:
		return StatusBlind
	}
	if len(c.Uncaught()) > 0 || c.VariantsCaught() == 0 {
		return StatusBlind
	}
	return StatusPass
}

// VariantsCaught counts the check's exercised variant controls that were
// caught: the proof that the row can fail on a real bug.
func (c Check) VariantsCaught() int {
	n := 0
	for _, ctl := range c.Controls {
		if ctl.Kind == ControlVariant && ctl.Exercised && ctl.Caught {
			n++
		}
	}
	return n
}

// Reason says in a few words why the check has its Verdict, so a reviewer
// need not re-derive it: the failure message, the controls that went
// uncaught, the missing variant, or how many controls were caught.
func (c Check) Reason() string {
	switch c.Status {
	case StatusFail, StatusBlind:
		return c.Message
	case StatusUnknown:
		return "undecided: " + c.Message
	case StatusInconclusive:
		return "inconclusive: " + c.Message
	case StatusPass:
	default:
		return fmt.Sprintf("status %q is not a check outcome", c.Status)
	}
	if len(c.Controls) == 0 {
		return "no negative control"
	}
	if uncaught := c.Uncaught(); len(uncaught) > 0 {
		return notCaught(uncaught)
	}
	if c.VariantsCaught() == 0 {
		return noVariant(c.Controls)
	}
	return caughtSummary(c.Controls)
}

// noVariant says why controls that were all caught still leave a check
// blind: none of them was a real bad variant that ran.
func noVariant(controls []Control) string {
	var self, idle, unclassified int
	for _, ctl := range controls {
		switch {
		case !ctl.Exercised:
			idle++
		case ctl.Kind == ControlSelfTest:
			self++
		case ctl.Kind != ControlVariant:
			unclassified++
		}
	}
	var parts []string
	if self > 0 {
		parts = append(parts, plural(self, "self-test"))
	}
	if idle > 0 {
		parts = append(parts, plural(idle, "control")+" not exercised")
	}
	if unclassified > 0 {
		parts = append(parts, plural(unclassified, "unclassified control"))
	}
	return "no real bad variant caught (" + strings.Join(parts, ", ") + ")"
}

// caughtSummary phrases the exercised controls a passing check caught, by
// kind ("its variant was caught", "3 controls caught: 2 variants, 1
// self-test"), and names any that did not run.
func caughtSummary(controls []Control) string {
	var variants, self, idle int
	for _, ctl := range controls {
		switch {
		case !ctl.Exercised:
			idle++
		case ctl.Kind == ControlVariant:
			variants++
		default:
			self++
		}
	}
	var out string
	switch {
	case variants == 1 && self == 0:
		out = "its variant was caught"
	case self == 0:
		out = fmt.Sprintf("all %d variants caught", variants)
	default:
		out = fmt.Sprintf("%s caught: %s, %s", plural(variants+self, "control"), plural(variants, "variant"), plural(self, "self-test"))
	}
	if idle > 0 {
		out += fmt.Sprintf(" (%s not exercised)", plural(idle, "control"))
	}
	return out
}

// Uncaught lists the names of the check's exercised negative controls the
// checker missed; each one makes the check blind. A control that was not
// exercised is not listed: it says nothing about the checker.
func (c Check) Uncaught() []string {
	var names []string
	for _, ctl := range c.Controls {
		if ctl.Exercised && !ctl.Caught {
			names = append(names, ctl.Name)
		}
	}
	return names
}

// Replay is the command that re-runs the check's row with its seed.
func (c Check) Replay() string {
	cmd := fmt.Sprintf("slotgate run --row %s --seed %d", c.Row, c.Evidence.Seed)
	if c.Evidence.Timing != "" {
		cmd += " --timing " + c.Evidence.Timing
	}
	return cmd
}

// notCaught phrases a list of uncaught control names.
func notCaught(names []string) string {
	if len(names) == 1 {
		return "control " + names[0] + " not caught"
	}
	return "controls " + strings.Join(names, ", ") + " not caught"
}

// String is the one line a terminal shows for a check (Ginkgo prints it for
// the report entry): verdict, message, and how many controls were caught.
func (c Check) String() string {
	caught := 0
	for _, ctl := range c.Controls {
		if ctl.Exercised && ctl.Caught {
			caught++
		}
	}
	return fmt.Sprintf("%s: %s (%d/%d negative controls caught, %d real variants; seed %d)", c.Verdict(), c.Message, caught, len(c.Controls), c.VariantsCaught(), c.Evidence.Seed)
}
