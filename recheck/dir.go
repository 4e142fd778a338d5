package recheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// HistoriesDir is where a run stores its scenarios' histories, under its
// out directory beside results.json.
const HistoriesDir = "histories"

// ErrInput marks a directory `check --from` cannot read: no results.json,
// a results file or history that does not decode.
var ErrInput = errors.New("bad re-check input")

// Rebuild re-runs the calls behind stored (its result and every control)
// and builds the check again exactly as the live run did.
func Rebuild(stored report.Check, j history.Judgement) (report.Check, error) {
	if !Persisted(j) {
		return stored, errors.New("not persisted")
	}
	if len(j.Controls) != len(stored.Controls) {
		return stored, fmt.Errorf("history judged %d controls, the stored check has %d", len(j.Controls), len(stored.Controls))
	}
	r, err := check.Replay(*j.Call)
	if err != nil {
		return stored, err
	}
	obs := stored.Evidence.Observed
	if j.ObservedAt+j.ObservedLen > len(obs) {
		return stored, fmt.Errorf("stored evidence has %d observed lines, history says the result's are %d..%d", len(obs), j.ObservedAt, j.ObservedAt+j.ObservedLen)
	}
	ev := stored.Evidence
	ev.Observed = slices.Clone(obs[:j.ObservedAt])
	if j.CounterexampleFromResult {
		ev.Counterexample = ""
	}
	controls := make([]report.Control, len(j.Controls))
	for i, cj := range j.Controls {
		cr, err := check.Replay(*cj.Call)
		if err != nil {
			return stored, fmt.Errorf("control %s: %w", cj.Name, err)
		}
		c := Control(report.ControlKind(cj.Kind), cj.Name, cj.Why, cr)
		for _, why := range cj.NotExercised {
			c = NotExercised(c, why)
		}
		c.Observed += cj.Remark
		controls[i] = c
	}
	out := Check(stored.Row, stored.Column, stored.Scenario, r, ev, controls...)
	// Lines the suite added after the result's (the stored tail) stay.
	out.Evidence.Observed = append(out.Evidence.Observed, obs[j.ObservedAt+j.ObservedLen:]...)
	return out, nil
}

// Outcome is what `check --from` found.
type Outcome struct {
	Checks       int
	Reproduced   []string // scenarios whose check was rebuilt identically
	NotPersisted []string // "scenario: why"
	Differ       []string // "scenario: what differs"
	// Crashed lists the stored histories of scenarios that ended before
	// they were judged ("scenario: how"): partial evidence, no check.
	Crashed     []string
	Cells       int
	CellsSame   int      // cells byte-identical with every check replayed
	CellsEmpty  int      // cells no check scored (identical, nothing to replay)
	CellsStored int      // cells identical but holding a not-persisted check
	CellsDiffer []string // "row/column: stored … · replayed …"
}

// Identical says the replay reproduced every stored cell.
func (o Outcome) Identical() bool { return len(o.Differ) == 0 && len(o.CellsDiffer) == 0 }

