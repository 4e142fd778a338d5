package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// writeShard writes the results.json shard i of n would write, scoring
// both columns of rows as pass.
func writeShard(t *testing.T, i, n int, requested []report.RowID, rows ...report.RowID) string {
	t.Helper()
	var checks []report.Check
	for _, r := range rows {
		for _, col := range report.Columns {
			checks = append(checks, report.Check{Row: r, Column: col, Scenario: string(r) + "/ok", Status: report.StatusPass,
				Controls: []report.Control{{Name: "bad", Kind: report.ControlVariant, Why: "a bad variant", Caught: true, Exercised: true}}})
		}
	}
	card := report.New(report.Meta{Profile: "smoke", Rows: rows, Shard: &report.Shard{Index: i, Of: n, Requested: requested}}, checks)
	dir := t.TempDir()
	if _, err := report.WriteAll(dir, card); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportMerge(t *testing.T) {
	all := []report.RowID{report.RowRouting, report.RowRegistry, report.RowAxioms}
	one := writeShard(t, 1, 2, all, report.RowRouting, report.RowAxioms)
	two := writeShard(t, 2, 2, all, report.RowRegistry)

	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	if code := run([]string{"report", "--out", out, "--merge", one, two + "/results.json"}, &stdout, &stderr); code != exitPass {
		t.Fatalf("both shards: exit %d, want 0\n%s%s", code, stdout.String(), stderr.String())
	}
	merged, err := readResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := merged.Tally(); got.Pass != 6 || got.Total() != 6 {
		t.Errorf("merged tally %+v, want 6 passing cells", got)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"report", "--merge", one}, &stdout, &stderr); code != exitGateFail {
		t.Fatalf("shard 2 missing: exit %d, want 1\n%s", code, stdout.String())
	}
	if !strings.Contains(stdout.String(), "not run") {
		t.Errorf("scorecard does not say the missing shard's rows were not run:\n%s", stdout.String())
	}
}

func TestReportMergeBadInput(t *testing.T) {
	one := writeShard(t, 1, 2, nil, report.RowRouting)
	for name, args := range map[string][]string{
		"no shards":        {"report", "--merge"},
		"both modes":       {"report", "--from", one, "--merge", one},
		"same shard twice": {"report", "--merge", one, one},
		"missing dir":      {"report", "--merge", one, "/nonexistent"},
		"stray argument":   {"report", "--from", one, "extra"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitUsage {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, stderr.String())
		}
	}
}
