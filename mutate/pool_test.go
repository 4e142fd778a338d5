package mutate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/mutate/schema"
	"github.com/slotgate/slotgate/report"
)

// TestPool: every item runs exactly once, never more than jobs at once,
// and handed out in the order given; stop keeps the rest from starting.
func TestPool(t *testing.T) {
	for _, jobs := range []int{0, 1, 2, 5} {
		var mu sync.Mutex
		var running, peak int32
		seen := map[int]int{}
		var started []int
		Pool([]int{3, 1, 4, 0, 2}, jobs, nil, func(i int) {
			n := atomic.AddInt32(&running, 1)
			mu.Lock()
			seen[i]++
			started = append(started, i)
			if n > peak {
				peak = n
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond) // a duration: a job long enough for the pool's concurrency to show
			atomic.AddInt32(&running, -1)
		})
		if len(seen) != 5 {
			t.Errorf("jobs %d: ran %v, want each of 0..4 once", jobs, seen)
		}
		for i, n := range seen {
			if n != 1 {
				t.Errorf("jobs %d: item %d ran %d times", jobs, i, n)
			}
		}
		if want := int32(max(jobs, 1)); peak > want {
			t.Errorf("jobs %d: %d ran at once", jobs, peak)
		}
		if jobs <= 1 && !reflect.DeepEqual(started, []int{3, 1, 4, 0, 2}) {
			t.Errorf("jobs %d: order %v, want the order given", jobs, started)
		}
	}
	var n int32
	Pool([]int{0, 1, 2, 3}, 1, func() bool { return atomic.LoadInt32(&n) >= 2 }, func(int) { atomic.AddInt32(&n, 1) })
	if n != 2 {
		t.Errorf("stop after 2: ran %d", n)
	}
}

func TestLongestFirst(t *testing.T) {
	costs := []float64{5, 0, 60, 5, 12}
	got := LongestFirst(len(costs), func(i int) float64 { return costs[i] })
	if want := []int{2, 4, 0, 3, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("LongestFirst = %v, want %v (ties in index order)", got, want)
	}
}

// fakeSuite writes a stand-in for a compiled suite: it writes a Ginkgo
// JSON report to --ginkgo.json-report *first*, then sleeps, so two runs
// that shared a report path would read each other's verdict. The check
// fails when SLOTGATE_MUTANT names a mutant ending in "-dies".
func fakeSuite(t *testing.T, dir string) string {
	t.Helper()
	rep := func(st report.Status) string {
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "registry/x", LeafNodeLabels: []string{"registry", "errors"},
			State: types.SpecStatePassed, ReportEntries: []types.ReportEntry{{Name: report.EntryName, Value: types.WrapEntryValue(
				report.Check{Row: report.RowRegistry, Column: report.ColumnErrors, Scenario: "registry/x", Status: st, Message: string(st)})}}}
		if st == report.StatusFail {
			sr.State, sr.Failure = types.SpecStateFailed, types.Failure{Message: "registry/x failed"}
		}
		b, err := json.Marshal([]types.Report{{SuiteDescription: "Fake", SuiteSucceeded: st == report.StatusPass, SpecReports: types.SpecReports{sr}}})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, string(st)+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass, fail := rep(report.StatusPass), rep(report.StatusFail)
	bin := filepath.Join(dir, "fake.test")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do case "$a" in --ginkgo.json-report=*) out="${a#--ginkgo.json-report=}";; esac; done
case "$%s" in *-dies) cp %q "$out"; code=1;; *) cp %q "$out"; code=0;; esac
sleep 0.5
exit $code
`, schema.EnvMutant, fail, pass)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestRunConcurrently: mutants run side by side (Jobs 2) each get their
// own verdict — a killed one beside a survivor, in both orders — so the
// scratch files (report, coverage, served log) are the run's own.
func TestRunConcurrently(t *testing.T) {
	dir := t.TempDir()
	bin := fakeSuite(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "suites", "fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	const file = "impl/x/x.go"
	cover := gomut.Profile{file: {{File: file, Span: gomut.Span{StartLine: 1, StartCol: 1, EndLine: 10, EndCol: 1}, Count: 1}}}
	var ms []Mutant
	var gs []gomut.Mutant
	in := map[string]bool{}
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("impl/x:F:negate-cond:%d", i)
		if i%2 == 0 {
			id += "-dies"
		}
		in[id] = true
		ms = append(ms, Mutant{ID: id, Kind: KindGo, File: file, Line: 2, Rows: []report.RowID{report.RowRegistry}})
		gs = append(gs, gomut.Mutant{ID: id, File: file, Span: gomut.Span{StartLine: 2, StartCol: 1, EndLine: 2, EndCol: 9}})
	}
	r := &GoRunner{Work: filepath.Join(dir, "work"), Log: io.Discard, Timeout: time.Minute, Jobs: 2,
		Schemata: &gomut.Schemata{In: in},
		bins:     &Suites{Root: dir, Dir: dir, bins: map[string]string{"./suites/fake": bin}},
		units:    []goUnit{{pkg: "./suites/fake", rows: []report.RowID{report.RowRegistry}, name: "registry/x", focus: "^Fake registry/x$", cover: cover, secs: 1}}}
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		t.Fatal(err)
	}
	if c := r.Cost(ms[0], gs[0]); c != 1 {
		t.Errorf("Cost = %v, want the reaching unit's baseline seconds (1)", c)
	}
	res := make([]Result, len(ms))
	began := time.Now()
	Pool(LongestFirst(len(ms), func(i int) float64 { return r.Cost(ms[i], gs[i]) }), r.Jobs, nil, func(i int) {
		res[i] = r.Run(context.Background(), ms[i], gs[i])
	})
	for i, got := range res {
		want := Survived
		if i%2 == 0 {
			want = Killed
		}
		if got.Status != want {
			t.Errorf("%s: %s (%s), want %s", ms[i].ID, got.Status, got.Reason, want)
		}
	}
	// Six runs of 0.5 s each in two lanes: ~1.5 s, not ~3 s (loose: only
	// to show they overlapped at all).
	if el := time.Since(began); el > 2800*time.Millisecond {
		t.Logf("6 runs took %s with 2 jobs: did they overlap?", el)
	}
	if left, _ := filepath.Glob(filepath.Join(r.Work, "mutant-*")); len(left) > 0 {
		t.Errorf("scratch left behind: %v", left)
	}
}
