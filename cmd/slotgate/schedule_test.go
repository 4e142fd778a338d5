package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slotgate/slotgate/report"
)

// fakeSuites starts `sleep` as each job's ginkgo, in its own process group
// as the real start does, printing a line before and after.
func fakeSuites(con *console, d time.Duration) func(j *suiteJob, left time.Duration) (<-chan error, error) {
	return func(j *suiteJob, left time.Duration) (<-chan error, error) {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("echo %s begins; sleep %.2f; echo %s ends", j.name, d.Seconds(), j.name))
		cmd.Stdout, cmd.Stderr = stream{con, j, 0}, stream{con, j, 1}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		j.cmd = cmd
		return startOwned(cmd)
	}
}

func testJobs(pkgs ...string) []*suiteJob {
	var rows []report.RowID
	for r := range suiteOf {
		rows = append(rows, r)
	}
	return planJobs(pkgs, rows, false)
}

// The scheduler never runs more than --jobs suites at once; a suite with a
// memory-speed bound runs alone, first; a timed one beside at most one
// untimed suite.
func TestSchedulerJobsAndExclusive(t *testing.T) {
	jobs := testJobs("./rows/axioms", "./rows/registry", "./rows/locality", "./rows/presence", "./rows/failuredrills",
		"./rows/marconiaudit", "./rows/marconi", "./rows/protocol")
	if jobs[0].exclusive == "" {
		t.Fatalf("the suite that runs alone is not first: %s", jobs[0].pkg)
	}
	for _, jobs := range []int{2, 3} {
		checkSchedule(t, jobs, testJobsOf(jobs))
	}
	// Whatever the order: an exclusive suite queued behind shared ones
	// waits for them, and the ones behind it wait for it.
	jobs = testJobs("./rows/axioms", "./rows/locality", "./rows/presence", "./rows/marconiaudit", "./rows/protocol")
	jobs[1], jobs[0] = jobs[0], jobs[1]
	if jobs[1].exclusive == "" {
		t.Fatalf("want an exclusive suite second: %s", jobs[1].pkg)
	}
	checkSchedule(t, 2, jobs)
}

func testJobsOf(int) []*suiteJob {
	return testJobs("./rows/axioms", "./rows/registry", "./rows/locality", "./rows/presence", "./rows/failuredrills",
		"./rows/marconiaudit", "./rows/marconi", "./rows/protocol", "./rows/routing")
}

func checkSchedule(t *testing.T, lanes int, jobs []*suiteJob) {
	t.Helper()
	var out bytes.Buffer
	con := &console{stdout: &syncWriter{w: &out}, stderr: &syncWriter{w: &out}}
	// A quick ticker: the progress line wakes the scheduler while a suite
	// runs alone, which must not start another.
	s := &scheduler{jobs: lanes, timeout: time.Minute, started: time.Now(), con: con, ticker: 10 * time.Millisecond}
	s.start = fakeSuites(con, 150*time.Millisecond)
	if cause, err := s.run(jobs, nil); cause != "" || err != nil {
		t.Fatalf("run: %q, %v", cause, err)
	}
	for _, a := range jobs {
		if a.started.IsZero() || a.err != nil {
			t.Fatalf("%s: started %v, exit %v", a.pkg, a.started, a.err)
		}
		// What ran at the moment a started: every rule is about who shares
		// the machine, and the set of running suites changes only at a start.
		var at []*suiteJob
		timed := 0
		for _, b := range jobs {
			if !b.started.After(a.started) && a.started.Before(b.ended) {
				at = append(at, b)
				if b.timed != "" {
					timed++
				}
			}
		}
		for _, b := range at {
			if b.exclusive != "" && len(at) > 1 {
				t.Errorf("%s runs alone but %d suites ran when %s started", b.pkg, len(at), a.pkg)
			}
		}
		if len(at) > lanes {
			t.Errorf("%d suites ran when %s started, --jobs %d", len(at), a.pkg, lanes)
		}
		if timed > 1 || (timed == 1 && len(at) > 2) {
			t.Errorf("when %s started, %d suites ran, %d of them timed: a timed suite shares with at most one untimed", a.pkg, len(at), timed)
		}
	}
	// A suite streams live or is held and printed whole: between a suite's
	// first and last line, another suite appears whole or not at all.
	text := out.String()
	for _, j := range jobs {
		b, e := strings.Index(text, j.name+" begins"), strings.Index(text, j.name+" ends")
		if b < 0 || e < b {
			t.Fatalf("%s's output missing or out of order:\n%s", j.name, text)
		}
		for _, o := range jobs {
			if o == j {
				continue
			}
			ob, oe := strings.Contains(text[b:e], o.name+" begins"), strings.Contains(text[b:e], o.name+" ends")
			if ob != oe {
				t.Errorf("%s's output cut into %s's:\n%s", o.name, j.name, text)
			}
		}
	}
}

