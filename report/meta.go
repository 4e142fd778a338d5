package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Meta is the run-level data a reviewer needs to trust and replay a
// scorecard: what was asked for, against which servers and clients, where.
type Meta struct {
	StartedAt time.Time `json:"started_at"`
	Duration  Duration  `json:"duration,omitempty"`
	// Profile is how hard the run pushed each row: "smoke" (small and
	// fast, for CI) or "full" (the chaos, load and soak variants a
	// sign-off needs). A string, as Evidence.Profile is.
	Profile string `json:"profile,omitempty"`
	// Seed is the run's seed; each check records the seed it actually used.
	Seed int64 `json:"seed"`
	// Rows are the rows the run was asked for; empty means all. The gate
	// holds requested rows to account (see Scorecard.Requested).
	Rows []RowID `json:"rows,omitempty"`
	// Provider names the fixture provider: local processes, testcontainers,
	// or an external cluster.
	Provider string `json:"provider,omitempty"`
	// Version is slotgate's own version.
	Version   string `json:"version,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
	// CommandLine is the command that produced the run, as typed.
	CommandLine string `json:"command_line,omitempty"`
	// Servers and Clients are the versions seen during the run, e.g.
	// "valkey 8.1.1", "go-redis v9.7.0".
	Servers []string `json:"servers,omitempty"`
	Clients []string `json:"clients,omitempty"`
	// Host is the machine, with its CPU count ("linux/amd64, 16 cores"):
	// timing-sensitive rows read differently on 2 CPUs than on 32.
	Host string `json:"host,omitempty"`
	// NotRun says why a row was not run at all — on an external target,
	// the topology control it needs or an endpoint that was not given
	// Each of its cells reads "not run: <reason>". A requested
	// row stays gated (silence is not a pass); one the run chose not to
	// request is shown with its reason, not gated.
	NotRun map[RowID]string `json:"not_run,omitempty"`
	// Skipped lists the scenarios the topology could not host (a bus
	// partition on the local provider, a kill on an external target):
	// skipped with their reason, never scored. Their cells say so in their
	// summary, so a pass is read as the pass of the scenarios that ran.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Shard is set on the results of one shard of a sharded run
	// (`slotgate run --shard i/n`); `slotgate report --merge` joins them.
	Shard *Shard `json:"shard,omitempty"`
	// Interrupted is set when the run was stopped before it finished (a
	// signal, Ginkgo's suite timeout). An interruption is no verdict on the
	// implementation: the scenarios it cut off are listed here instead of
	// being scored, their cells read "interrupted", and the headline says
	// so. The gate still fails — an unfinished run cleared nothing.
	Interrupted *Interruption `json:"interrupted,omitempty"`
	// Timing is where the run's time went, from the suites' own reports
	// (the gate must fit a CI budget; speed is measured, never asserted).
	Timing *Timing `json:"timing,omitempty"`
	// Schedule is how the suites shared the machine: how many ran at a
	// time, and when each ran for how long (the gate must fit a CI budget).
	// Set by `slotgate run`.
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Schedule is how `slotgate run` ran the suite packages: up to Jobs at a
// time, a timing-sensitive one alone.
type Schedule struct {
	// Jobs is the most suites that ran at once (--jobs).
	Jobs int `json:"jobs"`
	// Suites are the suite packages that ran, in start order.
	Suites []SuiteRun `json:"suites,omitempty"`
}

// SuiteRun is one suite package's run: its own Ginkgo process.
type SuiteRun struct {
	Package string  `json:"package"`
	Rows    []RowID `json:"rows,omitempty"`
	// Exclusive says why the suite ran alone (it measures time against a
	// bound); empty when it shared the machine.
	Exclusive string `json:"exclusive,omitempty"`
	// Timed is the bound it judges time against when it ran beside at
	// most one untimed suite (and no other timed one).
	Timed string `json:"timed,omitempty"`
	// Start is when it started, from the run's start; Wall its wall time,
	// compile included.
	Start Duration `json:"start"`
	Wall  Duration `json:"wall"`
	// CPU is the user and system time of its Ginkgo process tree (the
	// suite binary and the servers it started and reaped): against Wall,
	// how many cores it kept busy — what the scheduler's budget weighs.
	CPU Duration `json:"cpu,omitempty"`
}

// Timing is the wall time of the suites, rows and scenarios of a run.
type Timing struct {
	// Suites sums the suites' own run times, setup and teardown included;
	// against Meta.Duration (the run's wall time) it says how much of the
	// run ran suites and how much ran them concurrently (SumWallRatio).
	Suites Duration `json:"suites"`
	// Rows sums, per row, the run time of the specs that scored it (a spec
	// naming two rows counts for both; setup shared by a suite counts for
	// none).
	Rows map[RowID]Duration `json:"rows,omitempty"`
	// Scenarios are the specs that ran, slowest first.
	Scenarios []ScenarioTime `json:"scenarios,omitempty"`
}

// ScenarioTime is one spec's run time.
type ScenarioTime struct {
	Scenario string   `json:"scenario"`
	Rows     []RowID  `json:"rows,omitempty"`
	Duration Duration `json:"duration"`
}

// SumWallRatio is the suites' summed time over the run's wall time: below
// 1 the run spent time outside the suites (compiling, reporting), above 1
// suites ran concurrently. 0 when either is unknown.
func (m Meta) SumWallRatio() float64 {
	if m.Timing == nil || m.Duration <= 0 {
		return 0
	}
	return float64(m.Timing.Suites) / float64(m.Duration)
}

// timeLine renders the run's timing in one line, "" without timing.
func (m Meta) timeLine() string {
	if m.Timing == nil {
		return ""
	}
	line := "suites " + formatDuration(m.Timing.Suites)
	if m.Duration > 0 {
		line += fmt.Sprintf(" of %s wall (sum/wall %.2f)", formatDuration(m.Duration), m.SumWallRatio())
	}
	return line
}

// slowest returns at most n scenarios, slowest first.
func (t *Timing) slowest(n int) []ScenarioTime {
	if t == nil {
		return nil
	}
	return t.Scenarios[:min(n, len(t.Scenarios))]
}

// rowTime is row's summed scenario time, "" when unknown.
func (t *Timing) rowTime(row RowID) string {
	if t == nil {
		return ""
	}
	d, ok := t.Rows[row]
	if !ok {
		return ""
	}
	return formatDuration(d)
}

// Interruption says what stopped a run and what it cut off.
type Interruption struct {
	// Cause names what stopped the run: "SIGINT", "SIGHUP", "SIGTERM", or
	// Ginkgo's own reason ("Interrupted by Timeout").
	Cause string `json:"cause"`
	// Stopped are the scenarios that were running; Reason carries their
	// failure text, if any (typically a cancelled context).
	Stopped []Skipped `json:"stopped,omitempty"`
}

// stoppedIn lists the scenarios an interruption cut off in a cell.
func (in *Interruption) stoppedIn(row RowID, col Column) []string {
	if in == nil {
		return nil
	}
	var out []string
	for _, s := range in.Stopped {
		name, _, _ := strings.Cut(s.Scenario, " — ") // the spec's description follows
		if s.Row == row && (s.Column == col || s.Column == "") && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// interrupt marks a cell of an interrupted run. A cell whose scenario was
// cut off is not-run (its passing checks stay as evidence, but an
// unfinished cell is not a pass), unless a check that did finish failed: a
// failure seen before the interrupt stands. A cell nothing scored says the
// run never got to it.
func interrupt(c *Cell, in *Interruption) {
	if in == nil || c.Status == StatusFail {
		return
	}
	if stopped := in.stoppedIn(c.Row, c.Column); len(stopped) > 0 {
		c.Status = StatusNotRun
		c.Summary = fmt.Sprintf("interrupted (%s) during %s", in.Cause, strings.Join(stopped, ", "))
		if n := len(c.Checks); n > 0 {
			c.Summary += fmt.Sprintf("; %s finished before it", plural(n, "check"))
		}
		return
	}
	if c.Status == StatusNotRun && !strings.HasPrefix(c.Summary, "not run: ") {
		c.Summary = fmt.Sprintf("not run: the run was interrupted (%s) before it got here", in.Cause)
	}
}

// cellInterrupted reports whether an interruption cut off a scenario of c
// and c did not fail: the renderers show it as "interrupted".
func (s *Scorecard) cellInterrupted(c *Cell) bool {
	return c.Status == StatusNotRun && len(s.Meta.Interrupted.stoppedIn(c.Row, c.Column)) > 0
}

// headline is the line every renderer opens with: Headline, or, for an
// interrupted run, a line that says so first — an interrupted run is not a
// verdict on the implementation, and must not read as one.
func (s *Scorecard) headline() string {
	in := s.Meta.Interrupted
	if in == nil {
		return s.Headline()
	}
	t := s.Tally()
	return fmt.Sprintf("INTERRUPTED — %s stopped the run, so the gate fails without a verdict: %d pass, %d fail, %d blind, %d not run of %s",
		in.Cause, t.Pass, t.Fail, t.Blind, t.NotRun, plural(t.Total(), "requested cell"))
}

// Skipped is one scenario a run skipped, and why.
type Skipped struct {
	Row      RowID  `json:"row"`
	Column   Column `json:"column,omitempty"`
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}
