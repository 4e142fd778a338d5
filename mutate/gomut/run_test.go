package gomut

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
)

// TestCopyNeverWritesTheTree: writing the mutant never reaches the working
// tree, and an edit of the tree during a run never reaches the copy.
func TestCopyNeverWritesTheTree(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"go.mod": "module example.com/x\n", "a/a.go": "package a\n", "bin/tool": "x",
		".git/HEAD": "ref", "slotgate-report/results.json": "{}", "out/results.json": "{}",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir, release, err := acquireCopyDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dir2, release2, err := acquireCopyDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir == dir2 {
		t.Fatalf("two holders share %s", dir)
	}
	release2()
	if err := copyTree(root, dir, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin", ".git", "slotgate-report", "out"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("copy has %s", p)
		}
	}
	if err := writeMutant(dir, Mutant{File: "a/a.go", Content: []byte("package a // mutated\n")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a/a.go")); string(b) != "package a\n" {
		t.Fatalf("working tree written through the link: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/a.go")); string(b) != "package a // mutated\n" {
		t.Fatalf("copy not mutated: %q", b)
	}
	f, _ := os.OpenFile(filepath.Join(root, "go.mod"), os.O_WRONLY|os.O_TRUNC, 0) // an in-place edit
	f.WriteString("module example.com/edited\n")
	f.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(b) != "module example.com/x\n" {
		t.Fatalf("an in-place edit of the tree reached the copy: %q", b)
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("copy left behind: %v", err)
	}
	os.RemoveAll(filepath.Dir(dir))
}

// TestRunMeasure runs real mutants end to end (minutes each; not part of
// make test): GOMUT_RUN is a comma list of mutant IDs, or "sample:N:SEED"
// over DefaultTargets. It logs, per mutant, the wall time and the checks
// that failed (the kill), read from results.json.
func TestRunMeasure(t *testing.T) {
	spec := os.Getenv("GOMUT_RUN")
	if spec == "" {
		t.Skip("GOMUT_RUN not set")
	}
	root, _ := filepath.Abs("../..")
	var ms []Mutant
	if rest, ok := strings.CutPrefix(spec, "sample:"); ok {
		n, seed, _ := strings.Cut(rest, ":")
		max, _ := strconv.Atoi(n)
		s, _ := strconv.ParseInt(seed, 10, 64)
		var err error
		if ms, err = Generate(root, DefaultTargets, max, s); err != nil {
			t.Fatal(err)
		}
	} else {
		all, err := Generate(root, DefaultTargets, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range strings.Split(spec, ",") {
			for _, m := range all {
				if m.ID == id {
					ms = append(ms, m)
				}
			}
		}
	}
	logDir := os.Getenv("GOMUT_LOGS")
	if logDir == "" {
		logDir = t.TempDir()
	}
	ctx := context.Background()
	start := time.Now()
	bin, err := BuildSlotgate(ctx, root, t.TempDir(), nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slotgate built in %v", time.Since(start).Round(time.Second))
	for i, m := range ms {
		var log bytes.Buffer
		start := time.Now()
		out := filepath.Join(logDir, fmt.Sprintf("m%02d", i))
		res, err := Run(ctx, root, m, RunArgs{OutDir: out, Stdout: &log, Stderr: &log, Slotgate: bin,
			ExtraArgs: strings.Fields(os.Getenv("GOMUT_ARGS"))})
		os.WriteFile(out+".log", log.Bytes(), 0o644)
		took := time.Since(start).Round(time.Second)
		if err != nil {
			t.Errorf("%s: %v (%v)", m.ID, err, took)
			continue
		}
		by, err := failedChecks(res)
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		verdict := "SURVIVED"
		if len(by) > 0 {
			verdict = "KILLED by " + strings.Join(by, "; ")
		}
		t.Logf("%s (%s, rows %v) %v: %s\n%s", m.ID, m.Operator, m.Rows, took, verdict, m.Diff)
	}
}

// failedChecks reads a results.json for the checks whose own verdict is
// fail (a blind control is not a kill), and for requested rows none of
// whose cells ran: the suite process died (a mutant's panic in a
// goroutine kills the Ginkgo process before it writes its report), which
// is a kill by crash. The mutate package's Killed is the real reader; this
// is the measurement test's.
func failedChecks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r struct {
		Meta  struct{ Rows []string }
		Cells []struct {
			Row, Column, Status string
			Checks              []struct {
				Scenario, Status, Message string
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	var out []string
	ran := map[string]bool{}
	for _, c := range r.Cells {
		if c.Status != "not-run" {
			ran[c.Row] = true
		}
	}
	for _, row := range r.Meta.Rows {
		if !ran[row] {
			out = append(out, row+"/-/crash: no cell of the row ran (the suite process died)")
		}
	}
	for _, c := range r.Cells {
		for _, k := range c.Checks {
			if k.Status == "fail" {
				msg := k.Message
				if len(msg) > 160 {
					msg = msg[:160] + "…"
				}
				out = append(out, c.Row+"/"+c.Column+"/"+k.Scenario+": "+msg)
			}
		}
	}
	return out, nil
}

// TestRunExitCodes drives Run with a stand-in CLI (a shell script, not a
// server: what is tested is Run's contract, not a row): exit 1 is a verdict,
// exit 2 an error; the script sees the mutated file in its working
// directory, the tree never does, and the copy is gone afterwards.
func TestRunExitCodes(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "impl/x"), 0o755)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "impl/x/x.go"), []byte("package x\n"), 0o644)
	sum := sha256.Sum256([]byte(root))
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.TempDir(), "slotgate-mutant-"+hex.EncodeToString(sum[:6]))) })
	m := Mutant{ID: "impl/x/x.go:F:negate-cond#1", File: "impl/x/x.go", Content: []byte("package x // mutant\n"), Rows: []report.RowID{report.RowRegistry}}
	for _, tc := range []struct {
		exit    int
		wantErr bool
	}{{0, false}, {1, false}, {2, true}} {
		bin := filepath.Join(t.TempDir(), "slotgate")
		// Args: run --profile P --row R --out DIR …; it records its cwd and
		// what it saw of the mutated file.
		script := fmt.Sprintf("#!/bin/sh\nout=$7\nmkdir -p \"$out\"\necho '{}' > \"$out/results.json\"\npwd > \"$out/cwd\"\ncat impl/x/x.go > \"$out/seen\"\necho \"$@\" > \"$out/args\"\nexit %d\n", tc.exit)
		os.WriteFile(bin, []byte(script), 0o755)
		out := filepath.Join(t.TempDir(), "out")
		res, err := Run(context.Background(), root, m, RunArgs{OutDir: out, Slotgate: bin, ExtraArgs: []string{"--seed", "7"}})
		if (err != nil) != tc.wantErr {
			t.Fatalf("exit %d: err = %v", tc.exit, err)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "seen")); string(b) != "package x // mutant\n" {
			t.Errorf("exit %d: the run saw %q", tc.exit, b)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "args")); string(b) != "run --profile smoke --row registry --out "+out+" --seed 7\n" {
			t.Errorf("exit %d: args %q", tc.exit, b)
		}
		cwd, _ := os.ReadFile(filepath.Join(out, "cwd"))
		if _, err := os.Stat(strings.TrimSpace(string(cwd))); !os.IsNotExist(err) {
			t.Errorf("exit %d: copy %s left behind", tc.exit, cwd)
		}
		if !tc.wantErr && res != filepath.Join(out, "results.json") {
			t.Errorf("exit %d: results %q", tc.exit, res)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "impl/x/x.go")); string(b) != "package x\n" {
		t.Fatalf("working tree written: %q", b)
	}
}

