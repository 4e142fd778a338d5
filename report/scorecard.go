package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Scorecard is a run's verdict: one cell per catalogue row and column, each
// folded from the checks that scored it. Spec 000 §Conformance (gate G2).
type Scorecard struct {
	Meta Meta `json:"meta"`
	// Rows is the catalogue the run was scored against, in scorecard order;
	// results files carry it so an old run re-renders as it was scored.
	Rows []Row `json:"rows"`
	// Cells holds len(Rows)×len(Columns) cells, row-major.
	Cells []Cell `json:"cells"`
	// Unscored are checks naming a row or column outside Rows: the suites
	// and the catalogue disagree, and nobody would see the check. Any of
	// them fails the gate.
	Unscored []Check `json:"unscored,omitempty"`
	// Problems are run-level failures no cell owns: a failed BeforeSuite,
	// an interrupted suite, a failed spec without a row label. Any of them
	// fails the gate.
	Problems []string `json:"problems,omitempty"`
	// Admission is the client admission table (admission.go): each raw
	// client's verdict per client-facing requirement, next to the gate,
	// never part of it.
	Admission []AdmissionRow `json:"admission"`
	// Departures are the places where the implementation under the listed
	// rows departs from its spec, each with its reason (departure.go).
	Departures []Departure `json:"departures,omitempty"`
}

// Cell is one (row, column) of the scorecard.
type Cell struct {
	Row    RowID  `json:"row"`
	Column Column `json:"column"`
	// Status folds the checks' verdicts: none → not-run, any fail → fail,
	// else any inconclusive → inconclusive, else any blind → blind, else
	// pass — or partial when a scenario of the cell was skipped.
	Status Status  `json:"status"`
	Checks []Check `json:"checks,omitempty"`
	// Summary says in one line why the cell has its status.
	Summary string `json:"summary"`
}

// Tally counts cells by status.
type Tally struct {
	Pass, Partial, Fail, Inconclusive, Blind, NotRun int
}

// Total is the number of cells counted.
func (t Tally) Total() int { return t.Pass + t.Partial + t.Fail + t.Inconclusive + t.Blind + t.NotRun }

// New scores checks against the Catalogue. Checks naming an unknown row or
// column land in Unscored; within a cell, checks are ordered worst first,
// then by scenario, so output does not depend on parallel spec order.
func New(meta Meta, checks []Check) *Scorecard {
	return build(meta, Catalogue, checks)
}

func build(meta Meta, rows []Row, checks []Check) *Scorecard {
	s := &Scorecard{Meta: meta, Rows: slices.Clone(rows)}
	index := make(map[RowID]int, len(rows))
	for i, r := range s.Rows {
		index[r.ID] = i
		for _, col := range Columns {
			s.Cells = append(s.Cells, Cell{Row: r.ID, Column: col})
		}
	}
	for _, c := range checks {
		i, ok := index[c.Row]
		j := slices.Index(Columns, c.Column)
		if !ok || j < 0 {
			s.Unscored = append(s.Unscored, c)
			continue
		}
		cell := &s.Cells[i*len(Columns)+j]
		cell.Checks = append(cell.Checks, c)
	}
	for i := range s.Cells {
		fold(&s.Cells[i])
		c := &s.Cells[i]
		if n, reason := skippedIn(meta.Skipped, c.Row, c.Column); n > 0 {
			c.Summary += fmt.Sprintf(" (+%s not run on this topology: %s)", plural(n, "scenario"), reason)
			if c.Status == StatusPass {
				// What ran passed, but part of the cell never ran.
				c.Status = StatusPartial
				c.Summary = "partial: " + c.Summary
			}
		}
		if reason := meta.NotRun[c.Row]; reason != "" && c.Status == StatusNotRun {
			c.Summary = "not run: " + reason
		}
		interrupt(c, meta.Interrupted) // an interrupted run's cells (meta.go)
	}
	var listed []RowID
	for _, r := range s.Rows {
		if s.listed(r.ID) {
			listed = append(listed, r.ID)
		}
	}
	s.Departures = departuresFor(listed)
	s.Meta.Servers = union(s.Meta.Servers, s.evidence(func(e Evidence) string { return e.Server }))
	s.Meta.Clients = union(s.Meta.Clients, s.evidence(func(e Evidence) string { return e.Client }))
	return s
}

// severity orders verdicts worst first. Inconclusive sorts after fail (a
// product failure another check saw stands, and is what to fix first) and
// before blind (this run could not test the implementation at all, where a
// blind check ran but cannot prove it can fail).
func severity(s Status) int {
	switch s {
	case StatusFail:
		return 0
	case StatusInconclusive:
		return 1
	case StatusBlind:
		return 2
	case StatusPartial:
		return 3
	case StatusPass:
		return 4
	}
	return 5
}

// skippedIn counts the skipped scenarios of a cell and returns the first
// one's reason.
func skippedIn(skipped []Skipped, row RowID, col Column) (int, string) {
	n, reason := 0, ""
	for _, s := range skipped {
		if s.Row == row && (s.Column == col || s.Column == "") {
			if n == 0 {
				reason = s.Reason
			}
			n++
		}
	}
	return n, reason
}