// A signal stops the schedule: every running suite gets one SIGINT, no new
// suite starts, and the signal is returned.
func TestSchedulerInterrupt(t *testing.T) {
	jobs := testJobs("./rows/axioms", "./rows/locality", "./rows/presence")
	var out bytes.Buffer
	con := &console{stdout: &syncWriter{w: &out}, stderr: &syncWriter{w: &out}}
	s := &scheduler{jobs: 2, timeout: time.Minute, started: time.Now(), con: con, ticker: time.Hour}
	sig := make(chan os.Signal, 1)
	// The signal comes once both slots run a suite (the event, not a
	// guess at how long starting two takes).
	start, nStarted := fakeSuites(con, 30*time.Second), 0
	s.start = func(j *suiteJob, left time.Duration) (<-chan error, error) {
		done, err := start(j, left)
		if nStarted++; nStarted == 2 {
			sig <- syscall.SIGHUP
		}
		return done, err
	}
	began := time.Now()
	cause, err := s.run(jobs, sig)
	if cause != "SIGHUP" || err != nil {
		t.Fatalf("run: %q, %v; want SIGHUP", cause, err)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the running suites were not interrupted (run took %v)", took)
	}
	var started []string
	for _, j := range jobs {
		if !j.started.IsZero() {
			started = append(started, j.name)
			var exit *exec.ExitError
			if !errors.As(j.err, &exit) {
				t.Errorf("%s: exit %v, want a signal", j.name, j.err)
			}
		}
	}
	if len(started) != 2 {
		t.Errorf("started %v after the interrupt, want the first two only", started)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// --shard keeps the rows of its packages, records the whole request, and
// refuses a shard that would run nothing.
func TestApplyShard(t *testing.T) {
	all := []report.RowID{report.RowAxioms, report.RowLocality, report.RowMarconiHotPath, report.RowMarconiRestart}
	var seen []report.RowID
	for i := 1; i <= 3; i++ {
		p := plan{runFlags: runFlags{shard: fmt.Sprintf("%d/3", i)}, rows: all, run: all, profile: "smoke",
			notRun: map[report.RowID]string{report.RowMarconiRestart: "no postgres"}}
		for _, r := range all {
			p.packages = appendUnique(p.packages, suiteOf[r])
		}
		if err := p.applyShard(); err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
		if !slices.Equal(p.requested, all) || p.shardOf == nil || p.shardOf.index != i {
			t.Errorf("shard %d/3: requested %v, shard %v", i, p.requested, p.shardOf)
		}
		for _, r := range p.rows {
			if !slices.Contains(p.packages, suiteOf[r]) {
				t.Errorf("shard %d/3: row %s without its package in %v", i, r, p.packages)
			}
		}
		for id := range p.notRun {
			if !slices.Contains(p.rows, id) {
				t.Errorf("shard %d/3 explains %s, a row of another shard", i, id)
			}
		}
		seen = append(seen, p.rows...)
	}
	slices.Sort(seen)
	want := slices.Clone(all)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("the shards together ran %v, want %v once each", seen, want)
	}
	p := plan{runFlags: runFlags{shard: "4/4"}, rows: all, run: all, profile: "smoke"}
	if err := p.applyShard(); err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "at most 3 shards") {
		t.Errorf("a shard with nothing to run: %v, want a usage error", err)
	}
}

