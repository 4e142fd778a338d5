package report

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Shard says which slice of a sharded run (`slotgate run --shard i/n`) a
// scorecard holds, and what the whole run asked for, so a merge can tell a
// shard that never reported from a row nobody requested.
type Shard struct {
	// Index is 1-based: shard Index of Of.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Requested are the rows of the whole run, every shard's together.
	Requested []RowID `json:"requested"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Of) }

// ErrMerge is returned for results that cannot be merged into one run.
var ErrMerge = errors.New("cannot merge results")

// Merge folds the scorecards of one run's shards into one scorecard, as if
// one run had scored every check: cells re-fold from the union of checks,
// so the verdict follows the checks, never a stored status. Meta.Rows is
// the whole run's request, so a shard that did not report leaves its rows
// not run — and names itself among the problems — and the merged gate fails.
// Scorecards without Shard (a plain run) merge as parts of one request.
func Merge(cards ...*Scorecard) (*Scorecard, error) {
	if len(cards) == 0 {
		return nil, fmt.Errorf("%w: no results given", ErrMerge)
	}
	first := cards[0]
	meta := first.Meta
	meta.Shard = nil
	meta.Interrupted = nil
	meta.Rows = nil
	meta.NotRun = nil
	meta.Skipped = nil
	meta.Servers, meta.Clients = nil, nil
	var (
		checks   []Check
		problems []string
		of       int
		seen     = map[int]bool{}
		end      time.Time
	)
	rows := slices.Clone(first.Rows)
	var admissions []Admission // every shard's, re-folded below
	for i, c := range cards {
		if c.Meta.Profile != first.Meta.Profile {
			return nil, fmt.Errorf("%w: profile %q of results %d differs from %q of the first", ErrMerge, c.Meta.Profile, i+1, first.Meta.Profile)
		}
		if sh := c.Meta.Shard; sh != nil {
			if of == 0 {
				of = sh.Of
			}
			if sh.Of != of {
				return nil, fmt.Errorf("%w: results %d are shard %s, others are of %d shards", ErrMerge, i+1, sh, of)
			}
			if seen[sh.Index] {
				return nil, fmt.Errorf("%w: shard %s given twice", ErrMerge, sh)
			}
			seen[sh.Index] = true
			meta.Rows = union(meta.Rows, sh.Requested)
		}
		if (c.Meta.Shard == nil) != (first.Meta.Shard == nil) {
			return nil, fmt.Errorf("%w: results %d and 1 are not both shards of one run", ErrMerge, i+1)
		}
		meta.Rows = union(meta.Rows, c.Meta.Rows)
		for _, r := range c.Rows {
			if !slices.ContainsFunc(rows, func(x Row) bool { return x.ID == r.ID }) {
				rows = append(rows, r)
			}
		}
		for _, cell := range c.Cells {
			checks = append(checks, cell.Checks...)
		}
		checks = append(checks, c.Unscored...)
		admissions = append(admissions, admissionEntries(c.Admission)...)
		label := ""
		if c.Meta.Shard != nil {
			label = "shard " + c.Meta.Shard.String() + ": "
		}
		for _, p := range c.Problems {
			problems = append(problems, label+p)
		}
		for id, why := range c.Meta.NotRun {
			if meta.NotRun == nil {
				meta.NotRun = map[RowID]string{}
			}
			meta.NotRun[id] = why
		}
		meta.Skipped = append(meta.Skipped, c.Meta.Skipped...)
		if in := c.Meta.Interrupted; in != nil {
			// An interrupted shard leaves the merged run interrupted: its
			// cut-off cells must read so, not pass on another shard's checks.
			if meta.Interrupted == nil {
				meta.Interrupted = &Interruption{Cause: label + in.Cause}
			} else {
				meta.Interrupted.Cause += "; " + label + in.Cause
			}
			meta.Interrupted.Stopped = append(meta.Interrupted.Stopped, in.Stopped...)
		}
		meta.Servers = union(meta.Servers, c.Meta.Servers)
		meta.Clients = union(meta.Clients, c.Meta.Clients)
		if c.Meta.StartedAt.Before(meta.StartedAt) {
			meta.StartedAt = c.Meta.StartedAt
		}
		if e := c.Meta.StartedAt.Add(time.Duration(c.Meta.Duration)); e.After(end) {
			end = e
		}
		if c.Meta.Seed != meta.Seed {
			meta.Seed = 0 // each check still carries the seed it ran with
		}
	}
	for i := 1; i <= of; i++ {
		if !seen[i] {
			problems = append(problems, fmt.Sprintf("shard %d/%d did not report: its rows are not run", i, of))
		}
	}
	meta.Timing, meta.Schedule = nil, nil
	for _, c := range cards {
		meta.Timing = mergeTiming(meta.Timing, c.Meta.Timing)
		meta.Schedule = mergeSchedule(meta.Schedule, c.Meta.Schedule)
	}
	meta.Duration = Duration(end.Sub(meta.StartedAt))
	parts := make([]string, len(cards))
	for i, c := range cards {
		parts[i] = c.Meta.CommandLine
	}
	meta.CommandLine = "merged: " + strings.Join(parts, " | ")
	sort.SliceStable(meta.Skipped, func(i, j int) bool { return meta.Skipped[i].Scenario < meta.Skipped[j].Scenario })
	s := build(meta, rows, checks)
	s.Admission = AdmissionTable(admissions)
	s.Problems = problems
	return s, nil
}

// mergeTiming adds a shard's timing to the merged one: the shards' suite
// times sum (their sum over the merged wall time then says how much the
// runners ran side by side).
func mergeTiming(into, t *Timing) *Timing {
	if t == nil {
		return into
	}
	if into == nil {
		into = &Timing{Rows: map[RowID]Duration{}}
	}
	into.Suites += t.Suites
	for r, d := range t.Rows {
		if into.Rows == nil {
			into.Rows = map[RowID]Duration{}
		}
		into.Rows[r] += d
	}
	into.Scenarios = append(into.Scenarios, t.Scenarios...)
	sort.SliceStable(into.Scenarios, func(i, j int) bool { return into.Scenarios[i].Duration > into.Scenarios[j].Duration })
	return into
}

// mergeSchedule lists every shard's suites; Jobs is the most any shard ran
// at once.
func mergeSchedule(into, s *Schedule) *Schedule {
	if s == nil {
		return into
	}
	if into == nil {
		into = &Schedule{}
	}
	into.Jobs = max(into.Jobs, s.Jobs)
	into.Suites = append(into.Suites, s.Suites...)
	return into
}
