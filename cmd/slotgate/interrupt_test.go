package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
)

// TestInterruptedRunLeavesNothing interrupts a real `slotgate run` while its
// suites hold live Valkey clusters, as a Ctrl-C would, and proves that every
// server process and temporary directory of that run is gone afterwards and
// that the run exits 130 with a report still written.
func TestInterruptedRunLeavesNothing(t *testing.T) {
	r := startLiveRun(t)
	r.signal(syscall.SIGINT)
	err := r.wait(2 * time.Minute)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitSignal {
		t.Errorf("exit: %v, want code %d; output:\n%s", err, exitSignal, r.output.String())
	}
	r.assertGone(0)
	if !strings.Contains(r.output.String(), "report:") {
		t.Errorf("no report written after the interrupt; output:\n%s", r.output.String())
	}
}

// TestHangupStopsTheRunCleanly: a hang-up (the terminal or SSH session went
// away) is an interrupt: teardown, exit 130, and a report whose headline
// says the run was interrupted, with no cell failed by it. While the run
// holds --out, a second run on it is refused with exit 2 naming the holder.
func TestHangupStopsTheRunCleanly(t *testing.T) {
	r := startLiveRun(t)

	second := exec.Command(filepath.Join(r.bin, "slotgate"), "run", "--row", "axioms", "--profile", "smoke", "--out", r.out, "--quiet")
	second.Dir = r.root
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage {
		t.Errorf("a second run on a held --out: %v, want exit %d; output:\n%s", err, exitUsage, out)
	}
	if want := "pid " + strconv.Itoa(r.cmd.Process.Pid); !strings.Contains(string(out), want) {
		t.Errorf("the refusal does not name the holder (%s):\n%s", want, out)
	}

	r.signal(syscall.SIGHUP)
	err = r.wait(2 * time.Minute)
	if !errors.As(err, &exit) || exit.ExitCode() != exitSignal {
		t.Errorf("exit: %v, want code %d; output:\n%s", err, exitSignal, r.output.String())
	}
	r.assertGone(0)
	results, err := os.ReadFile(filepath.Join(r.out, "results.json"))
	if err != nil {
		t.Fatalf("no results after the hang-up: %v; output:\n%s", err, r.output.String())
	}
	if !strings.Contains(string(results), `"cause": "SIGHUP"`) {
		t.Errorf("results.json does not record the interruption:\n%s", results)
	}
	if !strings.Contains(r.output.String(), "gate INTERRUPTED") || regexp.MustCompile(`\bFAIL \d`).MatchString(r.output.String()) {
		t.Errorf("the scorecard does not read as interrupted, or fails a cell:\n%s", r.output.String())
	}
}

// TestKilledRunLeavesNothing SIGKILLs `slotgate run` while its suites hold
// live servers: no code of slotgate runs, yet ginkgo, the suite process,
// every server and every temporary directory of the run must go, and the
// run's copy of the suite binary it was running must not stay in the tree
// (the shared one in bin/suites stays: the next run reuses it).
func TestKilledRunLeavesNothing(t *testing.T) {
	r := startLiveRun(t)
	r.signal(syscall.SIGKILL)
	_ = r.wait(time.Minute)
	r.assertGone(30 * time.Second)
	snapshot := filepath.Join(r.root, suiteBinDir, "run."+strconv.Itoa(r.cmd.Process.Pid), "axioms.test")
	if fileExists(snapshot) {
		t.Errorf("the run's suite binary outlived the killed run: %s", snapshot)
	}
	if leftover := r.suiteBinary(); fileExists(leftover) && !r.compiledBefore {
		t.Errorf("a compiled suite binary outlived the killed run: %s", leftover)
	}
}

// TestKilledFailoverRunLeavesNothing SIGKILLs `slotgate run` while the
// fencing-failover row holds its replicated topology (a primary, a replica
// and three Sentinels, beside a 3×1 cluster): every server and Sentinel
// process and every temporary directory must go.
func TestKilledFailoverRunLeavesNothing(t *testing.T) {
	// 6 cluster nodes + 2 replicated nodes + 3 Sentinels.
	r := startLiveRunOf(t, "fencing-failover", 11)
	sentinels := 0
	for _, p := range processesUsing(r.dirs) {
		if strings.Contains(p, "sentinel") {
			sentinels++
		}
	}
	if sentinels < fixtures.SentinelCount {
		t.Fatalf("%d Sentinel processes live before the kill, want %d: the test would prove nothing about them", sentinels, fixtures.SentinelCount)
	}
	r.signal(syscall.SIGKILL)
	_ = r.wait(time.Minute)
	r.assertGone(30 * time.Second)
}

// liveRun is a `slotgate run --row axioms --profile smoke` holding live
// servers.
type liveRun struct {
	t              *testing.T
	root, bin, out string
	tmp            string // the run's TMPDIR
	cmd            *exec.Cmd
	output         *syncBuffer
	done           chan error
	dirs           []string // the run's temporary directories
	procs          []int    // every descendant of the run when it was signalled
	compiledBefore bool
	suiteDir       string // the row's suite package
	signalled      time.Time
}

// suiteBinary is where a Ginkgo that compiled the row's suite itself would
// leave its binary.
func (r *liveRun) suiteBinary() string {
	return filepath.Join(r.suiteDir, filepath.Base(r.suiteDir)+".test")
}

var buildOnce struct {
	sync.Once
	dir string
	err error
}