// fold sets the cell's status and summary from its checks.
func fold(c *Cell) {
	sort.SliceStable(c.Checks, func(i, j int) bool {
		a, b := c.Checks[i], c.Checks[j]
		if sa, sb := severity(a.Verdict()), severity(b.Verdict()); sa != sb {
			return sa < sb
		}
		return a.Scenario < b.Scenario
	})
	c.Status = StatusNotRun
	if len(c.Checks) > 0 {
		c.Status = c.Checks[0].Verdict()
	}
	c.Summary = summarize(c.Status, c.Checks)
}

// summarize says why a cell has its status, in one line.
func summarize(st Status, checks []Check) string {
	switch st {
	case StatusNotRun:
		return "no check scored this cell"
	case StatusPass:
		variants, self := 0, 0
		for _, c := range checks {
			for _, ctl := range c.Controls {
				switch {
				case !ctl.Exercised:
				case ctl.Kind == ControlVariant:
					variants++
				default:
					self++
				}
			}
		}
		out := fmt.Sprintf("%s, %s caught", plural(len(checks), "check"), plural(variants, "variant"))
		if self > 0 {
			out += fmt.Sprintf(" (+%s)", plural(self, "self-test"))
		}
		return out
	case StatusFail:
		var failing []Check
		for _, c := range checks {
			if c.Verdict() == StatusFail {
				failing = append(failing, c)
			}
		}
		out := failing[0].Scenario + ": " + firstLine(failing[0].Message)
		if n := len(failing) - 1; n > 0 {
			out += fmt.Sprintf(" (and %s)", plural(n, "more failing check"))
		}
		return out
	case StatusInconclusive:
		var inc []Check
		for _, c := range checks {
			if c.Verdict() == StatusInconclusive {
				inc = append(inc, c)
			}
		}
		out := firstLine(inc[0].Reason()) + " — the harness's, not a verdict on the implementation (" + inc[0].Scenario + ")"
		if n := len(inc) - 1; n > 0 {
			out += fmt.Sprintf(" (and %s)", plural(n, "more inconclusive check"))
		}
		return out
	}
	// Blind: name uncaught controls once, then what else made checks blind.
	var uncaught, noControl, noVariant, other []string
	for _, c := range checks {
		if c.Verdict() != StatusBlind {
			continue
		}
		switch {
		case c.Status == StatusPass && len(c.Controls) == 0:
			noControl = append(noControl, c.Scenario)
		case c.Status == StatusPass && len(c.Uncaught()) == 0:
			noVariant = append(noVariant, c.Scenario+" ("+c.Reason()+")")
		case c.Status == StatusPass:
			for _, n := range c.Uncaught() {
				if !slices.Contains(uncaught, n) {
					uncaught = append(uncaught, n)
				}
			}
		default:
			other = append(other, c.Scenario+" "+firstLine(c.Reason()))
		}
	}
	var parts []string
	if len(uncaught) > 0 {
		parts = append(parts, notCaught(uncaught))
	}
	switch {
	case len(noControl) > 2:
		parts = append(parts, fmt.Sprintf("%d checks have no negative control", len(noControl)))
	case len(noControl) > 0:
		parts = append(parts, "no negative control in "+strings.Join(noControl, ", "))
	}
	switch {
	case len(noVariant) > 2:
		parts = append(parts, fmt.Sprintf("%d checks rest on self-tests or unexercised controls only (no real bad variant caught)", len(noVariant)))
	case len(noVariant) > 0:
		parts = append(parts, "no real bad variant caught in "+strings.Join(noVariant, ", "))
	}
	const keep = 2
	if len(other) > keep {
		other = append(other[:keep], fmt.Sprintf("%d more undecided", len(other)-keep))
	}
	return strings.Join(append(parts, other...), "; ")
}

// Cell returns the cell of (row, col), or nil when the scorecard has no
// such row or column.
func (s *Scorecard) Cell(row RowID, col Column) *Cell {
	j := slices.Index(Columns, col)
	if j < 0 {
		return nil
	}
	for i, r := range s.Rows {
		if r.ID == row {
			return &s.Cells[i*len(Columns)+j]
		}
	}
	return nil
}

// Row returns the scorecard's entry for id.
func (s *Scorecard) Row(id RowID) (Row, bool) {
	for _, r := range s.Rows {
		if r.ID == id {
			return r, true
		}
	}
	return Row{}, false
}

