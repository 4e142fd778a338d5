// Package mutate measures the harness's own detection power (after spec
// 000 §Mechanized verification: "each mutant killed by the
// predicted invariant"): mutants of the implementation under test — Lua
// mutants of the fencing script set (mutate/luamut) and Go mutants of impl/
// (mutate/gomut) — are run through the rows that cover them on real
// servers, and each is reported killed (by which row, column and check),
// survived, or equivalent (with the reason).
//
// The package holds the kind-neutral parts: the Mutant and Result records,
// reading a run's verdicts to find the killer, the tallies, and the
// mutation.json / mutation.html renderers. Running suites is runner.go.
package mutate

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/report"
)

// Kind is what was mutated.
type Kind string

const (
	KindLua Kind = "lua" // a script of the fencing script set
	KindGo  Kind = "go"  // a Go file of impl/
	// KindMarconiLua is a script embedded in a Marconi package
	// (impl/marconi/lua, impl/marconi/audit/lua), served mutated by the
	// Go schemata build (gomut.GenerateLuaSchemata).
	KindMarconiLua Kind = "marconi-lua"
)

// Status is a mutant's verdict.
type Status string

const (
	// Killed: a row that ran the mutant failed a check its baseline passed.
	Killed Status = "killed"
	// Survived: every covering row that ran it passed.
	Survived Status = "survived"
	// Equivalent: the mutant cannot change observable behaviour (or the
	// report argues why it need not be caught); excluded from the rate.
	Equivalent Status = "equivalent"
	// Error: the mutant could not be run (build failure of a Go mutant, a
	// suite that did not start); excluded from the rate and listed.
	Error Status = "error"
)

// Mutant is one mutant of either kind.
type Mutant struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// File is module-relative for Go, manifest-relative for Lua.
	File string `json:"file"`
	// Func is the Go function mutated (empty for Lua).
	Func string `json:"func,omitempty"`
	Line int    `json:"line"`
	// Operator is the mutation operator; Desc says what changed.
	Operator string `json:"operator"`
	Desc     string `json:"desc,omitempty"`
	Diff     string `json:"diff"`
	// Phase and Op are a Lua mutant's script phase and operation.
	Phase string `json:"phase,omitempty"`
	Op    string `json:"op,omitempty"`
	// Rows are the rows that cover the mutant (the ones that run it).
	Rows []report.RowID `json:"rows"`
	// Content is the whole mutated file.
	Content []byte `json:"-"`
}

// Group is what the report tallies a mutant under: its Go package
// directory, or its Lua script's phase directory.
func (m Mutant) Group() string {
	if m.Kind == KindGo {
		if i := strings.LastIndex(m.File, "/"); i >= 0 {
			return m.File[:i]
		}
		return m.File
	}
	return "lua:" + m.File
}

// Kill names the check that killed a mutant.
type Kill struct {
	Row     report.RowID  `json:"row"`
	Column  report.Column `json:"column"`
	Check   string        `json:"check"` // the scenario, e.g. fencing-scripts/read-side/go-redis
	Status  report.Status `json:"status"`
	Message string        `json:"message"`
}

func (k Kill) String() string {
	return fmt.Sprintf("%s/%s %s", k.Row, k.Column, k.Check)
}

// Result is one mutant's outcome.
type Result struct {
	Mutant
	Status Status `json:"status"`
	Killer *Kill  `json:"killer,omitempty"`
	// Ran lists the rows that ran the mutant (a killed mutant stops at its
	// killer unless every row was asked for).
	Ran []report.RowID `json:"ran"`
	// Kills lists every row that killed it when every row ran it.
	Kills []Kill `json:"kills,omitempty"`
	// Reason explains an equivalent mutant or an error.
	Reason  string  `json:"reason,omitempty"`
	Seconds float64 `json:"seconds"`
	// BuildSeconds is the part of Seconds spent compiling a Go mutant's
	// suites; Specs how many specs ran it (a Go mutant runs only the specs
	// whose coverage reaches it; GoRunner).
	BuildSeconds float64 `json:"build_seconds,omitempty"`
	Specs        int     `json:"specs,omitempty"`
	// Schema is a Go mutant run from the schemata build (switched on by
	// SLOTGATE_MUTANT, no build of its own); false: built on its own.
	Schema bool `json:"schema,omitempty"`
}

// Killer reads a row run's scorecard: the first failing check of the
// given rows (fail, or a crashed scenario, which FromGinkgo scores as a
// failing check), worst cells first. Blind and inconclusive checks do not
// kill: they say the run could not judge, not that the mutant was seen.
func Killer(card *report.Scorecard, rows []report.RowID) (Kill, bool) {
	for _, c := range card.Cells {
		if len(rows) > 0 && !slices.Contains(rows, c.Row) {
			continue
		}
		for _, ch := range c.Checks {
			if ch.Status == report.StatusFail {
				return Kill{Row: ch.Row, Column: ch.Column, Check: scenarioName(ch.Scenario), Status: ch.Status, Message: oneLine(ch.Message, 300)}, true
			}
		}
	}
	// The baseline ran clean (Failing: no problems, no failing check), so
	// whatever goes wrong below happened to the mutant, loudly.
	row := report.RowID("")
	if len(rows) > 0 {
		row = rows[0]
	}
	for _, p := range card.Problems {
		// A failed spec without a row label or a failed suite node (a
		// panic): scored by no cell, but the run failed loudly.
		return Kill{Row: row, Check: "suite", Status: report.StatusFail, Message: oneLine(p, 300)}, true
	}
	return Kill{}, false
}

