package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// card is a synthetic scorecard of the axioms and routing rows: every cell
// passes unless statuses names it ("routing/errors": fail).
func card(statuses map[string]report.Status) *report.Scorecard {
	caught := []report.Control{{Name: "c", Kind: report.ControlVariant, Caught: true, Exercised: true}}
	var checks []report.Check
	for _, row := range []report.RowID{report.RowAxioms, report.RowRouting} {
		for _, col := range report.Columns {
			st := report.StatusPass
			if s, ok := statuses[string(row)+"/"+string(col)]; ok {
				st = s
			}
			if st == report.StatusNotRun {
				continue
			}
			checks = append(checks, report.Check{Row: row, Column: col, Scenario: string(row) + "/x", Status: st, Message: "boom", Controls: caught})
		}
	}
	return report.New(report.Meta{Rows: []report.RowID{report.RowAxioms, report.RowRouting}}, checks)
}

func TestFlipTable(t *testing.T) {
	runs := []stabilityRun{
		{Index: 1, Seed: 11, Card: card(nil)},
		{Index: 2, Seed: 22, Card: card(map[string]report.Status{"routing/errors": report.StatusFail})},
		{Index: 3, Seed: 33, Card: card(map[string]report.Status{"axioms/silently-wrong": report.StatusNotRun, "routing/errors": report.StatusFail})},
		{Index: 4, Seed: 44}, // wrote no results
	}
	table := flipTable(runs)
	if len(table) != 4 {
		t.Fatalf("table has %d cells, want 4: %+v", len(table), table)
	}
	want := map[string]struct {
		flips  bool
		status string
	}{
		"axioms/errors":          {false, "pass pass pass "},
		"axioms/silently-wrong":  {true, "pass pass not-run "},
		"routing/errors":         {true, "pass fail fail "},
		"routing/silently-wrong": {false, "pass pass pass "},
	}
	for _, fr := range table {
		var got []string
		for _, st := range fr.Status {
			got = append(got, string(st))
		}
		w := want[fr.Cell.String()]
		if fr.Flips != w.flips || strings.Join(got, " ") != w.status {
			t.Errorf("%s: flips %v status %q, want %v %q", fr.Cell, fr.Flips, strings.Join(got, " "), w.flips, w.status)
		}
	}

	nps := nonPassCells(runs)
	var got []string
	for _, np := range nps {
		got = append(got, np.Cell.String()+"@"+string(rune('0'+np.Run)))
	}
	if strings.Join(got, " ") != "routing/errors@2 axioms/silently-wrong@3 routing/errors@3" {
		t.Errorf("non-pass cells: %v", got)
	}
	if nps[0].Seed != 22 || nps[0].Status != report.StatusFail || !strings.Contains(nps[0].Summary, "boom") {
		t.Errorf("non-pass cell lacks seed, status or summary: %+v", nps[0])
	}

	// A replay of run 2's routing with seed 22 fails the same way; one of
	// run 3's passes.
	judgeReplay(&nps[0], stabilityRun{Card: card(map[string]report.Status{"routing/errors": report.StatusFail})})
	judgeReplay(&nps[2], stabilityRun{Card: card(nil)})
	if !nps[0].Reproduced || nps[2].Reproduced || nps[2].Replay != report.StatusPass {
		t.Errorf("replays judged wrong: %+v / %+v", nps[0], nps[2])
	}

	var out bytes.Buffer
	writeFlipTable(&out, runs, table, nps)
	for _, want := range []string{
		"routing/errors", "FLIPS", "(2 cells pass in every run that wrote results)", "run 4 (seed 44) wrote no results",
		"run 2 · seed 22 · routing/errors FAIL: routing/x: boom",
		"replay reproduces it (slotgate run --row routing --seed 22 → FAIL)",
		"replay does NOT reproduce it (slotgate run --row routing --seed 33 → pass)",
		"not replayed (slotgate run --row axioms --seed 33)",
		"stability: 2 cells of 4 cells flipped over 4 runs; 3 non-pass cells",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "axioms/errors") {
		t.Errorf("a cell that passed in every run is listed:\n%s", out.String())
	}
}
