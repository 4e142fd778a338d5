package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// ErrNoValue is returned when a slotgate.check report entry carries no
// value: the suite called AddReportEntry(EntryName) without a Check.
var ErrNoValue = errors.New("report entry has no value")

// LoadGinkgoJSON reads a report written by `ginkgo --json-report`.
func LoadGinkgoJSON(path string) ([]GinkgoReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load ginkgo report: %w", err)
	}
	var reports []GinkgoReport
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, fmt.Errorf("decode ginkgo report %s: %w", path, err)
	}
	return reports, nil
}

// FromGinkgo scores the Checks that suites recorded as Ginkgo report
// entries named EntryName.
//
// A crashed check never counts as pass: a spec that failed, panicked, timed
// out or aborted without recording a Check whose Verdict explains the
// failure (fail or blind) becomes a synthetic failing Check in the cells its
// labels name (a row label without a column label names both columns); a
// spec past its timeout, or whose harness reset failed, becomes an
// inconclusive one instead. A
// spec that recorded a blind check and then failed its own verdict
// assertion stays blind. An interrupted spec (a signal, the suite timeout)
// is no verdict on the implementation: it is listed in Meta.Interrupted,
// keeps only the passing checks it recorded, and its cells read
// "interrupted" (never fail, never pass). A failed spec with no row label,
// a failed suite node and a suite-level failure reason (interrupt,
// --fail-on-pending) become Problems. Skipped and pending specs contribute
// nothing. A recorded Check with an empty Row or Column takes it from the
// spec's labels when they name exactly one.
//
// Zero StartedAt and Duration in meta are filled from the reports, and
// Meta.Timing from the suites' and specs' run times.
func FromGinkgo(reports []GinkgoReport, meta Meta) (*Scorecard, error) {
	if meta.Interrupted != nil { // filled below; the caller's stays as given
		in := *meta.Interrupted
		meta.Interrupted = &in
	}
	var (
		checks     []Check
		admissions []Admission
		problems   []string
		start, end time.Time
		timing     = &Timing{Rows: map[RowID]Duration{}}
	)
	for _, r := range reports {
		timing.Suites += Duration(r.RunTime)
		if !r.StartTime.IsZero() && (start.IsZero() || r.StartTime.Before(start)) {
			start = r.StartTime
		}
		if r.EndTime.After(end) {
			end = r.EndTime
		}
		for _, reason := range r.SpecialSuiteFailureReasons {
			problems = append(problems, fmt.Sprintf("suite %q: %s", r.SuiteDescription, reason))
		}
		for _, sr := range r.SpecReports {
			rows, cols := rowLabels(sr.Labels())
			if sr.State == ginkgoSkipped || sr.State == ginkgoPending {
				// A scenario skipped by its own Skip(reason) — the topology
				// cannot host it — is listed; one left out by a filter
				// (--row, --label-filter) or focus has no message.
				// Ginkgo's own skips (an earlier spec of an ordered
				// container failed, an interrupt) are no topology's.
				if sr.State == ginkgoSkipped && strings.HasPrefix(sr.Failure.Message, topologySkip) && len(rows) == 1 {
					targets := cols
					if len(targets) == 0 {
						targets = []Column{""} // the whole row
					}
					reason := strings.TrimPrefix(sr.Failure.Message, topologySkip)
					for _, col := range targets {
						meta.Skipped = append(meta.Skipped, Skipped{Row: rows[0], Column: col, Scenario: sr.FullText(), Reason: reason})
					}
				}
				continue
			}
			if sr.LeafNodeType == ginkgoIt {
				timing.Scenarios = append(timing.Scenarios, ScenarioTime{Scenario: sr.FullText(), Rows: rows, Duration: Duration(sr.RunTime)})
				for _, row := range rows {
					timing.Rows[row] += Duration(sr.RunTime)
				}
			}
			var recorded []Check
			var admitted []Admission
			for _, e := range sr.ReportEntries {
				if e.Name == AdmissionEntryName {
					a, err := decodeAdmission(e, sr.FullText(), meta.Seed)
					if err != nil {
						return nil, fmt.Errorf("decode admission of spec %q at %s: %w", sr.FullText(), e.Location, err)
					}
					admitted = append(admitted, a)
					continue
				}
				if e.Name != EntryName {
					continue
				}
				c, err := decodeEntry(e)
				if err != nil {
					return nil, fmt.Errorf("decode check of spec %q at %s: %w", sr.FullText(), e.Location, err)
				}
				if c.Row == "" && len(rows) == 1 {
					c.Row = rows[0]
				}
				if c.Column == "" && len(cols) == 1 {
					c.Column = cols[0]
				}
				if c.Scenario == "" {
					c.Scenario = sr.FullText()
				}
				if c.Evidence.Duration == 0 {
					c.Evidence.Duration = Duration(sr.RunTime)
				}
				recorded = append(recorded, c)
			}
			if sr.State != ginkgoInterrupted { // an interrupted run judged no client
				admissions = append(admissions, TrustedAdmissions(admitted, recorded)...)
			}
			if sr.State == ginkgoInterrupted {
				// Cut off by a signal or the suite timeout: no verdict on the
				// implementation. What it recorded before the interrupt
				// stands if it passed; a failure seen while the run was
				// being torn down (a cancelled context, a closed server)
				// is the interrupt's, not the product's.
				meta.Interrupted = interruptedBy(meta.Interrupted, r.SpecialSuiteFailureReasons)
				targets := cols
				if len(targets) == 0 {
					targets = []Column{""}
				}
				for _, row := range rows {
					for _, col := range targets {
						meta.Interrupted.Stopped = append(meta.Interrupted.Stopped, Skipped{Row: row, Column: col, Scenario: sr.FullText(), Reason: oneLine(sr.Failure.Message, 160)})
					}
				}
				recorded = slices.DeleteFunc(recorded, func(c Check) bool { return c.Verdict() != StatusPass })
				checks = append(checks, recorded...)
				if len(rows) == 0 {
					problems = append(problems, fmt.Sprintf("%s interrupted", sr.LeafNodeType))
				}
				continue
			}
			checks = append(checks, recorded...)
			// A spec whose recorded check is fail or blind fails by design
			// (suites assert the verdict after recording it): the check
			// already says why. Only a failure the checks do not explain
			// becomes a synthetic one.
			if !sr.Failed() || slices.ContainsFunc(recorded, func(c Check) bool { return c.Verdict() != StatusPass }) {
				continue
			}
			synth, problem := crashed(sr, rows, cols, recorded, meta.Seed)
			checks = append(checks, synth...)
			if problem != "" {
				problems = append(problems, problem)
			}
		}
	}
	if meta.Timing == nil && len(reports) > 0 {
		sort.SliceStable(timing.Scenarios, func(i, j int) bool { return timing.Scenarios[i].Duration > timing.Scenarios[j].Duration })
		meta.Timing = timing
	}
	if meta.StartedAt.IsZero() {
		meta.StartedAt = start
	}
	if meta.Duration == 0 && !start.IsZero() && end.After(start) {
		meta.Duration = Duration(end.Sub(start))
	}
	s := New(meta, checks)
	s.Admission = AdmissionTable(admissions)
	s.Problems = append(s.Problems, problems...)
	return s, nil
}