// `slotgate run --shard 1/2` and `--shard 2/2`, merged with `slotgate report
// --merge`, score the same cells as one run of the same rows and seed.
// Two fast rows on real servers; the three runs go side by side.
func TestShardsMergeToOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	if _, err := exec.LookPath("valkey-server"); err != nil {
		t.Skip("valkey-server not installed")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := slotgateBinaries(t, root)
	const rows = "axioms,locality"
	outs := map[string]string{}
	var mu sync.Mutex
	slotgate := func(name string, extra ...string) {
		args := append([]string{"run", "--row", rows, "--profile", "smoke", "--seed", "11", "--quiet", "--out", outs[name]}, extra...)
		cmd := exec.Command(filepath.Join(bin, "slotgate"), args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			mu.Lock()
			t.Errorf("slotgate %s: %v\n%s", strings.Join(args, " "), err, b)
			mu.Unlock()
		}
	}
	for _, name := range []string{"one", "shard1", "shard2"} {
		outs[name] = t.TempDir()
	}
	// One run, then the two shards side by side: two runs in one source
	// tree must not compile the same suite at once (Ginkgo builds it to
	// <pkg>/<name>.test and removes it after), and the shards' suites are
	// disjoint.
	slotgate("one")
	var wg sync.WaitGroup
	for i, name := range []string{"shard1", "shard2"} {
		wg.Add(1)
		go func() { defer wg.Done(); slotgate(name, "--shard", fmt.Sprintf("%d/2", i+1)) }()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, name := range []string{"shard1", "shard2"} {
		card, err := readResults(outs[name])
		if err != nil {
			t.Fatal(err)
		}
		sh := card.Meta.Shard
		if sh == nil || sh.Index != i+1 || sh.Of != 2 || !slices.Equal(sh.Requested, []report.RowID{report.RowAxioms, report.RowLocality}) {
			t.Errorf("%s: meta.shard %+v", name, sh)
		}
		if len(card.Meta.Rows) != 1 {
			t.Errorf("%s gates rows %v, want its one row", name, card.Meta.Rows)
		}
	}
	merged := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--out", merged, "--merge", outs["shard1"], outs["shard2"]}, &stdout, &stderr); code != exitPass {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	one, err := readResults(outs["one"])
	if err != nil {
		t.Fatal(err)
	}
	got, err := readResults(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Requested(), one.Requested()) {
		t.Errorf("merged requests %v, one run %v", got.Requested(), one.Requested())
	}
	if len(got.Cells) != len(one.Cells) {
		t.Fatalf("merged %d cells, one run %d", len(got.Cells), len(one.Cells))
	}
	for i, c := range one.Cells {
		m := got.Cells[i]
		if m.Row != c.Row || m.Column != c.Column || m.Status != c.Status || !slices.Equal(scenarios(m), scenarios(c)) {
			t.Errorf("cell %s/%s: merged %s %v, one run %s %v", c.Row, c.Column, m.Status, scenarios(m), c.Status, scenarios(c))
		}
	}
}

func scenarios(c report.Cell) []string {
	var out []string
	for _, ch := range c.Checks {
		out = append(out, ch.Scenario)
	}
	slices.Sort(out)
	return out
}

// Bad --jobs and --shard are usage errors naming the flag, before anything
// starts.
func TestRunJobsShardBadInput(t *testing.T) {
	for args, want := range map[string]string{
		"--jobs -1":                  "--jobs -1",
		"--jobs 0":                   "--jobs 0: want at least 1",
		"--timeout -5m":              "--timeout -5m0s: want a positive duration",
		"--shard 3/2":                `--shard "3/2"`,
		"--shard x":                  `--shard "x"`,
		"--shard 2/2 --row axioms":   "this shard has no suite",
		"--shard 1/2 --row nonsense": `unknown row "nonsense"`,
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"run"}, strings.Fields(args)...), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), want) {
			t.Errorf("run %s: exit %d, want 2 with %q; stderr:\n%s", args, code, want, stderr.String())
		}
	}
}

