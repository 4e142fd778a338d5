package report_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/report"
)

// shardOf splits the sample run into the scorecard shard i of n would have
// written: the rows at positions ≡ i-1 mod n, with their checks.
func shardOf(t *testing.T, whole *report.Scorecard, i, n int) *report.Scorecard {
	t.Helper()
	meta := whole.Meta
	meta.Rows = nil
	meta.Shard = &report.Shard{Index: i, Of: n, Requested: whole.Meta.Rows}
	meta.StartedAt = whole.Meta.StartedAt.Add(time.Duration(i) * time.Second)
	var checks []report.Check
	for k, id := range whole.Meta.Rows {
		if k%n != i-1 {
			continue
		}
		meta.Rows = append(meta.Rows, id)
		for _, c := range whole.Cells {
			if c.Row == id {
				checks = append(checks, c.Checks...)
			}
		}
	}
	return report.New(meta, checks)
}

func cellsOf(s *report.Scorecard) []string {
	var out []string
	for _, c := range s.Cells {
		out = append(out, string(c.Row)+"/"+string(c.Column)+"="+string(c.Status)+" "+c.Summary)
	}
	return out
}

func TestMergeShardsEqualsOneRun(t *testing.T) {
	whole := SampleScorecard()
	merged, err := report.Merge(shardOf(t, whole, 2, 3), shardOf(t, whole, 1, 3), shardOf(t, whole, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cellsOf(merged), cellsOf(whole); !slices.Equal(got, want) {
		t.Errorf("merged cells differ from one run:\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(merged.Requested(), whole.Requested()) {
		t.Errorf("Requested() = %v, want %v", merged.Requested(), whole.Requested())
	}
	gotPass, gotReasons := merged.Gate()
	wantPass, wantReasons := whole.Gate()
	if gotPass != wantPass || !slices.Equal(gotReasons, wantReasons) {
		t.Errorf("Gate() = %v %q, want %v %q", gotPass, gotReasons, wantPass, wantReasons)
	}
	if merged.Meta.Shard != nil || !merged.Meta.StartedAt.Equal(whole.Meta.StartedAt.Add(time.Second)) {
		t.Errorf("meta: shard %v, started %v", merged.Meta.Shard, merged.Meta.StartedAt)
	}
}

// A shard that never reported must fail the merged gate: its rows read
// "not run" and the run names the missing shard.
func TestMergeMissingShardFailsTheGate(t *testing.T) {
	pass := func(row report.RowID) []report.Check {
		return []report.Check{passing(row, report.ColumnErrors), passing(row, report.ColumnSilentlyWrong)}
	}
	all := []report.RowID{report.RowRouting, report.RowRegistry}
	one := report.New(report.Meta{Profile: "smoke", Rows: all[:1], Shard: &report.Shard{Index: 1, Of: 2, Requested: all}}, pass(report.RowRouting))
	if ok, reasons := one.Gate(); !ok {
		t.Fatalf("shard 1 alone should pass its own gate: %q", reasons)
	}
	merged, err := report.Merge(one)
	if err != nil {
		t.Fatal(err)
	}
	ok, reasons := merged.Gate()
	if ok {
		t.Fatal("merged gate passed with shard 2/2 missing")
	}
	joined := strings.Join(reasons, "\n")
	for _, want := range []string{"shard 2/2 did not report", "registry/errors: not-run"} {
		if !strings.Contains(joined, want) {
			t.Errorf("reasons lack %q:\n%s", want, joined)
		}
	}
}

func TestMergeRefusesMismatchedShards(t *testing.T) {
	a := report.New(report.Meta{Profile: "smoke", Shard: &report.Shard{Index: 1, Of: 2}}, nil)
	for name, b := range map[string]*report.Scorecard{
		"same shard twice":  report.New(report.Meta{Profile: "smoke", Shard: &report.Shard{Index: 1, Of: 2}}, nil),
		"other shard count": report.New(report.Meta{Profile: "smoke", Shard: &report.Shard{Index: 2, Of: 3}}, nil),
		"other profile":     report.New(report.Meta{Profile: "full", Shard: &report.Shard{Index: 2, Of: 2}}, nil),
		"not a shard":       report.New(report.Meta{Profile: "smoke"}, nil),
	} {
		if _, err := report.Merge(a, b); !errors.Is(err, report.ErrMerge) {
			t.Errorf("%s: Merge error = %v, want ErrMerge", name, err)
		}
		if _, err := report.Merge(b, a); !errors.Is(err, report.ErrMerge) && name == "not a shard" {
			t.Errorf("%s (plain first): Merge error = %v, want ErrMerge", name, err)
		}
	}
	if _, err := report.Merge(); !errors.Is(err, report.ErrMerge) {
		t.Errorf("Merge() error = %v, want ErrMerge", err)
	}
}
