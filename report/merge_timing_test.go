package report_test

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/report"
)

// The merged run's timing and schedule are every shard's, not the first's.
func TestMergeTiming(t *testing.T) {
	shard := func(i int, row report.RowID, d time.Duration) *report.Scorecard {
		return report.New(report.Meta{Profile: "smoke", Rows: []report.RowID{row}, Shard: &report.Shard{Index: i, Of: 2, Requested: []report.RowID{report.RowAxioms, report.RowRouting}},
			Timing:   &report.Timing{Suites: report.Duration(d), Rows: map[report.RowID]report.Duration{row: report.Duration(d)}, Scenarios: []report.ScenarioTime{{Scenario: string(row), Rows: []report.RowID{row}, Duration: report.Duration(d)}}},
			Schedule: &report.Schedule{Jobs: i, Suites: []report.SuiteRun{{Package: string(row), Wall: report.Duration(d)}}}}, nil)
	}
	m, err := report.Merge(shard(1, report.RowAxioms, time.Second), shard(2, report.RowRouting, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tm := m.Meta.Timing
	if tm == nil || tm.Suites != report.Duration(4*time.Second) || len(tm.Rows) != 2 || len(tm.Scenarios) != 2 || tm.Scenarios[0].Scenario != string(report.RowRouting) {
		t.Errorf("merged timing %+v, want both shards' (4s, two rows, slowest first)", tm)
	}
	if s := m.Meta.Schedule; s == nil || s.Jobs != 2 || len(s.Suites) != 2 {
		t.Errorf("merged schedule %+v, want both shards' suites", s)
	}
}