// TestRunCancelled: a cancelled context interrupts the run (slotgate tears
// its servers down on SIGINT), Run reports the cancellation, and the copy
// is removed.
func TestRunCancelled(t *testing.T) {
	root := t.TempDir()
	sum := sha256.Sum256([]byte(root))
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.TempDir(), "slotgate-mutant-"+hex.EncodeToString(sum[:6]))) })
	os.MkdirAll(filepath.Join(root, "impl/x"), 0o755)
	os.WriteFile(filepath.Join(root, "impl/x/x.go"), []byte("package x\n"), 0o644)
	bin := filepath.Join(t.TempDir(), "slotgate")
	marker := filepath.Join(t.TempDir(), "cwd")
	os.WriteFile(bin, []byte("#!/bin/sh\npwd > "+marker+"\nexec sleep 60\n"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The interrupt comes once the mutant run's slotgate has started; the
	// watcher is joined before the test reports, so it never outlives it.
	started := make(chan error, 1)
	go func() {
		err := wait.Within(ctx, 30*time.Second, 10*time.Millisecond, func(context.Context) error {
			_, err := os.Stat(marker)
			return err
		})
		cancel()
		started <- err
	}()
	m := Mutant{ID: "x", File: "impl/x/x.go", Content: []byte("package x\n"), Rows: []report.RowID{report.RowRegistry}}
	_, err := Run(ctx, root, m, RunArgs{OutDir: t.TempDir(), Slotgate: bin})
	cancel()
	if serr := <-started; serr != nil && !errors.Is(serr, context.Canceled) {
		t.Errorf("the mutant run never started its slotgate (%s): %v", marker, serr)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrRun) {
		t.Fatalf("err = %v, want ErrRun wrapping context.Canceled", err)
	}
	cwd, _ := os.ReadFile(marker)
	if _, err := os.Stat(strings.TrimSpace(string(cwd))); !os.IsNotExist(err) {
		t.Errorf("copy %s left behind", cwd)
	}
}

func TestSuiteBuildFailure(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]bool{
		`{"problems":["suite \"\": Failed to compile registry:\n\n# x\nvet: bad\nFAIL\n"]}`: true,
		`{"problems":["suite \"x\": spec panicked"]}`:                                       false,
		`{"cells":[]}`: false,
	} {
		p := filepath.Join(dir, "results.json")
		os.WriteFile(p, []byte(body), 0o644)
		why, err := suiteBuildFailure(p)
		if err != nil || (why != "") != want {
			t.Errorf("%s: why %q err %v, want failure %v", body, why, err, want)
		}
	}
}