// Requested lists the rows the gate holds to account: Meta.Rows, or, when
// that is empty, every row with at least one check. Rows come in
// scorecard order; requested IDs outside the scorecard follow, as given.
func (s *Scorecard) Requested() []RowID {
	var out []RowID
	for i, r := range s.Rows {
		want := slices.Contains(s.Meta.Rows, r.ID)
		if len(s.Meta.Rows) == 0 {
			for j := range Columns {
				want = want || len(s.Cells[i*len(Columns)+j].Checks) > 0
			}
		}
		if want {
			out = append(out, r.ID)
		}
	}
	for _, id := range s.Meta.Rows {
		if _, ok := s.Row(id); !ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// IsRequested reports whether the gate holds row to account.
func (s *Scorecard) IsRequested(row RowID) bool {
	return slices.Contains(s.Requested(), row)
}

// Tally counts the cells of requested rows by status.
func (s *Scorecard) Tally() Tally {
	var t Tally
	for _, c := range s.Cells {
		if !s.IsRequested(c.Row) {
			continue
		}
		switch c.Status {
		case StatusPass:
			t.Pass++
		case StatusPartial:
			t.Partial++
		case StatusFail:
			t.Fail++
		case StatusInconclusive:
			t.Inconclusive++
		case StatusBlind:
			t.Blind++
		default:
			t.NotRun++
		}
	}
	return t
}

// Gate is gate G2's verdict: it passes iff every cell of every requested
// row is pass (or partial: every check that ran passed, some scenarios could
// not run on this topology — Complete, which --require-all adds, refuses
// those) and the run had no problem. Each reason names one thing that
// failed it, e.g. "fencing-scripts/silently-wrong: blind — control M1 not
// caught". A run that scored nothing fails: silence is not a pass.
func (s *Scorecard) Gate() (pass bool, reasons []string) {
	for _, p := range s.Problems {
		reasons = append(reasons, "run: "+p)
	}
	for _, c := range s.Unscored {
		reasons = append(reasons, fmt.Sprintf("%s/%s: unscored — check %s names a row or column the catalogue does not have",
			c.Row, c.Column, c.Scenario))
	}
	requested := s.Requested()
	if len(requested) == 0 {
		reasons = append(reasons, "run: no row was scored")
	}
	for _, id := range requested {
		if _, ok := s.Row(id); !ok {
			reasons = append(reasons, fmt.Sprintf("%s: requested but not in the catalogue", id))
			continue
		}
		for _, col := range Columns {
			if c := s.Cell(id, col); c.Status != StatusPass && c.Status != StatusPartial {
				reasons = append(reasons, fmt.Sprintf("%s/%s: %s — %s", id, col, c.Status, c.Summary))
			}
		}
	}
	return len(reasons) == 0, reasons
}

// Complete is what --require-all adds to the gate: every cell of the whole
// catalogue was scored and ran all its scenarios — none not-run, none
// partial. Each reason names one cell that is not.
func (s *Scorecard) Complete() (complete bool, reasons []string) {
	for _, c := range s.Cells {
		if c.Status == StatusNotRun || c.Status == StatusPartial {
			reasons = append(reasons, fmt.Sprintf("%s/%s: %s — %s", c.Row, c.Column, c.Status, c.Summary))
		}
	}
	return len(reasons) == 0, reasons
}

// Headline is the gate verdict in one line, as every renderer opens with it.
func (s *Scorecard) Headline() string {
	pass, reasons := s.Gate()
	t := s.Tally()
	if pass {
		head := fmt.Sprintf("PASS — all %s of %s pass", plural(t.Total(), "cell"), plural(len(s.Requested()), "requested row"))
		if t.Partial > 0 {
			head = fmt.Sprintf("PASS — %s of %s: %d pass, %d partial (scenarios not run on this topology: not cleared)", plural(t.Total(), "cell"), plural(len(s.Requested()), "requested row"), t.Pass, t.Partial)
		}
		if rest := len(s.Rows) - len(s.Requested()); rest > 0 {
			// A pass over part of the catalogue must not read as a clearance.
			head += fmt.Sprintf("; %s of the catalogue not run, so not cleared", plural(rest, "row"))
		}
		return head
	}
	inconclusive := ""
	if t.Inconclusive > 0 {
		inconclusive = fmt.Sprintf("%d inconclusive, ", t.Inconclusive)
	}
	head := fmt.Sprintf("FAIL — %d fail, %s%d blind, %d not run of %s", t.Fail, inconclusive, t.Blind, t.NotRun, plural(t.Total(), "requested cell"))
	if t.Partial > 0 {
		head += fmt.Sprintf(" (%d partial)", t.Partial)
	}
	if extra := len(reasons) - (t.Fail + t.Inconclusive + t.Blind + t.NotRun); extra > 0 {
		head += fmt.Sprintf("; %s", plural(extra, "run problem"))
	}
	return head
}

// Topologies lists the distinct topologies the checks ran on.
func (s *Scorecard) Topologies() []string {
	return s.evidence(func(e Evidence) string { return e.Topology })
}

// evidence collects one field over all checks: distinct, non-empty, in
// scorecard order.
func (s *Scorecard) evidence(field func(Evidence) string) []string {
	var out []string
	for _, c := range s.Cells {
		for _, ch := range c.Checks {
			out = union(out, []string{field(ch.Evidence)})
		}
	}
	return out
}

// union merges b into a, keeping a's order and dropping empties and repeats.
func union[T comparable](a, b []T) []T {
	out := slices.Clone(a)
	var zero T
	for _, v := range b {
		if v != zero && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}
