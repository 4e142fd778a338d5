package mutate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/report"
)

// A dry run's report: two plain specs, one of another row, one skipped by
// the label filter, and an Ordered container of two steps.
const dryRun = `[{"SuiteDescription": "Registry Suite", "SpecReports": [
 {"LeafNodeType": "BeforeSuite", "State": "passed"},
 {"ContainerHierarchyTexts": ["registry", "go-redis"], "ContainerHierarchyLabels": [["registry"], []], "LeafNodeType": "It", "LeafNodeText": "registry/churn [registry · errors]", "LeafNodeLabels": ["errors"], "State": "passed"},
 {"ContainerHierarchyTexts": ["registry", "go-redis"], "ContainerHierarchyLabels": [["registry"], []], "LeafNodeType": "It", "LeafNodeText": "registry/churn (x+y)", "State": "passed"},
 {"ContainerHierarchyTexts": ["other"], "ContainerHierarchyLabels": [["protocol"]], "LeafNodeType": "It", "LeafNodeText": "skipped one", "State": "skipped"},
 {"ContainerHierarchyTexts": ["", "audit", "go-redis"], "ContainerHierarchyLabels": [[], ["marconi-loss-budget"], []], "LeafNodeType": "It", "LeafNodeText": "step 1", "State": "passed", "IsInOrderedContainer": true},
 {"ContainerHierarchyTexts": ["", "audit", "go-redis"], "ContainerHierarchyLabels": [[], ["marconi-loss-budget"], []], "LeafNodeType": "It", "LeafNodeText": "step 2", "LeafNodeLabels": ["registry"], "State": "passed", "IsInOrderedContainer": true}
]}]`

func TestUnitsOf(t *testing.T) {
	var reps specList
	if err := json.Unmarshal([]byte(dryRun), &reps); err != nil {
		t.Fatal(err)
	}
	rows := []report.RowID{report.RowRegistry, report.RowMarconiLossBudget}
	units := unitsOf(reps, "./suites/registry", rows)
	var names []string
	for _, u := range units {
		names = append(names, u.name)
	}
	want := []string{"registry go-redis registry/churn [registry · errors]", "registry go-redis registry/churn (x+y)", "audit go-redis"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("units %q, want %q", names, want)
	}
	if !reflect.DeepEqual(units[2].rows, []report.RowID{report.RowMarconiLossBudget, report.RowRegistry}) {
		t.Errorf("the Ordered group's rows %v: want both steps' rows", units[2].rows)
	}
	// Each focus selects exactly its unit: Ginkgo matches it against
	// "<suite description> <full text>".
	texts := []string{
		"Registry Suite registry go-redis registry/churn [registry · errors]",
		"Registry Suite registry go-redis registry/churn (x+y)",
		"Registry Suite audit go-redis step 1",
		"Registry Suite audit go-redis step 2",
		"Registry Suite registry go-redis registry/churn (x+y) again",
	}
	match := [][]bool{{true, false, false, false, false}, {false, true, false, false, false}, {false, false, true, true, false}}
	for i, u := range units {
		re := regexp.MustCompile(u.focus)
		for j, tx := range texts {
			if re.MatchString(tx) != match[i][j] {
				t.Errorf("focus %q on %q: %v, want %v", u.focus, tx, !match[i][j], match[i][j])
			}
		}
	}
}

// TestUndecided: a blind check is no kill and no clean pass — the runner
// re-runs the stage without fail-fast when it sees one (a blind spec
// stopped the specs after it); pass, fail and not-run are decided.
func TestUndecided(t *testing.T) {
	row := report.RowFencingMigration
	caught := report.Control{Name: "v", Kind: report.ControlVariant, Exercised: true, Caught: true}
	card := &report.Scorecard{Cells: []report.Cell{
		{Row: report.RowRegistry, Checks: []report.Check{{Row: report.RowRegistry, Scenario: "registry/x", Status: report.StatusBlind}}},
		{Row: row, Checks: []report.Check{{Row: row, Scenario: "a", Status: report.StatusPass, Controls: []report.Control{caught}}, {Row: row, Scenario: "b", Status: report.StatusNotRun}}},
	}}
	if got := undecided(card, []report.RowID{row}); got != "" {
		t.Errorf("undecided = %q: another row's blind check counted", got)
	}
	// The checker passed but a control went uncaught: blind by its verdict
	// (a mutant that disarms a control this way stopped fail-fast there).
	uncaught := caught
	uncaught.Caught = false
	card.Cells[1].Checks[0].Controls = append(card.Cells[1].Checks[0].Controls, uncaught)
	if got := undecided(card, []report.RowID{row}); got != "a check went undecided (blind): a: " {
		t.Errorf("undecided = %q: a passing checker with an uncaught control is blind", got)
	}
	card.Cells[1].Checks[0].Controls = []report.Control{caught}
	card.Cells[1].Checks = append(card.Cells[1].Checks, report.Check{Row: row, Scenario: "trace", Status: report.StatusBlind, Message: "only 1135 steps"})
	if got := undecided(card, []report.RowID{row}); got != "a check went undecided (blind): trace: only 1135 steps" {
		t.Errorf("undecided = %q", got)
	}
}

// TestCheckServed: an embedded-Lua mutant's run counts only if the build
// made that mutant's script and never the original it mutates; a missing
// log (the override never ran), the original's sha (the override did not
// apply) or another mutant is ErrNotServed.
func TestCheckServed(t *testing.T) {
	log := filepath.Join(t.TempDir(), "served")
	g := gomut.Mutant{ID: "impl/marconi/lua/register.lua:9:relational:abcdef", Served: "1111", Original: "0000"}
	if err := checkServed(log, g); !errors.Is(err, ErrNotServed) {
		t.Errorf("no log: %v, want ErrNotServed", err)
	}
	for _, tc := range []struct {
		log string
		ok  bool
	}{
		{g.ID + " 1111\n" + g.ID + " 1111\n", true},        // two processes made the store
		{g.ID + " 1111\n" + g.ID + " 5555\n", true},        // and the package's other script
		{g.ID + " 5555\n", false},                          // only the other script
		{g.ID + " 1111\n" + g.ID + " 0000\n", false},       // one process ran the original
		{"impl/marconi/lua/other.lua:1:x:1 1111\n", false}, // another mutant active
	} {
		if err := os.WriteFile(log, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkServed(log, g); (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrNotServed) {
			t.Errorf("log %q: err %v, want ok %v", tc.log, err, tc.ok)
		}
	}
}
