package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptedRunLeavesNothing interrupts a real `slotgate run` while its
// suites hold live Valkey clusters, as a Ctrl-C would, and proves that every
// server process and temporary directory of that run is gone afterwards and
// that the run exits 130 with a report still written.
func TestInterruptedRunLeavesNothing(t *testing.T) {
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
	bin := t.TempDir()
	for pkg, out := range map[string]string{"./cmd/slotgate": "slotgate", "github.com/onsi/ginkgo/v2/ginkgo": "ginkgo"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, out), pkg)
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, b)
		}
	}
	before := slotgateDirs(t)
	var output bytes.Buffer
	run := exec.Command(filepath.Join(bin, "slotgate"), "run", "--row", "axioms", "--profile", "smoke", "--out", t.TempDir(), "--quiet")
	run.Dir, run.Stdout, run.Stderr = root, &output, &output
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Process.Kill() })

	// Wait until the run holds live servers in directories it created. Other
	// harnesses may be running on this machine (go test runs packages in
	// parallel), so a directory is ours only if its owner pid — in its name —
	// descends from this run.
	var ours []string
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ours = ours[:0]
		for _, d := range newDirs(before, slotgateDirs(t)) {
			if owner, ok := dirOwner(d); ok && descendsFrom(owner, run.Process.Pid) {
				ours = append(ours, d)
			}
		}
		if len(ours) > 0 && len(processesUsing(ours)) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run never brought servers up; output:\n%s", output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("interrupting with %d servers live under %v", len(processesUsing(ours)), ours)
	if err := run.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("run did not stop within 2m of SIGINT; output:\n%s", output.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitSignal {
		t.Errorf("exit: %v, want code %d; output:\n%s", err, exitSignal, output.String())
	}
	if procs := processesUsing(ours); len(procs) > 0 {
		t.Errorf("processes outlived the interrupted run: %v", procs)
	}
	for _, d := range ours {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("directory outlived the interrupted run: %s", d)
		}
	}
	if !strings.Contains(output.String(), "report:") {
		t.Errorf("no report written after the interrupt; output:\n%s", output.String())
	}
}

func slotgateDirs(t *testing.T) map[string]bool {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), "slotgate-*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range matches {
		out[m] = true
	}
	return out
}

func newDirs(before, now map[string]bool) []string {
	var out []string
	for d := range now {
		if !before[d] {
			out = append(out, d)
		}
	}
	return out
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