// FromDir re-runs the pure checkers on the histories stored under dir
// (dir/histories) and rebuilds the scorecard of dir/results.json. Checks
// whose history holds no replayable judgement are kept as stored and listed
// as not persisted, never counted reproduced.
func FromDir(dir string) (Outcome, *report.Scorecard, error) {
	var o Outcome
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return o, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	stored, err := report.ReadJSON(bytes.NewReader(raw))
	if err != nil {
		return o, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	var file struct {
		Cells []json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal(raw, &file); err != nil || len(file.Cells) != len(stored.Cells) {
		return o, nil, fmt.Errorf("%w: results.json cells do not decode (%v)", ErrInput, err)
	}
	hdir := filepath.Join(dir, HistoriesDir)
	hs := map[string]history.History{}
	if _, err := os.Stat(hdir); err == nil {
		if hs, err = history.ReadDir(hdir); err != nil {
			return o, nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	names := make([]string, 0, len(hs))
	for name, h := range hs {
		if h.Crashed != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		o.Crashed = append(o.Crashed, fmt.Sprintf("%s: %s (%d operations, %d fault windows recorded)", name, hs[name].Crashed, len(hs[name].Ops), len(hs[name].Faults)))
	}
	var checks []report.Check
	storedCell := map[[2]string]bool{} // cells holding a check taken as stored
	for _, c := range stored.Checks() {
		o.Checks++
		key := [2]string{string(c.Row), string(c.Column)}
		j, found := judgementOf(hs, c)
		if !found {
			o.NotPersisted = append(o.NotPersisted, c.Scenario+": no history holds its judgement")
			checks = append(checks, c)
			storedCell[key] = true
			continue
		}
		if !Persisted(j) {
			o.NotPersisted = append(o.NotPersisted, c.Scenario+": "+whyNot(j))
			checks = append(checks, c)
			storedCell[key] = true
			continue
		}
		rebuilt, err := Rebuild(c, j)
		if err != nil {
			o.Differ = append(o.Differ, fmt.Sprintf("%s: cannot replay: %v", c.Scenario, err))
			checks = append(checks, c)
			continue
		}
		if d := diffCheck(c, rebuilt); d != "" {
			o.Differ = append(o.Differ, c.Scenario+": "+d)
		} else {
			o.Reproduced = append(o.Reproduced, c.Scenario)
		}
		checks = append(checks, rebuilt)
	}
	card := stored.Refold(checks)
	o.Cells = len(card.Cells)
	for i, cell := range card.Cells {
		b, err := json.Marshal(cell)
		if err != nil {
			return o, nil, fmt.Errorf("encode cell: %w", err)
		}
		var want, got bytes.Buffer
		if json.Compact(&want, file.Cells[i]) != nil || json.Compact(&got, b) != nil {
			return o, nil, fmt.Errorf("%w: cell %d does not compact", ErrInput, i)
		}
		switch {
		case !bytes.Equal(want.Bytes(), got.Bytes()):
			var was report.Cell
			_ = json.Unmarshal(file.Cells[i], &was)
			o.CellsDiffer = append(o.CellsDiffer, fmt.Sprintf("%s/%s: stored %s (%s) · replayed %s (%s)", cell.Row, cell.Column, was.Status, was.Summary, cell.Status, cell.Summary))
		case len(cell.Checks) == 0:
			o.CellsEmpty++
		case storedCell[[2]string{string(cell.Row), string(cell.Column)}]:
			o.CellsStored++
		default:
			o.CellsSame++
		}
	}
	return o, card, nil
}

func judgementOf(hs map[string]history.History, c report.Check) (history.Judgement, bool) {
	h, ok := hs[c.Scenario]
	if !ok {
		return history.Judgement{}, false
	}
	for _, j := range h.Judgements {
		if j.Row == string(c.Row) && j.Column == string(c.Column) && j.Scenario == c.Scenario {
			return j, true
		}
	}
	return history.Judgement{}, false
}

func whyNot(j history.Judgement) string {
	if j.Call == nil {
		return "its result was not reached through a registered checker (or the suite edited it after)"
	}
	for _, c := range j.Controls {
		if c.Call == nil {
			return "control " + c.Name + " was not judged through a registered checker (or the suite rewrote what it said)"
		}
	}
	return "not persisted"
}

// diffCheck names what differs between a stored and a rebuilt check ("" if
// nothing does, field by field as results.json has them).
func diffCheck(a, b report.Check) string {
	if a.Status != b.Status {
		return fmt.Sprintf("status %s, replayed %s: %s", a.Status, b.Status, b.Message)
	}
	if a.Message != b.Message {
		return fmt.Sprintf("message %q, replayed %q", a.Message, b.Message)
	}
	if len(a.Controls) != len(b.Controls) {
		return fmt.Sprintf("%d controls, replayed %d", len(a.Controls), len(b.Controls))
	}
	for i := range a.Controls {
		ca, cb := jsonOf(a.Controls[i]), jsonOf(b.Controls[i])
		if ca != cb {
			return fmt.Sprintf("control %s: stored %s · replayed %s", a.Controls[i].Name, ca, cb)
		}
	}
	if ea, eb := jsonOf(a.Evidence.Observed), jsonOf(b.Evidence.Observed); ea != eb {
		return fmt.Sprintf("observed: stored %s · replayed %s", ea, eb)
	}
	if a.Evidence.Counterexample != b.Evidence.Counterexample {
		return fmt.Sprintf("counterexample: stored %q · replayed %q", a.Evidence.Counterexample, b.Evidence.Counterexample)
	}
	if ja, jb := jsonOf(a), jsonOf(b); ja != jb {
		return "stored " + ja + " · replayed " + jb
	}
	return ""
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}