// interruptedBy returns the run's interruption, creating it from Ginkgo's
// suite failure reasons ("Interrupted by User") when slotgate did not name a
// signal.
func interruptedBy(in *Interruption, reasons []string) *Interruption {
	if in != nil {
		return in
	}
	cause := "interrupted"
	for _, r := range reasons {
		if strings.Contains(r, "Interrupted") {
			cause = r
			break
		}
	}
	return &Interruption{Cause: cause}
}

// topologySkip starts the message of a scenario skipped because the
// topology cannot host it (harness.Requires).
const topologySkip = "not run on this topology: "

// rowLabels picks the labels that are catalogue row IDs and columns.
func rowLabels(labels []string) (rows []RowID, cols []Column) {
	for _, l := range labels {
		if _, ok := Lookup(RowID(l)); ok && !slices.Contains(rows, RowID(l)) {
			rows = append(rows, RowID(l))
		}
		if slices.Contains(Columns, Column(l)) && !slices.Contains(cols, Column(l)) {
			cols = append(cols, Column(l))
		}
	}
	return rows, cols
}

// decodeEntry recovers a Check from an entry's JSON value.
func decodeEntry(e GinkgoEntry) (Check, error) {
	var c Check
	if err := decodeValue(e, &c); err != nil {
		return Check{}, err
	}
	return c, nil
}

