package recheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// storeRun writes what a run writes: results.json and one history per
// scenario, each holding the judgement behind its check.
func storeRun(t *testing.T, dir string, outcomes []history.OpOutcome, extra report.Check) {
	t.Helper()
	ev := report.Evidence{Seed: 7, Observed: []string{"suite's own line"}}
	result := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: outcomes, MinOps: 1})
	ctl := Control(report.ControlVariant, "pinned", "ignores MOVED", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "set", ErrKind: "MOVED", Err: "MOVED 1 x"}}, MinOps: 1}))
	ctl = NotExercised(ctl, "premise unmet")
	ctl.Observed += " (kinds map[MOVED:1])"
	self := Control(report.ControlSelfTest, "planted", "a planted error", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "get", ErrKind: "network", Err: "EOF"}}, MinOps: 1}))
	variant := Control(report.ControlVariant, "refused", "CROSSSLOT", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: []history.OpOutcome{{Op: "mget", ErrKind: "CROSSSLOT"}}, MinOps: 1}))
	c := Check(report.RowRouting, report.ColumnErrors, "routing/redirects/go-redis", result, ev, ctl, self, variant)
	c.Evidence.Observed = append(c.Evidence.Observed, "a line after the result's")
	rec := history.NewRecorder(c.Scenario, 7, nil)
	rec.Fault(history.FaultWindow{Fault: "slot/migrate-1", Target: "n0→n1", Start: time.Millisecond, End: 5 * time.Millisecond})
	rec.Judgement(Judgement(c))
	if _, err := history.Write(filepath.Join(dir, HistoriesDir), rec.Snapshot()); err != nil {
		t.Fatal(err)
	}
	card := report.New(report.Meta{Seed: 7, StartedAt: time.Unix(0, 0).UTC()}, []report.Check{c, extra})
	if _, err := report.WriteAll(dir, card); err != nil {
		t.Fatal(err)
	}
}

func TestFromDirReproducesAndFlips(t *testing.T) {
	dir := t.TempDir()
	ok := []history.OpOutcome{{Op: "set"}, {Op: "get"}}
	unpersisted := report.Check{Row: report.RowRouting, Column: report.ColumnSilentlyWrong, Scenario: "routing/hand-built", Status: report.StatusPass, Message: "m",
		Controls: []report.Control{{Name: "v", Kind: report.ControlVariant, Caught: true, Exercised: true}}}
	storeRun(t, dir, ok, unpersisted)
	o, _, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Identical() || len(o.Reproduced) != 1 || len(o.NotPersisted) != 1 || o.CellsSame != 1 || o.CellsStored != 1 {
		t.Fatalf("replay of an untouched run: %+v", o)
	}

	// Edit the stored history so the invariant breaks: an operation failed.
	p := filepath.Join(dir, HistoriesDir, history.FileName("routing/redirects/go-redis"))
	h, err := history.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	h.Judgements[0].Call.Input[0] = []byte(`{"Outcomes":[{"Op":"set","ErrKind":"CLUSTERDOWN","Err":"CLUSTERDOWN"}],"MinOps":1}`)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Write(filepath.Join(dir, HistoriesDir), h); err != nil {
		t.Fatal(err)
	}
	o, card, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.Identical() || len(o.CellsDiffer) != 1 || !strings.Contains(o.CellsDiffer[0], "routing/errors: stored pass") || !strings.Contains(o.CellsDiffer[0], "replayed fail") {
		t.Fatalf("an edited history did not flip the cell: %+v", o)
	}
	for _, c := range card.Cells {
		if c.Row == report.RowRouting && c.Column == report.ColumnErrors && c.Status != report.StatusFail {
			t.Fatalf("rebuilt cell is %s", c.Status)
		}
	}
}

// An out dir written while the shared checkers were judged reflectively
// stored each call under the Go function name, one input per argument: it
// reproduces through the typed checker's alias.
func TestFromDirReplaysReflectiveCalls(t *testing.T) {
	dir := t.TempDir()
	storeRun(t, dir, []history.OpOutcome{{Op: "set"}, {Op: "get"}}, report.Check{Row: report.RowRouting, Column: report.ColumnSilentlyWrong, Scenario: "routing/hand-built", Status: report.StatusPass})
	p := filepath.Join(dir, HistoriesDir, history.FileName("routing/redirects/go-redis"))
	h, err := history.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	reflective := func(c *history.Call) {
		var in check.NoErrorsInput
		if err := json.Unmarshal(c.Input[0], &in); err != nil {
			t.Fatal(err)
		}
		outcomes, _ := json.Marshal(in.Outcomes)
		minOps, _ := json.Marshal(in.MinOps)
		*c = history.Call{Checker: "NoErrors", Input: []json.RawMessage{outcomes, minOps}}
	}
	j := &h.Judgements[0]
	reflective(j.Call)
	for i := range j.Controls {
		reflective(j.Controls[i].Call)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Write(filepath.Join(dir, HistoriesDir), h); err != nil {
		t.Fatal(err)
	}
	o, _, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Identical() || len(o.Reproduced) != 1 || o.CellsSame != 1 {
		t.Fatalf("replay of reflective calls: %+v", o)
	}
}

func TestFromDirBadInput(t *testing.T) {
	if _, _, err := FromDir(t.TempDir()); err == nil {
		t.Fatal("a directory without results.json was accepted")
	}
}

// A crashed scenario's partial history is listed, never counted a check.
func TestFromDirListsCrashed(t *testing.T) {
	dir := t.TempDir()
	storeRun(t, dir, []history.OpOutcome{{Op: "set"}}, report.Check{Row: report.RowRouting, Column: report.ColumnSilentlyWrong, Scenario: "routing/hand-built", Status: report.StatusPass})
	rec := history.NewRecorder("routing/crashed", 7, nil)
	rec.Op(history.Op{Start: time.Millisecond, End: 2 * time.Millisecond, Kind: "set", Outcome: history.OK})
	h := rec.Snapshot()
	h.Crashed = "crashed before it was judged: panicked"
	if _, err := history.Write(filepath.Join(dir, HistoriesDir), h); err != nil {
		t.Fatal(err)
	}
	o, _, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Crashed) != 1 || o.Crashed[0] != "routing/crashed: crashed before it was judged: panicked (1 operations, 0 fault windows recorded)" || o.Checks != 2 || !o.Identical() {
		t.Fatalf("crashed history: %+v", o)
	}
}

// One Evidence given to two checks (a suite scores both columns of one run)
// keeps each check's own observed lines: the second never writes into the
// first's.
func TestCheckSharedEvidenceKeepsEachChecksLines(t *testing.T) {
	ev := report.Evidence{Observed: make([]string, 1, 8)}
	ev.Observed[0] = "suite's own line"
	first := check.Result{Checker: "a", Status: check.Pass, Observed: []string{"first's line"}}
	second := check.Result{Checker: "b", Status: check.Pass, Observed: []string{"second's line"}}
	a := Check(report.RowRouting, report.ColumnSilentlyWrong, "s", first, ev)
	b := Check(report.RowRouting, report.ColumnErrors, "s", second, ev)
	if got := a.Evidence.Observed; len(got) != 2 || got[1] != "first's line" {
		t.Errorf("first check's lines: %q", got)
	}
	if got := b.Evidence.Observed; len(got) != 2 || got[1] != "second's line" {
		t.Errorf("second check's lines: %q", got)
	}
}