// slotgateBinaries builds slotgate and ginkgo once per test binary.
func slotgateBinaries(t *testing.T, root string) string {
	buildOnce.Do(func() {
		buildOnce.dir, buildOnce.err = os.MkdirTemp("", "slotgate-bin-test-")
		for pkg, out := range map[string]string{"./cmd/slotgate": "slotgate", "github.com/onsi/ginkgo/v2/ginkgo": "ginkgo"} {
			if buildOnce.err != nil {
				return
			}
			build := exec.Command("go", "build", "-o", filepath.Join(buildOnce.dir, out), pkg)
			build.Dir = root
			if b, err := build.CombinedOutput(); err != nil {
				buildOnce.err = fmt.Errorf("build %s: %v\n%s", pkg, err, b)
			}
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.dir
}

func startLiveRun(t *testing.T) *liveRun { t.Helper(); return startLiveRunOf(t, "axioms", 6) }

// startLiveRunOf starts `slotgate run --row row` and returns once at least
// procs server processes of it are live.
func startLiveRunOf(t *testing.T, row string, procs int) *liveRun {
	t.Helper()
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
	r := &liveRun{t: t, root: root, bin: slotgateBinaries(t, root), out: t.TempDir(), output: &syncBuffer{}, done: make(chan error, 1)}
	cat, ok := report.Lookup(report.RowID(row))
	if !ok {
		t.Fatalf("no row %q in the catalogue", row)
	}
	r.suiteDir = filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(cat.Suite, "./")))
	r.compiledBefore = fileExists(r.suiteBinary())
	// A private TMPDIR: other harnesses on this machine sweep the shared
	// one of directories whose owner died (fixtures.SweepStale), which would
	// hide a directory this run left behind.
	r.tmp = t.TempDir()
	if err := os.Chmod(r.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(filepath.Join(r.bin, "slotgate"), "run", "--row", row, "--profile", "smoke", "--out", r.out, "--quiet")
	r.cmd.Dir, r.cmd.Stdout, r.cmd.Stderr = root, r.output, r.output
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })

	// Wait until the run holds live servers in directories it created (a
	// directory is the run's if its owner pid, in its name, descends from it).
	err = wait.Within(t.Context(), 3*time.Minute, 50*time.Millisecond, func(context.Context) error {
		r.dirs = r.dirs[:0]
		for _, d := range slotgateDirs(t, r.tmp) {
			if owner, ok := dirOwner(d); ok && descendsFrom(owner, r.cmd.Process.Pid) {
				r.dirs = append(r.dirs, d)
			}
		}
		if n := len(processesUsing(r.dirs)); len(r.dirs) == 0 || n < procs {
			return fmt.Errorf("%d server processes in %d directories of the run, want %d", n, len(r.dirs), procs)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("run never brought servers up: %v; output:\n%s", err, r.output.String())
	}
	return r
}

// signal records every process of the run, then signals slotgate.
func (r *liveRun) signal(sig syscall.Signal) {
	r.t.Helper()
	r.procs = fixtures.Descendants(r.cmd.Process.Pid)
	r.t.Logf("%v with %d servers live under %v; %d processes in the run", sig, len(processesUsing(r.dirs)), r.dirs, len(r.procs))
	r.signalled = time.Now()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatal(err)
	}
}

func (r *liveRun) wait(limit time.Duration) error {
	select {
	case err := <-r.done:
		return err
	case <-time.After(limit):
		r.t.Fatalf("run did not stop within %v; output:\n%s", limit, r.output.String())
		return nil
	}
}

// assertGone checks that no process of the run and none of its directories
// is left, polling up to grace for a teardown nobody waits on (after a
// SIGKILL). Every failure names what was left.
func (r *liveRun) assertGone(grace time.Duration) {
	r.t.Helper()
	var left []string
	gone := func(context.Context) error {
		left = left[:0]
		for _, pid := range r.procs {
			if alive(pid) {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				left = append(left, fmt.Sprintf("process %d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
		}
		for _, p := range processesUsing(r.dirs) {
			left = append(left, "process "+p)
		}
		for _, d := range r.dirs {
			if _, err := os.Stat(d); err == nil {
				left = append(left, "directory "+d)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%d things of the run left", len(left))
		}
		return nil
	}
	// A zero grace means "gone by now": Within still checks once.
	if err := wait.Within(r.t.Context(), grace, 100*time.Millisecond, gone); err != nil {
		r.t.Errorf("left behind by the run:\n  %s\noutput:\n%s", strings.Join(left, "\n  "), r.output.String())
		return
	}
	r.t.Logf("everything of the run gone %v after the signal", time.Since(r.signalled).Round(time.Millisecond))
}

// syncBuffer is a bytes.Buffer safe for the child's writers and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// alive reports a live, non-zombie process.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	j := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[j+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func slotgateDirs(t *testing.T, tmp string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(tmp, "slotgate-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// dirOwner reads the owner pid from a slotgate-<pid>-* directory name.
func dirOwner(dir string) (int, bool) {
	rest := strings.TrimPrefix(filepath.Base(dir), "slotgate-")
	pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
	return pid, err == nil
}

// descendsFrom reports whether pid is ancestor or one of its descendants.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		j := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[j+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
	}
	return false
}

// processesUsing lists live processes whose command line or working
// directory mentions one of dirs.
func processesUsing(dirs []string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if strings.Contains(string(stat), ") Z ") { // a zombie holds nothing
			continue
		}
		hay := string(cmdline) + "\x00" + cwd
		for _, d := range dirs {
			if strings.Contains(hay, d) {
				out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
				break
			}
		}
	}
	return out
}

// TestMain removes the binaries slotgateBinaries built (~80 MB a run).
func TestMain(m *testing.M) {
	code := m.Run()
	if buildOnce.dir != "" {
		os.RemoveAll(buildOnce.dir)
	}
	os.Exit(code)
}