// decodeValue decodes the JSON value of an entry into v; an entry with no
// value is ErrNoValue.
func decodeValue(e GinkgoEntry, v any) error {
	data := e.Value.AsJSON
	if data == "" || data == "null" {
		return ErrNoValue
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return fmt.Errorf("decode entry value: %w", err)
	}
	return nil
}

// harnessSetup are the Ginkgo nodes that only set the harness up before a
// scenario: every suite's BeforeEach, in its *_suite_test.go, resets its
// topologies (a setup node elsewhere may run product code, and keeps
// scoring fail).
var harnessSetup = map[string]bool{"BeforeEach": true, "JustBeforeEach": true}

// crashed turns a failed spec into failing checks for the cells it was
// meant to score, or into a run problem when it names no cell.
func crashed(sr GinkgoSpec, rows []RowID, cols []Column, recorded []Check, seed int64) ([]Check, string) {
	type target struct {
		row RowID
		col Column
	}
	var targets []target
	if len(cols) == 0 {
		cols = Columns
	}
	for _, r := range rows {
		for _, c := range cols {
			targets = append(targets, target{r, c})
		}
	}
	if len(rows) == 0 {
		for _, c := range recorded {
			if t := (target{c.Row, c.Column}); !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
	}
	when := "before recording a check"
	if len(recorded) > 0 {
		when = "after recording its check"
	}
	f := sr.Failure
	msg := fmt.Sprintf("spec %s %s: %s (%s)", sr.State, when, oneLine(f.Message, 160), f.Location)
	status := StatusFail
	if harnessSetup[f.FailureNodeType] && strings.HasSuffix(f.Location.FileName, "_suite_test.go") && len(recorded) == 0 {
		// The suites' BeforeEach is the harness resetting its topology:
		// the scenario never ran, so the cell names the harness, not the
		// implementation — and still fails the gate (a run that
		// could not set up says nothing about the product).
		status = StatusInconclusive
		msg = fmt.Sprintf("inconclusive: the harness's %s failed before the scenario ran (not a verdict on the implementation): %s (%s)", f.FailureNodeType, oneLine(f.Message, 160), f.Location)
	}
	if sr.State == ginkgoTimedout {
		// Past its spec timeout (suites/harness: Scenario.Timeout): the
		// scenario, its setup or its cleanup hung, and Ginkgo abandoned
		// it. Whatever it recorded judged a cut run; the cell fails the
		// gate without blaming the implementation, as a failed reset does.
		status = StatusInconclusive
		msg = fmt.Sprintf("inconclusive: the spec ran past its timeout %s (a hang is no verdict on the implementation; replay with the seed): %s (%s)", when, oneLine(f.Message, 160), f.Location)
	}
	if len(targets) == 0 {
		name := sr.FullText()
		if name == "" {
			name = sr.LeafNodeType
		}
		return nil, fmt.Sprintf("%s %s without a row label: %s (%s)", name, sr.State, oneLine(f.Message, 160), f.Location)
	}
	var ce strings.Builder
	ce.WriteString(strings.TrimSpace(f.Message))
	fmt.Fprintf(&ce, "\n\nat %s", f.Location)
	if f.ForwardedPanic != "" {
		fmt.Fprintf(&ce, "\n\npanic: %s\n\n%s", f.ForwardedPanic, f.Location.FullStackTrace)
	}
	scenario := sr.FullText()
	if scenario == "" {
		scenario = sr.LeafNodeType
	}
	out := make([]Check, 0, len(targets))
	for _, t := range targets {
		out = append(out, Check{
			Row:      t.row,
			Column:   t.col,
			Scenario: scenario,
			Status:   status,
			Message:  msg,
			Evidence: Evidence{
				Counterexample: ce.String(),
				Seed:           seed,
				Duration:       Duration(sr.RunTime),
			},
		})
	}
	return out, ""
}

// oneLine collapses a multi-line failure message (Gomega's "Expected\n
// <int>: 3\nto equal ...") into one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
