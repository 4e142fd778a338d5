package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
)

func TestKillerTakesTheFirstFailingCheckOfTheRows(t *testing.T) {
	card := report.New(report.Meta{Rows: []report.RowID{report.RowFencingScripts, report.RowFencingMigration}}, []report.Check{
		{Row: report.RowFencingScripts, Column: report.ColumnErrors, Scenario: "fencing-scripts/script-ops/go-redis", Status: report.StatusPass},
		{Row: report.RowFencingMigration, Column: report.ColumnSilentlyWrong, Scenario: "fencing-migration/trace-conformance", Status: report.StatusFail, Message: "diverged\nat step 3"},
		{Row: report.RowFencingScripts, Column: report.ColumnSilentlyWrong, Scenario: "fencing-scripts/read-side/go-redis", Status: report.StatusBlind},
	})
	if _, ok := Killer(card, []report.RowID{report.RowFencingScripts}); ok {
		t.Fatal("a blind check killed a mutant")
	}
	k, ok := Killer(card, []report.RowID{report.RowFencingMigration})
	if !ok || k.Check != "fencing-migration/trace-conformance" || k.Column != report.ColumnSilentlyWrong || k.Message != "diverged at step 3" {
		t.Fatalf("killer %+v %v", k, ok)
	}
	if got := scenarioName("fencing-scripts fencing-scripts/script-ops/go-redis [fencing-scripts · errors] — tagged scripts run"); got != "fencing-scripts/script-ops/go-redis (scenario failed before its check)" {
		t.Fatalf("crashed scenario name %q", got)
	}
	if got := Failing(card); len(got) != 1 {
		t.Fatalf("failing %v", got)
	}
}

func TestSummarizeCreditsRowsAndExcludesEquivalents(t *testing.T) {
	fs, fm := report.RowFencingScripts, report.RowFencingMigration
	kill := &Kill{Row: fm}
	rs := []Result{
		{Mutant: Mutant{ID: "a", Kind: KindLua, File: "c/acquire.lua"}, Status: Killed, Killer: kill, Ran: []report.RowID{fs, fm}},
		{Mutant: Mutant{ID: "b", Kind: KindLua, File: "c/acquire.lua"}, Status: Survived, Ran: []report.RowID{fs, fm}},
		{Mutant: Mutant{ID: "c", Kind: KindLua, File: "c/renew.lua"}, Status: Equivalent, Ran: nil},
		{Mutant: Mutant{ID: "d", Kind: KindGo, File: "impl/gate/gate.go"}, Status: Killed, Killer: &Kill{Row: fs}, Ran: []report.RowID{fs}},
	}
	s := Summarize(rs)
	if s.Total.Killed != 2 || s.Total.Survived != 1 || s.Total.Equivalent != 1 || s.Total.KillRate < 0.66 || s.Total.KillRate > 0.67 {
		t.Fatalf("total %+v", s.Total)
	}
	rows := map[string]Tally{}
	for _, r := range s.ByRow {
		rows[r.Name] = r
	}
	if rows[string(fs)].Mutants != 3 || rows[string(fs)].Killed != 1 || rows[string(fm)].Killed != 1 || rows[string(fm)].Survived != 1 {
		t.Fatalf("by row %+v", s.ByRow)
	}
	groups := map[string]Tally{}
	for _, g := range s.ByGroup {
		groups[g.Name] = g
	}
	if groups["impl/gate"].Killed != 1 || groups["lua:c/acquire.lua"].Mutants != 2 {
		t.Fatalf("by group %+v", s.ByGroup)
	}

	dir := t.TempDir()
	rep := NewReport(Meta{MinKill: 0.9}, rs)
	if rep.Pass {
		t.Fatal("2/3 passed a 0.9 bar")
	}
	j, h, err := rep.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(j)
	if err != nil || len(back.Results) != 4 {
		t.Fatalf("read back: %v", err)
	}
	html, _ := os.ReadFile(h)
	if !strings.Contains(string(html), "survived") || !strings.Contains(string(html), "impl/gate") {
		t.Fatal("html lacks the survivor or the package tally")
	}
}

func TestLuaMutantsAndStatic(t *testing.T) {
	set := fencing.Embedded()
	ms, err := LuaMutants(set, []report.RowID{report.RowFencingMigration}, false)
	if err != nil {
		t.Fatal(err)
	}
	onlyScripts, err := LuaMutants(set, []report.RowID{report.RowFencingScripts}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(onlyScripts) == 0 || len(onlyScripts) >= len(ms) {
		t.Fatalf("fencing-scripts covers %d mutants, fencing-migration %d: want only C's for the first", len(onlyScripts), len(ms))
	}
	for _, m := range onlyScripts {
		if m.Phase != "c" {
			t.Fatalf("%s (phase %s) routed to fencing-scripts", m.ID, m.Phase)
		}
	}
	// The static validator kills the undeclared-key mutants and no
	// relational swap.
	r := &LuaRunner{Set: set, Table: validateHand()}
	argv, rel := 0, 0
	for _, m := range ms {
		var orig string
		for _, e := range set.Files() {
			if e.File == m.File {
				orig = set.Text(e)
			}
		}
		_, killed := r.Static(m, orig)
		switch m.Operator {
		case "key-argv", "key-concat":
			if !killed {
				t.Errorf("static validator missed %s: %s", m.ID, m.Desc)
			}
			argv++
		case "relational":
			if killed {
				t.Errorf("static validator killed a relational swap %s", m.ID)
			}
			rel++
		}
	}
	if argv == 0 || rel == 0 {
		t.Fatal("no undeclared-key or relational mutant")
	}
	// A mutant's set directory loads back with the mutant in place.
	dir := filepath.Join(t.TempDir(), "set")
	if err := set.WriteDir(dir, map[string]string{ms[0].File: string(ms[0].Content)}); err != nil {
		t.Fatal(err)
	}
	back, err := fencing.LoadScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range back.Files() {
		if e.File == ms[0].File && back.Text(e) != string(ms[0].Content) {
			t.Fatal("the written set does not hold the mutant")
		}
	}
}