// A timed suite waiting for the machine to drain holds the lighter suites
// queued behind it: with --jobs 4 they would otherwise all overtake it.
func TestSchedulerTimedNotOvertaken(t *testing.T) {
	jobs := testJobs("./rows/fencingmigration", "./rows/subscriptions", "./rows/marconi", "./rows/routing", "./rows/fencingscripts",
		"./rows/presence", "./rows/telemetry", "./rows/locality")
	checkSchedule(t, 4, jobs)
	at := slices.IndexFunc(jobs, func(j *suiteJob) bool { return j.pkg == "./rows/marconi" })
	for _, later := range jobs[at+1:] {
		if later.timed == "" && later.started.Before(jobs[at].started) {
			t.Errorf("%s, queued behind the timed marconi, started %v before it", later.pkg, jobs[at].started.Sub(later.started))
		}
	}
}

// A package whose bound only some rows judge (marconiaudit: Offer's p99 in
// marconi-loss-budget) runs those rows alone and its other rows as an
// untimed job of their own; asked for only untimed rows, it never runs
// alone.
func TestPlanJobsSplitsTheUntimedRows(t *testing.T) {
	all := []report.RowID{report.RowMarconiAuditCompleteness, report.RowMarconiLossBudget, report.RowMarconiStream}
	jobs := planJobs([]string{"./rows/marconiaudit"}, all, false)
	if len(jobs) != 2 {
		t.Fatalf("want 2 jobs, got %d", len(jobs))
	}
	alone, rest := jobs[0], jobs[1]
	if alone.exclusive == "" || !slices.Equal(alone.rows, []report.RowID{report.RowMarconiLossBudget}) {
		t.Errorf("first job: exclusive %q rows %v; want alone with marconi-loss-budget only", alone.exclusive, alone.rows)
	}
	if rest.exclusive != "" || rest.timed != "" || !slices.Equal(rest.rows, []report.RowID{report.RowMarconiAuditCompleteness, report.RowMarconiStream}) {
		t.Errorf("second job: exclusive %q timed %q rows %v; want untimed with completeness and stream", rest.exclusive, rest.timed, rest.rows)
	}
	if alone.jsonName() == rest.jsonName() {
		t.Errorf("both jobs write %s", alone.jsonName())
	}
	only := planJobs([]string{"./rows/marconiaudit"}, []report.RowID{report.RowMarconiStream}, false)
	if len(only) != 1 || only[0].exclusive != "" || only[0].timed != "" {
		t.Errorf("marconi-stream alone: %d jobs, first exclusive %q timed %q; want one untimed job", len(only), only[0].exclusive, only[0].timed)
	}
	lb := planJobs([]string{"./rows/marconiaudit"}, []report.RowID{report.RowMarconiLossBudget}, false)
	if len(lb) != 1 || lb[0].exclusive == "" {
		t.Errorf("marconi-loss-budget alone: %d jobs; want one that runs alone", len(lb))
	}
}

// The timed-suite and recorded-time tables name suite packages by path: a
// path left behind when a row's suite moves would run that suite untimed,
// beside another timed one, and unweighted in --shard.
func TestSuiteTablesNameCataloguedSuites(t *testing.T) {
	suites := map[string]bool{}
	for _, pkg := range suiteOf {
		suites[pkg] = true
	}
	for pkg := range timedSuites {
		if !suites[pkg] {
			t.Errorf("timedSuites names %s, the suite of no catalogued row", pkg)
		}
	}
	for pkg := range suiteSeconds {
		if !suites[pkg] {
			t.Errorf("suiteSeconds names %s, the suite of no catalogued row", pkg)
		}
	}
}