// Scored reports whether any of rows' cells got a verdict. A run that
// scored none (the suite died before any scenario recorded a check, or
// its focus selected no spec) is neither a kill nor a survivor: the
// runner reports it as an error, which fails the mutate gate.
func Scored(card *report.Scorecard, rows []report.RowID) bool {
	for _, c := range card.Cells {
		if (len(rows) == 0 || slices.Contains(rows, c.Row)) && c.Status != report.StatusNotRun {
			return true
		}
	}
	return false
}

// scenarioName shortens the spec text FromGinkgo gives a scenario that
// crashed before recording its check ("<container> <name> [row · col] — spec")
// to its name, marked as crashed (an assertion inside the scenario failed:
// the mutant made an operation fail loudly).
func scenarioName(s string) string {
	head, _, found := strings.Cut(s, " [")
	if !found {
		return s
	}
	f := strings.Fields(head)
	return f[len(f)-1] + " (scenario failed before its check)"
}

// Failing lists the failing checks of a scorecard: a baseline with any is
// no baseline.
func Failing(card *report.Scorecard) []string {
	var out []string
	for _, c := range card.Cells {
		for _, ch := range c.Checks {
			if ch.Status == report.StatusFail || ch.Status == report.StatusInconclusive {
				out = append(out, fmt.Sprintf("%s (%s): %s", ch.Scenario, ch.Status, oneLine(ch.Message, 200)))
			}
		}
	}
	return append(out, card.Problems...)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Tally counts verdicts.
type Tally struct {
	Name       string  `json:"name"`
	Mutants    int     `json:"mutants"`
	Killed     int     `json:"killed"`
	Survived   int     `json:"survived"`
	Equivalent int     `json:"equivalent"`
	Errors     int     `json:"errors"`
	KillRate   float64 `json:"kill_rate"` // killed / (killed + survived); 1 when none
}

func (t *Tally) add(s Status) {
	t.Mutants++
	switch s {
	case Killed:
		t.Killed++
	case Survived:
		t.Survived++
	case Equivalent:
		t.Equivalent++
	case Error:
		t.Errors++
	}
	t.KillRate = 1
	if n := t.Killed + t.Survived; n > 0 {
		t.KillRate = float64(t.Killed) / float64(n)
	}
}

// Summary is the whole run's tally, and per row (a row is credited with the
// mutants it ran: killed when it killed them) and per group (package or
// script).
type Summary struct {
	Total   Tally   `json:"total"`
	ByKind  []Tally `json:"by_kind"`
	ByRow   []Tally `json:"by_row"`
	ByGroup []Tally `json:"by_group"`
}

// Summarize tallies results.
func Summarize(results []Result) Summary {
	var s Summary
	s.Total.Name = "all"
	kinds, rows, groups := map[string]*Tally{}, map[string]*Tally{}, map[string]*Tally{}
	get := func(m map[string]*Tally, k string) *Tally {
		if m[k] == nil {
			m[k] = &Tally{Name: k}
		}
		return m[k]
	}
	for _, r := range results {
		s.Total.add(r.Status)
		get(kinds, string(r.Kind)).add(r.Status)
		get(groups, r.Group()).add(r.Status)
		for _, row := range r.Ran {
			st := r.Status
			if st == Killed && !rowKilled(r, row) {
				st = Survived // this row ran it and passed; another row killed it
			}
			get(rows, string(row)).add(st)
		}
	}
	flat := func(m map[string]*Tally) []Tally {
		var out []Tally
		for _, t := range m {
			out = append(out, *t)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out
	}
	s.ByKind, s.ByRow, s.ByGroup = flat(kinds), flat(rows), flat(groups)
	return s
}

func rowKilled(r Result, row report.RowID) bool {
	if r.Killer != nil && r.Killer.Row == row {
		return true
	}
	for _, k := range r.Kills {
		if k.Row == row {
			return true
		}
	}
	return false
}

// KillerFromResults reads a run's results.json (a Go mutant's run from its
// copy of the module) and returns the check that killed the mutant, if any.
func KillerFromResults(path string, rows []report.RowID) (Kill, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Kill{}, false, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	card, err := report.ReadJSON(f)
	if err != nil {
		return Kill{}, false, fmt.Errorf("read results %s: %w", path, err)
	}
	k, ok := Killer(card, rows)
	if !ok && !Scored(card, rows) {
		return Kill{}, false, fmt.Errorf("%s: no cell of %v was scored (the suite crashed, timed out or selected no spec)", path, rows)
	}
	return k, ok, nil
}
