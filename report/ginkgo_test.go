package report_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/report"
)

// decoded turns Ginkgo's in-process reports into what slotgate reads:
// their JSON, as `ginkgo --json-report` writes it.
func decoded(t *testing.T, reports []types.Report) []report.GinkgoReport {
	t.Helper()
	b, err := json.Marshal(reports)
	if err != nil {
		t.Fatal(err)
	}
	var out []report.GinkgoReport
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func entry(v any) types.ReportEntry {
	return types.ReportEntry{Name: report.EntryName, Value: types.WrapEntryValue(v)}
}

func spec(text string, state types.SpecState, labels []string, entries ...types.ReportEntry) types.SpecReport {
	return types.SpecReport{
		LeafNodeType:   types.NodeTypeIt,
		LeafNodeText:   text,
		LeafNodeLabels: labels,
		State:          state,
		RunTime:        1500 * time.Millisecond,
		ReportEntries:  entries,
	}
}

func failure(msg string) types.Failure {
	return types.Failure{Message: msg, Location: types.CodeLocation{FileName: "suites/x/x_test.go", LineNumber: 42}}
}

// ginkgoReports is a hand-built run covering every path FromGinkgo takes.
func ginkgoReports() []types.Report {
	// Labels inherited from a container, column left for the labels to fill.
	inherited := spec("moved and ask", types.SpecStatePassed, []string{"errors"},
		entry(&report.Check{Scenario: "routing/moved-ask", Status: report.StatusPass, Controls: []report.Control{ok}}))
	inherited.ContainerHierarchyTexts = []string{"routing"}
	inherited.ContainerHierarchyLabels = [][]string{{"routing", "serial"}}

	crashed := spec("registry completeness", types.SpecStateFailed, []string{"registry", "silently-wrong"})
	crashed.Failure = failure("Expected\n    <int>: 3\nto equal\n    <int>: 4")

	panicked := spec("forced disconnect", types.SpecStatePanicked, []string{"subscriptions"})
	panicked.Failure = failure("Test Panicked")
	panicked.Failure.ForwardedPanic = "nil map"

	late := spec("lease contention", types.SpecStateFailed, []string{"fencing-scripts", "errors"},
		entry(report.Check{Row: report.RowFencingScripts, Column: report.ColumnErrors, Scenario: "fencing-scripts/crossslot", Status: report.StatusPass, Controls: []report.Control{ok}}))
	late.Failure = failure("cleanup: connection refused")

	// Suites record, then assert the verdict: a blind check fails its spec.
	asserted := spec("locality validator", types.SpecStateFailed, []string{"locality", "silently-wrong"},
		entry(report.Check{Row: report.RowLocality, Column: report.ColumnSilentlyWrong, Scenario: "locality/validator", Status: report.StatusPass}))
	asserted.Failure = failure("locality/silently-wrong locality/validator: blind")

	// Skipped by its own Skip(reason): listed, never scored.
	partitionSkipped := spec("partition", types.SpecStateSkipped, []string{"routing", "errors"})
	partitionSkipped.Failure = failure("not run on this topology: the local provider cannot cut a node off the bus")

	// The harness's reset (BeforeEach) failed: the scenario never ran.
	resetFailed := spec("bulk ops", types.SpecStateFailed, []string{"presence-mget", "errors"})
	resetFailed.Failure = failure("reset cluster:3x1: topology needs rebuild")
	resetFailed.Failure.FailureNodeType = types.NodeTypeBeforeEach
	resetFailed.Failure.Location = types.CodeLocation{FileName: "suites/x/x_suite_test.go", LineNumber: 36}

	// Past its spec timeout after recording a pass (a cleanup that hung):
	// no verdict on the implementation either way.
	hung := spec("heartbeats", types.SpecStateTimedout, []string{"registry", "errors"},
		entry(report.Check{Row: report.RowRegistry, Column: report.ColumnErrors, Scenario: "registry/ops", Status: report.StatusPass, Controls: []report.Control{ok}}))
	hung.Failure = failure("A spec timeout occurred")

	beforeSuite := types.SpecReport{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, Failure: failure("valkey-server not found")}

	return []types.Report{{
		SuiteDescription: "slotgate",
		StartTime:        t0,
		EndTime:          t0.Add(90 * time.Second),
		SpecReports: types.SpecReports{
			spec("contention", types.SpecStatePassed, []string{"fencing-scripts", "silently-wrong"},
				types.ReportEntry{Name: "unrelated", Value: types.WrapEntryValue(42)},
				entry(report.Check{Row: report.RowFencingScripts, Column: report.ColumnSilentlyWrong, Scenario: "fencing-scripts/contention", Status: report.StatusPass, Controls: []report.Control{ok}})),
			inherited,
			crashed,
			spec("skipped", types.SpecStateSkipped, []string{"telemetry", "errors"},
				entry(report.Check{Row: report.RowTelemetry, Column: report.ColumnErrors, Status: report.StatusPass, Controls: []report.Control{ok}})),
			spec("pending", types.SpecStatePending, []string{"telemetry", "silently-wrong"}),
			partitionSkipped,
			panicked,
			late,
			asserted,
			resetFailed,
			hung,
			beforeSuite,
		},
	}}
}

func TestFromGinkgo(t *testing.T) {
	in := ginkgoReports()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := report.LoadGinkgoJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	// Ginkgo's own types through JSON, and the file Ginkgo would write.
	for name, reports := range map[string][]report.GinkgoReport{"encoded": decoded(t, in), "from file": loaded} {
		t.Run(name, func(t *testing.T) {
			s, err := report.FromGinkgo(reports, report.Meta{Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			want := map[[2]string]report.Status{
				{"fencing-scripts", "silently-wrong"}: report.StatusPass,
				{"routing", "errors"}:                 report.StatusPartial, // a skipped scenario
				{"registry", "silently-wrong"}:        report.StatusFail,
				{"registry", "errors"}:                report.StatusInconclusive,
				{"telemetry", "errors"}:               report.StatusNotRun,
				{"telemetry", "silently-wrong"}:       report.StatusNotRun,
				{"subscriptions", "errors"}:           report.StatusFail,
				{"subscriptions", "silently-wrong"}:   report.StatusFail,
				{"fencing-scripts", "errors"}:         report.StatusFail,
				{"locality", "silently-wrong"}:        report.StatusBlind,
				{"presence-mget", "errors"}:           report.StatusInconclusive,
			}
			for k, st := range want {
				if c := s.Cell(report.RowID(k[0]), report.Column(k[1])); c.Status != st {
					t.Errorf("%s/%s = %s (%s), want %s", k[0], k[1], c.Status, c.Summary, st)
				}
			}
			crash := s.Cell(report.RowRegistry, report.ColumnSilentlyWrong).Checks[0]
			if !strings.Contains(crash.Message, "spec failed before recording a check: Expected <int>: 3 to equal <int>: 4 (") ||
				!strings.Contains(crash.Message, "suites/x/x_test.go:42") {
				t.Errorf("synthetic message = %q", crash.Message)
			}
			if rc := s.Cell(report.RowPresenceMGet, report.ColumnErrors).Checks[0]; !strings.Contains(rc.Message, "inconclusive: the harness's BeforeEach failed before the scenario ran") {
				t.Errorf("reset failure message = %q", rc.Message)
			}
			if hc := s.Cell(report.RowRegistry, report.ColumnErrors).Checks; len(hc) != 2 || !slices.ContainsFunc(hc, func(c report.Check) bool {
				return c.Status == report.StatusInconclusive && strings.Contains(c.Message, "inconclusive: the spec ran past its timeout")
			}) {
				t.Errorf("timed-out spec = %+v", hc)
			}
			if crash.Scenario != "registry completeness" || crash.Evidence.Seed != 7 {
				t.Errorf("synthetic check = %+v", crash)
			}
			if !strings.Contains(crash.Evidence.Counterexample, "to equal") {
				t.Errorf("counterexample = %q", crash.Evidence.Counterexample)
			}
			if late := s.Cell(report.RowFencingScripts, report.ColumnErrors); len(late.Checks) != 2 ||
				!strings.Contains(late.Checks[0].Message, "after recording its check") {
				t.Errorf("late failure = %+v", late.Checks)
			}
			if pc := s.Cell(report.RowSubscriptions, report.ColumnErrors).Checks[0]; !strings.Contains(pc.Evidence.Counterexample, "panic: nil map") {
				t.Errorf("panic lost: %q", pc.Evidence.Counterexample)
			}
			routed := s.Cell(report.RowRouting, report.ColumnErrors).Checks[0]
			if routed.Row != report.RowRouting || routed.Column != report.ColumnErrors || routed.Evidence.Duration != report.Duration(1500*time.Millisecond) {
				t.Errorf("labels did not fill the check: %+v", routed)
			}
			if c := s.Cell(report.RowRouting, report.ColumnErrors); c.Status != report.StatusPartial ||
				!strings.Contains(c.Summary, "(+1 scenario not run on this topology: the local provider cannot cut a node off the bus)") {
				t.Errorf("a skipped scenario is not named in its cell: %s %q", c.Status, c.Summary)
			}
			if len(s.Meta.Skipped) != 1 || s.Meta.Skipped[0].Scenario != "partition" {
				t.Errorf("Meta.Skipped = %+v (a filtered-out spec has no message and is not listed)", s.Meta.Skipped)
			}
			if len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "BeforeSuite failed without a row label: valkey-server not found") {
				t.Errorf("Problems = %q", s.Problems)
			}
			if !s.Meta.StartedAt.Equal(t0) || s.Meta.Duration != report.Duration(90*time.Second) {
				t.Errorf("meta not filled from the reports: %v %v", s.Meta.StartedAt, s.Meta.Duration)
			}
			if n := len(s.Cell(report.RowLocality, report.ColumnSilentlyWrong).Checks); n != 1 {
				t.Errorf("asserted blind check gained a synthetic twin: %d checks", n)
			}
			if pass, _ := s.Gate(); pass {
				t.Error("gate passed a run with crashed specs")
			}
		})
	}
}

func TestFromGinkgoRejectsMalformedEntries(t *testing.T) {
	for name, v := range map[string]any{"not a check": "pass", "no value": nil} {
		t.Run(name, func(t *testing.T) {
			reports := []types.Report{{SpecReports: types.SpecReports{
				spec("x", types.SpecStatePassed, []string{"routing", "errors"}, entry(v)),
			}}}
			if _, err := report.FromGinkgo(decoded(t, reports), report.Meta{}); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestLoadGinkgoJSONMissingFile(t *testing.T) {
	if _, err := report.LoadGinkgoJSON(filepath.Join(t.TempDir(), "absent.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}
